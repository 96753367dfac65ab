#include "actors/workload_actor.hpp"

#include <spdlog/spdlog.h>

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>

#include "actors/agent/agent_messages.hpp"
#include "messages/fault_messages.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/fault_network.hpp"

namespace troupe {
namespace {

using WorkloadSelf = workload_actor_impl::stateful_pointer<WorkloadState>;

// The next arrival from the source or an agent still expected (-1: none will come).
double NextArrival(const WorkloadState& st, double until_s) {
  const std::optional<double> next_source = st.source->NextArrival();
  const std::optional<double> next_agent = st.agents.Next(until_s);
  return next_source && next_agent ? std::min(*next_source, *next_agent)
                                   : next_source.value_or(next_agent.value_or(-1));
}

ArrivalBatch TakeArrivals(WorkloadSelf self, double until_s) {
  WorkloadState& st = self->state;
  ArrivalBatch batch;
  while (st.source->NextArrival() && *st.source->NextArrival() <= until_s) {
    JobSpec spec = st.source->Pop();
    const ModelProfile* profile = st.catalog->Find(spec.model);
    ArrivedJob arrived;
    arrived.iter_time_s = profile->iter_time_s;
    arrived.ideal_cpus_per_gpu = profile->ideal_cpus_per_gpu;
    arrived.ideal_memory_gb_per_gpu = profile->ideal_memory_gb_per_gpu;
    arrived.speedup_at_ideal = profile->speedup_at_ideal;
    arrived.sensitivity = profile->sensitivity;  // oracle profiling: the true matrix
    arrived.gradient_bytes = profile->gradient_bytes;
    arrived.comm_overlap = profile->comm_overlap;
    // Without faults the scheduler spawns the job's actor when it first places the job.
    if (st.checkpoints) arrived.job = st.jobs.Spawn(self, spec, st.scheduler);
    arrived.spec = std::move(spec);
    if (st.checkpoints) st.released.emplace(arrived.spec.job_id, arrived);
    batch.jobs.push_back(std::move(arrived));
  }
  // Jobs of registered agents join the batch; their proxies learn who schedules them.
  const size_t first_agent_job = batch.jobs.size();
  st.agents.TakeUntil(until_s, &batch.jobs);
  for (size_t i = first_agent_job; i < batch.jobs.size(); ++i) {
    Tell(self, st.ctx, batch.jobs[i].job, JobScheduler{.scheduler = st.scheduler});
  }
  for (size_t i = first_agent_job; st.checkpoints && i < batch.jobs.size(); ++i) {
    st.agent_jobs.insert(batch.jobs[i].spec.job_id);
    st.released.emplace(batch.jobs[i].spec.job_id, batch.jobs[i]);
  }
  batch.next_arrival_s = NextArrival(st, until_s);
  return batch;
}

// Respawns a crashed job from its checkpoint and tells the scheduler. A job that had finished
// before it was killed is not respawned; the scheduler learns its end from the checkpoint.
void Respawn(WorkloadSelf self, const JobCheckpoint& checkpoint) {
  WorkloadState& st = self->state;
  auto it = st.released.find(checkpoint.job_id);
  if (it == st.released.end()) return;
  JobCheckpoint from = checkpoint;
  from.restarts = checkpoint.restarts + 1;
  if (checkpoint.finished) {
    it->second.job = job_actor{};
  } else {
    it->second.job = st.jobs.Spawn(self, it->second.spec, st.scheduler, &from);
    spdlog::info("workload: job {} restarted from its checkpoint ({} iterations left)",
                 checkpoint.job_id,
                 from.iterations_left < 0 ? it->second.spec.iterations : from.iterations_left);
  }
  Tell(self, st.ctx, st.scheduler,
       JobRespawned{.job_id = checkpoint.job_id, .handle = it->second.job, .checkpoint = from});
}

}  // namespace

workload_actor_impl::behavior_type WorkloadActor(WorkloadSelf self,
                                                 std::shared_ptr<JobSource> source,
                                                 std::shared_ptr<const ModelCatalog> catalog,
                                                 ActorContext ctx, caf::actor checkpoints,
                                                 JobSpawner jobs) {
  WorkloadState& st = self->state;
  st.source = std::move(source);
  st.catalog = std::move(catalog);
  st.ctx = ctx;
  st.checkpoints = std::move(checkpoints);
  st.jobs = std::move(jobs);
  if (FaultNetwork* network = ctx.network()) {
    network->Register(self->id(), EndpointKind::kWorkload, 0);
  }
  return {
      AskLaterHandler(),  // the timer of Ask (a CheckpointQuery)
      [=](const ArrivalsRequest& request) -> ArrivalBatch {
        self->state.scheduler = caf::actor_cast<scheduler_actor>(self->current_sender());
        return TakeArrivals(self, request.until_s);
      },
      [=](caf::get_atom) -> double { return self->state.source->NextArrival().value_or(-1); },
      [=](const AgentsExpected& expected) {
        self->state.agents.Expect(expected.count, expected.deadline_s);
      },
      [=](AgentArrival& arrival) {
        const job_actor job = arrival.job.job;
        const int64_t job_id = arrival.job.spec.job_id;
        if (self->state.agents.Add(std::move(arrival.job))) return;
        spdlog::warn("workload: agent job {} came after the run stopped waiting for agents",
                     job_id);
        self->send_exit(job, caf::exit_reason::user_shutdown);
      },
      [=](const RecoverRequest&) -> RecoveredJobs {
        WorkloadState& st = self->state;
        st.scheduler = caf::actor_cast<scheduler_actor>(self->current_sender());
        RecoveredJobs recovered;
        for (const auto& [id, job] : st.released) recovered.jobs.push_back(job);
        recovered.dead_for_good.assign(st.dead_for_good.begin(), st.dead_for_good.end());
        recovered.failed.assign(st.failed.begin(), st.failed.end());
        recovered.next_arrival_s = NextArrival(st, st.ctx.clock.Now(self));
        return recovered;
      },
      [=](const JobFailed& failed) { self->state.failed.insert(failed.job_id); },
      [=](const CrashJob& crash) -> JobsCrashed {
        WorkloadState& st = self->state;
        JobsCrashed crashed;
        for (int64_t id : crash.job_ids) {
          auto it = st.released.find(id);
          // A job that has no actor (not placed yet, ended, or killed already) is left alone.
          if (it == st.released.end() || !it->second.job) continue;
          self->send_exit(it->second.job, caf::exit_reason::kill);
          it->second.job = job_actor{};
          if (!crash.restarts) st.dead_for_good.insert(id);
          crashed.killed.push_back(id);
        }
        return crashed;
      },
      [=](const RespawnJob& respawn) {
        WorkloadState& st = self->state;
        auto it = st.released.find(respawn.job_id);
        if (!st.checkpoints || it == st.released.end() || it->second.job) return;  // not dead
        if (st.agent_jobs.count(respawn.job_id)) {
          // Its training process is outside troupe: nothing here can bring it back.
          Tell(self, st.ctx, st.scheduler,
               FaultNotice{.job_id = respawn.job_id,
                           .restart_at_s = -1,
                           .fault = "an agent's job is not respawned"});
          return;
        }
        auto respawn_from = [=](CheckpointList& list) {
          JobCheckpoint from;
          from.job_id = respawn.job_id;
          from.iterations_left = -1;
          if (!list.checkpoints.empty()) from = list.checkpoints.front();
          Respawn(self, from);
        };
        // Shared storage: the fault network never drops what goes to it, so it stays reachable.
        Ask(self, st.ctx, st.checkpoints, CheckpointQuery{respawn.job_id}, std::move(respawn_from),
            [] {});
      },
  };
}

}  // namespace troupe
