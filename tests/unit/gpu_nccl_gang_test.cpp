// NCCL across processes (gpu/nccl_gang.hpp): the rank plan, one rank per leased GPU, part by part
// (CPU, always run); and, where GPUs answer, communicators joined from one unique id by several
// "parts" (threads of this process standing in for processes), whose all-reduce must match the
// CPU reference — within float rounding, or bit for bit with two ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/nccl_gang.hpp"

namespace troupe::gpu {
namespace {

NcclRankPlan Plan(const std::vector<int32_t>& gpus, int32_t part) {
  NcclRankPlan plan;
  EXPECT_TRUE(PlanNcclRanks(gpus, part, &plan).ok());
  return plan;
}

TEST(GpuNcclGangPlan, OneRankPerLeasedGpuNumberedPartByPart) {
  const std::vector<int32_t> gpus = {2, 1, 4};
  const NcclRankPlan p0 = Plan(gpus, 0), p1 = Plan(gpus, 1), p2 = Plan(gpus, 2);
  EXPECT_EQ(p0.nranks, 7);
  EXPECT_EQ(p1.nranks, 7);
  EXPECT_EQ(p2.nranks, 7);
  EXPECT_EQ(p0.first_rank, 0);
  EXPECT_EQ(p0.local_ranks, 2);
  EXPECT_EQ(p1.first_rank, 2);
  EXPECT_EQ(p1.local_ranks, 1);
  EXPECT_EQ(p2.first_rank, 3);
  EXPECT_EQ(p2.local_ranks, 4);
  const NcclRankPlan single = Plan({1}, 0);
  EXPECT_EQ(single.nranks, 1);
  EXPECT_EQ(single.first_rank, 0);
}

TEST(GpuNcclGangPlan, RefusesNoPartsAPartWithoutGpusAndAPartOutOfRange) {
  NcclRankPlan plan;
  EXPECT_EQ(PlanNcclRanks({}, 0, &plan).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(PlanNcclRanks({2, 0, 1}, 0, &plan).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(PlanNcclRanks({2, 1}, 2, &plan).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(PlanNcclRanks({2, 1}, -1, &plan).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(PlanNcclRanks({kMaxNcclRanks, 1}, 0, &plan).code(), Status::Code::kInvalidInput);
}

TEST(GpuNcclGangPlan, ACommunicatorNeedsOneDeviceARank) {
  NcclGangOptions options;
  options.plan = Plan({2, 1}, 0);
  options.devices = {0};  // two ranks, one device
  std::unique_ptr<NcclGangComm> comm;
  EXPECT_EQ(MakeNcclGangComm(options, &comm).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(comm, nullptr);
}

// Where no GPU (or no plugin, or no NCCL) is there, the id cannot be made: a Status, not a crash.
TEST(GpuNcclGang, WithoutAGpuTheUniqueIdIsAnErrorNamingTheGang) {
  NcclUniqueIdBytes id{};
  const Status s = MakeNcclUniqueId(&id);
  if (s.ok()) GTEST_SKIP() << "a GPU answers here: the refusal cannot be seen";
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_NE(s.message().find("nccl gang"), std::string::npos) << s.message();
}

std::vector<float> Seeded(int32_t rank, size_t floats) {
  std::vector<float> values(floats);
  for (size_t i = 0; i < floats; ++i) values[i] = SeededValue(77, rank, static_cast<int64_t>(i));
  return values;
}

// `parts` threads, part p with gpus[p] ranks on consecutive devices, join one communicator and
// all-reduce seeded buffers; every rank's result against the rank-order CPU sum.
void RunGang(const std::vector<int32_t>& gpus, size_t floats, bool bitwise) {
  NcclUniqueIdBytes id{};
  ASSERT_TRUE(MakeNcclUniqueId(&id).ok());
  const int32_t parts = static_cast<int32_t>(gpus.size());
  std::vector<std::vector<std::vector<float>>> results(gpus.size());
  std::vector<Status> statuses(gpus.size());
  std::vector<std::thread> threads;
  int32_t device = 0;
  for (int32_t p = 0; p < parts; ++p) {
    NcclGangOptions options;
    options.id = id;
    options.plan = Plan(gpus, p);
    options.timeout_s = 60;
    for (int32_t i = 0; i < gpus[static_cast<size_t>(p)]; ++i) options.devices.push_back(device++);
    threads.emplace_back([&, p, options] {
      std::unique_ptr<NcclGangComm> comm;
      Status s = MakeNcclGangComm(options, &comm);
      auto& buffers = results[static_cast<size_t>(p)];
      for (int32_t i = 0; i < options.plan.local_ranks; ++i) {
        buffers.push_back(Seeded(options.plan.first_rank + i, floats));
      }
      double seconds = 0;
      if (s.ok()) s = comm->AllReduceSum(&buffers, &seconds);
      statuses[static_cast<size_t>(p)] = s;
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::vector<float>> reference;
  for (int32_t r = 0; r < device; ++r) reference.push_back(Seeded(r, floats));
  double seconds = 0;
  ASSERT_TRUE(MakeCpuCollective()->AllReduceSum(&reference, &seconds).ok());
  for (int32_t p = 0; p < parts; ++p) {
    ASSERT_TRUE(statuses[static_cast<size_t>(p)].ok())
        << statuses[static_cast<size_t>(p)].message();
    for (const std::vector<float>& got : results[static_cast<size_t>(p)]) {
      if (bitwise) {
        EXPECT_EQ(std::memcmp(got.data(), reference[0].data(), floats * sizeof(float)), 0);
        continue;
      }
      for (size_t i = 0; i < floats; ++i) {
        // Seeded values lie in (-1, 1): a sum of n has absolute error under n ulps of n.
        ASSERT_NEAR(got[i], reference[0][i], 1e-5f * device) << "part " << p << " element " << i;
      }
    }
  }
}

int VisibleGpus(std::string* why) {
  std::unique_ptr<CollectiveBackend> nccl;
  if (Status s = MakeCollectiveBackend("nccl", LinkModel{}, &nccl); !s.ok()) {
    *why = s.message();
    return 0;
  }
  return nccl->max_ranks();
}

TEST(GpuNcclGang, OneRankAloneGetsItsOwnBuffer) {
  std::string why;
  if (VisibleGpus(&why) < 1) GTEST_SKIP() << why;
  RunGang({1}, 4099, /*bitwise=*/true);
}

TEST(GpuNcclGang, TwoPartsOfOneGpuSumBitForBit) {
  std::string why;
  const int gpus = VisibleGpus(&why);
  if (gpus < 2) GTEST_SKIP() << (gpus < 1 ? why : "one GPU visible: a gang needs two");
  RunGang({1, 1}, 100003, /*bitwise=*/true);  // a + b == b + a: NCCL's order cannot show
}

TEST(GpuNcclGang, PartsOfSeveralGpusMatchTheReferenceWithinRounding) {
  std::string why;
  const int gpus = VisibleGpus(&why);
  if (gpus < 3) GTEST_SKIP() << (gpus < 1 ? why : "fewer than three GPUs visible");
  RunGang({2, static_cast<int32_t>(std::min(gpus, 8)) - 2}, 100003, /*bitwise=*/false);
}

}  // namespace
}  // namespace troupe::gpu
