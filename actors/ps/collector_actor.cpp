#include "actors/ps/collector_actor.hpp"

#include <algorithm>

#include "runtime/live_feed.hpp"

namespace troupe {
namespace {

using CollectorSelf = caf::stateful_actor<CollectorState>;

void HandOver(CollectorSelf* self) {
  CollectorState& st = self->state;
  if (st.handed_over) return;
  st.handed_over = true;
  st.handover->set_value(std::move(st.records));
  st.telemetry->done.store(true);
  self->quit();
}

void MaybeDone(CollectorSelf* self) {
  const PsRecords& r = self->state.records;
  const auto n = static_cast<size_t>(self->state.nodes);
  if (r.shard_finals.size() == n && r.trainer_finals.size() == n) HandOver(self);
}

}  // namespace

caf::behavior CollectorActor(caf::stateful_actor<CollectorState>* self, int32_t nodes,
                             std::shared_ptr<std::promise<PsRecords>> handover,
                             Telemetry* telemetry) {
  self->state.nodes = nodes;
  self->state.handover = std::move(handover);
  self->state.telemetry = telemetry;
  return {
      [=](PsStageReport& r) {
        if (LiveFeed* live = self->state.telemetry->live) live->OnPsStage(r.stage, r.busy_s);
        self->state.records.stages.push_back(std::move(r));
      },
      [=](PsShardReport& r) {
        if (LiveFeed* live = self->state.telemetry->live) live->OnPsShard(r.busy_s, r.counts);
        self->state.records.shards.push_back(std::move(r));
      },
      [=](PsTrainerReport& r) {
        if (LiveFeed* live = self->state.telemetry->live) {
          live->OnPsTrainer(r.step, r.node, r.loss, r.pull_s, r.gpu_s, r.push_s, r.allreduce_s);
        }
        if (r.node == 0) {
          self->state.telemetry->rounds.store(r.step + 1, std::memory_order_relaxed);
          self->state.telemetry->virtual_s.store(r.end_s, std::memory_order_relaxed);
        }
        self->state.records.trainers.push_back(std::move(r));
      },
      [=](PsShardFinal& f) {
        // Parts of one shard's final come in order; part 0 starts it afresh (a restarted shard
        // sends its final again).
        PsShardFinal& whole = self->state.final_parts[f.shard];
        if (f.part == 0) {
          whole = std::move(f);
        } else {
          whole.keys.insert(whole.keys.end(), f.keys.begin(), f.keys.end());
          whole.values.insert(whole.values.end(), f.values.begin(), f.values.end());
          whole.more = f.more;
        }
        if (whole.more) return;
        f = std::move(whole);
        self->state.final_parts.erase(f.shard);
        auto& finals = self->state.records.shard_finals;
        const auto same = std::find_if(finals.begin(), finals.end(),
                                       [&](const PsShardFinal& g) { return g.shard == f.shard; });
        if (same != finals.end()) {
          *same = std::move(f);
        } else {
          finals.push_back(std::move(f));
        }
        MaybeDone(self);
      },
      [=](PsFaultRecord& r) { self->state.records.faults.push_back(std::move(r)); },
      [=](PsTrainerFinal& f) {
        self->state.records.trainer_finals.push_back(std::move(f));
        MaybeDone(self);
      },
      [=](PsFailure& f) {
        self->state.records.failure = std::move(f.message);
        HandOver(self);
      },
  };
}

}  // namespace troupe
