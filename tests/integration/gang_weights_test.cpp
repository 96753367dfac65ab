// A gang's weights between leases (messages/gang_weights.hpp): they travel in chunks no larger
// than an all-reduce segment whatever the model's size, and a job's checkpoint carries them
// across processes bit for bit and within one process without a copy.
#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "actors/checkpoint_store_actor.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/gang_exchange.hpp"
#include "messages/all_messages.hpp"
#include "messages/message_types.hpp"

namespace troupe {
namespace {

std::vector<float> Seeded(int64_t floats) {
  std::vector<float> values(static_cast<size_t>(floats));
  for (size_t i = 0; i < values.size(); ++i) values[i] = gpu::SeededValue(7, 3, i);
  return values;
}

TEST(GangWeights, ALargeModelTravelsInChunksOfAtMostASegment) {
  const std::vector<float> weights = Seeded(2 * kGangChunkFloats + 5);
  std::vector<GangWeights> chunks;
  ForEachGangChunk(4.5, weights, [&](GangWeights chunk) { chunks.push_back(std::move(chunk)); });
  ASSERT_EQ(chunks.size(), 3u);
  GangWeightsAssembly assembly;
  assembly.Expect(static_cast<int64_t>(weights.size()));
  for (const GangWeights& chunk : chunks) {
    EXPECT_LE(static_cast<int64_t>(chunk.values.floats()), kGangChunkFloats);
    EXPECT_EQ(chunk.lease_start_s, 4.5);
    EXPECT_FALSE(assembly.whole());
    EXPECT_TRUE(assembly.Add(chunk));
  }
  EXPECT_TRUE(assembly.whole());
  EXPECT_EQ(gpu::WeightsHash(assembly.values()), gpu::WeightsHash(weights));
  // A chunk of weights of another length, or one too many, does not fit.
  EXPECT_FALSE(assembly.Add(chunks.back()));
  GangWeightsAssembly other;
  other.Expect(10);
  EXPECT_FALSE(other.Add(chunks.front()));
}

// A checkpoint written by CAF's binary serializer (as between processes) and read back.
JobCheckpoint RoundTrip(caf::actor_system& sys, const JobCheckpoint& checkpoint) {
  caf::message sent = caf::make_message(checkpoint);
  std::vector<char> bytes;
  caf::binary_serializer sink{sys, bytes};
  EXPECT_FALSE(sink(sent));
  caf::message received;
  caf::binary_deserializer source{sys, bytes};
  EXPECT_FALSE(source(received));
  EXPECT_TRUE(received.match_elements<JobCheckpoint>());
  return received.get_as<JobCheckpoint>(0);
}

TEST(GangWeights, ACheckpointCarriesTheWeightsAcrossProcessesBitForBit) {
  caf::actor_system_config cfg;
  RegisterMessageTypes(cfg);
  caf::actor_system sys{cfg};
  JobCheckpoint checkpoint;
  checkpoint.job_id = 3;
  checkpoint.gang.exchanges = 41;
  const std::vector<float> weights = Seeded(kGangChunkFloats + 3);
  checkpoint.gang.weights = std::make_shared<const std::vector<float>>(weights);
  const JobCheckpoint back = RoundTrip(sys, checkpoint);
  EXPECT_EQ(back.gang.exchanges, 41);
  ASSERT_TRUE(back.gang.weights);
  EXPECT_EQ(gpu::WeightsHash(*back.gang.weights), gpu::WeightsHash(weights));
  // No weights yet (before a gang's first lease): none after the trip either.
  const JobCheckpoint empty = RoundTrip(sys, JobCheckpoint{});
  EXPECT_FALSE(empty.gang.weights);
}

TEST(GangWeights, TheCheckpointStoreSharesTheWeightsItKeeps) {
  caf::actor_system_config cfg;
  RegisterMessageTypes(cfg);
  caf::actor_system sys{cfg};
  auto store = sys.spawn(CheckpointStoreActor);
  JobCheckpoint checkpoint;
  checkpoint.job_id = 5;
  checkpoint.at_s = 10;
  checkpoint.gang.weights = std::make_shared<const std::vector<float>>(Seeded(1000));
  const float* kept = checkpoint.gang.weights->data();
  caf::scoped_actor self{sys};
  self->send(store, checkpoint);
  self->request(store, std::chrono::seconds(10), CheckpointQuery{5})
      .receive(
          [&](const CheckpointList& list) {
            ASSERT_EQ(list.checkpoints.size(), 1u);
            ASSERT_TRUE(list.checkpoints[0].gang.weights);
            EXPECT_EQ(list.checkpoints[0].gang.weights->data(), kept) << "the weights were copied";
          },
          [&](const caf::error& e) { FAIL() << sys.render(e); });
  self->send_exit(store, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace troupe
