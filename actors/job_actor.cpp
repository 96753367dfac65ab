#include "actors/job_actor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/spawn_options.hpp>

#include "actors/job_actor_internal.hpp"
#include "actors/job_lease_account.hpp"
#include "gpu/gang_exchange.hpp"
#include "messages/allreduce_messages.hpp"
#include "messages/atoms.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/fault_network.hpp"
#include "scheduling/lease_credit.hpp"

namespace troupe {
namespace job_detail {

// A new lease started: what the job ran of the previous one goes (its worker is stopped by the
// caller).
void ResetRun(JobLease& lease) {
  lease.servers.clear();
  lease.parts_running = 0;
  lease.part_rank.clear();
  lease.workers.clear();
  lease.ranks.clear();
  lease.parts_started = 0;
  lease.done.clear();
  lease.timer_fired = false;
  lease.seconds_per_iteration = 0;
  lease.steps = 0;
  lease.returned = GangWeightsAssembly{};
  lease.trained = GangState{};
}

// Where reports go: the scheduler that ordered the lease, or the job's own if none said.
const scheduler_actor& ReportTo(const JobActorState& st) {
  return st.lease.assembly.scheduler() ? st.lease.assembly.scheduler() : st.scheduler;
}

// Stops the compute workers whose answers are no longer wanted (those not started yet are
// stopped when they say they started: their lease is over by then).
void StopWorkers(JobSelf self, JobLease& lease) {
  for (auto& [server, worker] : lease.workers) {
    self->send_exit(worker, caf::exit_reason::user_shutdown);
  }
  lease.workers.clear();
  lease.parts_running = 0;
}

void Report(JobSelf self, JobProgress progress) {
  JobActorState& st = self->state;
  StopWorkers(self, st.lease);
  st.lease.assembly.MarkEnded();
  if (st.checkpoints) Tell(self, st.ctx, st.checkpoints, st.account);
  if (st.recovery) TakeUnreported(st, &progress);
  st.last_report = progress;
  Tell(self, st.ctx, ReportTo(st), std::move(progress));
}

// No grant of the lease starting at lease_start_s ever came (lost, or its server died first): the
// lease never ran, and the report says so.
void ReportLeaseNeverGranted(JobSelf self, int64_t round, double lease_start_s) {
  JobActorState& st = self->state;
  StopWorkers(self, st.lease);
  ResetRun(st.lease);
  st.lease.assembly.StartOver(round, lease_start_s, 0, 1, st.scheduler);
  Report(self, ReportOf(st, round, lease_start_s));
}

}  // namespace job_detail

namespace {

using job_detail::ArmAttemptEnd;
using job_detail::CutLeaseReplacedBy;
using job_detail::JobSelf;
using job_detail::NoteAttemptHeld;
using job_detail::OnLeaseLost;
using job_detail::Report;
using job_detail::ReportLeaseNeverGranted;
using job_detail::ReportTo;
using job_detail::ResetRun;
using job_detail::StopWorkers;

void OnProgressQuery(JobSelf self, const ProgressQuery& q) {
  JobActorState& st = self->state;
  auto asker = caf::actor_cast<scheduler_actor>(self->current_sender());
  if (asker) st.scheduler = asker;
  LeaseAssembly& lease = st.lease.assembly;
  if (st.last_report.lease_start_s == q.lease_start_s && st.last_report.round == q.round &&
      lease.ended()) {
    Tell(self, st.ctx, st.scheduler, st.last_report);
    return;
  }
  if (q.lease_start_s == lease.start_s()) {
    const double now_s = st.ctx.clock.Now(self);
    // Real compute: the workers are finishing their last steps and will answer (a lost node
    // comes as LeaseLost). Only workers late by a whole lease are given up on (an answer lost).
    if (st.lease.parts_running > 0 && now_s < 2 * lease.end_s() - lease.start_s()) return;
    // Still waiting for a part that was lost: the round is over, so the lease never ran.
    if (!lease.ended() && now_s >= lease.end_s()) {
      lease.set_scheduler(st.scheduler);
      Report(self, ReportOf(st, lease.round(), lease.start_s()));
    }
    return;
  }
  if (q.lease_start_s > lease.start_s()) ReportLeaseNeverGranted(self, q.round, q.lease_start_s);
}

// Sends each part of a runnable lease to its server, which runs it in its own process.
void StartWorkers(JobSelf self) {
  JobActorState& st = self->state;
  JobLease& lease = st.lease;
  std::vector<LeasePart> parts = lease.assembly.parts();
  std::sort(parts.begin(), parts.end(),
            [](const LeasePart& a, const LeasePart& b) { return a.server < b.server; });
  const double now_s = st.ctx.clock.Now(self);
  const double wall_budget_s =
      std::max(0.0, (lease.assembly.end_s() - now_s) / st.ctx.clock.time_scale);
  for (size_t i = 0; i < parts.size(); ++i) {
    auto server = lease.servers.find(parts[i].server);
    if (server == lease.servers.end()) continue;  // cannot happen: every part came from a grant
    PartWork work;
    work.job_id = st.spec.job_id;
    work.lease_start_s = lease.assembly.start_s();
    work.wall_budget_s = wall_budget_s;
    work.server = parts[i].server;
    work.gpu_ids = parts[i].gpu_ids;
    work.seed = static_cast<uint64_t>(st.spec.job_id);
    SetPartOptions(st.compute->options, st.step_plan, &work);
    work.parts = static_cast<int32_t>(parts.size());
    work.part_rank = static_cast<int32_t>(i);
    work.exchange_every_steps = st.compute->options.exchange_every_steps;
    work.first_exchange = st.account.gang.exchanges;
    work.weights_floats = st.account.gang.floats();
    work.job = caf::actor_cast<caf::actor>(self);
    lease.part_rank[parts[i].server] = work.part_rank;
    ++lease.parts_running;
    Tell(self, st.ctx, server->second, std::move(work));
  }
  lease.ranks.assign(parts.size(), caf::actor{});
  const gpu::RealComputeOptions& o = st.compute->options;
  if (parts.size() > 1 && o.exchange_every_steps > 0) {
    lease.returned.Expect(gpu::StepGradientFloats(o.gradient_bytes, o.sizing.scale));
  }
}

bool OfThisLease(const JobLease& lease, double lease_start_s) {
  return lease_start_s == lease.assembly.start_s() && !lease.assembly.ended() &&
         lease.parts_running > 0;
}

// A part's worker started: kept (to stop it), and once every part of a gang has started, each
// worker is told its group of all-reduce ranks. A worker of a lease that is over is stopped.
void OnPartStarted(JobSelf self, const PartStarted& started) {
  JobActorState& st = self->state;
  JobLease& lease = st.lease;
  auto worker = caf::actor_cast<caf::actor>(self->current_sender());
  if (!OfThisLease(lease, started.lease_start_s) || !lease.part_rank.count(started.server)) {
    if (worker) self->send_exit(worker, caf::exit_reason::user_shutdown);
    return;
  }
  lease.workers[started.server] = worker;
  lease.ranks[static_cast<size_t>(lease.part_rank[started.server])] = started.rank;
  if (started.rank && st.account.gang.weights) {  // a gang part resumes from the job's weights
    ForEachGangChunk(started.lease_start_s, *st.account.gang.weights,
                     [&](GangWeights chunk) { Tell(self, st.ctx, worker, std::move(chunk)); });
  }
  if (++lease.parts_started < static_cast<int32_t>(lease.part_rank.size())) return;
  for (const caf::actor& rank : lease.ranks) {
    if (!rank) return;  // one part: no exchange
  }
  // With a fabric the ranks learn where each of them runs, so that what crosses servers is paced.
  std::vector<int32_t> servers;
  if (st.compute->fabric) {
    servers.resize(lease.ranks.size());
    for (const auto& [server, rank] : lease.part_rank) servers[static_cast<size_t>(rank)] = server;
  }
  for (const auto& [server, w] : lease.workers) {
    Tell(self, st.ctx, w,
         AllReduceGroup{.rank = lease.part_rank[server],
                        .ranks = lease.ranks,
                        .segment_floats = 1 << 18,
                        .fabric = st.compute->fabric,
                        .servers = servers});
  }
}

// A gang's weights after the lease, from part 0's chunks: kept to be committed with the lease
// when whole, after the same number of exchanges on every part, and hashing as every part's did.
bool KeepTrainedWeights(JobActorState& st) {
  JobLease& lease = st.lease;
  const PartDone& first = lease.done.front();
  bool same = lease.returned.whole() && first.exchanges > 0;
  for (const PartDone& d : lease.done) {
    same = same && d.exchanges == first.exchanges && d.weights_hash == first.weights_hash;
  }
  if (!same || gpu::WeightsHash(lease.returned.values()) != first.weights_hash) {
    spdlog::error(
        "job {}: the gang's weights after the lease at {} s did not come back whole or "
        "differ between parts; the lease credits nothing",
        st.spec.job_id, first.lease_start_s);
    return false;
  }
  lease.trained.exchanges = st.account.gang.exchanges + first.exchanges;
  lease.trained.weights =
      std::make_shared<const std::vector<float>>(std::move(lease.returned.values()));
  return true;
}

// Part 0's weights after the lease, one chunk.
void OnGangWeights(JobSelf self, const GangWeights& chunk) {
  JobActorState& st = self->state;
  if (!OfThisLease(st.lease, chunk.lease_start_s)) return;
  if (!st.lease.returned.Add(chunk)) {
    spdlog::error("job {}: a chunk of the gang's weights does not fit", st.spec.job_id);
  }
}

// A part's answer: kept; after the last, the lease's measurement is the slowest part's (none if
// a part failed), and the lease is committed if its timer has already fired.
void OnPartDone(JobSelf self, PartDone& done) {
  JobActorState& st = self->state;
  JobLease& lease = st.lease;
  if (!OfThisLease(lease, done.lease_start_s)) return;
  if (!done.ok) {
    spdlog::error("job {}: real compute on server {} failed, the lease at {} s credits nothing: {}",
                  st.spec.job_id, done.server, done.lease_start_s, done.why);
  }
  lease.workers.erase(done.server);  // it has quit
  lease.done.push_back(std::move(done));
  if (--lease.parts_running > 0) return;
  lease.seconds_per_iteration = 0;
  lease.steps = lease.done.empty() ? 0 : lease.done.front().steps;
  bool ok = true;
  for (const PartDone& d : lease.done) {
    ok = ok && d.ok;
    lease.seconds_per_iteration = std::max(lease.seconds_per_iteration, d.seconds_per_iteration);
    lease.steps = std::min(lease.steps, d.steps);
  }
  if (ok && !lease.ranks.empty() && lease.ranks.front()) ok = KeepTrainedWeights(st);
  if (!ok) lease.seconds_per_iteration = 0;
  // The workers divided by `scale`; a step whose rows were rounded up did more than that share.
  lease.seconds_per_iteration *=
      gpu::PlannedShareOfStep(*st.profile, st.compute->options.sizing, st.step_plan);
  if (lease.timer_fired) Report(self, RunLease(st));
}

}  // namespace

emulated_job_actor::behavior_type JobActor(JobSelf self, JobSpec spec,
                                           std::shared_ptr<const ModelCatalog> catalog,
                                           scheduler_actor scheduler, ActorContext ctx,
                                           JobStart start) {
  JobActorState& st = self->state;
  st.profile = catalog->Find(spec.model);
  st.catalog = std::move(catalog);
  st.account = start.from;
  st.account.job_id = spec.job_id;
  const bool respawned = start.respawned;
  if (st.account.iterations_left < 0) st.account.iterations_left = spec.iterations;
  st.checkpoints = std::move(start.checkpoints);
  st.commit_at_grant = start.commit_at_grant && !start.compute;
  st.offers_standing = start.offers_standing && !start.compute;
  st.compute = std::move(start.compute);
  if (st.compute) {
    // PlanRun checked every model of the catalogue against the sizing.
    if (Status s = gpu::PlanStep(*st.profile, st.compute->options.sizing, &st.step_plan); !s.ok()) {
      spdlog::error("job {}: {}", spec.job_id, s.message());
    }
  }
  st.spec = std::move(spec);
  if (start.recovery) {
    st.recovery = true;
    st.costs = CostsFor(*start.recovery, st.profile->gradient_bytes, st.spec.gpus);
    const config::Recovery& r = start.recovery->recovery;
    if (r.on_server_loss() == config::continue_smaller) {
      st.min_gpus = scheduling::FewestGpusAfterLoss(r.min_size_fraction(), st.spec.gpus);
    }
    if (respawned) ResumeFromCheckpoint(st);
    if (st.account.cadence.saved_iterations_left < 0) {
      st.account.cadence.saved_iterations_left = st.account.iterations_left;
    }
  }
  st.scheduler = std::move(scheduler);
  st.ctx = ctx;
  st.last_report.lease_start_s = -1;
  if (FaultNetwork* network = ctx.network()) {
    network->Register(self->id(), EndpointKind::kJob, st.spec.job_id);
  }
  return {
      [=](LeaseGrant& grant) {
        JobActorState& st = self->state;
        const double lease_before_s = st.lease.assembly.start_s();
        // The grant's parts move into the assembly; what is read of it after is kept here.
        const int32_t server_index = grant.server, rounds_stood = grant.rounds_stood;
        const double start_s = grant.start_s, end_s = grant.end_s;
        CutLeaseReplacedBy(self, grant);
        if (st.lease.assembly.Add(std::move(grant)) != LeaseAssembly::Outcome::kAdded) return;
        if (st.lease.assembly.start_s() != lease_before_s) {  // a newer lease
          CreditStoodRounds(st, rounds_stood);
          if (st.compute) {
            StopWorkers(self, st.lease);
            ResetRun(st.lease);  // what real compute ran of the previous one
          }
        }
        // Only real compute sends the parts' servers their work.
        if (st.compute) {
          if (auto server = caf::actor_cast<server_actor>(self->current_sender())) {
            st.lease.servers[server_index] = std::move(server);
          }
        }
        if (!st.lease.assembly.complete()) return;
        if (st.commit_at_grant) {
          JobProgress progress = RunLease(st);
          st.lease.assembly.MarkEnded();  // no ProgressQuery comes without faults: no copy kept
          // A plain message the scheduler files until its round's timer: the order it takes the
          // reports in is the order of a timed report each, without a timer each.
          progress.for_round_end = true;
          // Nothing is left to do in a further round of this lease: the job offers to keep it.
          if (!progress.finished) progress.standing_iterations = st.offer.iterations;
          Tell(self, st.ctx, ReportTo(st), std::move(progress));
          return;
        }
        TellAt(self, st.ctx, self, end_s, lease_end_atom::value, start_s);
        ArmAttemptEnd(self, start_s, end_s);
        if (st.compute && Runnable(st)) StartWorkers(self);
      },
      [=](lease_end_atom, double lease_start_s) {
        JobActorState& st = self->state;
        if (lease_start_s != st.lease.assembly.start_s() || st.lease.assembly.ended()) return;
        if (Runnable(st)) NoteAttemptHeld(st, st.lease.assembly.end_s() - lease_start_s, false);
        if (st.lease.parts_running > 0) {
          st.lease.timer_fired = true;  // the report waits for the workers' last steps
          return;
        }
        JobProgress progress = RunLease(st);
        if (st.offers_standing) OfferToStand(st, &progress);
        Report(self, std::move(progress));
      },
      [=](const PartStarted& started) { OnPartStarted(self, started); },
      [=](PartDone& done) { OnPartDone(self, done); },
      [=](const GangWeights& chunk) { OnGangWeights(self, chunk); },
      [=](const LeaseLost& lost) { OnLeaseLost(self, lost); },
      [=](const ProgressQuery& query) { OnProgressQuery(self, query); },
      // Sent to an agent's job (agent_job_proxy.hpp); a job actor is told its scheduler at spawn.
      [=](const JobScheduler& named) {
        if (!self->state.scheduler) self->state.scheduler = named.scheduler;
      },
  };
}

}  // namespace troupe
