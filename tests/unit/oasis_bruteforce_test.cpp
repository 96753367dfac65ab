// OASiS against exhaustive enumeration and against the exact offline optimum.
//
// Contract checked here: on seeded random tiny instances (1-2 worker servers, 1-2 PS machines,
// up to 3 slots after arrival, prices made uneven by earlier admissions) the DP + greedy's best
// payoff equals the best over every feasible schedule, enumerated without the greedy's or the
// DP's structure (every worker and PS count on every machine in every slot), and its plan passes
// CheckPlan; with pruning, the admission decisions are the same. The offline optimum (GLPK) is
// the hand-computed one on a contended single-server instance, equals the joint enumeration's
// best utility for lone jobs, pairs and triples of contending jobs, and on random small instances
// is proved optimal, its plans pass CheckPlan job by job, and it is at least OASiS's admitted
// utility under estimated, over- and under-estimated prices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "scheduling/oasis/oasis.hpp"
#include "scheduling/oasis/offline_optimum.hpp"

namespace troupe::scheduling::oasis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Option {
  int workers = 0;
  double cost = 0;
  SlotPlan plan;
};

// Every count vector over `machines` (0..cap each) that fits on top of the slot's usage.
void Vectors(const std::vector<Machine>& machines, const ResourceVector& demand,
             const std::function<const double*(int)>& used, int cap,
             std::vector<std::vector<int>>* out) {
  std::vector<int> counts(machines.size(), 0);
  std::function<void(size_t)> go = [&](size_t m) {
    if (m == machines.size()) {
      out->push_back(counts);
      return;
    }
    for (int n = 0; n <= cap; ++n) {
      bool fits = true;
      for (int r = 0; r < kResources; ++r) {
        fits = fits && used(m)[r] + n * demand[r] <= machines[m].capacity[r] + 1e-9;
      }
      if (!fits) break;
      counts[m] = n;
      go(m + 1);
    }
    counts[m] = 0;
  };
  go(0);
}

std::vector<Placement> ToPlacements(const std::vector<int>& counts) {
  std::vector<Placement> p;
  for (size_t m = 0; m < counts.size(); ++m) {
    if (counts[m] > 0) p.push_back({static_cast<int>(m), counts[m]});
  }
  return p;
}

// Every (y, z) of `slot` satisfying (3), (6), (7), (4) and (5), with its cost at the prices.
std::vector<Option> SlotOptions(const Cluster& cluster, const PriceBook& book, const Job& job,
                                int slot) {
  const Usage& u = book.usage();
  std::vector<std::vector<int>> ys, zs;
  Vectors(
      cluster.workers, job.worker, [&](int m) { return u.worker_row(slot, m); }, job.chunks, &ys);
  Vectors(
      cluster.ps, job.ps, [&](int m) { return u.ps_row(slot, m); }, job.chunks, &zs);
  std::vector<Option> options;
  for (const auto& y : ys) {
    for (const auto& z : zs) {
      Option o;
      o.plan = {slot, ToPlacements(y), ToPlacements(z)};
      o.workers = o.plan.WorkerCount();
      const int ps = o.plan.PsCount();
      if (o.workers > job.chunks || ps > o.workers) continue;
      if (job.ps_bandwidth() * ps < job.worker_bandwidth() * o.workers - 1e-9) continue;
      for (size_t h = 0; h < y.size(); ++h)
        o.cost += y[h] * book.WorkerUnitCost(slot, h, job.worker);
      for (size_t k = 0; k < z.size(); ++k) o.cost += z[k] * book.PsUnitCost(slot, k, job.ps);
      options.push_back(std::move(o));
    }
  }
  return options;
}

// The best payoff over every feasible schedule in [a_i, T) (-inf if none), and that schedule;
// every feasible schedule too where `all` is given.
double BruteForce(const Cluster& cluster, const PriceBook& book, const Job& job, Plan* best_plan,
                  std::vector<Plan>* all = nullptr) {
  std::vector<std::vector<Option>> options;
  for (int t = job.arrival; t < cluster.slots; ++t) {
    options.push_back(SlotOptions(cluster, book, job, t));
  }
  const int work = job.WorkerSlots(cluster.slot_s);
  double best = -kInf;
  std::vector<const Option*> chosen(options.size());
  std::function<void(size_t, int, double)> go = [&](size_t i, int workers, double cost) {
    if (i == options.size()) {
      int last = -1;
      for (size_t j = 0; j < chosen.size(); ++j) {
        if (chosen[j]->workers > 0) last = job.arrival + static_cast<int>(j);
      }
      if (workers < work || last < 0) return;
      const double payoff = job.utility.Value(last - job.arrival) - cost;
      if (payoff <= best && all == nullptr) return;
      Plan plan;
      for (const Option* o : chosen) {
        if (o->workers > 0) plan.slots.push_back(o->plan);
      }
      plan.end_slot = last;
      plan.utility = job.utility.Value(last - job.arrival);
      if (payoff > best) {
        best = payoff;
        *best_plan = plan;
      }
      if (all != nullptr) all->push_back(std::move(plan));
      return;
    }
    for (const Option& o : options[i]) {
      chosen[i] = &o;
      go(i + 1, workers + o.workers, cost + o.cost);
    }
  };
  go(0, 0, 0);
  return best;
}

