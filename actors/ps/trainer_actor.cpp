#include "actors/ps/trainer_actor.hpp"

#include <algorithm>
#include <caf/actor_cast.hpp>

#include "actors/ps/feed_actors.hpp"
#include "messages/fabric_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using TrainerSelf = caf::stateful_actor<TrainerState>;

void Compute(TrainerSelf* self);
void EndStep(TrainerSelf* self);

// A flow's key names its step and what it carries: the rows pulled from shard m (slot m), the
// push to shard m (N + m) or the all-reduce (2N). Unique among the trainer's flows in flight.
int64_t TrainerFlowSlots(const TrainerState& st) { return 2 * int64_t{st.options.nodes} + 1; }

int64_t TrainerFlowKey(const TrainerState& st, int64_t slot) {
  return st.step * TrainerFlowSlots(st) + slot;
}

// A row on the wire: its key and its dim weights.
int64_t RowBytes(const TrainerState& st) { return kPsKeyBytes + 4 * int64_t{st.options.model.dim}; }

double RowBytesToOrFrom(const TrainerState& st, int32_t shard) {
  return static_cast<double>(static_cast<int64_t>(st.partition.keys[shard].size()) * RowBytes(st));
}

double AllReduceBytes(const TrainerState& st) {
  const double n = st.options.nodes;
  const double dense_bytes = 4.0 * static_cast<double>(st.model->dense_parameters().size());
  return n > 1 ? 2 * (n - 1) / n * dense_bytes : 0;
}

void StartTrainerFlow(TrainerSelf* self, double at_s, int64_t slot, int32_t from, int32_t to,
                      double bytes) {
  TrainerState& st = self->state;
  TellAt(
      self, st.telemetry, st.clock, st.fabric, at_s,
      FlowStart{
          .key = TrainerFlowKey(st, slot), .from_server = from, .to_server = to, .bytes = bytes});
}

// With a fabric: the step ends once its all-reduce and every push are through.
void MaybeEndPacedStep(TrainerSelf* self) {
  TrainerState& st = self->state;
  if (st.busy && !st.allreduce_out && st.pushes_out == 0) EndStep(self);
}

void OnTrainerFlowDone(TrainerSelf* self, const FlowDone& done) {
  TrainerState& st = self->state;
  const int32_t n = st.options.nodes;
  if (!st.busy || done.key / TrainerFlowSlots(st) != st.step) return;
  const auto slot = static_cast<int32_t>(done.key % TrainerFlowSlots(st));
  if (slot < n) {  // a pull's rows are in
    st.report.pull_s = std::max(st.report.pull_s, done.seconds);
    if (++st.rows_in == n) Compute(self);
    return;
  }
  if (slot < 2 * n) {  // a push's bytes are through: it reaches its shard now
    const auto it = st.paced_pushes.find(slot - n);
    if (it == st.paced_pushes.end()) return;
    Tell(self, st.telemetry, it->second.first, std::move(it->second.second));
    st.paced_pushes.erase(it);
    st.report.push_s = std::max(st.report.push_s, done.seconds);
    --st.pushes_out;
  } else if (st.allreduce_out) {
    st.report.allreduce_s = done.seconds;
    st.allreduce_out = false;
  }
  MaybeEndPacedStep(self);
}

void TryStart(TrainerSelf* self) {
  TrainerState& st = self->state;
  if (st.busy || st.trainers.empty() || st.step >= st.options.batches) return;
  const auto it = st.inbox.find(st.step);
  if (it == st.inbox.end() || !it->second.examples || it->second.readys < st.options.nodes) return;
  st.batch = ToExamples(*it->second.examples);
  st.inbox.erase(it);
  const std::vector<paramserver::Key> unique = paramserver::UniqueKeys(st.batch);
  if (Status s = paramserver::PartitionByNodeInto(unique, st.options.nodes, &st.partition);
      !s.ok()) {
    Tell(self, st.telemetry, st.collector,
         PsFailure{"trainer " + std::to_string(st.node) + ": " + s.message()});
    return;
  }
  st.rows.assign(static_cast<size_t>(st.options.nodes), {});
  st.rows_in = 0;
  for (TrainerShardView& v : st.shards) v.rows_in = v.repull = false;
  st.busy = true;
  st.computed = false;
  st.report = PsTrainerReport{};
  st.report.step = st.step;
  st.report.node = st.node;
  st.report.unique_keys = static_cast<int64_t>(unique.size());
  st.report.start_s = st.clock.Now(self);
  for (int32_t m = 0; m < st.options.nodes; ++m) {
    Tell(self, st.telemetry, st.shards[m].actor, PsPull{st.step, st.node, st.partition.keys[m]});
  }
}

