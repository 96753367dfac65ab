// LeaseAssembly (messages/lease_assembly.hpp): the one rule by which both kinds of job — the
// emulated job actor and the agent job machine — put a lease together from the servers' grants.
#include "messages/lease_assembly.hpp"

#include <gtest/gtest.h>

namespace troupe {
namespace {

LeaseGrant Part(int32_t server, int32_t gpus, int32_t parts, double start_s = 300) {
  LeaseGrant g;
  g.round = static_cast<int64_t>(start_s / 300);
  g.start_s = start_s;
  g.end_s = start_s + 300;
  g.server = server;
  for (int32_t i = 0; i < gpus; ++i) g.gpu_ids.push_back(i);
  g.cpus = 3.0 * gpus;
  g.memory_gb = 62.5 * gpus;
  g.parts = parts;
  return g;
}

TEST(LeaseAssembly, AGangLeaseRunsOnlyOnceEveryPartIsGranted) {
  LeaseAssembly lease;
  EXPECT_EQ(lease.Add(Part(0, 4, 2)), LeaseAssembly::Outcome::kAdded);
  EXPECT_FALSE(lease.complete());
  EXPECT_FALSE(lease.Runnable(8));
  EXPECT_EQ(lease.Add(Part(3, 4, 2)), LeaseAssembly::Outcome::kAdded);
  EXPECT_TRUE(lease.complete());
  EXPECT_TRUE(lease.Runnable(8));
  EXPECT_EQ(lease.gpus(), 8);
  EXPECT_DOUBLE_EQ(lease.cpus(), 24);
  EXPECT_DOUBLE_EQ(lease.memory_gb(), 500);
  EXPECT_FALSE(lease.Runnable(16)) << "granted GPUs must be all of the job's";
}

TEST(LeaseAssembly, ARefusedPartMeansTheLeaseDoesNotRun) {
  LeaseAssembly lease;
  LeaseGrant refused = Part(1, 4, 2);
  refused.granted = false;
  lease.Add(Part(0, 4, 2));
  lease.Add(refused);
  EXPECT_TRUE(lease.complete());
  EXPECT_TRUE(lease.refused());
  EXPECT_FALSE(lease.Runnable(8));
  EXPECT_EQ(lease.parts().size(), 1u);
}

TEST(LeaseAssembly, ADuplicatedGrantCountsOnce) {
  LeaseAssembly lease;
  EXPECT_EQ(lease.Add(Part(0, 4, 2)), LeaseAssembly::Outcome::kAdded);
  EXPECT_EQ(lease.Add(Part(0, 4, 2)), LeaseAssembly::Outcome::kDuplicate);
  EXPECT_FALSE(lease.complete()) << "the same server twice is not two parts";
  EXPECT_EQ(lease.gpus(), 4);
}

TEST(LeaseAssembly, ALaterLeaseStartsOverAndAnEarlierOneIsStale) {
  LeaseAssembly lease;
  lease.Add(Part(0, 4, 2, 300));
  EXPECT_EQ(lease.Add(Part(1, 1, 1, 600)), LeaseAssembly::Outcome::kAdded);
  EXPECT_EQ(lease.start_s(), 600);
  EXPECT_TRUE(lease.Runnable(1));
  EXPECT_EQ(lease.Add(Part(1, 4, 2, 300)), LeaseAssembly::Outcome::kStale);
  EXPECT_EQ(lease.gpus(), 1);
}

TEST(LeaseAssembly, AnEndedLeaseTakesNoMoreGrants) {
  LeaseAssembly lease;
  lease.Add(Part(0, 4, 2));
  lease.MarkEnded();
  EXPECT_EQ(lease.Add(Part(1, 4, 2)), LeaseAssembly::Outcome::kEnded);
  EXPECT_FALSE(lease.complete());
}

TEST(LeaseAssembly, TheLeaseRunsAtItsSlowestServersSpeed) {
  LeaseAssembly lease;
  LeaseGrant slow = Part(1, 4, 2);
  slow.speed = 0.5;
  lease.Add(Part(0, 4, 2));
  lease.Add(slow);
  EXPECT_DOUBLE_EQ(lease.speed(), 0.5);
  lease.Add(Part(0, 1, 1, 600));
  EXPECT_DOUBLE_EQ(lease.speed(), 1) << "a new lease forgets the old one's stragglers";
}

TEST(LeaseAssembly, ALeaseOnFasterGpusRunsFasterThanTheReference) {
  LeaseAssembly lease;
  LeaseGrant fast = Part(0, 4, 2);
  fast.speed = 2.5;  // e.g. an A100 against the V100 reference
  LeaseGrant faster = Part(1, 4, 2);
  faster.speed = 7.9;
  lease.Add(fast);
  EXPECT_DOUBLE_EQ(lease.speed(), 2.5) << "not capped at the reference speed";
  lease.Add(faster);
  EXPECT_DOUBLE_EQ(lease.speed(), 2.5) << "a lease spanning types runs at its slowest part";
}

}  // namespace
}  // namespace troupe
