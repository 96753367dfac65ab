// QueueOrder and StarvationGuard (scheduling/queue_order.hpp, starvation_guard.hpp): the orders a
// scheduler keeps between rounds instead of re-sorting its queue.
//
// Contract checked here: after any sequence of filings, re-filings and removals, Head gives
// exactly the first jobs OrderJobs gives for the same jobs, each with what a placement reads of it
// as the job is now, under every registered policy (a user's too) and both FTF directions, with
// starving jobs first where the policy reads the mark; StarvationGuard::Due gives exactly the
// tracked jobs MarkStarving would mark. Jobs are drawn at random, with many equal keys, so ties
// matter.
#include "scheduling/queue_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "scheduling/policy.hpp"
#include "scheduling/policy_registry.hpp"
#include "scheduling/starvation_guard.hpp"

namespace troupe::scheduling {
namespace {

// Jobs with few distinct values, so that keys and arrivals tie often.
SchedJob RandomJob(int64_t id, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> small(1, 4);
  SchedJob j;
  j.id = id;
  j.arrival_s = 100.0 * small(rng);
  j.iter_time_s = 0.5 * small(rng);
  j.iterations_total = 100 * small(rng);
  j.iterations_left = j.iterations_total - 10 * small(rng);
  j.attained_gpu_s = 300.0 * (small(rng) - 1);
  j.expected_speedup = small(rng) == 1 ? 1.5 : 1;
  return j;
}

// The head's ids, each checked to be the filed job itself (its address in `jobs`): -1 where not.
std::vector<int64_t> IdsAt(const std::vector<const SchedJob*>& head,
                           const std::map<int64_t, SchedJob>& jobs) {
  std::vector<int64_t> ids;
  for (const SchedJob* job : head) {
    auto it = jobs.find(job->id);
    ids.push_back(it != jobs.end() && &it->second == job ? job->id : -1);
  }
  return ids;
}

std::vector<int64_t> Expected(const PolicyDefinition& policy, const OrderOptions& options,
                              double now_s, const std::map<int64_t, SchedJob>& jobs, size_t count) {
  std::vector<const SchedJob*> all;
  for (const auto& [id, j] : jobs) all.push_back(&j);
  OrderJobs(policy, now_s, all, options);
  std::vector<int64_t> ids;
  for (size_t i = 0; i < std::min(count, all.size()); ++i) ids.push_back(all[i]->id);
  return ids;
}

struct Case {
  const PolicyDefinition* policy;
  FtfOrder ftf_order;
};

// Every registered policy; FTF's key in both directions.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const PolicyDefinition* policy : RegisteredPolicies()) {
    cases.push_back({policy, FtfOrder::kLargestFirst});
    if (policy->name == "ftf") cases.push_back({policy, FtfOrder::kSmallestFirst});
  }
  return cases;
}

class QueueOrderTest : public ::testing::TestWithParam<Case> {};