TrainerInbox& InboxOf(TrainerState& st, int64_t step) {
  TrainerInbox& box = st.inbox[step];
  if (box.ready.empty()) box.ready.assign(static_cast<size_t>(st.options.nodes), false);
  return box;
}

void Record(TrainerSelf* self, int32_t shard, const std::string& event, int64_t step, int64_t count,
            std::string detail) {
  TrainerState& st = self->state;
  Tell(self, st.telemetry, st.collector,
       PsFaultRecord{st.clock.Now(self), shard, "crash", event, step, count, std::move(detail)});
}

// Shard m came back, recovered up to `recovered`: re-send what it lost.
void OnRestart(TrainerSelf* self, PsShardRestarted& r) {
  TrainerState& st = self->state;
  TrainerShardView& v = st.shards[r.shard];
  v.actor = std::move(r.actor);
  v.incarnation = r.incarnation;
  v.up = true;
  self->monitor(v.actor);
  if (v.acked > r.recovered_step) {
    const int64_t lost = v.acked - r.recovered_step;
    Record(self, r.shard, "updates_lost", v.acked, lost,
           "trainer " + std::to_string(st.node) + " had steps up to " + std::to_string(v.acked) +
               " acknowledged by ps:" + std::to_string(r.shard) + ", which recovered only " +
               std::to_string(r.recovered_step));
    Tell(self, st.telemetry, st.collector,
         PsFailure{"ps:" + std::to_string(r.shard) + " lost acknowledged updates of steps " +
                   std::to_string(r.recovered_step + 1) + "-" + std::to_string(v.acked)});
  }
  v.retained.erase(v.retained.begin(), v.retained.upper_bound(r.recovered_step));
  for (auto& [step, push] : v.retained) {
    PsPush copy = push;
    copy.resent = true;
    Tell(self, st.telemetry, v.actor, std::move(copy));
  }
  for (auto& [step, box] : st.inbox) {
    if (step <= r.recovered_step || box.ready.empty() || !box.ready[r.shard]) continue;
    box.ready[r.shard] = false;
    --box.readys;
  }
  v.repull = st.busy && st.step > r.recovered_step && !v.rows_in;
}

void OnDown(TrainerSelf* self, const caf::down_msg& down) {
  if (down.reason == caf::exit_reason::normal) return;  // a shard that finished
  for (TrainerShardView& v : self->state.shards) {
    if (v.actor && v.actor.address() == down.source) v.up = false;
  }
}

// The modelled durations of the step's pull, GPU work, push and all-reduce.
void Model(TrainerState& st) {
  const PsRates& r = st.options.rates;
  int64_t remote = 0;
  for (int32_t m = 0; m < st.options.nodes; ++m) {
    if (m != st.node) remote += static_cast<int64_t>(st.partition.keys[m].size());
  }
  const int64_t row_bytes = RowBytes(st);
  const double gpus = st.options.gpus_per_node;
  const double allreduce_bytes = AllReduceBytes(st);
  PsTrainerReport& rep = st.report;
  rep.pull_s = static_cast<double>(remote * row_bytes) / r.network_bytes_per_s;
  rep.gpu_s = st.model->StepSeconds(static_cast<int64_t>(st.batch.size()), rep.unique_keys,
                                    gpus * r.gpu_flops, gpus * r.hbm_bytes_per_s);
  rep.push_s = rep.pull_s;
  rep.allreduce_s = allreduce_bytes / r.network_bytes_per_s;
  rep.net_bytes = 2 * remote * row_bytes + static_cast<int64_t>(allreduce_bytes);
}

