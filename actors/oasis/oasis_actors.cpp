#include "actors/oasis/oasis_actors.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

namespace so = scheduling::oasis;
constexpr double kTolerance = 1e-9;

using WorkerSelf = caf::stateful_actor<OasisWorkerState>;
using JobSelf = caf::stateful_actor<OasisJobState>;

// Starts the next chunk piece of the range, or reports the range done.
void NextPiece(WorkerSelf* self) {
  OasisWorkerState& st = self->state;
  const OasisWork& w = st.work;
  const double m_per_chunk = st.job.minibatches_per_chunk;
  if (st.position >= w.to - kTolerance * std::max(1.0, w.to) || w.ps.empty()) {
    Tell(self, st.telemetry, st.owner,
         OasisWorkerDone{w.slot, st.index, w.to - w.from, st.pieces, st.now_s});
    return;
  }
  const auto chunk = static_cast<int64_t>(std::floor(st.position / m_per_chunk + kTolerance));
  const double end = std::min(w.to, static_cast<double>(chunk + 1) * m_per_chunk);
  const double m = std::max(0.0, end - st.position);
  const double exchange_s = st.job.gradient / st.job.worker_bandwidth();
  const double gradient_at = st.now_s + m * (st.job.minibatch_s + exchange_s);
  st.now_s += m * st.job.StepSeconds();
  st.position = end;
  const caf::actor& ps = w.ps[static_cast<size_t>(st.index + st.pieces) % w.ps.size()];
  TellAt(self, st.telemetry, st.clock, ps, gradient_at,
         OasisGradient{chunk, m, m * st.job.gradient, st.now_s, caf::actor{self}});
}

// Hands out slot `lease.slot`'s ranges: min(S, R / y) mini-batches to each of the y workers.
void StartSlot(JobSelf* self, const OasisLease& lease) {
  OasisJobState& st = self->state;
  const size_t y = lease.worker_machines.size();
  const size_t z = std::max<size_t>(1, lease.ps_machines.size());
  auto& sys = self->home_system();
  while (st.workers.size() < y) {
    st.workers.push_back(sys.spawn(OasisWorkerActor, st.job,
                                   static_cast<int32_t>(st.workers.size()), caf::actor{self},
                                   st.clock, st.telemetry));
    self->link_to(st.workers.back());
  }
  while (st.ps.size() < z) {
    st.ps.push_back(sys.spawn(OasisPsActor, st.clock, st.telemetry));
    self->link_to(st.ps.back());
  }
  st.slot = lease.slot;
  st.pending = static_cast<int32_t>(y);
  st.slot_minibatches = 0;
  st.last_end_s = lease.start_s;
  const double remaining = std::max(0.0, st.total - st.position);
  const double per_slot = (lease.end_s - lease.start_s) / st.job.StepSeconds();
  const bool last = remaining <= y * per_slot * (1 + kTolerance);
  const double each = last ? remaining / static_cast<double>(y) : per_slot;
  const std::vector<caf::actor> ps(st.ps.begin(), st.ps.begin() + static_cast<long>(z));
  for (size_t w = 0; w < y; ++w) {
    const double from = st.position + w * each;
    const double to = last && w + 1 == y ? st.total : from + each;
    Tell(self, st.telemetry, st.workers[w], OasisWork{lease.slot, lease.end_s, from, to, ps});
  }
  st.position = last ? st.total : st.position + y * each;
  if (y == 0) {
    Tell(self, st.telemetry, st.scheduler,
         OasisSlotReport{st.index, lease.slot, 0, st.position, false, lease.start_s, 0});
  }
}

void WorkerDone(JobSelf* self, const OasisWorkerDone& d) {
  OasisJobState& st = self->state;
  if (d.slot != st.slot || st.pending <= 0) return;
  st.slot_minibatches += d.minibatches;
  st.pieces += d.pieces;
  st.last_end_s = std::max(st.last_end_s, d.end_s);
  if (--st.pending > 0) return;
  st.finished = st.position >= st.total;
  Tell(self, st.telemetry, st.scheduler,
       OasisSlotReport{st.index, st.slot, st.slot_minibatches, st.position, st.finished,
                       st.last_end_s, st.pieces});
}

}  // namespace

caf::behavior OasisWorkerActor(WorkerSelf* self, so::Job job, int32_t index, caf::actor owner,
                               RunClock clock, Telemetry* telemetry) {
  OasisWorkerState& st = self->state;
  st.job = std::move(job);
  st.index = index;
  st.owner = std::move(owner);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](OasisWork& w) {
        OasisWorkerState& s = self->state;
        s.now_s = s.clock.Seconds(self->clock().now());
        s.work = std::move(w);
        s.position = s.work.from;
        s.pieces = 0;
        NextPiece(self);
      },
      [=](const OasisParams&) {
        ++self->state.pieces;
        NextPiece(self);
      },
  };
}

caf::behavior OasisPsActor(caf::stateful_actor<OasisPsState>* self, RunClock clock,
                           Telemetry* telemetry) {
  self->state.clock = clock;
  self->state.telemetry = telemetry;
  return {
      [=](const OasisGradient& g) {
        OasisPsState& st = self->state;
        st.received_gb += g.gb;
        TellAt(self, st.telemetry, st.clock, g.reply_to, g.return_s,
               OasisParams{g.chunk, g.minibatches, g.gb});
      },
  };
}

caf::behavior OasisJobActor(JobSelf* self, so::Job job, int64_t index, caf::actor scheduler,
                            RunClock clock, Telemetry* telemetry) {
  OasisJobState& st = self->state;
  st.total = job.Minibatches();
  st.job = std::move(job);
  st.index = index;
  st.scheduler = std::move(scheduler);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](const OasisLease& lease) { StartSlot(self, lease); },
      [=](const OasisWorkerDone& d) { WorkerDone(self, d); },
  };
}

}  // namespace troupe
