// SimulatePhased (fabric/phased.hpp): a burst alone takes its bytes over its bottleneck plus its
// latency; bursts that overlap share their links max-min for as long as they overlap, and bursts
// that interleave (one job computes while the other communicates) cost each other nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "fabric/phased.hpp"

namespace troupe::fabric {
namespace {

constexpr double kGB = 1e9;

// A job with one flow over link 0 carrying `transfer_s` seconds' worth of bytes at 1 GB/s.
PhasedJob OneLinkJob(double compute_s, double transfer_s, double offset_s = 0,
                     double latency_s = 0) {
  PhasedJob job;
  job.compute_s = compute_s;
  job.offset_s = offset_s;
  job.latency_s = latency_s;
  job.bytes_per_flow = transfer_s * kGB;
  job.flow_links = {{0}};
  return job;
}

PhasedOptions Iterations(int32_t max_iterations) {
  return PhasedOptions{.horizon_s = 0, .max_iterations = max_iterations};
}

TEST(Phased, AJobAloneTakesItsBytesOverItsBottleneckPlusLatency) {
  PhasedJob job;
  job.compute_s = 1;
  job.latency_s = 0.25;
  job.bytes_per_flow = 2 * kGB;
  job.flow_links = {{0}, {1, 2}};  // 2 s over link 0; 1 s over links 1 and 2 (bottleneck 2)
  const std::vector<double> capacities = {1 * kGB, 4 * kGB, 2 * kGB};
  EXPECT_DOUBLE_EQ(SimulatePhased(capacities, {job}, Iterations(5))[0], 2.25);
}

TEST(Phased, TwoAlignedJobsOnOneLinkEachTakeTwiceAsLong) {
  const std::vector<PhasedJob> jobs = {OneLinkJob(1, 1, 0, 0.1), OneLinkJob(1, 1, 0, 0.1)};
  const std::vector<double> comm_s = SimulatePhased({1 * kGB}, jobs, Iterations(8));
  EXPECT_DOUBLE_EQ(comm_s[0], 2.1);
  EXPECT_DOUBLE_EQ(comm_s[1], 2.1);
}

TEST(Phased, InterleavedBurstsDoNotSlowEachOther) {
  // Each computes exactly while the other communicates: A's compute is B's burst and back.
  const std::vector<PhasedJob> symmetric = {OneLinkJob(1.5, 1, 0, 0.5),
                                            OneLinkJob(1.5, 1, 1.5, 0.5)};
  const std::vector<double> symmetric_s = SimulatePhased({1 * kGB}, symmetric, Iterations(16));
  EXPECT_DOUBLE_EQ(symmetric_s[0], 1.5);
  EXPECT_DOUBLE_EQ(symmetric_s[1], 1.5);

  // A computes 2 s and sends 1 s; B computes 1 s and sends 2 s, starting when A first sends.
  const std::vector<PhasedJob> uneven = {OneLinkJob(2, 1), OneLinkJob(1, 2, 2)};
  const std::vector<double> uneven_s = SimulatePhased({1 * kGB}, uneven, Iterations(16));
  EXPECT_DOUBLE_EQ(uneven_s[0], 1);
  EXPECT_DOUBLE_EQ(uneven_s[1], 2);
}

TEST(Phased, PartlyOverlappingBurstsSlowEachOtherLessThanAlignedOnes) {
  // B starts half a second after A: A sends 0.5 s alone, both share 1 s, B finishes alone, and
  // the pattern repeats, so each burst takes 1.5 s: between the solo 1 s and the aligned 2 s.
  const std::vector<PhasedJob> jobs = {OneLinkJob(1, 1), OneLinkJob(1, 1, 0.5)};
  const std::vector<double> comm_s = SimulatePhased({1 * kGB}, jobs, Iterations(8));
  EXPECT_DOUBLE_EQ(comm_s[0], 1.5);
  EXPECT_DOUBLE_EQ(comm_s[1], 1.5);
}

TEST(Phased, AFinishedFlowLeavesItsShareToTheOthers) {
  // Weights 1 and 3 on one link: the heavy job sends at 3/4 until its 1 GB is through (4/3 s),
  // then the light one has the link to itself for its last 2/3 GB.
  std::vector<PhasedJob> jobs = {OneLinkJob(1, 1), OneLinkJob(1, 1)};
  jobs[1].weight = 3;
  const std::vector<double> comm_s = SimulatePhased({1 * kGB}, jobs, Iterations(1));
  EXPECT_DOUBLE_EQ(comm_s[0], 2);
  EXPECT_DOUBLE_EQ(comm_s[1], 4.0 / 3);
}

TEST(Phased, AJobWithoutNetworkTrafficTakesItsLatency) {
  PhasedJob no_flows = OneLinkJob(1, 0, 0, 0.25);
  no_flows.flow_links.clear();
  PhasedJob no_link = OneLinkJob(1, 5, 0, 0.25);
  no_link.flow_links = {{}};  // inside one server: crosses no link
  const PhasedJob no_bytes = OneLinkJob(1, 0, 0, 0.25);
  const PhasedJob busy = OneLinkJob(1, 1);  // beside them on link 0, unslowed
  const std::vector<double> comm_s =
      SimulatePhased({1 * kGB}, {no_flows, no_link, no_bytes, busy}, Iterations(4));
  EXPECT_EQ(comm_s, (std::vector<double>{0.25, 0.25, 0.25, 1}));
}

TEST(Phased, TheSameInputsGiveTheSameOutputs) {
  // Twelve jobs of assorted periods over six links, in a fixed pseudo-random draw.
  uint64_t state = 12345;
  auto draw = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  };
  std::vector<PhasedJob> jobs(12);
  for (PhasedJob& job : jobs) {
    job.compute_s = 0.1 + draw();
    job.offset_s = draw();
    job.latency_s = 0.01 * draw();
    job.bytes_per_flow = (0.2 + draw()) * kGB;
    for (int f = 0; f < 3; ++f) {
      job.flow_links.push_back({static_cast<int32_t>(draw() * 6), 5});
    }
  }
  const std::vector<double> capacities(6, 1 * kGB);
  const std::vector<double> first = SimulatePhased(capacities, jobs, Iterations(32));
  const std::vector<double> second = SimulatePhased(capacities, jobs, Iterations(32));
  EXPECT_EQ(first, second);
  // The draw does contend (link 5 carries every flow): no job keeps its solo burst.
  for (size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_GT(first[j], SimulatePhased(capacities, {jobs[j]}, Iterations(1))[0]) << j;
  }
}

// A sends 1 s after each 1 s of compute (bursts end at 2, 4, ..., 10); B's first burst starts
// with A's sixth, at 11, and they share it: both end at 13, and go on in step, every burst shared.
std::vector<PhasedJob> LateContention() { return {OneLinkJob(1, 1), OneLinkJob(1, 1, 10)}; }

TEST(Phased, MaxIterationsCountsEachJobsFirstIterations) {
  const std::vector<double> six = SimulatePhased({1 * kGB}, LateContention(), Iterations(6));
  EXPECT_DOUBLE_EQ(six[0], 7.0 / 6);  // five solo bursts and one shared
  EXPECT_DOUBLE_EQ(six[1], 2);        // six shared
}

TEST(Phased, AJobCountedOutStillSendsUntilEveryJobIsCounted) {
  // A has done its five iterations before B starts, but its bursts still meet all of B's: were A
  // to fall silent, B would have the link to itself and the contention would vanish.
  const std::vector<double> five = SimulatePhased({1 * kGB}, LateContention(), Iterations(5));
  EXPECT_EQ(five, (std::vector<double>{1, 2}));
  // A sends without pause (no compute) beside B, which computes 7.5 s between bursts: every
  // burst of B's shares the link with A's, at half of it, however few iterations are counted.
  const std::vector<PhasedJob> jobs = {OneLinkJob(0, 1), OneLinkJob(7.5, 1)};
  EXPECT_NEAR(SimulatePhased({1 * kGB}, jobs, Iterations(4))[1], 2, 1e-9);
  EXPECT_NEAR(SimulatePhased({1 * kGB}, jobs, Iterations(64))[1], 2, 1e-9);
}

TEST(Phased, AJobSixteenTimesThroughItsCountEndsTheRunOnceEveryJobHasCountedOne) {
  // A (1 ms iterations, alone on link 1) does 4 x 16 iterations in 64 ms. B sends 1 s after
  // each 1 s of compute on link 0; C, from 2.5 s on, sends without pause beside it: C's first
  // burst ends at 4, half a second before B's second, and the run ends there: B has counted
  // only its first burst, alone. Went the run on to four of B's, C would slow the others.
  PhasedJob fast = OneLinkJob(0, 0.001);
  fast.flow_links = {{1}};
  const std::vector<PhasedJob> jobs = {fast, OneLinkJob(1, 1), OneLinkJob(0, 1, 2.5)};
  const std::vector<double> comm_s = SimulatePhased({1 * kGB, 1 * kGB}, jobs, Iterations(4));
  EXPECT_NEAR(comm_s[0], 0.001, 1e-12);
  EXPECT_NEAR(comm_s[1], 1, 1e-9);    // (A's many steps round B's and C's bytes)
  EXPECT_NEAR(comm_s[2], 1.5, 1e-9);  // 0.5 s alone, then 0.5 GB at half the link
}

TEST(Phased, TheHorizonEndsTheRun) {
  const std::vector<double> early =
      SimulatePhased({1 * kGB}, LateContention(), {.horizon_s = 10.5, .max_iterations = 64});
  EXPECT_EQ(early, (std::vector<double>{1, 1}));  // B completed none: its solo burst
  const std::vector<double> late =
      SimulatePhased({1 * kGB}, LateContention(), {.horizon_s = 13, .max_iterations = 64});
  EXPECT_DOUBLE_EQ(late[0], 7.0 / 6);  // A's sixth burst ends at the horizon and counts
  EXPECT_DOUBLE_EQ(late[1], 2);
}

TEST(Phased, IterationsThatTakeNoTimeStillEnd) {
  PhasedJob instant;  // no compute, no traffic, no latency: time never moves
  const std::vector<double> comm_s =
      SimulatePhased({1 * kGB}, {instant}, Iterations(std::numeric_limits<int32_t>::max()));
  EXPECT_EQ(comm_s, (std::vector<double>{0}));
}

TEST(Phased, AJobThatNeverEndsAnIterationIsNotWaitedFor) {
  // B never finishes its first compute: it sends nothing, A's bursts have the link to
  // themselves, B gets its solo burst, and the run ends when A has counted its own (it went on
  // for 2^24 events, 1.2 s, waiting for B).
  constexpr double kForever = std::numeric_limits<double>::infinity();
  for (const PhasedJob& never : {OneLinkJob(kForever, 1), OneLinkJob(1, 1, kForever)}) {
    EXPECT_EQ(SimulatePhased({1 * kGB}, {OneLinkJob(1, 1), never}, Iterations(4)),
              (std::vector<double>{1, 1}));
  }
  // A tail without end: B's one transfer shares A's first burst (2 s, then three of 1 s), and
  // no burst of B's ever ends, alone or not.
  EXPECT_EQ(
      SimulatePhased({1 * kGB}, {OneLinkJob(1, 1), OneLinkJob(1, 1, 0, kForever)}, Iterations(4)),
      (std::vector<double>{1.25, kForever}));
  // A flow without end: B's shares the link with every burst of A's, which takes 2 s.
  EXPECT_EQ(SimulatePhased({1 * kGB}, {OneLinkJob(1, 1), OneLinkJob(1, kForever)}, Iterations(4)),
            (std::vector<double>{2, kForever}));
}

}  // namespace
}  // namespace troupe::fabric
