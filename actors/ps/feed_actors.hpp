// Stages 1 and 2 of a node's pipeline: the reader and the partitioner.
//
// Reader (stage 1): node n's part of global step s is examples [(s * N + n) * b, + b) of the
// run's example stream (one seeded stream, or a Criteo file, read into memory by the driver: the
// "disk"). It reads batch s once s < (steps its trainer finished) + prefetch — credits come back
// as PsCredit — so stages 1-3 run at most `prefetch` batches ahead of training. Reading takes
// b * kPsExampleBytes / disk_bytes_per_s of the reader's time, one batch after another; the
// PsExamples leaves when its read ends. A reader in a `troupe node` process (no `data`) gets its
// node's batches from the run instead, as PsExamples of consecutive steps (`step` the first), in
// order; it reads a step once its examples are in.
//
// Partitioner (stage 2): the batch's distinct keys (sorted), split by owner (NodeOf); one
// PsPrepare to every shard (empty ones included, so shards can keep step order), the examples on
// to the trainer. Sending the key lists to the remote owners takes 8 bytes a key over
// network_bytes_per_s of the partitioner's time; its messages leave when that ends.
// Both report each batch's busy time to the collector (PsStageReport). With
// options.durable_updates the partitioner keeps the key lists of its last prefetch + 3 steps (no
// shard can have applied fewer: the reader is at most `prefetch` steps ahead of training, and
// training step s needs every shard to have applied s - 1) and re-sends those after a restarted
// shard's recovered step to it (PsShardRestarted); it stays alive until the run ends for that.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <memory>
#include <vector>

#include "messages/ps_messages.hpp"
#include "paramserver/criteo.hpp"
#include "paramserver/partitioner.hpp"
#include "paramserver/ps_options.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

using PsDataset = std::shared_ptr<const std::vector<paramserver::Example>>;

struct ReaderState {
  int32_t node = 0;
  PsOptions options;
  PsDataset data;                         // the whole stream; null in a node process:
  std::vector<paramserver::Example> own;  // this node's batches, step after step
  caf::actor partitioner, collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  int64_t steps = 0;    // to read (PsStart)
  int64_t next = 0;     // next step to read
  int64_t trained = 0;  // steps the trainer finished
  double free_s = 0;    // the reader's modelled work ends
  static inline const char* name = "troupe.ps.reader";
};

caf::behavior ReaderActor(caf::stateful_actor<ReaderState>* self, int32_t node, PsOptions options,
                          PsDataset data, caf::actor partitioner, caf::actor collector,
                          RunClock clock, Telemetry* telemetry);

struct PartitionerState {
  int32_t node = 0;
  PsOptions options;
  std::vector<caf::actor> shards;  // by node
  caf::actor trainer, collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  double free_s = 0;
  paramserver::Partition partition;                            // scratch
  std::map<int64_t, std::vector<std::vector<uint64_t>>> sent;  // by step: keys sent to each shard
  static inline const char* name = "troupe.ps.partitioner";
};

caf::behavior PartitionerActor(caf::stateful_actor<PartitionerState>* self, int32_t node,
                               PsOptions options, std::vector<caf::actor> shards,
                               caf::actor trainer, caf::actor collector, RunClock clock,
                               Telemetry* telemetry);

// The examples of a PsExamples message, and back.
std::vector<paramserver::Example> ToExamples(const PsExamples& batch);
PsExamples FromExamples(int64_t step, int32_t node, std::span<const paramserver::Example> batch);

}  // namespace troupe
