#include "actors/oasis/oasis_actors.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

namespace so = scheduling::oasis;
constexpr double kTolerance = 1e-9;
// Parameters back this little after the lease's end (relative) still count: rounding.
constexpr double kLeaseSlack = 1e-6;

using WorkerSelf = caf::stateful_actor<OasisWorkerState>;
using JobSelf = caf::stateful_actor<OasisJobState>;

// A worker's lease has ended when its clock is past end_s (by more than rounding).
bool PastLease(const OasisWorkerState& st, double t) {
  return t > st.work.end_s + kLeaseSlack * std::max(1.0, st.work.end_s);
}

void ReportDone(WorkerSelf* self) {
  OasisWorkerState& st = self->state;
  const OasisWork& w = st.work;
  const bool complete = st.position >= w.to - kTolerance * std::max(1.0, w.to) || w.ps.empty();
  const double trained = complete ? w.to - w.from : st.position - w.from;
  const double untrained = complete ? 0.0 : w.to - st.position;
  Tell(self, st.telemetry, st.owner,
       OasisWorkerDone{w.slot, st.index, trained, untrained, st.pieces, st.now_s});
}

// Starts the next chunk piece of the range, or reports the range done (or cut short by the
// lease's end).
void NextPiece(WorkerSelf* self) {
  OasisWorkerState& st = self->state;
  const OasisWork& w = st.work;
  const double m_per_chunk = st.job.minibatches_per_chunk;
  if (st.position >= w.to - kTolerance * std::max(1.0, w.to) || w.ps.empty() ||
      PastLease(st, st.now_s)) {
    ReportDone(self);
    return;
  }
  const auto chunk = static_cast<int64_t>(std::floor(st.position / m_per_chunk + kTolerance));
  const double end = std::min(w.to, static_cast<double>(chunk + 1) * m_per_chunk);
  const double m = std::max(0.0, end - st.position);
  const double b = st.job.worker_bandwidth();
  const double exchange_s = st.job.gradient / b;
  st.piece_end = end;
  st.awaiting = static_cast<int32_t>(w.ps.size());
  st.back_s = 0;
  // The parameters are sharded over the slot's z PS: a 1/z share of the gradients goes to each,
  // all at once, each share at b/z of the worker's link, so the piece takes the model's time.
  // The n PS on one machine get their n shares in one message through its NIC.
  const double z = std::max(1, w.ps_count);
  const double ready_s = st.now_s + m * st.job.minibatch_s;
  for (size_t k = 0; k < w.ps.size(); ++k) {
    const double share = w.shares[k] / z;
    OasisGradient g{chunk,
                    m,
                    m * st.job.gradient * share,
                    b * share,
                    ready_s,
                    st.now_s + m * (st.job.minibatch_s + exchange_s),
                    st.now_s + m * st.job.StepSeconds(),
                    0,
                    w.ps[k],
                    caf::actor{},
                    caf::actor{self},
                    {}};
    if (w.server >= 0) {  // across the fabric: its bookings are this worker's and numbered
      st.transfers += 2;  // (the parameters' are the gradient's + 1)
      g.route = {w.server,
                 w.ps_servers[k],
                 (static_cast<int64_t>(self->id()) << 32) | (st.transfers & 0xffffffff),
                 0,
                 ready_s,
                 ready_s};
    }
    TellAt(self, st.telemetry, st.clock, w.nics[k], ready_s, std::move(g));
  }
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
  st.slot_untrained = 0;
  st.last_end_s = lease.start_s;
  const double remaining = std::max(0.0, st.total - st.position);
  const double per_slot = (lease.end_s - lease.start_s) / st.job.StepSeconds();
  const bool last = remaining <= y * per_slot * (1 + kTolerance);
  const double each = last ? remaining / static_cast<double>(y) : per_slot;
  // The slot's PS grouped by machine: one exchange per machine carries its PS's shares.
  std::vector<caf::actor> ps, nics;
  std::vector<int32_t> machines, shares;
  for (size_t k = 0; k < z; ++k) {
    const int32_t machine = k < lease.ps_machines.size() ? lease.ps_machines[k] : 0;
    const auto at = std::find(machines.begin(), machines.end(), machine);
    if (at != machines.end()) {
      ++shares[static_cast<size_t>(at - machines.begin())];
      continue;
    }
    machines.push_back(machine);
    shares.push_back(1);
    ps.push_back(st.ps[k]);
    if (!st.fabric) nics.push_back(st.nics.at(static_cast<size_t>(machine)));
  }
  for (size_t w = 0; w < y; ++w) {
    const double from = st.position + w * each;
    const double to = last && w + 1 == y ? st.total : from + each;
    OasisWork work{lease.slot, lease.begin_s,           lease.end_s, from, to, ps, nics,
                   shares,     static_cast<int32_t>(z), -1,          {}};
    if (st.fabric) {  // every transfer enters the fabric at the worker's own rack
      work.server = lease.worker_machines[w];
      work.nics.assign(machines.size(), st.fabric->FirstDomain(work.server));
      for (int32_t m : machines) work.ps_servers.push_back(st.fabric->PsServer(m));
    }
    Tell(self, st.telemetry, st.workers[w], std::move(work));
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
  st.slot_untrained += d.untrained;
  st.pieces += d.pieces;
  st.last_end_s = std::max(st.last_end_s, d.end_s);
  if (--st.pending > 0) return;
  // Ranges cut short by the lease's end go back to the pool (the work is a fluid).
  if (st.slot_untrained > 0) st.position -= st.slot_untrained;
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
        s.now_s = w.start_s;
        s.work = std::move(w);
        s.position = s.work.from;
        s.pieces = 0;
        NextPiece(self);
      },
      [=](const OasisParams& p) {
        OasisWorkerState& s = self->state;
        s.back_s = std::max(s.back_s, p.at_s);
        if (--s.awaiting > 0) return;
        s.now_s = s.back_s;
        if (PastLease(s, s.now_s)) {  // back too late: the piece is lost with the lease
          ReportDone(self);
          return;
        }
        s.position = s.piece_end;
        ++s.pieces;
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
        // Parameters leave as soon as the gradients are in; the model's return moves by however
        // late they came (exactly 0 when nothing interfered).
        const double late_s = g.at_s - g.nominal_s;
        OasisParams p{g.chunk, g.minibatches, g.gb, g.gbps, g.at_s, g.return_s + late_s,
                      0,       g.reply_to,    {}};
        if (g.route.from >= 0) {
          p.route = {g.route.to, g.route.from, g.route.id + 1, 0, g.at_s, g.at_s};
        }
        Tell(self, st.telemetry, g.nic, std::move(p));
      },
  };
}

caf::behavior OasisJobActor(JobSelf* self, so::Job job, int64_t index, caf::actor scheduler,
                            std::vector<caf::actor> nics, std::shared_ptr<const OasisFabric> fabric,
                            RunClock clock, Telemetry* telemetry) {
  OasisJobState& st = self->state;
  st.nics = std::move(nics);
  st.fabric = std::move(fabric);
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
