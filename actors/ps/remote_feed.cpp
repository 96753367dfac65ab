#include "actors/ps/remote_feed.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include "actors/ps/feed_actors.hpp"
#include "actors/ps/remote_shard.hpp"
#include "actors/ps/trainer_actor.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/run_clock.hpp"

namespace troupe {

namespace {

// A PsExamples message of about this many bytes at most: big enough that a run's examples cross
// in few messages, small enough that one never holds up the connection for long.
constexpr int64_t kFeedMessageBytes = int64_t{4} << 20;

}  // namespace

PsFeedSpawned SpawnFeedHere(caf::event_based_actor* node, const PsFeedSpawn& feed,
                            Telemetry* telemetry) {
  PsFeedSpawned out;
  const PsShardSpawn& spec = feed.spec;
  const int32_t n = spec.shard;
  PsOptions options;
  if (Status s = OptionsOf(spec, &options); !s.ok()) {
    out.error = "trainer " + std::to_string(n) + ": " + s.message();
    return out;
  }
  if (static_cast<int32_t>(feed.shards.size()) != options.nodes || n < 0 || n >= options.nodes) {
    out.error = "trainer " + std::to_string(n) + ": the run named " +
                std::to_string(feed.shards.size()) + " shards for " +
                std::to_string(options.nodes) + " nodes";
    return out;
  }
  RunClock clock;
  clock.time_scale = spec.time_scale;
  clock.epoch = node->clock().now() - SecondsToTimespan(spec.virtual_now_s / spec.time_scale);
  out.trainer =
      node->spawn(TrainerActor, n, options, feed.shards, spec.collector, clock, telemetry);
  out.partitioner = node->spawn(PartitionerActor, n, options, feed.shards, out.trainer,
                                spec.collector, clock, telemetry);
  out.reader = node->spawn(ReaderActor, n, options, PsDataset{}, out.partitioner, spec.collector,
                           clock, telemetry);
  spdlog::info("node: hosting parameter-server trainer {} with its reader and partitioner", n);
  return out;
}

void SendFeedExamples(Telemetry* telemetry, const caf::actor& reader, int32_t node, int32_t nodes,
                      int32_t batch_size, int64_t steps,
                      std::span<const paramserver::Example> train) {
  const int64_t b = batch_size;
  const int64_t per_message = std::max<int64_t>(1, kFeedMessageBytes / (b * kPsExampleBytes));
  for (int64_t first = 0; first < steps; first += per_message) {
    const int64_t last = std::min(steps, first + per_message);
    std::vector<paramserver::Example> batches;
    batches.reserve(static_cast<size_t>((last - first) * b));
    for (int64_t s = first; s < last; ++s) {
      const auto from = train.begin() + (s * nodes + node) * b;
      batches.insert(batches.end(), from, from + b);
    }
    TellAnon(telemetry, reader, FromExamples(first, node, batches));
  }
}

}  // namespace troupe
