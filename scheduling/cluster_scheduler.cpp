#include "scheduling/cluster_scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "scheduling/cluster_scheduler_internal.hpp"
#include "scheduling/interleave_scorer.hpp"

namespace troupe::scheduling {

using namespace engine_detail;

ClusterScheduler::ClusterScheduler(const ClusterSchedulerOptions& options, ClusterSetup setup,
                                   SchedulerOutput* output)
    : st_(std::make_unique<EngineState>()) {
  EngineState& st = *st_;
  st.ledger = std::make_unique<ClusterLedger>(setup.servers);
  st.policy = &PolicyNamed(options.policy);
  st.mechanism_definition = &MechanismNamed(options.mechanism);
  st.mechanism = st.mechanism_definition->make(options.mechanism_options);
  st.options = options;
  // A policy that does not read the guard's mark runs without the guard: nothing tracks waits
  // to no end, and no one (the records, an external scheduler) sees a mark the order ignores.
  if (!st.policy->starving_first) st.options.order.starvation_s = 0;
  st.server_up.assign(setup.servers.size(), true);
  st.server_back_at_s.assign(setup.servers.size(), -1);
  MarkSpares(st);
  if (options.fabric) st.fabric = std::make_unique<FabricRound>(options.fabric);
  const bool interleave = options.fabric && options.fabric->interleave_candidates > 0;
  if (options.fabric && (options.consolidate_racks || interleave)) {
    std::vector<int32_t> rack_of_server(setup.servers.size());
    for (size_t s = 0; s < rack_of_server.size(); ++s) {
      rack_of_server[s] = options.fabric->topology.RackOf(static_cast<int32_t>(s));
    }
    st.ledger->SetRacks(std::make_shared<const RackLayout>(
        RackLayout::Make(std::move(rack_of_server), setup.servers, options.consolidation_wait_s)));
  }
  if (interleave) {
    st.ledger->SetSpreadScorer(
        std::make_shared<InterleaveScorer>(*st.fabric, options.fabric->interleave_candidates));
  }
  st.setup = std::move(setup);
  st.out = output;
  st.order = QueueOrder(*st.policy, st.options.order);
  st.starvation = StarvationGuard(st.options.order.starvation_s);
}

ClusterScheduler::~ClusterScheduler() = default;

ClusterScheduler::RoundStart ClusterScheduler::BeginRound(double start_s) {
  EngineState& st = *st_;
  if (st.options.deadline_s > 0 && start_s >= st.options.deadline_s) {
    engine_detail::EndRun(st, "deadline");
    return RoundStart::kEnded;
  }
  if (st.next_arrival_s >= 0 && st.next_arrival_s <= start_s) return RoundStart::kPullArrivals;
  engine_detail::PlanRound(st, start_s);
  return RoundStart::kPlanned;
}

std::vector<ProfileAsk> ClusterScheduler::Admit(std::vector<Arrival>& arrivals,
                                                double next_arrival_s) {
  std::vector<ProfileAsk> asks = engine_detail::Admit(*st_, arrivals);
  st_->next_arrival_s = next_arrival_s;
  return asks;
}

void ClusterScheduler::ApplyProfiles(ProfileBatch& batch) {
  engine_detail::ApplyProfiles(*st_, batch);
}

void ClusterScheduler::PlanRound(double start_s) { engine_detail::PlanRound(*st_, start_s); }

bool ClusterScheduler::FileForRoundEnd(JobProgress& p) {
  EngineState& st = *st_;
  if (!p.for_round_end || st.round_timer_fired || p.round != st.round) return false;
  st.filed_reports.push_back(std::move(p));
  return true;
}

void ClusterScheduler::OnProgress(const JobProgress& p) { engine_detail::OnProgress(*st_, p); }

void ClusterScheduler::OnRoundTimer() {
  EngineState& st = *st_;
  st.round_timer_fired = true;
  const bool reports_due = st.awaiting_reports > 0;
  MaybeCloseRound(st);  // at once when no report is due (else it arms the grace timer)
  // The filed reports, as if each had arrived now, after the timer, in the order they were sent.
  if (reports_due) TakeRoundReports(st);
}

void ClusterScheduler::OnGrace(int64_t round) {
  EngineState& st = *st_;
  if (st.ended || round != st.round) return;
  st.grace_pending = false;
  if (st.awaiting_reports <= 0) return;
  for (int64_t id : st.round_jobs) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end() || !it->second.has_actor || !AwaitedThisRound(st, it->second)) {
      continue;
    }
    st.out->QueryProgress(id, st.round, LeaseStartOf(st, id));
  }
  ArmGrace(st);
}