void TryAllReduce(TrainerSelf* self) {
  TrainerState& st = self->state;
  if (!st.computed) return;
  const auto it = st.exchanges.find(st.step);
  if (it == st.exchanges.end() || static_cast<int32_t>(it->second.size()) < st.options.nodes) {
    return;
  }
  std::vector<PsExchange>& parts = it->second;
  std::sort(parts.begin(), parts.end(),
            [](const PsExchange& a, const PsExchange& b) { return a.node < b.node; });
  paramserver::BatchGradients sum;
  sum.dense.assign(st.model->dense_parameters().size(), 0.0f);
  double loss = 0;
  for (const PsExchange& part : parts) {  // node order: every replica sums identically
    if (part.dense.size() != sum.dense.size()) {
      Tell(self, st.telemetry, st.collector,
           PsFailure{"trainer " + std::to_string(st.node) + ": step " + std::to_string(st.step) +
                     ": trainer " + std::to_string(part.node) + " sent " +
                     std::to_string(part.dense.size()) + " dense gradients, expected " +
                     std::to_string(sum.dense.size())});
      return;
    }
    loss += part.loss;
    for (size_t i = 0; i < sum.dense.size(); ++i) sum.dense[i] += part.dense[i];
  }
  // The sizes were checked above: ApplyDense cannot refuse them.
  if (Status s = st.model->ApplyDense(sum); !s.ok()) {
    Tell(self, st.telemetry, st.collector, PsFailure{s.message()});
    return;
  }
  st.exchanges.erase(it);
  st.report.loss = loss;
  st.computed = false;
  if (st.fabric) {  // one ring flow to the next node carries this node's share of the exchange
    const int32_t next = (st.node + 1) % st.options.nodes;
    if (next != st.node) {
      return StartTrainerFlow(self, st.clock.Now(self), 2 * int64_t{st.options.nodes}, st.node,
                              next, AllReduceBytes(st));
    }
    st.allreduce_out = false;
    return MaybeEndPacedStep(self);
  }
  TellAt(self, st.telemetry, st.clock, caf::actor_cast<caf::actor>(self),
         st.clock.Now(self) + st.report.allreduce_s, PsStepDone{st.step});
}

void Compute(TrainerSelf* self) {
  TrainerState& st = self->state;
  const int dim = st.options.model.dim;
  paramserver::RowBatch gathered;
  if (Status s = paramserver::ScatterRows(st.rows, st.partition, dim, &gathered); !s.ok()) {
    Tell(self, st.telemetry, st.collector,
         PsFailure{"trainer " + std::to_string(st.node) + ": step " + std::to_string(st.step) +
                   ": " + s.message()});
    return;
  }
  paramserver::BatchGradients g;
  const int64_t normaliser = int64_t{st.options.nodes} * st.options.batch_size;
  if (!st.model->ForwardBackward(st.batch, gathered, &g, normaliser)) {
    Tell(self, st.telemetry, st.collector,
         PsFailure{"trainer " + std::to_string(st.node) + ": step " + std::to_string(st.step) +
                   ": the pulled rows do not cover the batch"});
    return;
  }
  const double paced_pull_s = st.report.pull_s;  // with a fabric: the pull's flows, measured
  Model(st);
  if (st.fabric) {  // the fabric times the transfers; push_s and allreduce_s as they go through
    st.report.pull_s = paced_pull_s;
    st.report.push_s = st.report.allreduce_s = 0;
    st.allreduce_out = true;
  }
  const double sent_s = st.clock.Now(self) + (st.fabric ? 0 : st.report.pull_s) + st.report.gpu_s;
  for (const caf::actor& trainer : st.trainers) {
    TellAt(self, st.telemetry, st.clock, trainer, sent_s,
           PsExchange{st.step, st.node, g.loss, g.dense});
  }
  for (int32_t m = 0; m < st.options.nodes; ++m) {
    paramserver::RowBatch part = paramserver::SplitRows(g.embedding, st.partition, m, dim);
    PsPush push{st.step, st.node, std::move(part.keys), std::move(part.values), false};
    if (st.options.durable_updates) st.shards[m].retained[st.step] = push;
    if (st.fabric && m != st.node) {  // leaves when its flow is through, to this incarnation
      st.paced_pushes[m] = {st.shards[m].actor, std::move(push)};
      ++st.pushes_out;
      StartTrainerFlow(self, sent_s, st.options.nodes + m, st.node, m, RowBytesToOrFrom(st, m));
      continue;
    }
    TellAt(self, st.telemetry, st.clock, st.shards[m].actor, sent_s + st.report.push_s,
           std::move(push));
  }
  st.computed = true;
  TryAllReduce(self);
}

