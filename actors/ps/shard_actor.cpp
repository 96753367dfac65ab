#include "actors/ps/shard_actor.hpp"

#include <algorithm>
#include <caf/actor_cast.hpp>
#include <cmath>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using ShardSelf = caf::stateful_actor<ShardState>;

std::string NodeName(const ShardState& st) { return "ps:" + std::to_string(st.setup.shard); }

void Record(ShardSelf* self, const std::string& fault, const std::string& event, int64_t step,
            int64_t count, std::string detail) {
  ShardState& st = self->state;
  Tell(self, st.setup.telemetry, st.setup.collector,
       PsFaultRecord{st.setup.clock.Now(self), st.setup.shard, fault, event, step, count,
                     std::move(detail)});
}

void Fail(ShardSelf* self, const std::string& why) {
  ShardState& st = self->state;
  if (st.failed) return;
  st.failed = true;
  Tell(self, st.setup.telemetry, st.setup.collector, PsFailure{why});
}

// Sets the core's write fault switch to what the disk windows say for now.
void SetDisk(ShardSelf* self) {
  ShardState& st = self->state;
  const int error = st.setup.faults.DiskErrorAt(st.setup.clock.Now(self));
  if (error != 0) {
    st.setup.core->write_fault().Fail(error);
  } else {
    st.setup.core->write_fault().Clear();
  }
}

// Occupies the SSD with `bytes` of work for `step`; returns when that work ends.
double UseSsd(ShardSelf* self, int64_t bytes, int64_t step) {
  ShardState& st = self->state;
  const double start = std::max(st.setup.clock.Now(self), st.ssd_free_s);
  const double rate = st.setup.options.rates.ssd_bytes_per_s * st.setup.faults.SlowFactorAt(start);
  const double busy = static_cast<double>(bytes) / rate;
  st.ssd_free_s = start + busy;
  st.reports[step].busy_s += busy;
  return st.ssd_free_s;
}

double RetryDelay(int32_t attempt) { return std::min(0.1, 1e-3 * std::pow(2.0, attempt)); }

// After a core operation: if its writes failed, the shard blocks and schedules a retry.
void CheckWrites(ShardSelf* self) {
  ShardState& st = self->state;
  if (st.blocked || !st.setup.core->blocked()) return;
  st.blocked = true;
  st.blocked_since_s = st.setup.clock.Now(self);
  // Paths relative to the SSD-PS root, so that faults.csv does not depend on where the run ran.
  std::string why = st.setup.core->WriteError().message();
  const std::string root = st.setup.options.ssd_dir + "/";
  if (why.rfind(root, 0) == 0) why = why.substr(root.size());
  Record(self, "disk", "write_failed", st.applied, 0, NodeName(st) + " SSD-PS: " + why);
  TellAt(self, st.setup.telemetry, st.setup.clock, caf::actor_cast<caf::actor>(self),
         st.setup.clock.Now(self) + RetryDelay(0), PsRetryWrites{0});
}

// Handles the waiting prepares in (step, node) order while HBM-PS has room.
void HandlePrepares(ShardSelf* self) {
  ShardState& st = self->state;
  while (!st.failed && !st.blocked) {
    const auto it = st.prepares.find({st.next_step, st.next_node});
    if (it == st.prepares.end()) return;
    const PsPrepare& p = it->second;
    if (!st.setup.core->Fits(p.keys)) {
      if (st.applied + 1 == st.next_step) {  // no older step left to free room
        Fail(self, "paramserver.hbm_bytes_per_gpu: step " + std::to_string(p.step) +
                       "'s working rows do not fit in shard " + std::to_string(st.setup.shard) +
                       "'s HBM-PS");
      }
      return;
    }
    PrepareStats stats;
    SetDisk(self);
    if (auto s = st.setup.core->Prepare(p.step, p.keys, &stats); !s.ok()) {
      return Fail(self, s.message());
    }
    st.reports[p.step].counts += stats;
    const double ready = UseSsd(self, stats.ssd_bytes_read + stats.ssd_bytes_written, p.step);
    TellAt(self, st.setup.telemetry, st.setup.clock, p.trainer, ready,
           PsReady{p.step, st.setup.shard, st.setup.incarnation});
    st.prepares.erase(it);
    if (++st.next_node == st.setup.options.nodes) {
      st.next_node = 0;
      ++st.next_step;
    }
    CheckWrites(self);
  }
}