void ClusterScheduler::EndRun(const std::string& reason) { engine_detail::EndRun(*st_, reason); }

namespace {

// A placement of this round with a part on `server`, of a job whose report of the round is still
// awaited: what a failure of that server cuts.
bool RunsAwaitedOn(const EngineState& st, const JobPlacement& placement, int32_t server) {
  const auto on_server = [server](const PlacementPart& p) { return p.server == server; };
  if (std::none_of(placement.parts.begin(), placement.parts.end(), on_server)) return false;
  auto it = st.jobs.find(placement.job_id);
  return it != st.jobs.end() && !it->second.done && it->second.has_actor &&
         AwaitedThisRound(st, it->second);
}

}  // namespace

void ClusterScheduler::ServerDown(int32_t server, double now_s) {
  EngineState& st = *st_;
  st.server_up[server] = false;
  // Its leases end now; a gang job loses every part (the job reports at once). After the round's
  // timer, the jobs still awaited on it may be waiting for a grant it never sent: they report too.
  // With spares, the job is relet at once on a spare in the failed server's place.
  for (JobPlacement& placement : st.round_placements) {
    if (!RunsAwaitedOn(st, placement, server)) continue;
    // Several servers of the job at one instant (a switch): it restarts once, on as many spares.
    const int64_t id = placement.job_id;
    if (!ReletAt(st, id, now_s)) {
      LoseLeaseOn(st, id, server);
      if (!ReletOnSpare(st, placement, server, now_s)) ReletSmaller(st, placement, server, now_s);
    } else if (LeaseStartOf(st, id) != now_s || !ReletOnSpare(st, placement, server, now_s)) {
      // Relet smaller at this instant, or no spare for this server: the relet lease is lost too.
      st.out->LoseLease(id, st.round, LeaseStartOf(st, id), server);
      ReletSmaller(st, placement, server, now_s);
    }
  }
}

ClusterScheduler::LeasesOnServer ClusterScheduler::RunningOn(int32_t server, double now_s) const {
  const EngineState& st = *st_;
  LeasesOnServer hit{.server_gpus = st.ledger->shape(server).gpus, .jobs = {}};
  if (st.round < 0 || now_s <= st.current.start_s || now_s >= st.current.end_s) return hit;
  for (const JobPlacement& placement : st.round_placements) {
    if (!RunsAwaitedOn(st, placement, server)) continue;
    hit.jobs.push_back({.id = placement.job_id, .gpus = placement.gpus()});
  }
  return hit;
}

void ClusterScheduler::ServerNotice(int32_t server, double restart_at_s) {
  EngineState& st = *st_;
  if (server < 0 || static_cast<size_t>(server) >= st.server_back_at_s.size()) return;
  st.server_back_at_s[server] = restart_at_s;
}

void ClusterScheduler::ServerUp(int32_t server) {
  EngineState& st = *st_;
  st.server_up[server] = true;
  st.server_back_at_s[server] = -1;
}

namespace {

// The GPUs of the job's lease this round: fewer than its own after a continue_smaller relet.
int32_t LeasedGpus(const EngineState& st, const TrackedJob& job) {
  for (const JobPlacement& placement : st.round_placements) {
    if (placement.job_id == job.record.job_id) return placement.gpus();
  }
  return job.view.gpus;
}

}  // namespace

