// The engine's decisions as the scheduler actor's messages (scheduler_internal.hpp): leases to
// servers, records to the metrics recorder, timers to itself, and job actors spawned, told or
// stopped.
#include <spdlog/spdlog.h>

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <memory>
#include <utility>

#include "actors/scheduler_internal.hpp"
#include "messages/atoms.hpp"
#include "messages/run_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::scheduler_detail {
namespace {

class Messenger final : public scheduling::SchedulerOutput {
 public:
  explicit Messenger(Self* self) : self_(self) {}

  // Its spec is what the record keeps of it (the job actor never reads the trace line).
  void SpawnJob(const JobRecord& r) override {
    SchedulerState& st = self_->state;
    JobSpec spec;
    spec.job_id = r.job_id;
    spec.model = r.model;
    spec.gpus = r.gpus;
    spec.iterations = r.iterations;
    spec.arrival_s = r.arrival_s;
    WatchJob(
        self_, r.job_id,
        st.cluster.jobs.Spawn(self_, std::move(spec), caf::actor_cast<scheduler_actor>(self_)));
  }

  void LeaseRound(int32_t server, scheduling::ServerRound&& round) override {
    SchedulerState& st = self_->state;
    RoundLeases leases;
    leases.round = round.round;
    leases.start_s = round.start_s;
    leases.end_s = round.end_s;
    leases.leases.reserve(round.grants.size());
    for (const scheduling::Grant& g : round.grants) {
      leases.leases.push_back(LeaseOrder{.job = HandleOf(g.job_id), .terms = g});
    }
    leases.standing = std::move(round.standing);
    Tell(self_, st.telemetry, st.cluster.servers[server], std::move(leases));
  }

  void LoseLease(int64_t job_id, int64_t round, double lease_start_s, int32_t server) override {
    SchedulerState& st = self_->state;
    Tell(self_, st.telemetry, HandleOf(job_id),
         LeaseLost{.round = round,
                   .lease_start_s = lease_start_s,
                   .server = server,
                   .at_s = st.clock.Now(self_)});
  }
  void LoseLeaseAfterStanding(int64_t job_id, int64_t round, double lease_start_s, int32_t server,
                              int32_t rounds_stood, bool stood) override {
    SchedulerState& st = self_->state;
    Tell(self_, st.telemetry, HandleOf(job_id),
         LeaseLost{.round = round,
                   .lease_start_s = lease_start_s,
                   .server = server,
                   .rounds_stood = rounds_stood,
                   .stood = stood,
                   .at_s = st.clock.Now(self_)});
  }

  void QueryProgress(int64_t job_id, int64_t round, double lease_start_s) override {
    SchedulerState& st = self_->state;
    Tell(self_, st.telemetry, HandleOf(job_id), ProgressQuery{round, lease_start_s});
  }

  void JobEnded(const JobRecord& record, bool stop_actor) override {
    SchedulerState& st = self_->state;
    const bool failed = !record.failure.empty();
    if (failed) spdlog::warn("scheduler: job {} failed: {}", record.job_id, record.failure);
    if (record.measured) st.telemetry->measured_ended.fetch_add(1, std::memory_order_relaxed);
    if (!failed) st.telemetry->jobs_finished.fetch_add(1, std::memory_order_relaxed);
    Tell(self_, st.telemetry, st.cluster.metrics, record);
    // A scheduler that may be restarted (there is an injector) leaves word with the workload.
    if (failed && st.cluster.injector) {
      Tell(self_, st.telemetry, st.cluster.workload, JobFailed{record.job_id});
    }
    if (!stop_actor) return;
    if (job_actor job = ForgetJob(self_, record.job_id)) {
      self_->send_exit(job, caf::exit_reason::user_shutdown);
    }
  }

