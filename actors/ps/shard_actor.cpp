#include "actors/ps/shard_actor.hpp"

#include <algorithm>
#include <caf/actor_cast.hpp>

#include "emulation/runtime/counted_send.hpp"

namespace troupe {
namespace {

using Self = caf::stateful_actor<ShardState>;

double Now(Self* self) { return self->state.clock.Seconds(self->clock().now()); }

void Fail(Self* self, const std::string& why) {
  ShardState& st = self->state;
  if (st.failed) return;
  st.failed = true;
  Tell(self, st.telemetry, st.collector, PsFailure{why});
}

// Occupies the SSD with `bytes` of work for `step`; returns when that work ends.
double UseSsd(Self* self, int64_t bytes, int64_t step) {
  ShardState& st = self->state;
  const double busy = static_cast<double>(bytes) / st.options.rates.ssd_bytes_per_s;
  st.ssd_free_s = std::max(Now(self), st.ssd_free_s) + busy;
  st.reports[step].busy_s += busy;
  return st.ssd_free_s;
}

void Count(const PrepareStats& s, PsShardReport* r) {
  r->keys += s.keys;
  r->hbm_hits += s.hbm_hits;
  r->mem_keys += s.mem_keys;
  r->mem_hits += s.mem_hits;
  r->ssd_rows_read += s.ssd_rows_read;
  r->rows_created += s.rows_created;
  r->ssd_bytes_read += s.ssd_bytes_read;
  r->ssd_bytes_written += s.ssd_bytes_written;
}

// Handles the waiting prepares in (step, node) order while HBM-PS has room.
void HandlePrepares(Self* self) {
  ShardState& st = self->state;
  while (!st.failed) {
    const auto it = st.prepares.find({st.next_step, st.next_node});
    if (it == st.prepares.end()) return;
    const PsPrepare& p = it->second;
    if (!st.core->Fits(p.keys)) {
      if (st.applied + 1 == st.next_step) {  // no older step left to free room
        Fail(self, "paramserver.hbm_bytes_per_gpu: step " + std::to_string(p.step) +
                       "'s working rows do not fit in shard " + std::to_string(st.shard) +
                       "'s HBM-PS");
      }
      return;
    }
    PrepareStats stats;
    if (auto s = st.core->Prepare(p.step, p.keys, &stats); !s.ok()) return Fail(self, s.message());
    Count(stats, &st.reports[p.step]);
    const double ready = UseSsd(self, stats.ssd_bytes_read + stats.ssd_bytes_written, p.step);
    TellAt(self, st.telemetry, st.clock, p.trainer, ready, PsReady{p.step, st.shard});
    st.prepares.erase(it);
    if (++st.next_node == st.options.nodes) {
      st.next_node = 0;
      ++st.next_step;
    }
  }
}

void AnswerPull(Self* self, const caf::actor& to, const PsPull& pull) {
  ShardState& st = self->state;
  paramserver::RowBatch rows;
  if (auto s = st.core->Pull(pull.keys, &rows); !s.ok()) return Fail(self, s.message());
  Tell(self, st.telemetry, to,
       PsRows{pull.step, st.shard, std::move(rows.keys), std::move(rows.values)});
}

void Finish(Self* self) {
  ShardState& st = self->state;
  paramserver::RowBatch rows;
  if (auto s = st.core->Final(&rows); !s.ok()) return Fail(self, s.message());
  PsShardFinal final_state;
  final_state.shard = st.shard;
  final_state.keys = std::move(rows.keys);
  final_state.values = std::move(rows.values);
  final_state.ssd_keys = static_cast<int64_t>(st.core->ssd().size());
  final_state.ssd_disk_bytes = static_cast<int64_t>(st.core->ssd().disk_bytes());
  final_state.ssd_files = static_cast<int64_t>(st.core->ssd().file_count());
  final_state.mem_rows = static_cast<int64_t>(st.core->mem_rows());
  final_state.mem_capacity_rows = static_cast<int64_t>(st.core->mem_capacity_rows());
  final_state.compactions = st.core->compactions();
  Tell(self, st.telemetry, st.collector, std::move(final_state));
  self->quit();
}

void ApplyStep(Self* self, int64_t step) {
  ShardState& st = self->state;
  std::vector<PsPush> parts = std::move(st.pushes[step]);
  st.pushes.erase(step);
  if (step != st.applied + 1) {
    return Fail(self, "shard " + std::to_string(st.shard) + ": step " + std::to_string(step) +
                          " completed before step " + std::to_string(st.applied + 1));
  }
  std::sort(parts.begin(), parts.end(),
            [](const PsPush& a, const PsPush& b) { return a.node < b.node; });
  std::vector<GradientPart> gradients;
  for (const PsPush& p : parts) gradients.push_back(GradientPart{p.keys, p.gradients});
  ApplyStats applied;
  if (auto s = st.core->Apply(step, gradients, &applied); !s.ok()) return Fail(self, s.message());
  st.applied = step;
  UseSsd(self, applied.ssd_bytes_written + applied.compaction_bytes, step);
  PsShardReport report = std::move(st.reports[step]);
  st.reports.erase(step);
  report.step = step;
  report.shard = st.shard;
  report.ssd_bytes_written += applied.ssd_bytes_written;
  report.compaction_bytes = applied.compaction_bytes;
  report.mem_rows = static_cast<int64_t>(st.core->mem_rows());
  report.ssd_keys = static_cast<int64_t>(st.core->ssd().size());
  report.hbm_rows = static_cast<int64_t>(st.core->hbm_rows());
  Tell(self, st.telemetry, st.collector, std::move(report));
  if (const auto it = st.pulls.find(step + 1); it != st.pulls.end()) {
    for (const auto& [to, pull] : it->second) AnswerPull(self, to, pull);
    st.pulls.erase(it);
  }
  HandlePrepares(self);  // the update may have freed HBM-PS rows
  if (!st.failed && step + 1 == st.options.batches) Finish(self);
}

}  // namespace

caf::behavior ShardActor(caf::stateful_actor<ShardState>* self, int32_t shard, PsOptions options,
                         std::shared_ptr<ShardCore> core, caf::actor collector, RunClock clock,
                         Telemetry* telemetry) {
  ShardState& st = self->state;
  st.shard = shard;
  st.options = std::move(options);
  st.core = std::move(core);
  st.collector = std::move(collector);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](PsPrepare& prepare) {
        if (self->state.failed) return;
        const std::pair<int64_t, int32_t> at{prepare.step, prepare.node};
        self->state.prepares.emplace(at, std::move(prepare));
        HandlePrepares(self);
      },
      [=](PsPull& pull) {
        if (self->state.failed) return;
        auto to = caf::actor_cast<caf::actor>(self->current_sender());
        if (self->state.applied >= pull.step - 1) return AnswerPull(self, to, pull);
        self->state.pulls[pull.step].emplace_back(std::move(to), std::move(pull));
      },
      [=](PsPush& push) {
        if (self->state.failed) return;
        const int64_t step = push.step;
        auto& waiting = self->state.pushes[step];
        waiting.push_back(std::move(push));
        if (static_cast<int32_t>(waiting.size()) == self->state.options.nodes) {
          ApplyStep(self, step);
        }
      },
  };
}

}  // namespace troupe
