// The all-reduce among actors (actors/allreduce_rank_actor.hpp): ranks in one process and ranks
// in `troupe node` processes sum their buffers, cut into segments far smaller than the buffer, and
// every rank ends with the CPU collective's reference sum bit for bit; rounds follow one another;
// a rank with a buffer of the wrong length gets no sum.
#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

#include "actors/allreduce_rank_actor.hpp"
#include "gpu/collective_backend.hpp"
#include "gpu/reduction_plan.hpp"
#include "messages/atoms.hpp"
#include "messages/message_types.hpp"
#include "runtime/remote_node.hpp"
#include "tests/integration/node_process.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr auto kTimeout = std::chrono::seconds(60);
using Buffers = std::vector<std::vector<float>>;

Buffers RandomBuffers(size_t ranks, size_t length, uint32_t seed) {
  std::mt19937 draw(seed);
  std::normal_distribution<float> gradient(0.0f, 1.0f);
  Buffers buffers(ranks, std::vector<float>(length));
  for (auto& buffer : buffers) {
    for (float& value : buffer) value = gradient(draw) * 1e-3f;  // many exponents: rounding shows
  }
  return buffers;
}

std::vector<float> Reference(Buffers buffers) {
  double seconds = 0;
  EXPECT_TRUE(gpu::MakeCpuCollective()->AllReduceSum(&buffers, &seconds).ok());
  return buffers[0];
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  // memcmp of two empty vectors would be handed null pointers.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

class AllReduce : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterMessageTypes(config_);
    config_.load<caf::io::middleman>();
    system_ = std::make_unique<caf::actor_system>(config_);
  }
  void TearDown() override {
    for (const caf::actor& rank : ranks_) caf::anon_send_exit(rank, caf::exit_reason::kill);
  }

  void SpawnLocal(int count) {
    for (int i = 0; i < count; ++i)
      ranks_.push_back(system_->spawn(AllReduceRankActor, &telemetry_));
  }

  void FormGroup(int64_t segment_floats) {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      caf::anon_send(ranks_[r], AllReduceGroup{.rank = static_cast<int32_t>(r),
                                               .ranks = ranks_,
                                               .segment_floats = segment_floats,
                                               .fabric = {},
                                               .servers = {}});
    }
  }

  // Every rank's request first, then every answer: sums, or nullopt for an error.
  std::vector<std::optional<std::vector<float>>> Run(int64_t round, const Buffers& buffers,
                                                     std::chrono::seconds timeout = kTimeout) {
    caf::scoped_actor self{*system_};
    std::vector<caf::response_handle<caf::blocking_actor, caf::message, true>> pending;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      pending.push_back(
          self->request(ranks_[r], timeout, AllReduceStart{round, FloatBlob::Of(buffers[r])}));
    }
    std::vector<std::optional<std::vector<float>>> sums;
    for (auto& handle : pending) {
      std::optional<std::vector<float>> sum;
      handle.receive([&](AllReduceResult& result) { sum = result.values.ToFloats(); },
                     [&](caf::error&) {});
      sums.push_back(std::move(sum));
    }
    return sums;
  }

  void ExpectReference(int64_t round, const Buffers& buffers) {
    const std::vector<float> reference = Reference(buffers);
    const auto sums = Run(round, buffers);
    for (size_t r = 0; r < sums.size(); ++r) {
      ASSERT_TRUE(sums[r].has_value()) << "rank " << r << " got no sum";
      EXPECT_TRUE(SameBits(*sums[r], reference))
          << "rank " << r << ", " << reference.size() << " floats";
    }
  }

  caf::actor_system_config config_;
  std::unique_ptr<caf::actor_system> system_;
  Telemetry telemetry_;
  std::vector<caf::actor> ranks_;
};

TEST_F(AllReduce, OneProcessEqualsTheReferenceBitForBit) {
  SpawnLocal(4);
  FormGroup(7);  // segments of 7 floats: thousands of messages, in any order
  int64_t round = 0;
  for (size_t length : {size_t{0}, size_t{1}, size_t{3}, size_t{1000}, size_t{20011}}) {
    SCOPED_TRACE(length);
    ExpectReference(round++, RandomBuffers(4, length, static_cast<uint32_t>(length)));
  }
}