// Tiny random instances: every amount a small multiple of 0.5 so that capacities bind.
class Tiny {
 public:
  explicit Tiny(unsigned seed) : rng_(seed) {}

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

  Cluster MakeCluster(int slots) {
    Cluster c;
    for (int h = Int(1, 2); h > 0; --h) {
      c.workers.push_back(
          {{double(Int(1, 3)), double(Int(2, 6)), double(Int(8, 24)), 100, double(Int(4, 8))}});
    }
    for (int k = Int(1, 2); k > 0; --k) {
      c.ps.push_back({{0, double(Int(2, 6)), double(Int(8, 24)), 100, double(Int(4, 12))}});
    }
    c.slots = slots;
    c.slot_s = 2;
    return c;
  }

  Job MakeJob(int id, int arrival) {
    Job j;
    j.id = id;
    j.arrival = arrival;
    j.epochs = 1;
    j.chunks = Int(1, 3);
    j.minibatches_per_chunk = Int(1, 3);
    j.minibatch_s = 1;
    j.gradient = Int(0, 1) * 0.5;
    const double b = Int(1, 3);
    j.worker = {1, 0.5 * Int(1, 4), double(Int(4, 8)), 10, b};
    j.ps = {0, 0.5 * Int(1, 4), double(Int(4, 8)), 10, b + Int(0, 3)};
    const int kind = Int(0, 5);
    if (kind == 0) {
      j.utility = {UtilityKind::kLinear, Real(1, 100), Real(0, 30), 0};
    } else if (kind == 1) {
      j.utility = {UtilityKind::kStep, Real(1, 100), 0, double(Int(0, 2))};
    } else {
      j.utility = {UtilityKind::kSigmoid, Real(1, 100), Real(4, 6), Real(0, 3)};
    }
    return j;
  }

 private:
  std::mt19937 rng_;
};

TEST(OasisBruteForceTest, DpAndGreedyMatchExhaustiveEnumeration) {
  int admitted = 0, rejected = 0, infeasible = 0;
  for (unsigned seed = 1; seed <= 600; ++seed) {
    Tiny tiny(seed);
    const int slots = tiny.Int(3, 4);
    const Cluster cluster = tiny.MakeCluster(slots);
    const double low = tiny.Real(0.05, 1);
    const PriceParams params = PriceParams::Uniform(low, low * tiny.Real(1, 200));
    OasisScheduler exact(cluster, params, {.prune = false});
    OasisScheduler pruned(cluster, params);
    for (int i = tiny.Int(0, 3); i > 0; --i) {  // earlier arrivals make the prices uneven
      const Job background = tiny.MakeJob(100 + i, tiny.Int(0, slots - 1));
      ASSERT_EQ(exact.OnArrival(background).admitted, pruned.OnArrival(background).admitted);
    }
    const Job job = tiny.MakeJob(1, slots - 3);
    Plan brute_plan;
    const double brute = BruteForce(cluster, exact.prices(), job, &brute_plan);
    const Decision d = exact.Evaluate(job);
    const Decision p = pruned.Evaluate(job);
    if (brute == -kInf) {
      EXPECT_TRUE(d.plan.slots.empty()) << "seed " << seed;
      EXPECT_FALSE(p.admitted) << "seed " << seed;
      ++infeasible;
      continue;
    }
    ASSERT_EQ(CheckPlan(cluster, job, brute_plan, exact.prices().usage()), "") << "seed " << seed;
    ASSERT_FALSE(d.plan.slots.empty()) << "seed " << seed;
    EXPECT_NEAR(d.payoff, brute, 1e-9) << "seed " << seed;
    EXPECT_EQ(CheckPlan(cluster, job, d.plan, exact.prices().usage()), "") << "seed " << seed;
    EXPECT_NEAR(d.plan.cost, exact.prices().Cost(job, d.plan), 1e-12);
    EXPECT_EQ(p.admitted, brute > 0) << "seed " << seed;
    if (p.admitted) {
      EXPECT_NEAR(p.payoff, brute, 1e-9) << "seed " << seed;
    }
    ++(brute > 0 ? admitted : rejected);
  }
  EXPECT_GT(admitted, 100);  // the cases exercise both verdicts and infeasibility
  EXPECT_GT(rejected, 100);
  EXPECT_GT(infeasible, 0);
}

