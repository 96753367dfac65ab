#include "actors/server_actor.hpp"

#include <spdlog/spdlog.h>

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>
#include <caf/spawn_options.hpp>

#include "actors/compute_worker_actor.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/fault_network.hpp"
#include "runtime/live_feed.hpp"

namespace troupe {
namespace {

using ServerSelf = server_actor::stateful_pointer<ServerState>;

ServerFree FreeOf(const ServerState& st) {
  return ServerFree{.server = st.spec.index,
                    .gpus = st.ledger->free_gpus(),
                    .cpus = st.ledger->free_cpus(),
                    .memory_gb = st.ledger->free_memory_gb()};
}

void Refuse(ServerSelf self, const scheduler_actor& scheduler, const RoundLeases& round,
            int64_t job_id, const Status& why) {
  ServerState& st = self->state;
  ++st.refusals;
  spdlog::warn("server {}: refused job {} in round {}: {}", st.spec.name, job_id, round.round,
               why.message());
  if (scheduler) {
    Tell(self, st.telemetry, scheduler,
         LeaseRefusal{.round = round.round,
                      .server = st.spec.index,
                      .job_id = job_id,
                      .reason = why.message()});
  }
}

// Ends the previous round's leases but the standing parts: a lease of the part's size held here
// stands until the round's end (same GPUs); the other parts are booked, without a grant. Rounds
// that bring this server no grant bring it no message (SendLeases), so the books catch up here:
// a standing lease is extended from whichever round it ended, before the leases that ended (or
// whose jobs moved on since) are dropped, and a part that moved here since is booked after.
void EndLeasesButStanding(ServerSelf self, const scheduler_actor& scheduler,
                          const RoundLeases& round) {
  ServerState& st = self->state;
  st.standing_to_book.clear();
  for (const StandingPart& part : round.standing) {
    if (!st.ledger->Extend(part.job_id, part.gpus, part.cpus, part.memory_gb, round.end_s)) {
      st.standing_to_book.push_back(&part);
    }
  }
  st.ledger->ExpireUntil(round.start_s);
  for (const StandingPart* part : st.standing_to_book) {
    Status s = st.ledger->Grant(part->job_id, part->gpus, part->cpus, part->memory_gb, round.end_s,
                                nullptr);
    // The job runs on regardless: the scheduler, whose books disagree, says so.
    if (!s.ok()) Refuse(self, scheduler, round, part->job_id, s);
  }
}

void ApplyRound(ServerSelf self, const RoundLeases& round) {
  ServerState& st = self->state;
  if (round.start_s <= st.last_round_start_s) return;  // delivered twice
  st.last_round_start_s = round.start_s;
  auto scheduler = caf::actor_cast<scheduler_actor>(self->current_sender());
  EndLeasesButStanding(self, scheduler, round);
  const double speed = round.start_s < st.slow.until_s ? st.slow.factor : 1.0;
  for (const LeaseOrder& order : round.leases) {
    const LeaseTerms& terms = order.terms;
    // A straggler's factor and the GPU type's speed for this job compose.
    LeaseGrant grant{.round = round.round,
                     .start_s = round.start_s,
                     .end_s = round.end_s,
                     .server = st.spec.index,
                     .gpu_ids = {},
                     .cpus = terms.cpus,
                     .memory_gb = terms.memory_gb,
                     .parts = terms.parts,
                     .granted = true,
                     .scheduler = scheduler,
                     .speed = speed * terms.type_speed,
                     .rounds_stood = terms.rounds_stood,
                     .network_s = terms.network_s};
    // A job relet mid-round after a failure (a spare took a lost server's place) is granted its
    // part here anew: the grant replaces the lease it holds here.
    if (st.ledger->Find(terms.job_id) != nullptr) st.ledger->Release(terms.job_id);
    Status s = st.ledger->Grant(terms.job_id, terms.gpus, terms.cpus, terms.memory_gb, round.end_s,
                                &grant.gpu_ids);
    if (!s.ok()) {
      grant.granted = false;
      Refuse(self, scheduler, round, terms.job_id, s);
    }
    Tell(self, st.telemetry, order.job, std::move(grant));
  }
  if (LiveFeed* live = st.telemetry->live) {
    live->OnServerRound(st.spec.index, round.round, st.spec.gpus - st.ledger->free_gpus(),
                        st.spec.cpus - st.ledger->free_cpus(),
                        st.spec.memory_gb - st.ledger->free_memory_gb());
  }
}

// Real compute: one part of a job's lease runs here, in this server's process, on the devices
// its leased GPUs are (detached: its steps block).
void RunPart(ServerSelf self, PartWork& work) {
  const ServerSpec& spec = self->state.spec;
  std::vector<int32_t> devices;
  for (int32_t gpu : work.gpu_ids) {
    const bool mapped = gpu >= 0 && static_cast<size_t>(gpu) < spec.devices.size();
    devices.push_back(mapped ? spec.devices[static_cast<size_t>(gpu)] : gpu);
  }
  self->spawn<caf::detached>(ComputeWorkerActor, std::move(work), std::move(devices),
                             self->state.telemetry);
}

}  // namespace

server_actor::behavior_type ServerActor(ServerSelf self, ServerSpec spec, Telemetry* telemetry) {
  self->state.ledger.emplace(spec.gpus, spec.cpus, spec.memory_gb);
  self->state.spec = std::move(spec);
  self->state.telemetry = telemetry;
  if (telemetry->network) {
    telemetry->network->Register(self->id(), EndpointKind::kServer, self->state.spec.index);
  }
  return {
      [=](const SlowDown& slow) { self->state.slow = slow; },
      [=](const RoundLeases& round) { ApplyRound(self, round); },
      [=](const LeaseResize& resize) -> caf::result<ServerFree> {
        Status s = self->state.ledger->Resize(resize.job_id, resize.cpus, resize.memory_gb);
        if (!s.ok()) return caf::make_error(caf::sec::invalid_argument, s.message());
        return FreeOf(self->state);
      },
      [=](const LeaseRelease& release) -> caf::result<ServerFree> {
        if (!self->state.ledger->Release(release.job_id)) {
          return caf::make_error(caf::sec::invalid_argument, "job holds no lease here");
        }
        return FreeOf(self->state);
      },
      [=](caf::get_atom) -> ServerFree { return FreeOf(self->state); },
      [=](PartWork& work) { RunPart(self, work); },
  };
}

}  // namespace troupe