  void RecordJob(const JobRecord& record) override { ToMetrics(record); }
  void RecordRound(const RoundRecord& round) override { ToMetrics(round); }
  void RecordLeases(LeaseBatch&& leases) override { ToMetrics(std::move(leases)); }
  void RecordLinks(LinkBatch&& links) override { ToMetrics(std::move(links)); }
  void RecordJobNetwork(JobNetworkBatch&& jobs) override { ToMetrics(std::move(jobs)); }
  void RecordJobRecovery(JobRecoveryBatch&& jobs) override { ToMetrics(std::move(jobs)); }

  void WakeAt(double at_s) override {
    SchedulerState& st = self_->state;
    TellAt(self_, st.telemetry, st.clock, self_, at_s, round_end_atom::value, kWakeUp, at_s);
  }

  void PlanAtInstantEnd(double start_s) override {
    SchedulerState& st = self_->state;
    // A timer due now: delivered after every message this instant's events sent (the emulated
    // clock), or at once on the wall clock.
    TellAt(self_, st.telemetry, st.clock, self_, start_s, round_end_atom::value, kPlanDeferred,
           start_s);
  }

  void EndRoundAt(int64_t round, double at_s) override {
    SchedulerState& st = self_->state;
    TellAt(self_, st.telemetry, st.clock, self_, at_s, round_end_atom::value, round, at_s);
  }

  void GraceAfter(int64_t round, double delay_s) override {
    SchedulerState& st = self_->state;
    TellAt(self_, st.telemetry, st.clock, self_, st.clock.Now(self_) + delay_s, grace_atom::value,
           round);
  }

  void StartRound(double start_s) override { BeginRound(self_, start_s); }

  void EndRun(RunEnd&& end, const std::vector<int64_t>& jobs_with_actors) override {
    SchedulerState& st = self_->state;
    Tell(self_, st.telemetry, st.cluster.metrics, std::move(end));
    for (int64_t id : jobs_with_actors) {
      if (job_actor job = HandleOf(id)) self_->send_exit(job, caf::exit_reason::user_shutdown);
    }
    for (const server_actor& server : st.cluster.servers) {
      self_->send_exit(server, caf::exit_reason::user_shutdown);
    }
    self_->send_exit(st.cluster.workload, caf::exit_reason::user_shutdown);
    for (const caf::actor* other :
         {&st.cluster.profiler, &st.cluster.checkpoints, &st.cluster.injector}) {
      if (*other) self_->send_exit(*other, caf::exit_reason::user_shutdown);
    }
    self_->quit();
  }

  void Planning(bool planning) override {
    self_->state.telemetry->planning.store(planning, std::memory_order_relaxed);
  }

  void RoundLeased(double start_s) override {
    self_->state.telemetry->virtual_s.store(start_s, std::memory_order_relaxed);
  }

 private:
  job_actor HandleOf(int64_t job_id) const {
    const auto& actors = self_->state.job_actors;
    auto it = actors.find(job_id);
    return it == actors.end() ? job_actor{} : it->second;
  }

  template <class Record>
  void ToMetrics(Record&& record) {
    SchedulerState& st = self_->state;
    Tell(self_, st.telemetry, st.cluster.metrics, std::forward<Record>(record));
  }

  Self* self_;
};

}  // namespace

std::unique_ptr<scheduling::SchedulerOutput> MakeMessenger(Self* self) {
  return std::make_unique<Messenger>(self);
}

void WatchJob(Self* self, int64_t job_id, job_actor handle) {
  if (!handle) return;
  self->monitor(handle);
  self->state.job_of_actor[handle.address()] = job_id;
  self->state.job_actors[job_id] = std::move(handle);
}

job_actor ForgetJob(Self* self, int64_t job_id) {
  SchedulerState& st = self->state;
  auto it = st.job_actors.find(job_id);
  if (it == st.job_actors.end()) return job_actor{};
  job_actor handle = std::move(it->second);
  st.job_actors.erase(it);
  st.job_of_actor.erase(handle.address());
  self->demonitor(handle.address());
  return handle;
}

}  // namespace troupe::scheduler_detail