Job HandJob(int id, int chunks, int work, Utility utility) {
  Job j;
  j.id = id;
  j.chunks = chunks;
  j.minibatches_per_chunk = work;
  j.epochs = 1;
  j.minibatch_s = 1.0 / chunks;  // W = E N M tau / slot_s = work with slot_s = 1
  j.worker = {1, 1, 1, 1, 1};
  j.ps = {0, 1, 1, 1, 1};
  j.utility = utility;
  return j;
}

TEST(OasisOfflineTest, HandInstanceOnOneContendedServer) {
  // One 1-GPU server, 2 slots: A needs both worker-slots (worth 10 by slot 1), B and C one each
  // (worth 6 and 5). The optimum runs B and C (11), not A (10).
  Cluster cluster;
  cluster.workers = {{{1, 8, 8, 8, 8}}};
  cluster.ps = {{{0, 8, 8, 8, 8}}};
  cluster.slots = 2;
  cluster.slot_s = 1;
  const std::vector<Job> jobs = {HandJob(1, 1, 2, {UtilityKind::kStep, 10, 0, 1}),
                                 HandJob(2, 1, 1, {UtilityKind::kStep, 6, 0, 1}),
                                 HandJob(3, 1, 1, {UtilityKind::kStep, 5, 0, 1})};
  ASSERT_EQ(jobs[0].WorkerSlots(1), 2);
  const OfflineResult r = SolveOffline(cluster, jobs);
  ASSERT_TRUE(r.solved) << r.status;
  EXPECT_NEAR(r.utility, 11, 1e-9);
  EXPECT_NEAR(r.objective, 11, 1e-6);
  EXPECT_EQ(r.admitted, (std::vector<bool>{false, true, true}));
  std::vector<Job> richer = jobs;
  richer[0].utility.g1 = 12;
  EXPECT_NEAR(SolveOffline(cluster, richer).utility, 12, 1e-9);
}

TEST(OasisOfflineTest, ALoneJobGetsTheBestUtilityTheEnumerationFinds) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    Tiny tiny(1000 + seed);
    const Cluster cluster = tiny.MakeCluster(tiny.Int(3, 4));
    const Job job = tiny.MakeJob(1, cluster.slots - 3);
    const PriceBook zero(cluster, PriceParams::Uniform(0, 0));  // every price 0
    Plan plan;
    const double brute = BruteForce(cluster, zero, job, &plan);
    const OfflineResult r = SolveOffline(cluster, {job});
    ASSERT_TRUE(r.solved) << r.status;
    EXPECT_NEAR(r.utility, brute == -kInf ? 0 : std::max(0.0, brute), 1e-7) << "seed " << seed;
  }
}

TEST(OasisOfflineTest, TwoJobsMatchTheirJointEnumeration) {
  // Every schedule of the first job (or none), and for each the best utility of the second on
  // what is left: the optimum of the pair, which GLPK must reach exactly.
  const PriceParams zero = PriceParams::Uniform(0, 0);
  int contended = 0;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    Tiny tiny(3000 + seed);
    Cluster cluster = tiny.MakeCluster(3);
    cluster.workers.resize(1);  // one worker server: the jobs compete for it
    const std::vector<Job> jobs = {tiny.MakeJob(1, tiny.Int(0, 1)), tiny.MakeJob(2, 1)};
    Plan unused;
    std::vector<Plan> first;
    BruteForce(cluster, PriceBook(cluster, zero), jobs[0], &unused, &first);
    double best = std::max(0.0, BruteForce(cluster, PriceBook(cluster, zero), jobs[1], &unused));
    const double alone = best;
    for (const Plan& plan : first) {
      PriceBook book(cluster, zero);
      book.Admit(jobs[0], plan);
      best =
          std::max(best, plan.utility + std::max(0.0, BruteForce(cluster, book, jobs[1], &unused)));
    }
    const OfflineResult opt = SolveOffline(cluster, jobs);
    ASSERT_TRUE(opt.solved) << opt.status;
    EXPECT_NEAR(opt.utility, best, 1e-7) << "seed " << seed;
    double best_first = 0;
    for (const Plan& plan : first) best_first = std::max(best_first, plan.utility);
    contended += best < alone + best_first - 1e-9;  // the two could not both have their best
  }
  EXPECT_GT(contended, 10);
}

