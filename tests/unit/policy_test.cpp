// Scheduling policies (scheduling/policy.hpp): the order in which a round offers GPUs to jobs.
//
// Contract checked here, on hand-made jobs with exact expected orders:
//   FIFO by arrival; SRTF by remaining time at the expected speed-up (shortest first); LAS by
//   attained GPU-seconds (least first); FTF by finish-time fairness rho, largest first (or, as
//   Synergy's simulator, smallest first). ExpectedSpeedup as Synergy's simulator reckons it.
//   Every tie is broken by arrival, then job id, so the order is total: the same set of jobs
//   comes out in the same order whatever order it went in (a run's determinism depends on it).
#include "scheduling/policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string_view>
#include <tuple>
#include <vector>

#include "scheduling/mechanism_registry.hpp"
#include "scheduling/policy_registry.hpp"
#include "scheduling/queue_order.hpp"

namespace troupe::scheduling {
namespace {

SchedJob Job(int64_t id, double arrival_s) {
  SchedJob j;
  j.id = id;
  j.arrival_s = arrival_s;
  j.iter_time_s = 1;
  j.iterations_total = 100;
  j.iterations_left = 100;
  return j;
}

std::vector<int64_t> Order(std::string_view policy, double now_s,
                           const std::vector<SchedJob>& jobs) {
  std::vector<const SchedJob*> ptrs;
  for (const SchedJob& j : jobs) ptrs.push_back(&j);
  OrderJobs(PolicyNamed(policy), now_s, ptrs);
  std::vector<int64_t> ids;
  for (const SchedJob* j : ptrs) ids.push_back(j->id);
  return ids;
}

// Finish-time fairness as the policy defines it: how much longer than its ideal the job will
// have taken if it ran from now on.
double Rho(const SchedJob& j, double now_s) {
  return (now_s - j.arrival_s + j.remaining_s()) / j.ideal_duration_s();
}

// Each policy's primary key, smaller first, as documented in policy.hpp (FTF: largest rho first).
double Key(std::string_view p, const SchedJob& j) {
  if (p == "fifo") return j.arrival_s;
  if (p == "srtf") return j.remaining_s();
  if (p == "las") return j.attained_gpu_s;
  if (p == "ftf") return -Rho(j, 1000);
  ADD_FAILURE() << "no key for " << p;
  return 0;
}

TEST(PolicyTest, NamesAreTheConfigSpellings) {
  for (std::string_view name : {"fifo", "srtf", "las", "ftf"}) {
    ASSERT_NE(FindPolicy(name), nullptr) << name;
    EXPECT_EQ(FindPolicy(name)->name, name);
  }
  EXPECT_EQ(FindPolicy("sjf_typo"), nullptr);
}

TEST(PolicyTest, FifoOrdersByArrivalThenId) {
  // Job 4 and job 2 arrive together: the lower id goes first.
  std::vector<SchedJob> jobs = {Job(1, 30), Job(4, 10), Job(3, 20), Job(2, 10), Job(5, 0)};
  EXPECT_EQ(Order("fifo", 100, jobs), (std::vector<int64_t>{5, 2, 4, 3, 1}));
}

TEST(PolicyTest, FifoIgnoresRemainingAndAttainedService) {
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 1)};
  jobs[0].iterations_left = 1'000'000;
  jobs[0].attained_gpu_s = 1e9;
  EXPECT_EQ(Order("fifo", 100, jobs), (std::vector<int64_t>{1, 2}));
}

TEST(PolicyTest, SrtfOrdersByRemainingTimeShortestFirst) {
  // remaining_s = iterations_left * iter_time_s: 100, 20, 20, 5, 20.
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 5), Job(3, 1), Job(4, 9), Job(5, 1)};
  jobs[0].iterations_left = 100;
  jobs[1].iterations_left = 10, jobs[1].iter_time_s = 2;
  jobs[2].iterations_left = 40, jobs[2].iter_time_s = 0.5;
  jobs[3].iterations_left = 5;
  jobs[4].iterations_left = 20;
  // The three 20 s jobs: arrival 1 (ids 3, 5) before arrival 5 (id 2).
  EXPECT_EQ(Order("srtf", 100, jobs), (std::vector<int64_t>{4, 3, 5, 2, 1}));
}

