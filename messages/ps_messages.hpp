// The hierarchical parameter server's pipeline protocol (docs/paramserver.md).
//
// N nodes train one CTR model in global steps. Node n's part of step s is its node batch; the
// node's four stage actors and its shard exchange, per step:
//
//   reader_n --PsExamples--> partitioner_n --PsPrepare (to every shard m, maybe empty)--> shard_m
//                            partitioner_n --PsExamples--> trainer_n
//   shard_m --PsReady--> trainer_n               step s's keys of node n are in m's HBM-PS
//   trainer_n --PsPull--> shard_m --PsRows-->    answered once shard_m has applied step s-1
//   trainer_n --PsExchange--> every trainer      dense gradients and loss (emulated all-reduce)
//   trainer_n --PsPush--> every shard_m          embedding gradients of m's keys (maybe none)
//   trainer_n --PsCredit--> reader_n             step s is trained: the reader may read one more
//
// and to the run's collector: PsStageReport (stages 1 and 2), PsShardReport (stage 3),
// PsTrainerReport (stage 4), PsShardFinal / PsTrainerFinal after the last step, PsFailure on an
// error. With faults (docs/paramserver.md, "Faults"): the fault injector restarts a crashed shard
// and tells every trainer and partitioner (PsShardRestarted); they re-send what the shard had not
// acknowledged (PsPrepare, PsPush with `resent`, PsPull). Every actor reports what faults did as
// PsFaultRecord. PsReady and PsRows carry the shard's incarnation so that a message of a dead
// incarnation is told apart. Keys are 64-bit feature ids; rows and gradients travel as one flat
// float vector per message (columnar), never one message per key. Every type has a free `inspect`
// and is registered under its name (message_types.cpp), so a stage may live in another process. The
// types are plain data: they do not depend on paramserver/.
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/proto_bytes.hpp"
#include "messages/tier_counts.hpp"

namespace troupe::config {
class ParamServer;  // config/config.proto: what PsShardSpawn carries, packed
}  // namespace troupe::config