void AnswerPull(ShardSelf* self, const caf::actor& to, const PsPull& pull) {
  ShardState& st = self->state;
  paramserver::RowBatch rows;
  if (auto s = st.setup.core->Pull(pull.keys, &rows); !s.ok()) return Fail(self, s.message());
  Tell(self, st.setup.telemetry, to,
       PsRows{pull.step, st.setup.shard, st.setup.incarnation, std::move(rows.keys),
              std::move(rows.values)});
}

void Finish(ShardSelf* self) {
  ShardState& st = self->state;
  if (st.done) return;
  st.finishing = true;
  SetDisk(self);
  if (auto s = st.setup.core->FlushMem(); !s.ok()) return Fail(self, s.message());
  CheckWrites(self);
  if (st.blocked) return;  // Resume finishes once the writes succeed
  ShardCore& core = *st.setup.core;
  paramserver::RowBatch rows;
  if (auto s = core.Final(&rows); !s.ok()) return Fail(self, s.message());
  PsShardFinal final_state;
  final_state.shard = st.setup.shard;
  final_state.ssd_keys = static_cast<int64_t>(core.ssd().size());
  final_state.ssd_disk_bytes = static_cast<int64_t>(core.ssd().disk_bytes());
  final_state.ssd_files = static_cast<int64_t>(core.ssd().file_count());
  final_state.mem_rows = static_cast<int64_t>(core.mem_rows());
  final_state.mem_capacity_rows = static_cast<int64_t>(core.mem_capacity_rows());
  final_state.compactions = core.compactions();
  // In parts of at most final_rows_per_message rows (one, empty, for a shard that owns nothing).
  size_t per = static_cast<size_t>(std::max<int64_t>(1, st.setup.options.final_rows_per_message));
  const size_t keys = rows.keys.size();
  const size_t width = keys == 0 ? 0 : rows.values.size() / keys;
  // And of at most kFinalPartBytes: a wide model's 2^18 rows would pass the network's frame
  // ceiling (network/plugin/bounded_multiplexer.hpp) when the shard lives in another process.
  constexpr size_t kFinalPartBytes = size_t{64} << 20;
  per = std::min(per, std::max<size_t>(1, kFinalPartBytes / (sizeof(uint64_t) + width * 4)));
  for (size_t from = 0; from == 0 || from < keys; from += per) {
    const size_t to = std::min(keys, from + per);
    PsShardFinal part = final_state;
    part.part = static_cast<int32_t>(from / per);
    part.more = to < keys;
    part.keys.assign(rows.keys.begin() + from, rows.keys.begin() + to);
    part.values.assign(rows.values.begin() + from * width, rows.values.begin() + to * width);
    Tell(self, st.setup.telemetry, st.setup.collector, std::move(part));
  }
  st.done = true;
  self->quit();
}

// Answers the pulls that step `applied` unblocked, prepares what now fits, finishes at the end.
void AfterApply(ShardSelf* self) {
  ShardState& st = self->state;
  if (st.failed || st.blocked) return;
  if (const auto it = st.pulls.find(st.applied + 1); it != st.pulls.end()) {
    for (const auto& [to, pull] : it->second) AnswerPull(self, to, pull);
    st.pulls.erase(it);
  }
  HandlePrepares(self);  // the update may have freed HBM-PS rows
  if (!st.failed && !st.blocked && st.applied + 1 == st.setup.options.batches) Finish(self);
}

void ApplyStep(ShardSelf* self, int64_t step) {
  ShardState& st = self->state;
  std::map<int32_t, PsPush> parts = std::move(st.pushes[step]);
  st.pushes.erase(step);
  std::vector<GradientPart> gradients;  // node order: the map's
  for (const auto& [node, p] : parts) gradients.push_back(GradientPart{p.keys, p.gradients});
  ApplyStats applied;
  SetDisk(self);
  if (auto s = st.setup.core->Apply(step, gradients, &applied); !s.ok()) {
    return Fail(self, s.message());
  }
  st.applied = step;
  UseSsd(self, applied.ssd_bytes_written + applied.compaction_bytes, step);
  PsShardReport report = std::move(st.reports[step]);
  st.reports.erase(step);
  report.step = step;
  report.shard = st.setup.shard;
  report.counts.ssd_bytes_written += applied.ssd_bytes_written;
  report.counts.compaction_bytes += applied.compaction_bytes;
  report.mem_rows = static_cast<int64_t>(st.setup.core->mem_rows());
  report.ssd_keys = static_cast<int64_t>(st.setup.core->ssd().size());
  report.hbm_rows = static_cast<int64_t>(st.setup.core->hbm_rows());
  Tell(self, st.setup.telemetry, st.setup.collector, std::move(report));
  if (st.replayed.contains(step)) {
    Record(self, "crash", "replayed", step, static_cast<int64_t>(parts.size()),
           NodeName(st) + " applied step " + std::to_string(step) +
               " again from the trainers' retained pushes");
  }
  CheckWrites(self);
}