TEST(PolicyTest, SrtfUsesRemainingNotTotalWork) {
  // Job 1 was long but is nearly done; job 2 is short but has not started.
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 0)};
  jobs[0].iterations_total = 10'000, jobs[0].iterations_left = 3;
  jobs[1].iterations_total = 50, jobs[1].iterations_left = 50;
  EXPECT_EQ(Order("srtf", 0, jobs), (std::vector<int64_t>{1, 2}));
}

TEST(PolicyTest, LasOrdersByAttainedServiceLeastFirst) {
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 1), Job(3, 2), Job(4, 3), Job(5, 2)};
  jobs[0].attained_gpu_s = 600;
  jobs[1].attained_gpu_s = 0;
  jobs[2].attained_gpu_s = 300;
  jobs[3].attained_gpu_s = 0;
  jobs[4].attained_gpu_s = 300;
  EXPECT_EQ(Order("las", 100, jobs), (std::vector<int64_t>{2, 4, 3, 5, 1}));
}

TEST(PolicyTest, FtfOrdersByLargestRho) {
  // rho = (now - arrival + remaining) / ideal, now = 1000:
  //   job 1: (1000 -   0 + 100) / 100 = 11
  //   job 2: (1000 - 900 + 100) / 100 =  2
  //   job 3: (1000 - 500 +  50) / 200 =  2.75
  //   job 4: (1000 -   0 + 900) / 950 =  2
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 900), Job(3, 500), Job(4, 0)};
  jobs[2].iterations_total = 200, jobs[2].iterations_left = 50;
  jobs[3].iterations_total = 950, jobs[3].iterations_left = 900;
  // Jobs 2 and 4 tie at rho 2: job 4 arrived first.
  EXPECT_EQ(Order("ftf", 1000, jobs), (std::vector<int64_t>{1, 3, 4, 2}));
}

