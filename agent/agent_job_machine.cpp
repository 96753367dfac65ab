#include "agent/agent_job_machine.hpp"

#include <algorithm>
#include <cstdio>

#include "agent/frame_codec.hpp"

namespace troupe::agent_wire {

AgentJobMachine::AgentJobMachine(AgentJobFacts facts)
    : facts_(std::move(facts)), iterations_left_(facts_.iterations) {}

bool AgentJobMachine::IsCurrentLease(int64_t round, double start_s) const {
  return round == lease_.round() && start_s == lease_.start_s();
}

JobProgress AgentJobMachine::LeaseReport() const {
  JobProgress p;
  p.job_id = facts_.job_id;
  p.round = lease_.round();
  p.iterations_left = iterations_left_;
  p.lease_start_s = lease_.start_s();
  p.gpus = lease_.gpus();
  p.cpus = lease_.cpus();
  p.memory_gb = lease_.memory_gb();
  p.parts = lease_.parts();
  return p;
}

// The throughput the lease gives relative to the proportional share: the job's sensitivity at
// its CPUs and memory per GPU, times the slowest server's speed (a `slow` fault), as an emulated
// job runs it.
double AgentJobMachine::ExpectedSpeedup(const JobProgress& lease) const {
  return facts_.sensitivity.At(lease.cpus / lease.gpus, lease.memory_gb / lease.gpus) *
         lease_.speed();
}

MachineOutput AgentJobMachine::Fault(std::string why) {
  MachineOutput out;
  phase_ = Phase::kFailed;
  agent::Envelope error;
  error.mutable_error()->set_message(why);
  out.to_agent.push_back(std::move(error));
  out.fault = Status::InvalidInput(std::move(why));
  return out;
}

MachineOutput AgentJobMachine::OnGrant(const LeaseGrant& grant) {
  MachineOutput out;
  if (phase_ == Phase::kFinished || phase_ == Phase::kFailed) return out;
  // A part of a lease already settled (lost, or reported) is late: nothing to do.
  if (grant.round == lost_round_) return out;
  if (last_report_ && last_report_->round == grant.round &&
      last_report_->lease_start_s == grant.start_s) {
    return out;
  }
  // A new round while the agent still runs or checkpoints an older lease: that lease is not
  // over for the agent, so the new one cannot start; a ProgressQuery for it is answered ran=false.
  if (phase_ == Phase::kRunning || phase_ == Phase::kCheckpointing) return out;
  if (lease_.Add(grant) != LeaseAssembly::Outcome::kAdded) return out;
  phase_ = Phase::kAssembling;
  if (!lease_.complete()) return out;
  JobProgress lease = LeaseReport();
  // A gang job runs on all of its GPUs or not at all: report that it did not run, at the lease's
  // end, as an emulated job does.
  if (!lease_.Runnable(facts_.gpus)) {
    phase_ = Phase::kIdle;
    lease_.MarkEnded();
    last_report_ = lease;
    out.report = std::move(lease);
    out.report_at_s = lease_.end_s();
    return out;
  }
  phase_ = Phase::kRunning;
  iterations_in_lease_ = 0;
  agent::Envelope frame;
  agent::LeaseGrant* g = frame.mutable_lease_grant();
  g->set_round(lease_.round());
  g->set_start_s(lease_.start_s());
  g->set_valid_until_s(lease_.end_s());
  g->set_duration_wall_s((lease_.end_s() - lease_.start_s()) / facts_.time_scale);
  g->set_speedup(ExpectedSpeedup(lease));
  for (const LeasePart& part : lease_.parts()) {
    agent::LeasePart* p = g->add_parts();
    p->set_server(part.server);
    for (int32_t gpu : part.gpu_ids) p->add_gpu_ids(gpu);
    p->set_cpus(part.cpus);
    p->set_memory_gb(part.memory_gb);
  }
  out.to_agent.push_back(std::move(frame));
  out.lease_timer_at_s = lease_.end_s();
  return out;
}

MachineOutput AgentJobMachine::OnLeaseTimer(int64_t round, double start_s) {
  MachineOutput out;
  if (phase_ != Phase::kRunning || !IsCurrentLease(round, start_s)) return out;
  phase_ = Phase::kCheckpointing;
  agent::Envelope frame;
  frame.mutable_lease_end()->set_round(round);
  out.to_agent.push_back(std::move(frame));
  out.checkpoint_timer_at_s = lease_.end_s() + facts_.checkpoint_timeout_s * facts_.time_scale;
  return out;
}

MachineOutput AgentJobMachine::OnCheckpointTimer(int64_t round, double start_s) {
  if (phase_ != Phase::kCheckpointing || !IsCurrentLease(round, start_s)) return {};
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", facts_.checkpoint_timeout_s);
  return Fault("no checkpoint_done for round " + std::to_string(round) + " within " + bound +
               " s of its lease_end (agents.checkpoint_timeout_s)");
}

MachineOutput AgentJobMachine::OnLeaseLost(const LeaseLost& lost, double now_s) {
  MachineOutput out;
  const bool held =
      phase_ == Phase::kAssembling || phase_ == Phase::kRunning || phase_ == Phase::kCheckpointing;
  if (!held || !IsCurrentLease(lost.round, lost.lease_start_s)) return out;
  JobProgress report = LeaseReport();
  if (phase_ == Phase::kRunning || phase_ == Phase::kCheckpointing) {
    const double ran_s = std::clamp(now_s, lease_.start_s(), lease_.end_s()) - lease_.start_s();
    report.wasted_gpu_s = report.gpus * ran_s;
    lost_round_ = lease_.round();  // the agent's CheckpointDone for it is ignored
  }
  if (phase_ == Phase::kRunning) {
    agent::Envelope frame;
    agent::LeaseEnd* end = frame.mutable_lease_end();
    end->set_round(lease_.round());
    end->set_lost(true);
    end->set_reason("server " + std::to_string(lost.server) + " died");
    out.to_agent.push_back(std::move(frame));
  }
  phase_ = Phase::kIdle;
  lease_.MarkEnded();
  last_report_ = report;
  out.report = std::move(report);
  return out;
}

MachineOutput AgentJobMachine::OnQuery(const ProgressQuery& query) const {
  MachineOutput out;
  if (last_report_ && last_report_->round == query.round &&
      last_report_->lease_start_s == query.lease_start_s) {
    out.report = last_report_;
    return out;
  }
  const bool in_flight =
      phase_ == Phase::kAssembling || phase_ == Phase::kRunning || phase_ == Phase::kCheckpointing;
  if (in_flight && IsCurrentLease(query.round, query.lease_start_s)) return out;  // coming
  JobProgress never_held;
  never_held.job_id = facts_.job_id;
  never_held.round = query.round;
  never_held.lease_start_s = query.lease_start_s;
  never_held.iterations_left = iterations_left_;
  out.report = std::move(never_held);
  return out;
}

MachineOutput AgentJobMachine::CompleteLease(int64_t iterations_done, bool finished) {
  MachineOutput out;
  JobProgress p = LeaseReport();
  p.ran = true;
  if (finished) iterations_done = iterations_left_;
  p.iterations_done = iterations_done;
  iterations_left_ -= iterations_done;
  p.iterations_left = iterations_left_;
  p.finished = iterations_left_ == 0;
  p.speedup = ExpectedSpeedup(p);
  phase_ = p.finished ? Phase::kFinished : Phase::kIdle;
  lease_.MarkEnded();
  last_report_ = p;
  out.finished = p.finished;
  out.report = std::move(p);
  return out;
}

MachineOutput AgentJobMachine::OnAgentFrame(const agent::Envelope& frame) {
  if (phase_ == Phase::kFailed || phase_ == Phase::kFinished) return {};
  const bool leased = phase_ == Phase::kRunning || phase_ == Phase::kCheckpointing;
  auto in_range = [this](int64_t v) { return v >= 0 && v <= iterations_left_; };
  auto out_of_range = [this](const std::string& field, int64_t v) {
    return Fault(field + " = " + std::to_string(v) + " is outside [0, " +
                 std::to_string(iterations_left_) + "] (the iterations left)");
  };
  switch (frame.body_case()) {
    case agent::Envelope::kHeartbeat:
      return {};
    case agent::Envelope::kProgress: {
      if (!leased) return {};  // late, after the lease was settled: harmless
      const int64_t v = frame.progress().iterations_done();
      if (!in_range(v)) return out_of_range("progress.iterations_done", v);
      iterations_in_lease_ = v;
      return {};
    }
    case agent::Envelope::kCheckpointDone: {
      const agent::CheckpointDone& c = frame.checkpoint_done();
      if (lost_round_ >= 0 && c.round() == lost_round_) {
        lost_round_ = -1;
        return {};
      }
      if (phase_ != Phase::kCheckpointing || c.round() != lease_.round()) {
        return Fault("checkpoint_done for round " + std::to_string(c.round()) +
                     " without a lease_end for it");
      }
      if (!in_range(c.iterations_done())) {
        return out_of_range("checkpoint_done.iterations_done", c.iterations_done());
      }
      return CompleteLease(c.iterations_done(), false);
    }
    case agent::Envelope::kFinished: {
      if (!leased) return Fault("finished outside a lease");
      const int64_t v = frame.finished().iterations_done();
      if (!in_range(v)) return out_of_range("finished.iterations_done", v);
      return CompleteLease(v, true);
    }
    case agent::Envelope::kError:
      return Fault("the agent reported an error: " + frame.error().message().substr(0, 200));
    default:
      return Fault("unexpected " + std::string(BodyName(frame)) + " frame from the agent");
  }
}

}  // namespace troupe::agent_wire