void ClusterScheduler::JobDown(int64_t job_id, double now_s, const std::string& cause) {
  EngineState& st = *st_;
  auto it = st.jobs.find(job_id);
  if (it == st.jobs.end()) return;
  TrackedJob& job = it->second;
  job.has_actor = false;
  if (job.done) return;
  job.down = true;
  Touch(st, job_id);
  if (AwaitedThisRound(st, job)) {
    // The lease dies with the job: its work since the lease start was never checkpointed. Lost
    // is what it held of the lease, as a job counts a lease it loses (JobActor): on the wall
    // clock the round's timer may fire late on a loaded machine, and a death taken before it
    // can come after the lease's end, but the lease ended there.
    if (st.round >= 0 && !st.round_timer_fired) {
      // A lease relet this round (a spare, or smaller) began at the relet; the one before it
      // was reported cut short already.
      const double start_s = LeaseStartOf(st, job_id);
      const double held_s = std::clamp(now_s - start_s, 0.0, st.current.end_s - start_s);
      const int32_t gpus = LeasedGpus(st, job);
      job.record.wasted_gpu_s += gpus * held_s;
      if (st.options.recovery) {  // the job's own account of the lease died with it: all lost
        JobRecovery& costs = st.recovery[job_id];
        costs.lost_s += held_s;
        costs.cut_short_s += held_s;
        const double unheld_gpu_s = (job.view.gpus - gpus) * held_s;
        costs.unheld_lost_gpu_s += unheld_gpu_s;
        costs.unheld_cut_short_gpu_s += unheld_gpu_s;
      }
    }
    job.reported_round = static_cast<int32_t>(st.round);
    --st.awaiting_reports;
  }
  if (job.restart_at_s < 0) {
    const std::string& why = job.crash_fault.empty() ? cause : job.crash_fault;
    RecordFailed(st, job, fmt::format("actor died at {:.0f} s: {}", now_s, why));
  }
  MaybeCloseRound(st);
}

void ClusterScheduler::FaultNotice(int64_t job_id, double restart_at_s, const std::string& fault) {
  EngineState& st = *st_;
  auto it = st.jobs.find(job_id);
  if (it == st.jobs.end() || it->second.done) return;
  TrackedJob& job = it->second;
  job.restart_at_s = restart_at_s;
  if (!job.down) {
    job.crash_fault = fault;
    return;
  }
  // Down already, and now known not to come back.
  if (restart_at_s < 0) {
    RecordFailed(st, job, fmt::format("{} ({})", job.crash_fault, fault));
    MaybeCloseRound(st);
  }
}

ClusterScheduler::Respawn ClusterScheduler::JobRespawned(int64_t job_id, const ResumePoint& from) {
  EngineState& st = *st_;
  auto it = st.jobs.find(job_id);
  if (it == st.jobs.end() || it->second.done || !it->second.down) return Respawn::kRejected;
  TrackedJob& job = it->second;
  job.record.restarts = from.restarts;
  if (from.finished) {
    // It finished before it died, and its last report was lost: the checkpoint says when.
    job.down = false;
    RecordFinished(st, job, from.at_s);
    return Respawn::kFinished;
  }
  job.has_actor = true;
  job.down = false;
  job.restart_at_s = -1;
  if (from.iterations_left >= 0) job.view.iterations_left = from.iterations_left;
  Touch(st, job_id);
  return Respawn::kResumed;
}

bool ClusterScheduler::ended() const { return st_->ended; }
int64_t ClusterScheduler::round() const { return st_->round; }
int64_t ClusterScheduler::queued() const { return st_->queued; }

bool ClusterScheduler::Awaited(int64_t job_id) const {
  auto it = st_->jobs.find(job_id);
  return it != st_->jobs.end() && !it->second.done && AwaitedThisRound(*st_, it->second);
}

}  // namespace troupe::scheduling