TEST(PolicyTest, FtfDependsOnNow) {
  // Job 1: ideal and remaining 1000 s, arrived at 0. Jobs 2 and 3: ideal and remaining 10 s,
  // arrived at 90 and 9'995. Waiting weighs more the shorter the job, so job 3 overtakes job 1
  // once it has waited long enough.
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 90), Job(3, 9'995)};
  jobs[0].iterations_total = jobs[0].iterations_left = 1000;
  jobs[1].iterations_total = jobs[1].iterations_left = 10;
  jobs[2].iterations_total = jobs[2].iterations_left = 10;
  // now = 10'000: rho1 = 11'000 / 1000 = 11, rho2 = 9'920 / 10 = 992, rho3 = 15 / 10 = 1.5.
  EXPECT_EQ(Order("ftf", 10'000, jobs), (std::vector<int64_t>{2, 1, 3}));
  // now = 20'000: rho1 = 21, rho2 = 1'992, rho3 = 10'015 / 10 = 1'001.5.
  EXPECT_EQ(Order("ftf", 20'000, jobs), (std::vector<int64_t>{2, 3, 1}));
}

TEST(PolicyTest, FtfSynergyOrderServesSmallestRhoFirst) {
  // The jobs of FtfOrdersByLargestRho (rho 11, 2, 2.75, 2): the other end first; the tie at
  // rho 2 still goes to the earlier arrival (job 4).
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 900), Job(3, 500), Job(4, 0)};
  jobs[2].iterations_total = 200, jobs[2].iterations_left = 50;
  jobs[3].iterations_total = 950, jobs[3].iterations_left = 900;
  std::vector<const SchedJob*> ptrs;
  for (const SchedJob& j : jobs) ptrs.push_back(&j);
  OrderJobs(PolicyNamed("ftf"), 1000, ptrs, OrderOptions{.ftf_order = FtfOrder::kSmallestFirst});
  std::vector<int64_t> ids;
  for (const SchedJob* j : ptrs) ids.push_back(j->id);
  EXPECT_EQ(ids, (std::vector<int64_t>{4, 2, 3, 1}));
}

TEST(PolicyTest, RemainingTimeIsAtTheExpectedSpeedup) {
  // Job 1: 100 iterations left at speed-up 2.5 = 40 s; job 2: 50 iterations at 1 = 50 s.
  std::vector<SchedJob> jobs = {Job(1, 0), Job(2, 0)};
  jobs[0].expected_speedup = 2.5;
  jobs[1].iterations_left = 50;
  EXPECT_EQ(Order("srtf", 0, jobs), (std::vector<int64_t>{1, 2}));
  // FTF: rho = (now - arrival + remaining) / ideal at the share: (0 + 40) / 100 = 0.4 for job 1,
  // (0 + 50) / 100 = 0.5 for job 2.
  EXPECT_EQ(Order("ftf", 0, jobs), (std::vector<int64_t>{2, 1}));
}

TEST(PolicyTest, ExpectedSpeedupIsWhatSynergysSimulatorSortsBy) {
  SchedJob j = Job(1, 0);
  j.ideal_cpus_per_gpu = 6, j.ideal_memory_gb_per_gpu = 62.5, j.speedup_at_ideal = 1.8;
  JobPlacement at_ideal{1, {PlacementPart{0, 2, 12, 125}}};
  JobPlacement at_share{1, {PlacementPart{0, 2, 6, 125}}};  // 3 CPUs a GPU; no matrix: 1
  // GPU-proportional never gives more than the share.
  ASSERT_TRUE(MechanismNamed("proportional").proportional_share_only);
  EXPECT_EQ(ExpectedSpeedup(true, j, &at_ideal), 1);
  EXPECT_EQ(ExpectedSpeedup(true, j, nullptr), 1);
  for (std::string_view name : {"greedy", "tune", "opt"}) {
    const bool m = MechanismNamed(name).proportional_share_only;
    ASSERT_FALSE(m) << name;
    EXPECT_EQ(ExpectedSpeedup(m, j, nullptr), 1.8);  // not placed: its ideal
    EXPECT_EQ(ExpectedSpeedup(m, j, &at_ideal), 1.8);
    EXPECT_EQ(ExpectedSpeedup(m, j, &at_share), 1);  // TUNE fell back to the share
  }
}

TEST(PolicyTest, EqualKeysFallBackToArrivalThenId) {
  // Identical work and service, different arrivals: FIFO, SRTF and LAS all give the FIFO order.
  std::vector<SchedJob> jobs = {Job(9, 5), Job(7, 5), Job(8, 1), Job(1, 7)};
  const std::vector<int64_t> fifo = {8, 7, 9, 1};
  for (std::string_view p : {"fifo", "srtf", "las"}) {
    EXPECT_EQ(Order(p, 100, jobs), fifo) << p;
  }
  // FTF's rho grows with waiting, so it ties only for the same arrival: then the id decides.
  std::vector<SchedJob> same = {Job(9, 5), Job(7, 5), Job(8, 5)};
  EXPECT_EQ(Order("ftf", 100, same), (std::vector<int64_t>{7, 8, 9}));
}

// Many jobs with few distinct keys (so ties are common): the output order must not depend on the
// input order, and must be sorted by (key, arrival, id).
TEST(PolicyTest, OrderIsTotalWhateverTheInputOrder) {
  std::mt19937_64 rng(20261129);
  std::uniform_int_distribution<int> small(0, 3);
  std::vector<SchedJob> jobs;
  for (int64_t id = 0; id < 200; ++id) {
    SchedJob j = Job(id, 10.0 * small(rng));
    j.iterations_total = 100 * (1 + small(rng));
    j.iterations_left = j.iterations_total / (1 + small(rng));
    j.attained_gpu_s = 300.0 * small(rng);
    jobs.push_back(j);
  }
  for (std::string_view p : {"fifo", "srtf", "las", "ftf"}) {
    const std::vector<int64_t> first = Order(p, 1000, jobs);
    for (int shuffle = 0; shuffle < 5; ++shuffle) {
      std::vector<SchedJob> copy = jobs;
      std::shuffle(copy.begin(), copy.end(), rng);
      EXPECT_EQ(Order(p, 1000, copy), first) << p;
    }
    // Adjacent pairs are in (key, arrival, id) order: the order is exactly the documented one.
    for (size_t i = 1; i < first.size(); ++i) {
      const SchedJob& a = jobs[first[i - 1]];
      const SchedJob& b = jobs[first[i]];
      EXPECT_TRUE(std::tuple(Key(p, a), a.arrival_s, a.id) <
                  std::tuple(Key(p, b), b.arrival_s, b.id))
          << p << ": job " << a.id << " before job " << b.id;
    }
  }
}

}  // namespace
}  // namespace troupe::scheduling