TEST(OasisOfflineTest, ThreeJobsMatchTheirJointEnumeration) {
  // One worker server, three slots; the first job may use slots 1 and 2, the other two only slot
  // 2. Every schedule of the first (or none), every schedule of the second on what is left (or
  // none), and the third's best on the rest: the optimum of the three, which GLPK must reach. No
  // incumbent of OASiS's plays a part in the comparison.
  const PriceParams zero = PriceParams::Uniform(0, 0);
  int contended = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    Tiny tiny(5000 + seed);
    Cluster cluster = tiny.MakeCluster(3);
    cluster.workers.resize(1);
    const std::vector<Job> jobs = {tiny.MakeJob(1, 1), tiny.MakeJob(2, 2), tiny.MakeJob(3, 2)};
    Plan unused;
    std::vector<Plan> firsts;
    BruteForce(cluster, PriceBook(cluster, zero), jobs[0], &unused, &firsts);
    firsts.push_back(Plan{});  // not admitted
    double best = 0, alone = 0;
    for (const Job& job : jobs) {
      alone += std::max(0.0, BruteForce(cluster, PriceBook(cluster, zero), job, &unused));
    }
    for (const Plan& first : firsts) {
      PriceBook after_first(cluster, zero);
      if (!first.slots.empty()) after_first.Admit(jobs[0], first);
      std::vector<Plan> seconds;
      BruteForce(cluster, after_first, jobs[1], &unused, &seconds);
      seconds.push_back(Plan{});
      for (const Plan& second : seconds) {
        PriceBook after_second = after_first;
        if (!second.slots.empty()) after_second.Admit(jobs[1], second);
        const double third = std::max(0.0, BruteForce(cluster, after_second, jobs[2], &unused));
        best = std::max(best, first.utility + second.utility + third);
      }
    }
    const OfflineResult opt = SolveOffline(cluster, jobs);
    ASSERT_TRUE(opt.solved) << opt.status;
    EXPECT_NEAR(opt.utility, best, 1e-7) << "seed " << seed;
    contended += best < alone - 1e-9;
  }
  EXPECT_GT(contended, 5);
}

TEST(OasisOfflineTest, OptimumBoundsOasisOnRandomSmallInstances) {
  for (unsigned seed = 1; seed <= 15; ++seed) {
    Tiny tiny(2000 + seed);
    const Cluster cluster = tiny.MakeCluster(6);
    std::vector<Job> jobs;
    for (int i = tiny.Int(5, 8); i > 0; --i) jobs.push_back(tiny.MakeJob(i, tiny.Int(0, 5)));
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const Job& a, const Job& b) { return a.arrival < b.arrival; });
    const OfflineResult opt = SolveOffline(cluster, jobs, {.time_limit_s = 30});
    ASSERT_TRUE(opt.solved) << opt.status;
    EXPECT_NEAR(opt.objective, opt.utility, 1e-6);
    EXPECT_DOUBLE_EQ(opt.upper_bound, opt.objective);
    Usage usage(cluster);
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!opt.admitted[i]) continue;
      ASSERT_EQ(CheckPlan(cluster, jobs[i], opt.plans[i], usage), "") << "seed " << seed;
      usage.Add(jobs[i], opt.plans[i]);
    }
    const PriceParams estimate = EstimatePrices(cluster, jobs);
    for (const auto& [low, high] : {std::pair{1.0, 1.0}, {0.1, 1.0}, {10.0, 1.0}, {1.0, 0.1}}) {
      OasisScheduler oasis(cluster, estimate.Scaled(low, high));
      for (const Job& job : jobs) oasis.OnArrival(job);
      EXPECT_GE(opt.utility, oasis.admitted_utility() - 1e-9) << "seed " << seed;
    }
  }
}

TEST(OasisOfflineTest, AtTheLargestSizeATimeLimitedResultIsFeasibleAndEarnsWhatItReports) {
  // 20 jobs, 4 + 4 machines, 12 slots: GLPK does not finish in a second; whatever it returns
  // must be feasible and under its bound.
  Tiny tiny(77);
  Cluster cluster = tiny.MakeCluster(12);
  cluster.workers.assign(4, cluster.workers[0]);
  cluster.ps.assign(4, cluster.ps[0]);
  std::vector<Job> jobs;
  for (int i = 0; i < 20; ++i) jobs.push_back(tiny.MakeJob(i, tiny.Int(0, 11)));
  const OfflineResult opt = SolveOffline(cluster, jobs, {.time_limit_s = 1});
  EXPECT_GE(opt.upper_bound, opt.utility - 1e-6) << opt.status;
  // (Its utility is at least OASiS's by construction, OASiS's schedule being its first
  // incumbent; what is checked is that what it returns is real: feasible plans, jointly within
  // capacity, earning exactly the utility it reports.)
  Usage usage(cluster);
  double earned = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!opt.admitted[i]) continue;
    ASSERT_EQ(CheckPlan(cluster, jobs[i], opt.plans[i], usage), "");
    usage.Add(jobs[i], opt.plans[i]);
    earned += jobs[i].utility.Value(opt.plans[i].end_slot - jobs[i].arrival);
  }
  EXPECT_NEAR(earned, opt.utility, 1e-6);
  EXPECT_GT(opt.utility, 0);
}

}  // namespace
}  // namespace troupe::scheduling::oasis
