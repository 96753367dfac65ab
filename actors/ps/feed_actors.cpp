#include "actors/ps/feed_actors.hpp"

#include <algorithm>

#include "runtime/counted_send.hpp"

namespace troupe {

using paramserver::Example;
using paramserver::kDenseFields;
using paramserver::kSparseFields;

std::vector<Example> ToExamples(const PsExamples& batch) {
  std::vector<Example> out(batch.labels.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].label = batch.labels[i];
    std::copy_n(batch.dense.begin() + i * kDenseFields, kDenseFields, out[i].dense.begin());
    std::copy_n(batch.sparse.begin() + i * kSparseFields, kSparseFields, out[i].sparse.begin());
  }
  return out;
}

PsExamples FromExamples(int64_t step, int32_t node, std::span<const Example> batch) {
  PsExamples out;
  out.step = step;
  out.node = node;
  out.labels.reserve(batch.size());
  out.dense.reserve(batch.size() * kDenseFields);
  out.sparse.reserve(batch.size() * kSparseFields);
  for (const Example& e : batch) {
    out.labels.push_back(e.label);
    out.dense.insert(out.dense.end(), e.dense.begin(), e.dense.end());
    out.sparse.insert(out.sparse.end(), e.sparse.begin(), e.sparse.end());
  }
  return out;
}

namespace {

// The node's examples of `step`, or null while they have not arrived (a reader in a node process).
const Example* BatchOf(const ReaderState& st, int64_t step) {
  const int64_t b = st.options.batch_size;
  if (st.data) return st.data->data() + (step * st.options.nodes + st.node) * b;
  if (static_cast<int64_t>(st.own.size()) < (step + 1) * b) return nullptr;
  return st.own.data() + step * b;
}

void ReadAhead(caf::stateful_actor<ReaderState>* self) {
  ReaderState& st = self->state;
  const int64_t b = st.options.batch_size;
  while (st.next < st.steps && st.next < st.trained + st.options.prefetch) {
    const Example* first = BatchOf(st, st.next);
    if (first == nullptr) return;  // the run has not sent them yet
    const std::span<const Example> batch(first, static_cast<size_t>(b));
    const int64_t bytes = b * kPsExampleBytes;
    const double busy = static_cast<double>(bytes) / st.options.rates.disk_bytes_per_s;
    st.free_s = std::max(st.clock.Now(self), st.free_s) + busy;
    TellAt(self, st.telemetry, st.clock, st.partitioner, st.free_s,
           FromExamples(st.next, st.node, batch));
    Tell(self, st.telemetry, st.collector,
         PsStageReport{st.next, st.node, 1, busy, st.free_s, bytes});
    ++st.next;
  }
}

}  // namespace

caf::behavior ReaderActor(caf::stateful_actor<ReaderState>* self, int32_t node, PsOptions options,
                          PsDataset data, caf::actor partitioner, caf::actor collector,
                          RunClock clock, Telemetry* telemetry) {
  ReaderState& st = self->state;
  st.node = node;
  st.options = std::move(options);
  st.data = std::move(data);
  st.partitioner = std::move(partitioner);
  st.collector = std::move(collector);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](const PsStart& start) {
        self->state.steps = start.steps;
        ReadAhead(self);
      },
      [=](const PsExamples& batches) {
        // The run's examples for a reader in a node process: they come in step order.
        ReaderState& st = self->state;
        if (batches.step * st.options.batch_size != static_cast<int64_t>(st.own.size())) {
          Tell(self, st.telemetry, st.collector,
               PsFailure{"reader " + std::to_string(st.node) + ": examples of step " +
                         std::to_string(batches.step) + " arrived out of order"});
          return;
        }
        std::vector<Example> more = ToExamples(batches);
        st.own.insert(st.own.end(), more.begin(), more.end());
        ReadAhead(self);
      },
      [=](const PsCredit& credit) {
        self->state.trained = std::max(self->state.trained, credit.step + 1);
        ReadAhead(self);
        if (self->state.trained >= self->state.steps) self->quit();
      },
  };
}

caf::behavior PartitionerActor(caf::stateful_actor<PartitionerState>* self, int32_t node,
                               PsOptions options, std::vector<caf::actor> shards,
                               caf::actor trainer, caf::actor collector, RunClock clock,
                               Telemetry* telemetry) {
  PartitionerState& st = self->state;
  st.node = node;
  st.options = std::move(options);
  st.shards = std::move(shards);
  st.trainer = std::move(trainer);
  st.collector = std::move(collector);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](PsExamples& batch) {
        PartitionerState& st = self->state;
        std::vector<uint64_t> keys = batch.sparse;
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        if (Status s = paramserver::PartitionByNodeInto(keys, st.options.nodes, &st.partition);
            !s.ok()) {
          Tell(self, st.telemetry, st.collector,
               PsFailure{"partitioner " + std::to_string(st.node) + ": " + s.message()});
          return;
        }
        const int64_t remote =
            static_cast<int64_t>(keys.size() - st.partition.keys[st.node].size());
        const int64_t bytes = remote * kPsKeyBytes;
        const double busy = static_cast<double>(bytes) / st.options.rates.network_bytes_per_s;
        st.free_s = std::max(st.clock.Now(self), st.free_s) + busy;
        if (st.options.durable_updates) {
          st.sent[batch.step] = st.partition.keys;
          st.sent.erase(st.sent.begin(), st.sent.lower_bound(batch.step - st.options.prefetch - 2));
        }
        for (int32_t m = 0; m < st.options.nodes; ++m) {
          TellAt(self, st.telemetry, st.clock, st.shards[m], st.free_s,
                 PsPrepare{batch.step, st.node, st.trainer, std::move(st.partition.keys[m])});
        }
        Tell(self, st.telemetry, st.collector,
             PsStageReport{batch.step, st.node, 2, busy, st.free_s, bytes});
        const int64_t step = batch.step;
        TellAt(self, st.telemetry, st.clock, st.trainer, st.free_s, std::move(batch));
        if (step + 1 == st.options.batches && !st.options.durable_updates) self->quit();
      },
      [=](const PsShardRestarted& r) {
        PartitionerState& st = self->state;
        st.shards[r.shard] = r.actor;
        for (const auto& [step, keys] : st.sent) {
          if (step <= r.recovered_step) continue;
          Tell(self, st.telemetry, r.actor, PsPrepare{step, st.node, st.trainer, keys[r.shard]});
        }
      },
  };
}

}  // namespace troupe