namespace troupe {

// One node batch, columnar: labels[i], dense[i * 13 + d], sparse[i * 26 + f].
struct PsExamples {
  int64_t step = 0;
  int32_t node = 0;
  std::vector<float> labels;
  std::vector<float> dense;
  std::vector<uint64_t> sparse;
};
template <class Inspector>
auto inspect(Inspector& f, PsExamples& x) {
  return f(x.step, x.node, x.labels, x.dense, x.sparse);
}

// Partitioner -> owner shard: node's distinct keys of `step` that the shard owns (sorted).
// `trainer` receives the PsReady.
struct PsPrepare {
  int64_t step = 0;
  int32_t node = 0;
  caf::actor trainer;
  std::vector<uint64_t> keys;
};
template <class Inspector>
auto inspect(Inspector& f, PsPrepare& x) {
  return f(x.step, x.node, x.trainer, x.keys);
}

struct PsReady {
  int64_t step = 0;
  int32_t shard = 0;
  int32_t incarnation = 0;  // 0, then +1 at each restart of the shard
};
template <class Inspector>
auto inspect(Inspector& f, PsReady& x) {
  return f(x.step, x.shard, x.incarnation);
}

// Trainer -> owner shard: the embedding rows of `keys` (sorted), as of the end of step - 1.
struct PsPull {
  int64_t step = 0;
  int32_t node = 0;
  std::vector<uint64_t> keys;
};
template <class Inspector>
auto inspect(Inspector& f, PsPull& x) {
  return f(x.step, x.node, x.keys);
}

// The answer: `dim` floats per key, in the pull's order.
struct PsRows {
  int64_t step = 0;
  int32_t shard = 0;
  int32_t incarnation = 0;
  std::vector<uint64_t> keys;
  std::vector<float> values;
};
template <class Inspector>
auto inspect(Inspector& f, PsRows& x) {
  return f(x.step, x.shard, x.incarnation, x.keys, x.values);
}

// Trainer -> owner shard: node's embedding gradient rows (`dim` floats per key, keys sorted).
struct PsPush {
  int64_t step = 0;
  int32_t node = 0;
  std::vector<uint64_t> keys;
  std::vector<float> gradients;
  bool resent = false;  // a retained copy, re-sent to a restarted shard
};
template <class Inspector>
auto inspect(Inspector& f, PsPush& x) {
  return f(x.step, x.node, x.keys, x.gradients, x.resent);
}

// Trainer -> every trainer: node's dense gradient and its share of the step's loss.
struct PsExchange {
  int64_t step = 0;
  int32_t node = 0;
  double loss = 0;
  std::vector<float> dense;
};
template <class Inspector>
auto inspect(Inspector& f, PsExchange& x) {
  return f(x.step, x.node, x.loss, x.dense);
}

struct PsCredit {
  int64_t step = 0;  // the step the trainer finished
};
template <class Inspector>
auto inspect(Inspector& f, PsCredit& x) {
  return f(x.step);
}

// A trainer's timer: its modelled stage-4 work of `step` (all-reduce included) is over.
struct PsStepDone {
  int64_t step = 0;
};
template <class Inspector>
auto inspect(Inspector& f, PsStepDone& x) {
  return f(x.step);
}

// The run's wiring, sent by the driver to each trainer before the readers start.
struct PsPeers {
  std::vector<caf::actor> trainers;  // by node
  caf::actor reader;                 // this trainer's node's reader
  // The run's fabric actor (actors/fabric_actor.hpp; PS node m is fabric server m): the trainer's
  // pulls, pushes and all-reduce between nodes cross it. Null without a fabric block.
  caf::actor fabric;
};
template <class Inspector>
auto inspect(Inspector& f, PsPeers& x) {
  return f(x.trainers, x.reader, x.fabric);
}

// Starts a reader.
struct PsStart {
  int64_t steps = 0;
};
template <class Inspector>
auto inspect(Inspector& f, PsStart& x) {
  return f(x.steps);
}

// Stage 1 (reader, stage 1) or 2 (partitioner, stage 2) of one node and step: modelled busy
// seconds, when its output was sent (virtual s), and bytes it moved (disk or network).
struct PsStageReport {
  int64_t step = 0;
  int32_t node = 0;
  int32_t stage = 0;
  double busy_s = 0;
  double end_s = 0;
  int64_t bytes = 0;
};
template <class Inspector>
auto inspect(Inspector& f, PsStageReport& x) {
  return f(x.step, x.node, x.stage, x.busy_s, x.end_s, x.bytes);
}

// Stage 3 of one shard and step: the prepares of every node and the dump after the update.
struct PsShardReport {
  int64_t step = 0;
  int32_t shard = 0;
  double busy_s = 0;  // modelled SSD seconds (loads, dumps, compaction)
  // Summed over the nodes' prepares, the dump after the update and any compaction after it.
  TierCounts counts;
  int64_t mem_rows = 0;  // resident in MEM-PS after the step
  int64_t ssd_keys = 0;  // distinct keys in SSD-PS after the step
  int64_t hbm_rows = 0;  // in HBM-PS after the step
};
template <class Inspector>
auto inspect(Inspector& f, PsShardReport& x) {
  return f(x.step, x.shard, x.busy_s, x.counts, x.mem_rows, x.ssd_keys, x.hbm_rows);
}

// Stage 4 of one node and step.
struct PsTrainerReport {
  int64_t step = 0;
  int32_t node = 0;
  double loss = 0;  // the global step's loss (every node's share summed in node order)
  int64_t unique_keys = 0;
  double start_s = 0;                                         // pulls sent
  double end_s = 0;                                           // step done (dense update applied)
  double pull_s = 0, gpu_s = 0, push_s = 0, allreduce_s = 0;  // modelled
  int64_t net_bytes = 0;  // pulls, pushes and all-reduce sent or received
};
template <class Inspector>
auto inspect(Inspector& f, PsTrainerReport& x) {
  return f(x.step, x.node, x.loss, x.unique_keys, x.start_s, x.end_s, x.pull_s, x.gpu_s, x.push_s,
           x.allreduce_s, x.net_bytes);
}

// After the last step: a shard's every parameter (full rows, keys sorted) and tier sizes, in parts
// of at most PsOptions::final_rows_per_message rows: part 0, 1, ... in key order, every one but the
// last with `more` set (the tier sizes ride on each).
struct PsShardFinal {
  int32_t shard = 0;
  int32_t part = 0;
  bool more = false;
  std::vector<uint64_t> keys;
  std::vector<float> values;
  int64_t ssd_keys = 0;
  int64_t ssd_disk_bytes = 0;
  int64_t ssd_files = 0;
  int64_t mem_rows = 0;
  int64_t mem_capacity_rows = 0;
  int64_t compactions = 0;
};
template <class Inspector>
auto inspect(Inspector& f, PsShardFinal& x) {
  return f(x.shard, x.part, x.more, x.keys, x.values, x.ssd_keys, x.ssd_disk_bytes, x.ssd_files,
           x.mem_rows, x.mem_capacity_rows, x.compactions);
}

struct PsTrainerFinal {
  int32_t node = 0;
  std::vector<float> dense;
  std::vector<float> dense_state;
};
template <class Inspector>
auto inspect(Inspector& f, PsTrainerFinal& x) {
  return f(x.node, x.dense, x.dense_state);
}

struct PsFailure {
  std::string message;
};
template <class Inspector>
auto inspect(Inspector& f, PsFailure& x) {
  return f(x.message);
}

// The fault injector restarted `shard` as `actor`, recovered from its SSD-PS: every update of
// the steps up to `recovered_step` (-1: none) is there. Everything later is re-sent.
struct PsShardRestarted {
  int32_t shard = 0;
  caf::actor actor;
  int32_t incarnation = 0;
  int64_t recovered_step = -1;
};
template <class Inspector>
auto inspect(Inspector& f, PsShardRestarted& x) {
  return f(x.shard, x.actor, x.incarnation, x.recovered_step);
}

// A shard's own timer: try its failed SSD-PS writes again.
struct PsRetryWrites {
  int32_t attempt = 0;
};
template <class Inspector>
auto inspect(Inspector& f, PsRetryWrites& x) {
  return f(x.attempt);
}

// The fault injector's own timer: event `index` of its plan starts (or, `end`, ends).
struct PsFaultTimer {
  int32_t index = 0;
  int32_t node = 0;
  bool end = false;
};
template <class Inspector>
auto inspect(Inspector& f, PsFaultTimer& x) {
  return f(x.index, x.node, x.end);
}

// One line of faults.csv: what a fault did, when, to which node.
struct PsFaultRecord {
  double at_s = 0;
  int32_t node = 0;
  std::string fault;  // crash | disk | slow
  std::string event;  // e.g. crashed, restarted, write_failed, writes_recovered, replayed
  int64_t step = -1;  // the step it concerns (-1: none)
  int64_t count = 0;  // keys recovered, retries, updates lost, ... (see docs/paramserver.md)
  std::string detail;
};
template <class Inspector>
auto inspect(Inspector& f, PsFaultRecord& x) {
  return f(x.at_s, x.node, x.fault, x.event, x.step, x.count, x.detail);
}

// Run -> `troupe node` (with spawn_ps_atom): host shard `shard` of a parameter-server run in the
// node's process (docs/paramserver.md, "Across processes"). The run's options travel as the
// config's own paramserver block, as the run resolved it (ssd_dir: the folder its stores live in;
// batches: the steps it trains), with what the block does not say beside it; the node builds the
// shard's options from them with the run's own conversion (actors/ps/ps_options_of.hpp). The node
// opens <ssd_dir>/node-<shard> and recovers whatever it holds (an empty folder: a fresh shard).
// `virtual_now_s` is the run's virtual time when it sent this: the node's RunClock starts there.
struct PsShardSpawn {
  int32_t shard = 0;
  int32_t incarnation = 0;
  ProtoBytes<config::ParamServer> paramserver;
  uint64_t seed = 0;        // run.seed: the model's initial weights
  uint64_t ssd_run_id = 0;  // the run's identity in its stores (PsOptions::ssd_run_id)
  bool durable_updates = false;
  int64_t final_rows_per_message = 0;
  caf::actor collector;
  double virtual_now_s = 0;
  double time_scale = 1;
};
template <class Inspector>
auto inspect(Inspector& f, PsShardSpawn& x) {
  return f(x.shard, x.incarnation, x.paramserver, x.seed, x.ssd_run_id, x.durable_updates,
           x.final_rows_per_message, x.collector, x.virtual_now_s, x.time_scale);
}

// The node's answer: the shard actor, and what it recovered from its SSD-PS (recovered_step -1
// and 0 keys for a fresh one); `error` set (and no actor) when the SSD-PS could not be opened.
struct PsShardSpawned {
  caf::actor shard;
  int64_t recovered_step = -1;
  int64_t keys = 0;
  int64_t recovery_bytes = 0;
  std::string error;
};
template <class Inspector>
auto inspect(Inspector& f, PsShardSpawned& x) {
  return f(x.shard, x.recovered_step, x.keys, x.recovery_bytes, x.error);
}

// Run -> `troupe node` (with spawn_feed_atom): host node `spec.shard`'s trainer, partitioner and
// reader (its feed) in the node's process (paramserver.trainer_hosts; docs/paramserver.md,
// "Across processes"). `spec` carries the run's options and clock as for a shard; `shards` are
// the run's shards by node, wherever they live. The reader starts without examples: the run sends
// them after the answer, as PsExamples of several consecutive steps each (`step` the first).
struct PsFeedSpawn {
  PsShardSpawn spec;
  std::vector<caf::actor> shards;
};
template <class Inspector>
auto inspect(Inspector& f, PsFeedSpawn& x) {
  return f(x.spec, x.shards);
}

// The node's answer: the three actors (the trainer still waits for its PsPeers).
struct PsFeedSpawned {
  caf::actor trainer, partitioner, reader;
  std::string error;
};
template <class Inspector>
auto inspect(Inspector& f, PsFeedSpawned& x) {
  return f(x.trainer, x.partitioner, x.reader, x.error);
}

}  // namespace troupe