// A rank sums in place of the buffer it was handed only when nothing else holds it: a requester
// that keeps its blob (here: shares it with the request) still reads its own gradients after.
TEST_F(AllReduce, ARequesterThatKeepsItsBufferFindsItUnchanged) {
  SpawnLocal(3);
  FormGroup(5);
  const Buffers buffers = RandomBuffers(3, 101, 3);
  const std::vector<float> reference = Reference(buffers);
  std::vector<FloatBlob> kept;
  for (const auto& buffer : buffers) kept.push_back(FloatBlob::Of(buffer));
  caf::scoped_actor self{*system_};
  std::vector<caf::response_handle<caf::blocking_actor, caf::message, true>> pending;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    pending.push_back(self->request(ranks_[r], kTimeout, AllReduceStart{0, kept[r]}));
  }
  for (auto& handle : pending) {
    handle.receive(
        [&](AllReduceResult& result) {
          EXPECT_TRUE(SameBits(result.values.ToFloats(), reference));
        },
        [&](caf::error& e) { ADD_FAILURE() << system_->render(e); });
  }
  for (size_t r = 0; r < kept.size(); ++r) {
    EXPECT_TRUE(SameBits(kept[r].ToFloats(), buffers[r])) << "rank " << r << "'s buffer changed";
  }
}

TEST_F(AllReduce, ThePlanCoversTheBufferOnceInSegmentsOfTheLimit) {
  const auto plan = gpu::PlanReduction(20011, 4, 4096);
  int64_t next = 0;
  for (const gpu::ReductionSegment& s : plan) {
    EXPECT_EQ(s.offset, next);
    EXPECT_GE(s.length, 1);
    EXPECT_LE(s.length, 4096);
    next += s.length;
  }
  EXPECT_EQ(next, 20011);
  EXPECT_EQ(plan.front().owner, 0);
  EXPECT_EQ(plan.back().owner, 3);
}

TEST_F(AllReduce, ABufferOfTheWrongLengthGetsNoSum) {
  SpawnLocal(3);
  FormGroup(16);
  Buffers buffers = RandomBuffers(3, 100, 1);
  buffers[2].resize(90);
  const auto sums = Run(0, buffers, std::chrono::seconds(2));
  for (size_t r = 0; r < sums.size(); ++r) EXPECT_FALSE(sums[r].has_value()) << "rank " << r;
}

TEST_F(AllReduce, RanksInThreeProcessesEqualTheReferenceBitForBit) {
  const std::string dir = FreshDir("allreduce");
  std::vector<std::unique_ptr<NodeProcess>> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string node_dir = dir + "/node" + std::to_string(i);
    std::filesystem::create_directories(node_dir);
    nodes.push_back(std::make_unique<NodeProcess>(node_dir));
  }
  SpawnLocal(1);
  for (auto& node : nodes) {
    const std::string address = node->WaitForAddress();
    ASSERT_FALSE(address.empty()) << "troupe node did not start";
    caf::actor remote;
    ASSERT_TRUE(ConnectNode(*system_, address, &remote).ok());
    caf::scoped_actor self{*system_};
    self->request(remote, kTimeout, spawn_rank_atom::value)
        .receive([&](caf::actor& rank) { ranks_.push_back(rank); },
                 [&](caf::error& e) { FAIL() << system_->render(e); });
  }
  ASSERT_EQ(ranks_.size(), 3u);
  // 64 KiB messages across the middleman: each owner's chunk is 22 segments, more than a rank
  // sends it before sums come back, so the pacing of parts by sums is crossed too.
  FormGroup(1 << 14);
  ExpectReference(0, RandomBuffers(3, (1 << 20) + 5, 7));  // 4 MiB a rank
  ExpectReference(1, RandomBuffers(3, 1000, 8));
}

}  // namespace
}  // namespace troupe::testing
