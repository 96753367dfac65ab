// OASiS (scheduling/oasis/): model, prices and the online scheduler.
//
// Contract checked here: the price function is L with nothing allocated and U at capacity and
// rises in between; a PriceBook reprices exactly what a plan touches; the L/U estimate matches a
// hand computation; the three utility kinds and the job's worker-slot arithmetic; CheckPlan names
// each violated constraint; a lone job on an empty cluster priced by EstimatePrices is admitted
// and finishes as early as N_i workers allow; a job whose utility cannot cover its cost, one
// that does not fit and an invalid one are rejected with a reason; over seeded random arrival
// streams every admitted plan passes CheckPlan against an independently kept usage, the book's
// usage equals that recount, no capacity is exceeded, and pruning never changes a decision.
#include "scheduling/oasis/oasis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "scheduling/oasis/model.hpp"
#include "scheduling/oasis/prices.hpp"

namespace troupe::scheduling::oasis {
namespace {

constexpr int kGpu = static_cast<int>(Resource::kGpu);
constexpr int kCpu = static_cast<int>(Resource::kCpu);
constexpr int kBw = static_cast<int>(Resource::kBandwidth);

Machine MakeMachine(double gpus, double cpus, double memory, double storage, double bandwidth) {
  return Machine{{gpus, cpus, memory, storage, bandwidth}};
}

// H workers of 4 GPUs, 16 CPUs, 64 GB, 500 GB, 10 Gbps; K PS of 0 GPUs, 16 CPUs, 64 GB, 500 GB,
// 40 Gbps; slots of 100 s.
Cluster SmallCluster(int workers, int ps, int slots) {
  Cluster c;
  for (int h = 0; h < workers; ++h) c.workers.push_back(MakeMachine(4, 16, 64, 500, 10));
  for (int k = 0; k < ps; ++k) c.ps.push_back(MakeMachine(0, 16, 64, 500, 40));
  c.slots = slots;
  c.slot_s = 100;
  return c;
}

// 1 GPU, 2 CPUs, 8 GB, 10 GB, 2 Gbps a worker; 2 CPUs, 8 GB, 10 GB, 8 Gbps a PS. Mini-batches of
// 1 s with no gradient: a worker trains 100 a slot, so W = E N M / 100.
Job SmallJob(int id, int arrival, int epochs, int chunks, int minibatches) {
  Job j;
  j.id = id;
  j.arrival = arrival;
  j.epochs = epochs;
  j.chunks = chunks;
  j.minibatches_per_chunk = minibatches;
  j.minibatch_s = 1;
  j.gradient = 0;
  j.worker = {1, 2, 8, 10, 2};
  j.ps = {0, 2, 8, 10, 8};
  j.utility = {UtilityKind::kSigmoid, 50, 5, 4};
  return j;
}

TEST(OasisPriceTest, PriceIsLowAtZeroAndHighAtCapacity) {
  const double log_low = std::log(0.5);
  EXPECT_DOUBLE_EQ(Price(log_low, 80, 0, 16), 0.5);
  EXPECT_NEAR(Price(log_low, 80, 16, 16), 80, 1e-12);
  EXPECT_NEAR(Price(log_low, 80, 8, 16), 0.5 * std::sqrt(160.0), 1e-12);
  double previous = 0;
  for (int g = 0; g <= 16; ++g) {
    const double p = Price(log_low, 80, g, 16);
    EXPECT_GT(p, previous);
    previous = p;
  }
  EXPECT_DOUBLE_EQ(Price(log_low, 80, 0, 0), 80);    // no capacity: priced as exhausted
  EXPECT_DOUBLE_EQ(Price(std::log(2), 1, 3, 4), 2);  // U <= L: flat
  // L = e^-1400 is no double, yet the price at 99% of capacity is exact: e^(0.01 (-1400) + 0.99
  // ln 80) = 80 e^-14.04.
  EXPECT_NEAR(Price(-1400, 80, 99, 100) / (80 * std::exp(-0.01 * (1400 + std::log(80.0)))), 1,
              1e-9);
  EXPECT_EQ(Price(-1400, 80, 1, 100), 0);  // below the smallest double
}

TEST(OasisPriceTest, BookStartsAtLAndRepricesWhatAPlanTouches) {
  const Cluster cluster = SmallCluster(2, 1, 3);
  PriceParams params = PriceParams::Uniform(0.1, 10);
  params.worker_high[kGpu] = 40;
  PriceBook book(cluster, params);
  EXPECT_DOUBLE_EQ(book.worker_price(1, 1, Resource::kGpu), 0.1);
  EXPECT_DOUBLE_EQ(book.ps_price(2, 0, Resource::kGpu), 10);  // PS machines have no GPU
  Job job = SmallJob(1, 0, 1, 8, 100);
  Plan plan;
  plan.slots.push_back({1, {{1, 4}}, {{0, 1}}});
  plan.end_slot = 1;
  book.Admit(job, plan);
  EXPECT_NEAR(book.worker_price(1, 1, Resource::kGpu), 40, 1e-12);  // 4 of 4 GPUs
  EXPECT_NEAR(book.worker_price(1, 1, Resource::kCpu), 0.1 * std::pow(100.0, 0.5), 1e-12);
  EXPECT_DOUBLE_EQ(book.worker_price(1, 0, Resource::kGpu), 0.1);  // other machine untouched
  EXPECT_DOUBLE_EQ(book.worker_price(0, 1, Resource::kGpu), 0.1);  // other slot untouched
  EXPECT_NEAR(book.ps_price(1, 0, Resource::kBandwidth), 0.1 * std::pow(100.0, 0.2), 1e-12);
  EXPECT_DOUBLE_EQ(book.usage().worker(1, 1, Resource::kMemory), 32);
  EXPECT_NEAR(book.Cost(job, plan),
              book.WorkerUnitCost(1, 1, job.worker) * 4 + book.PsUnitCost(1, 0, job.ps), 1e-12);
}

TEST(OasisPriceTest, EstimateMatchesTheFormulasOnOneJob) {
  const Cluster cluster = SmallCluster(1, 1, 10);
  Job job = SmallJob(1, 2, 1, 4, 200);  // W = 8 worker-slots; fastest: 2 slots (duration 1)
  ASSERT_EQ(job.WorkerSlots(cluster.slot_s), 8);
  const PriceParams p = EstimatePrices(cluster, {job});
  const double best = job.utility.Value(1);
  const double worst = job.utility.Value(10 - 1 - 2);
  EXPECT_DOUBLE_EQ(p.worker_high[kGpu], best / 1);
  EXPECT_DOUBLE_EQ(p.worker_high[kCpu], best / 2);
  EXPECT_DOUBLE_EQ(p.ps_high[kBw], best / 8);
  EXPECT_DOUBLE_EQ(p.ps_high[kGpu], 1);  // no job asks a PS for a GPU: the default
  const double worker_volume = 8 * (1 + 2 + 8 + 10 + 2);
  const double eta1 = 10 * (4 + 16 + 64 + 500 + 10) / worker_volume;
  EXPECT_NEAR(p.worker_low(kGpu), worst / (4 * eta1 * worker_volume), 1e-15);
  const double ps_volume = 8 * (0 + 2 + 8 + 10 + 8);
  const double eta2 = 10 * (0 + 16 + 64 + 500 + 40) / ps_volume;
  EXPECT_NEAR(p.ps_low(kCpu), worst / (4 * eta2 * ps_volume), 1e-15);
  const PriceParams scaled = p.Scaled(2, 0.5);
  EXPECT_NEAR(scaled.worker_low(kCpu), 2 * p.worker_low(kCpu), 1e-12 * p.worker_low(kCpu));
  EXPECT_DOUBLE_EQ(scaled.worker_high[kCpu], 0.5 * p.worker_high[kCpu]);
}

TEST(OasisPriceTest, EstimateKeepsAnUnderflowingTailExactInLogs) {
  // At T = 300 a sigmoid's f(T - 1 - a) underflows to 0; L is kept as its logarithm, unfloored.
  const Cluster cluster = SmallCluster(1, 1, 300);
  const Job job = SmallJob(1, 0, 1, 4, 200);
  ASSERT_EQ(job.utility.Value(299), 0);
  const Utility& f = job.utility;
  const double log_worst = std::log(f.g1) - f.g2 * (299 - f.g3);  // ln f(299), 1 + e^z ~ e^z
  EXPECT_NEAR(f.LogValue(299), log_worst, 1e-9);
  EXPECT_NEAR(f.LogValue(1), std::log(f.Value(1)), 1e-12);
  const PriceParams p = EstimatePrices(cluster, {job});
  const double volume = 8 * 23;
  const double eta = 300 * (4 + 16 + 64 + 500 + 10) / volume;
  EXPECT_NEAR(p.worker_log_low[kGpu], log_worst - std::log(4 * eta * volume), 1e-9);
  EXPECT_EQ(p.worker_low(kGpu), 0);  // L itself is below the smallest double
  EXPECT_NEAR(p.Alpha(), std::log(p.worker_high[kGpu]) - p.worker_log_low[kGpu], 1e-9);
  EXPECT_GT(p.Alpha(), 1000);
}

TEST(OasisModelTest, UtilityKinds) {
  const Utility sigmoid{UtilityKind::kSigmoid, 40, 5, 3};
  EXPECT_DOUBLE_EQ(sigmoid.Value(3), 20);
  EXPECT_NEAR(sigmoid.Value(0), 40 / (1 + std::exp(-15.0)), 1e-12);
  EXPECT_LT(sigmoid.Value(10), 1e-12);
  const Utility linear{UtilityKind::kLinear, 10, 3, 0};
  EXPECT_DOUBLE_EQ(linear.Value(2), 4);
  EXPECT_DOUBLE_EQ(linear.Value(5), 0);
  const Utility step{UtilityKind::kStep, 7, 0, 2};
  EXPECT_DOUBLE_EQ(step.Value(2), 7);
  EXPECT_DOUBLE_EQ(step.Value(3), 0);
  for (const Utility& u : {sigmoid, linear, step}) {
    for (int d = 0; d < 20; ++d) EXPECT_LE(u.Value(d + 1), u.Value(d));
  }
}

TEST(OasisModelTest, WorkerSlotsAndParameterServers) {
  Job job = SmallJob(1, 0, 3, 10, 50);  // 1,500 mini-batches
  job.gradient = 0.5;                   // 0.5 Gb each way at 2 Gbps: 1.5 s a mini-batch
  EXPECT_DOUBLE_EQ(job.StepSeconds(), 1.5);
  EXPECT_EQ(job.WorkerSlots(100), 23);  // 2,250 s of work in 100 s slots
  EXPECT_EQ(job.WorkerSlots(75), 30);   // exactly 30: no rounding up
  EXPECT_EQ(job.PsFor(0), 0);
  EXPECT_EQ(job.PsFor(4), 1);  // 8 Gbps of workers on one 8 Gbps PS
  EXPECT_EQ(job.PsFor(5), 2);
  EXPECT_EQ(ValidateJob(job), "");
  job.ps[kBw] = 1;
  EXPECT_NE(ValidateJob(job), "");  // b > B: no PS count satisfies (6) and (7)
}

TEST(OasisModelTest, CheckPlanNamesTheViolatedConstraint) {
  const Cluster cluster = SmallCluster(2, 1, 4);
  const Job job = SmallJob(1, 1, 1, 3, 100);  // W = 3, N = 3
  const Usage empty(cluster);
  Plan ok;
  ok.slots.push_back({1, {{0, 2}}, {{0, 1}}});
  ok.slots.push_back({2, {{1, 1}}, {{0, 1}}});
  ok.end_slot = 2;
  EXPECT_EQ(CheckPlan(cluster, job, ok, empty), "");
  auto with = [&](auto change) {
    Plan p = ok;
    change(p);
    return CheckPlan(cluster, job, p, empty);
  };
  EXPECT_NE(with([](Plan& p) { p.slots[0].slot = 0; }).find("outside"), std::string::npos);
  EXPECT_NE(with([](Plan& p) { p.end_slot = 3; }).find("end_slot"), std::string::npos);
  EXPECT_NE(with([](Plan& p) {
              p.slots[0].workers = {{0, 1}, {0, 1}};
            }).find("bad placement"),
            std::string::npos);
  EXPECT_NE(with([](Plan& p) { p.slots[0].workers = {{0, 4}}; }).find("(3)"), std::string::npos);
  EXPECT_NE(with([](Plan& p) { p.slots[1].ps = {{0, 2}}; }).find("(7)"), std::string::npos);
  EXPECT_NE(with([](Plan& p) { p.slots[0].ps.clear(); }).find("(6)"), std::string::npos);
  EXPECT_NE(with([](Plan& p) {
              p.slots.pop_back();
              p.end_slot = 1;
            }).find("(2)"),
            std::string::npos);
  Usage busy(cluster);
  Plan filler;
  filler.slots.push_back({2, {{1, 4}}, {}});
  filler.end_slot = 2;
  busy.Add(job, filler);  // machine 1 full in slot 2
  EXPECT_NE(CheckPlan(cluster, job, ok, busy).find("(4) worker"), std::string::npos);
  Plan ps_filler;
  ps_filler.slots.push_back({1, {}, {{0, 5}}});
  ps_filler.end_slot = 1;
  Usage ps_busy(cluster);
  ps_busy.Add(job, ps_filler);  // 40 of 40 Gbps on the PS machine in slot 1
  EXPECT_NE(CheckPlan(cluster, job, ok, ps_busy).find("(5) PS"), std::string::npos);
}

TEST(OasisSchedulerTest, ALoneJobIsAdmittedAndFinishesAsEarlyAsItCan) {
  const Cluster cluster = SmallCluster(2, 1, 12);
  const Job job = SmallJob(7, 3, 2, 6, 100);  // W = 12, N = 6: two slots at best
  OasisScheduler scheduler(cluster, EstimatePrices(cluster, {job}));
  const Decision d = scheduler.OnArrival(job);
  ASSERT_TRUE(d.admitted) << d.reason;
  EXPECT_EQ(d.reason, "");
  EXPECT_EQ(d.plan.end_slot, 4);
  EXPECT_EQ(d.plan.WorkerSlots(), 12);
  EXPECT_DOUBLE_EQ(d.plan.utility, job.utility.Value(1));
  EXPECT_GT(d.payoff, 0.75 * d.plan.utility);  // at L the whole job costs < f / 4
  EXPECT_EQ(scheduler.admitted(), 1);
  EXPECT_DOUBLE_EQ(scheduler.admitted_utility(), d.plan.utility);
  EXPECT_DOUBLE_EQ(scheduler.prices().usage().worker(3, 0, Resource::kGpu) +
                       scheduler.prices().usage().worker(3, 1, Resource::kGpu),
                   6);
}

TEST(OasisSchedulerTest, RejectsWhenTheUtilityCannotCoverTheCost) {
  const Cluster cluster = SmallCluster(2, 1, 6);
  Job job = SmallJob(1, 0, 1, 4, 100);  // W = 4: at least 4 worker-slots of 23 units each
  job.utility = {UtilityKind::kStep, 200, 0, 5};
  OasisScheduler cheap(cluster, PriceParams::Uniform(1, 100));
  const Decision admitted = cheap.OnArrival(job);
  EXPECT_TRUE(admitted.admitted) << admitted.reason;
  EXPECT_NEAR(admitted.plan.cost, 4 * 23 + 1 * 28, 1e-9);
  job.utility.g1 = 4 * 23 + 28;  // exactly the cost: payoff 0 is not enough
  OasisScheduler even(cluster, PriceParams::Uniform(1, 100));
  const Decision d = even.OnArrival(job);
  EXPECT_FALSE(d.admitted);
  EXPECT_NEAR(d.payoff, 0, 1e-9);
  EXPECT_NE(d.reason.find("payoff"), std::string::npos);
  EXPECT_EQ(even.admitted(), 0);
  EXPECT_DOUBLE_EQ(even.prices().usage().worker(0, 0, Resource::kGpu), 0);
}

TEST(OasisSchedulerTest, RejectsWhatCannotFitAndInvalidJobs) {
  const Cluster cluster = SmallCluster(1, 1, 3);
  OasisScheduler scheduler(cluster, PriceParams::Uniform(0.01, 1));
  Job big = SmallJob(1, 0, 1, 4, 100);
  big.worker[kGpu] = 5;  // more than a server holds
  EXPECT_NE(scheduler.OnArrival(big).reason.find("no feasible"), std::string::npos);
  Job long_job = SmallJob(2, 1, 10, 4, 100);  // W = 40 > 4 workers x 2 slots
  EXPECT_NE(scheduler.OnArrival(long_job).reason.find("worker-slots"), std::string::npos);
  Job late = SmallJob(3, 3, 1, 1, 100);
  EXPECT_NE(scheduler.OnArrival(late).reason.find("outside"), std::string::npos);
  Job invalid = SmallJob(4, 0, 0, 1, 100);
  EXPECT_NE(scheduler.OnArrival(invalid).reason.find("invalid"), std::string::npos);
  EXPECT_EQ(scheduler.admitted(), 0);
}

// A random job on SmallCluster's machines: 1-2 GPUs, CPUs, memory, 1-4 Gbps workers on 4-16
// Gbps parameter servers, a sigmoid in the paper's ranges, W up to a few dozen worker-slots.
Job RandomJob(std::mt19937& rng, int id, int slots) {
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * pick(rng) / double(1 << 20); };
  Job j =
      SmallJob(id, pick(rng) % slots, 1 + pick(rng) % 3, 1 + pick(rng) % 8, 50 + pick(rng) % 200);
  j.gradient = uniform(0, 0.5);
  j.worker = {double(1 + pick(rng) % 2), uniform(1, 4), uniform(4, 16), 10, uniform(1, 4)};
  j.ps = {0, uniform(1, 4), uniform(4, 16), 10, uniform(4, 16)};
  j.utility = {UtilityKind::kSigmoid, uniform(1, 100), uniform(4, 6), uniform(1, 15)};
  return j;
}

TEST(OasisSchedulerTest, RandomStreamsKeepEveryAdmittedPlanFeasible) {
  for (int seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    const Cluster cluster = SmallCluster(3 + seed % 3, 2, 24);
    std::vector<Job> jobs;
    for (int i = 0; i < 60; ++i) jobs.push_back(RandomJob(rng, i, cluster.slots));
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const Job& a, const Job& b) { return a.arrival < b.arrival; });
    const PriceParams params = EstimatePrices(cluster, jobs).Scaled(1, seed % 2 ? 1 : 0.2);
    OasisScheduler pruned(cluster, params);
    OasisScheduler full(cluster, params, {.prune = false});
    Usage recount(cluster);
    int admitted = 0;
    for (const Job& job : jobs) {
      const Decision d = pruned.OnArrival(job);
      const Decision e = full.OnArrival(job);
      ASSERT_EQ(d.admitted, e.admitted) << "seed " << seed << " job " << job.id;
      if (!d.admitted) continue;
      ++admitted;
      EXPECT_EQ(d.plan.end_slot, e.plan.end_slot);
      EXPECT_NEAR(d.payoff, e.payoff, 1e-9);
      EXPECT_LE(d.end_slots_examined, e.end_slots_examined);
      ASSERT_EQ(CheckPlan(cluster, job, d.plan, recount), "") << "seed " << seed;
      recount.Add(job, d.plan);
    }
    EXPECT_GT(admitted, 0) << "seed " << seed;
    EXPECT_LT(admitted, 60) << "seed " << seed;  // prices and capacities turn some away
    EXPECT_EQ(pruned.admitted(), admitted);
    for (int t = 0; t < cluster.slots; ++t) {
      for (int h = 0; h < static_cast<int>(cluster.workers.size()); ++h) {
        for (int r = 0; r < kResources; ++r) {
          const auto res = static_cast<Resource>(r);
          EXPECT_NEAR(pruned.prices().usage().worker(t, h, res), recount.worker(t, h, res), 1e-9);
          EXPECT_LE(recount.worker(t, h, res), cluster.workers[h].capacity[r] + 1e-9);
        }
      }
    }
  }
}

}  // namespace
}  // namespace troupe::scheduling::oasis
