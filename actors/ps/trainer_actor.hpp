// Stage 4 of a node's pipeline: the trainer — one data-parallel replica of the CTR model's dense
// part (paramserver::CtrModel) and the GPU worker of its node.
//
// Step s starts once the node batch (PsExamples), a PsReady from every shard, and step s - 1's end
// are all in. Then:
//   1. pull: one PsPull per owner shard with the batch's keys it owns; owners answer once they
//      have applied step s - 1, so no row is stale;
//   2. ForwardBackward on the gathered rows, normalised by the global batch (N * b), so the
//      nodes' shares add up to the global step's gradient;
//   3. PsExchange (dense gradient, loss share) to every trainer, itself included, and PsPush
//      (embedding gradient rows) to every owner shard;
//   4. with all N exchanges in: their sum in node order — identical on every node — is applied
//      with CtrModel::ApplyDense; the step ends after the all-reduce time (PsStepDone), and a
//      PsCredit goes back to the reader.
// After the last step it sends PsTrainerFinal (its dense parameters) to the collector and quits.
//
// Timing (emulated; the arithmetic is still done): pull_s = remote keys * (8 + 4 * dim) bytes over
// network_bytes_per_s; gpu_s = CtrModel::StepSeconds(b, unique keys, gpus * gpu_flops,
// gpus * hbm_bytes_per_s); the exchange leaves at rows-arrived + pull_s + gpu_s; push_s = the
// gradient rows to remote owners (same bytes as the pull), pushes leave after it; the all-reduce
// (ring: 2 (N - 1) / N * 4 * dense parameters bytes) takes allreduce_s from the last exchange.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "actors/ps/ps_options.hpp"
#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"
#include "messages/ps_messages.hpp"
#include "paramserver/ctr_model.hpp"
#include "paramserver/partitioner.hpp"

namespace troupe {

struct TrainerInbox {
  std::optional<PsExamples> examples;
  int32_t readys = 0;
};

struct TrainerState {
  int32_t node = 0;
  PsOptions options;
  std::unique_ptr<paramserver::CtrModel> model;
  std::vector<caf::actor> shards, trainers;
  caf::actor reader, collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;

  std::map<int64_t, TrainerInbox> inbox;                 // by step
  std::map<int64_t, std::vector<PsExchange>> exchanges;  // by step, until all N are in
  int64_t step = 0;                                      // the step being (or next to be) trained
  bool busy = false;                                     // step `step` has started
  bool computed = false;                                 // ... and sent its gradients
  // The current step.
  std::vector<paramserver::Example> batch;
  paramserver::Partition partition;         // unique keys by owner
  std::vector<paramserver::RowBatch> rows;  // pulled, by shard
  int32_t rows_in = 0;
  PsTrainerReport report;
  static inline const char* name = "troupe.ps.trainer";
};

caf::behavior TrainerActor(caf::stateful_actor<TrainerState>* self, int32_t node, PsOptions options,
                           std::vector<caf::actor> shards, caf::actor collector, RunClock clock,
                           Telemetry* telemetry);

}  // namespace troupe