// Applies every step whose N pushes are in and whose N prepares are handled, in step order. (A
// push normally follows its prepare; after a restart the trainers' re-sent pushes may overtake
// the partitioners' re-sent prepares when they live in other processes or threads.)
void TryApply(ShardSelf* self) {
  ShardState& st = self->state;
  while (!st.failed && !st.blocked && !st.done) {
    const auto it = st.pushes.find(st.applied + 1);
    if (it == st.pushes.end() || static_cast<int32_t>(it->second.size()) < st.setup.options.nodes ||
        st.next_step <= st.applied + 1) {
      return;
    }
    ApplyStep(self, st.applied + 1);
    AfterApply(self);
  }
}

void RetryWrites(ShardSelf* self, int32_t attempt) {
  ShardState& st = self->state;
  if (st.failed || !st.blocked) return;
  SetDisk(self);
  const Status status = st.setup.core->RetryWrites();
  const double blocked_s = st.setup.clock.Now(self) - st.blocked_since_s;
  if (status.ok()) {
    st.blocked = false;
    Record(self, "disk", "writes_recovered", st.applied, attempt + 1,
           NodeName(st) + " SSD-PS writes succeed again after " + std::to_string(attempt + 1) +
               " retries");
    AfterApply(self);
    TryApply(self);
    if (!st.failed && !st.blocked && st.finishing) Finish(self);  // (a no-op once done)
    return;
  }
  if (blocked_s >= kDiskGiveUpS) {
    Record(self, "disk", "gave_up", st.applied, attempt + 1, "");
    return Fail(self, NodeName(st) + " SSD-PS: " + status.message() + " (still failing after " +
                          std::to_string(attempt + 1) + " retries over " +
                          std::to_string(blocked_s) + " s)");
  }
  TellAt(self, st.setup.telemetry, st.setup.clock, caf::actor_cast<caf::actor>(self),
         st.setup.clock.Now(self) + RetryDelay(attempt + 1), PsRetryWrites{attempt + 1});
}

}  // namespace

caf::behavior ShardActor(caf::stateful_actor<ShardState>* self, ShardSetup setup) {
  ShardState& st = self->state;
  st.setup = std::move(setup);
  st.applied = st.setup.recovered_step;
  st.next_step = st.applied + 1;
  st.ssd_free_s = st.setup.ssd_free_s;
  return {
      [=](PsPrepare& prepare) {
        ShardState& st = self->state;
        if (st.failed) return;
        const std::pair<int64_t, int32_t> at{prepare.step, prepare.node};
        if (at < std::pair{st.next_step, st.next_node}) return;  // handled (a re-sent copy)
        st.prepares.emplace(at, std::move(prepare));
        HandlePrepares(self);
        TryApply(self);  // re-sent pushes may have been waiting for this prepare
      },
      [=](PsPull& pull) {
        ShardState& st = self->state;
        if (st.failed) return;
        auto to = caf::actor_cast<caf::actor>(self->current_sender());
        if (!st.blocked && st.applied >= pull.step - 1) return AnswerPull(self, to, pull);
        st.pulls[pull.step].emplace_back(std::move(to), std::move(pull));
      },
      [=](PsPush& push) {
        ShardState& st = self->state;
        if (st.failed || push.step <= st.applied) return;  // applied: a re-sent copy
        if (push.resent) st.replayed.insert(push.step);
        const int64_t step = push.step;
        const int32_t node = push.node;
        st.pushes[step].emplace(node, std::move(push));
        TryApply(self);
      },
      [=](const PsRetryWrites& retry) { RetryWrites(self, retry.attempt); },
      [=](const PsStart&) {  // a restarted shard: finish if it recovered every step
        ShardState& st = self->state;
        if (!st.failed && st.applied + 1 == st.setup.options.batches) Finish(self);
      },
  };
}

}  // namespace troupe