TEST_P(QueueOrderTest, HeadIsTheHeadOfAFullSortAfterEveryChange) {
  const Case c = GetParam();
  OrderOptions options;
  options.ftf_order = c.ftf_order;
  QueueOrder order(*c.policy, options);
  std::map<int64_t, SchedJob> jobs;  // what is filed, by id
  std::mt19937_64 rng(7);
  int64_t next_id = 0;
  std::vector<const SchedJob*> head;
  std::vector<QueuedJob> queued;
  for (int step = 0; step < 300; ++step) {
    const double now_s = 1000.0 + 300.0 * step;
    // Arrivals.
    for (int k = 0; k < 3; ++k) {
      SchedJob& j = jobs[next_id];  // filed where it stays
      j = RandomJob(next_id++, rng);
      order.File(j);
    }
    // Some jobs run (their keys move), some starve, some leave.
    for (auto it = jobs.begin(); it != jobs.end();) {
      const int dice = static_cast<int>(rng() % 10);
      SchedJob& j = it->second;
      if (dice == 0) {
        order.Remove(j.id);
        it = jobs.erase(it);
        continue;
      }
      if (dice == 1) {
        j.attained_gpu_s += 300;
        j.iterations_left = std::max<int64_t>(1, j.iterations_left - 10);
        j.expected_speedup = j.expected_speedup == 1 ? 1.25 : 1;
        order.File(j);
      } else if (dice == 2 && !j.starving) {
        j.starving = true;
        order.File(j);
      } else if (dice == 3) {
        // Profiled again: what a placement reads of it changes, while its key may not.
        j.ideal_cpus_per_gpu = j.ideal_cpus_per_gpu == 0 ? 4 : 0;
        order.File(j);
      }
      ++it;
    }
    ASSERT_EQ(order.size(), jobs.size());
    for (size_t count : {size_t{1}, size_t{8}, jobs.size()}) {
      order.Head(now_s, count, head);
      ASSERT_EQ(IdsAt(head, jobs), Expected(*c.policy, options, now_s, jobs, count))
          << "step " << step << ", head of " << count;
      // The head with what a placement reads of each job: the job as it is now.
      order.Head(now_s, count, queued);
      ASSERT_EQ(queued.size(), head.size());
      for (size_t i = 0; i < head.size(); ++i) {
        ASSERT_EQ(queued[i], QueuedJobOf(*head[i])) << "step " << step << ", place " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, QueueOrderTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.policy->name) +
                                  (info.param.ftf_order == FtfOrder::kSmallestFirst ? "_smallest"
                                                                                    : "");
                         });

// A user's clock-reading key without ClockTerms: the queue keeps a copy of each job.
double WaitKey(const SchedJob& job, double now_s, const OrderOptions&) {
  return (job.attained_gpu_s + 1) / (now_s - job.arrival_s + 1);
}

TEST(QueueOrder, ClockKeyWithoutTermsReadsTheJobAsFiled) {
  const PolicyDefinition policy{.name = "wait", .key = WaitKey, .key_reads_clock = true};
  QueueOrder order(policy);
  std::map<int64_t, SchedJob> jobs;
  std::mt19937_64 rng(3);
  std::vector<const SchedJob*> head;
  for (int64_t id = 0; id < 40; ++id) {
    jobs[id] = RandomJob(id, rng);
    order.File(jobs[id]);
  }
  for (int step = 0; step < 50; ++step) {
    const double now_s = 500.0 + 300.0 * step;
    const int64_t moved = static_cast<int64_t>(rng() % 40);
    if (jobs.contains(moved)) {
      jobs[moved].attained_gpu_s += 600;
      order.File(jobs[moved]);
    }
    const int64_t gone = static_cast<int64_t>(rng() % 40);
    order.Remove(gone);
    jobs.erase(gone);
    order.Head(now_s, 10, head);
    ASSERT_EQ(IdsAt(head, jobs), Expected(policy, {}, now_s, jobs, 10)) << "step " << step;
  }
}

TEST(QueueOrder, SplitClockKeysEqualTheKeyBitForBit) {
  std::mt19937_64 rng(5);
  for (const PolicyDefinition* policy : RegisteredPolicies()) {
    if (policy->clock_terms == nullptr) continue;
    ASSERT_NE(policy->clock_key, nullptr) << policy->name;
    for (FtfOrder direction : {FtfOrder::kLargestFirst, FtfOrder::kSmallestFirst}) {
      OrderOptions options;
      options.ftf_order = direction;
      for (int i = 0; i < 200; ++i) {
        const SchedJob job = RandomJob(i, rng);
        const double now_s = 1e3 * static_cast<double>(rng() % 100000) / 7.0;
        EXPECT_EQ(policy->clock_key(policy->clock_terms(job, options), now_s, options),
                  policy->key(job, now_s, options))
            << policy->name << " job " << i;
      }
    }
  }
}

TEST(QueueOrder, RemovingAnUnfiledJobChangesNothing) {
  QueueOrder order(PolicyNamed("las"));
  SchedJob j;
  j.id = 3;
  order.File(j);
  order.Remove(4);
  EXPECT_EQ(order.size(), 1u);
  EXPECT_TRUE(order.Contains(3));
  order.Remove(3);
  EXPECT_EQ(order.size(), 0u);
}

TEST(StarvationGuardTest, DueIsExactlyWhatMarkStarvingWouldMark) {
  constexpr double kBound = 1000;
  StarvationGuard guard(kBound);
  std::map<int64_t, SchedJob> jobs;  // tracked, not marked
  std::mt19937_64 rng(11);
  std::vector<int64_t> due;
  for (int step = 0; step < 200; ++step) {
    const double now_s = 300.0 * step;
    SchedJob j;
    j.id = step;
    j.arrival_s = now_s - 100.0 * static_cast<double>(rng() % 3);
    guard.Track(j);
    jobs[j.id] = j;
    for (auto& [id, job] : jobs) {
      if (rng() % 4 == 0) {  // it ran in the round that ends now
        job.last_served_s = now_s;
        guard.Track(job);
      }
    }
    guard.Due(
        now_s, [&jobs](int64_t id) { return WaitingSince(jobs.at(id)); }, due);
    std::vector<int64_t> expected;
    for (auto& [id, job] : jobs) {
      SchedJob copy = job;
      MarkStarving(now_s, kBound, copy);
      if (copy.starving) expected.push_back(id);
    }
    std::sort(due.begin(), due.end());
    ASSERT_EQ(due, expected) << "step " << step;
    for (int64_t id : due) {  // marked now: the guard forgets them
      guard.Forget(id);
      jobs.erase(id);
    }
  }
}

TEST(StarvationGuardTest, DueJobsStayDueUntilForgottenAndAreNeverListedTwice) {
  constexpr double kBound = 1000;
  StarvationGuard guard(kBound);
  std::vector<int64_t> due;
  SchedJob a;
  SchedJob b;
  const auto since = [&a, &b](int64_t id) { return WaitingSince(id == 1 ? a : b); };
  a.id = 1;
  a.arrival_s = 0;
  guard.Track(a);
  a.last_served_s = 500;  // ran, then the start of its wait is set back (a restored state)
  guard.Track(a);
  a.last_served_s = -1;
  guard.Track(a);
  b.id = 2;
  b.arrival_s = 100;
  guard.Track(b);
  guard.Due(2000, since, due);  // both due; neither forgotten (not runnable this round, say)
  EXPECT_EQ(due, (std::vector<int64_t>{1, 2}));
  guard.Due(2000, since, due);
  EXPECT_EQ(due, (std::vector<int64_t>{1, 2}));
  guard.Forget(1);
  b.last_served_s = 1900;  // b ran: it waits anew
  guard.Track(b);
  guard.Due(2000, since, due);
  EXPECT_TRUE(due.empty());
  guard.Due(3000, since, due);
  EXPECT_EQ(due, (std::vector<int64_t>{2}));
}

TEST(StarvationGuardTest, ManyRetracksOfFewJobsKeepTheAnswer) {
  // Far more pushes than jobs: outdated entries are dropped on the way, the answer stays exact.
  constexpr double kBound = 2000;  // the four that run waited at most 1,400 s at the end
  StarvationGuard guard(kBound);
  std::vector<SchedJob> jobs(5);
  for (int64_t i = 0; i < 5; ++i) {
    jobs[i].id = i;
    jobs[i].arrival_s = 0;
    guard.Track(jobs[i]);
  }
  std::vector<int64_t> due;
  for (int step = 1; step <= 5000; ++step) {
    SchedJob& j = jobs[step % 4];  // job 4 never runs
    j.last_served_s = 300.0 * step;
    guard.Track(j);
  }
  guard.Due(
      300.0 * 5000 + 500, [&jobs](int64_t id) { return WaitingSince(jobs[id]); }, due);
  EXPECT_EQ(due, (std::vector<int64_t>{4}));
}

TEST(StarvationGuardTest, OffTracksNothing) {
  StarvationGuard guard(0);
  SchedJob j;
  j.arrival_s = 0;
  guard.Track(j);
  std::vector<int64_t> due;
  guard.Due(
      1e12, [](int64_t) { return 0.0; }, due);
  EXPECT_FALSE(guard.enabled());
  EXPECT_TRUE(due.empty());
}

}  // namespace
}  // namespace troupe::scheduling