void EndStep(TrainerSelf* self) {
  TrainerState& st = self->state;
  st.report.end_s = st.clock.Now(self);
  Tell(self, st.telemetry, st.collector, st.report);
  Tell(self, st.telemetry, st.reader, PsCredit{st.step});
  ++st.step;
  st.busy = false;
  if (st.step < st.options.batches) return TryStart(self);
  const auto dense = st.model->dense_parameters();
  const auto state = st.model->dense_state();
  Tell(self, st.telemetry, st.collector,
       PsTrainerFinal{st.node, {dense.begin(), dense.end()}, {state.begin(), state.end()}});
  st.finished = true;
}

}  // namespace

caf::behavior TrainerActor(caf::stateful_actor<TrainerState>* self, int32_t node, PsOptions options,
                           std::vector<caf::actor> shards, caf::actor collector, RunClock clock,
                           Telemetry* telemetry) {
  TrainerState& st = self->state;
  st.node = node;
  st.options = std::move(options);
  for (caf::actor& shard : shards) {
    self->monitor(shard);
    TrainerShardView view;
    view.actor = std::move(shard);
    st.shards.push_back(std::move(view));
  }
  st.collector = std::move(collector);
  st.clock = clock;
  st.telemetry = telemetry;
  StatusOr<paramserver::CtrModel> model = paramserver::CtrModel::Create(st.options.model);
  if (!model.ok()) {  // PlanPsRun checked the model config: only an unchecked caller gets here
    Tell(self, st.telemetry, st.collector,
         PsFailure{"trainer " + std::to_string(node) + ": " + model.status().message()});
    self->quit();
    return {};
  }
  st.model = std::make_unique<paramserver::CtrModel>(std::move(*model));
  self->set_down_handler([=](caf::down_msg& down) { OnDown(self, down); });
  return {
      [=](PsPeers& peers) {
        self->state.trainers = std::move(peers.trainers);
        self->state.reader = std::move(peers.reader);
        self->state.fabric = std::move(peers.fabric);
        TryStart(self);
      },
      [=](PsExamples& batch) {
        const int64_t step = batch.step;
        InboxOf(self->state, step).examples = std::move(batch);
        TryStart(self);
      },
      [=](const PsReady& ready) {
        TrainerState& st = self->state;
        TrainerShardView& v = st.shards[ready.shard];
        if (!v.up || ready.incarnation != v.incarnation || ready.step < st.step) return;
        if (ready.step == st.step && st.busy) {  // a restarted shard prepared the step again
          if (v.repull) {
            v.repull = false;
            Tell(self, st.telemetry, v.actor,
                 PsPull{st.step, st.node, st.partition.keys[ready.shard]});
          }
          return;
        }
        TrainerInbox& box = InboxOf(st, ready.step);
        if (box.ready[ready.shard]) return;
        box.ready[ready.shard] = true;
        ++box.readys;
        TryStart(self);
      },
      [=](PsRows& rows) {
        TrainerState& st = self->state;
        TrainerShardView& v = st.shards[rows.shard];
        if (!v.up || rows.incarnation != v.incarnation) return;
        if (rows.step != st.step || !st.busy || v.rows_in) return;
        // Answering step s acknowledges this node's pushes up to s - 1.
        v.acked = std::max(v.acked, rows.step - 1);
        v.retained.erase(v.retained.begin(), v.retained.lower_bound(rows.step));
        v.rows_in = true;
        st.rows[rows.shard] = paramserver::RowBatch{std::move(rows.keys), std::move(rows.values)};
        if (st.fabric && rows.shard != st.node) {  // in once their bytes crossed the fabric
          return StartTrainerFlow(self, st.clock.Now(self), rows.shard, rows.shard, st.node,
                                  RowBytesToOrFrom(st, rows.shard));
        }
        if (++st.rows_in == st.options.nodes) Compute(self);
      },
      [=](PsShardRestarted& restarted) { OnRestart(self, restarted); },
      [=](PsExchange& exchange) {
        const int64_t step = exchange.step;
        self->state.exchanges[step].push_back(std::move(exchange));
        if (step == self->state.step) TryAllReduce(self);
      },
      [=](const PsStepDone& done) {
        if (done.step == self->state.step) EndStep(self);
      },
      [=](const FlowDone& done) { OnTrainerFlowDone(self, done); },
  };
}

}  // namespace troupe