namespace troupe::scheduling {
namespace {

// Synergy's priority bump: a job found, when a round is planned, to have waited longer than the
// bound is marked, goes first from the next order on whatever the policy says, and stays first
// until it finishes; among several marked jobs the policy's order holds.
TEST(StarvationGuard, MarkedJobsGoFirstInPolicyOrderForGood) {
  SchedJob shortest, long_a, long_b;
  shortest.id = 1;
  shortest.arrival_s = 5000;
  shortest.iter_time_s = 1;
  shortest.iterations_left = 10;
  long_a = shortest;
  long_a.id = 2;
  long_a.arrival_s = 0;
  long_a.iterations_left = 1000;
  long_a.last_served_s = 100;
  long_b = long_a;
  long_b.id = 3;
  long_b.iterations_left = 500;
  long_b.last_served_s = -1;  // never ran: waiting since arrival at 0
  std::vector<const SchedJob*> jobs = {&shortest, &long_a, &long_b};
  OrderJobs(PolicyNamed("srtf"), 6000, jobs);  // nothing marked yet: plain SRTF
  EXPECT_EQ(jobs[0]->id, 1);
  for (SchedJob* j : {&shortest, &long_a, &long_b}) MarkStarving(6000, 1000, *j);
  EXPECT_FALSE(shortest.starving);  // waited 1000 s: not longer than the bound
  EXPECT_TRUE(long_a.starving && long_b.starving);
  OrderJobs(PolicyNamed("srtf"), 6300, jobs);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0]->id, 3);  // marked, shorter of the two
  EXPECT_EQ(jobs[1]->id, 2);
  EXPECT_EQ(jobs[2]->id, 1);
  // Job 3 ran in the round: it keeps its mark (and its place) until it finishes.
  long_b.last_served_s = 6600;
  MarkStarving(6600, 1000, long_b);
  OrderJobs(PolicyNamed("srtf"), 6600, jobs);
  EXPECT_EQ(jobs[0]->id, 3);
  SchedJob fresh = long_a;
  fresh.starving = false;
  MarkStarving(6000, 0, fresh);  // bound 0: the guard is off
  EXPECT_FALSE(fresh.starving);
}

// Synergy's simulator marks starving jobs under FIFO too but sorts its FIFO queue by arrival
// alone: troupe's FIFO leaves the mark unread, in a sort and in a long queue's kept order alike,
// while the other policies put a marked job first.
TEST(StarvationGuard, FifoKeepsArrivalOrderOverTheMark) {
  const SchedJob older = Job(1, 0);
  SchedJob marked = Job(2, 50);
  marked.starving = true;
  EXPECT_FALSE(PolicyNamed("fifo").starving_first);
  for (std::string_view p : {"fifo", "srtf", "las", "ftf"}) {
    std::vector<const SchedJob*> jobs = {&marked, &older};
    OrderJobs(PolicyNamed(p), 100, jobs);
    QueueOrder kept(PolicyNamed(p));
    kept.File(marked);
    kept.File(older);
    std::vector<const SchedJob*> head;
    kept.Head(100, 2, head);
    ASSERT_EQ(head.size(), 2u) << p;
    const int64_t first = p == "fifo" ? 1 : 2;
    EXPECT_EQ(jobs[0]->id, first) << p;
    EXPECT_EQ(head[0]->id, first) << p;
  }
}

}  // namespace
}  // namespace troupe::scheduling
