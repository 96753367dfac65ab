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
// After the last step it sends PsTrainerFinal (its dense parameters) to the collector; it stays
// until the run ends, because a shard that restarts may still need its last pushes.
//
// Faults (docs/paramserver.md, "Faults"): a push to shard m is acknowledged when m answers a
// later pull (m answers step s + 1 only once step s is applied and durable). Until then the
// trainer keeps a copy. It monitors the shards: a shard's down message makes it drop that
// incarnation's late messages; on PsShardRestarted it re-sends the retained pushes of steps after
// the recovered one, forgets m's PsReady of those steps (the new incarnation prepares them again)
// and re-pulls the current step once m is ready. A restart that recovered fewer steps than m
// had acknowledged would lose updates: it is reported (PsFaultRecord "updates_lost") and fails
// the run.
//
// Timing (emulated; the arithmetic is still done): pull_s = remote keys * (8 + 4 * dim) bytes over
// network_bytes_per_s; gpu_s = CtrModel::StepSeconds(b, unique keys, gpus * gpu_flops,
// gpus * hbm_bytes_per_s); the exchange leaves at rows-arrived + pull_s + gpu_s; push_s = the
// gradient rows to remote owners (same bytes as the pull), pushes leave after it; the all-reduce
// (ring: 2 (N - 1) / N * 4 * dense parameters bytes) takes allreduce_s from the last exchange.
//
// With a fabric (PsPeers.fabric; docs/paramserver.md "Across the fabric"), the bytes between
// nodes cross it instead of network_bytes_per_s: node n is fabric server n, and the trainer tells
// the fabric FlowStart for each transfer between its server and another and waits for FlowDone:
// the rows of a pull from shard m (m's server to n's, started when m's PsRows arrive; the rows
// count as in when the flow is through), each push (n's server to m's, started when the GPU work
// is done; the PsPush leaves when the flow is through) and the all-reduce (one ring flow to node
// n + 1, started with the last exchange). The step ends once the all-reduce and every push are
// through; pull_s, push_s and allreduce_s are then the longest such flow's seconds. Transfers
// with the node's own shard cross no link and ask nothing.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "messages/ps_messages.hpp"
#include "paramserver/ctr_model.hpp"
#include "paramserver/partitioner.hpp"
#include "paramserver/ps_options.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct TrainerInbox {
  std::optional<PsExamples> examples;
  std::vector<bool> ready;  // by shard
  int32_t readys = 0;
};

// What the trainer knows of one shard.
struct TrainerShardView {
  caf::actor actor;
  int32_t incarnation = 0;
  bool up = true;
  int64_t acked = -1;                  // the last step whose push it acknowledged
  std::map<int64_t, PsPush> retained;  // pushes not yet acknowledged, by step
  bool repull = false;                 // the current step's pull was lost: pull once ready
  bool rows_in = false;                // the current step's rows arrived
};

struct TrainerState {
  int32_t node = 0;
  PsOptions options;
  std::unique_ptr<paramserver::CtrModel> model;
  std::vector<TrainerShardView> shards;
  std::vector<caf::actor> trainers;
  caf::actor reader, collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;

  std::map<int64_t, TrainerInbox> inbox;                 // by step
  std::map<int64_t, std::vector<PsExchange>> exchanges;  // by step, until all N are in
  int64_t step = 0;                                      // the step being (or next to be) trained
  bool busy = false;                                     // step `step` has started
  bool computed = false;                                 // ... and sent its gradients
  bool finished = false;                                 // every step trained
  // The current step.
  std::vector<paramserver::Example> batch;
  paramserver::Partition partition;         // unique keys by owner
  std::vector<paramserver::RowBatch> rows;  // pulled, by shard
  int32_t rows_in = 0;
  PsTrainerReport report;
  // With a fabric: the current step's flows still out, and the pushes waiting for theirs (with
  // the shard they were addressed to when computed).
  caf::actor fabric;
  int32_t pushes_out = 0;
  bool allreduce_out = false;
  std::map<int32_t, std::pair<caf::actor, PsPush>> paced_pushes;  // by shard
  static inline const char* name = "troupe.ps.trainer";
};

caf::behavior TrainerActor(caf::stateful_actor<TrainerState>* self, int32_t node, PsOptions options,
                           std::vector<caf::actor> shards, caf::actor collector, RunClock clock,
                           Telemetry* telemetry);

}  // namespace troupe
