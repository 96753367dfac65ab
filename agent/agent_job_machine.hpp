// AgentJobMachine: what an agent-backed job does with each event, as pure code.
//
// The job proxy actor (agent_job_proxy.hpp) feeds it the cluster's messages (LeaseGrant parts,
// the lease's end on the run clock, LeaseLost, ProgressQuery) and the agent's frames, and carries
// out what it returns: frames to send the agent, a JobProgress for the scheduler (now or at a run
// time), a timer to arm, or a fault that fails the job. Keeping the protocol here, apart from CAF
// and sockets, lets the tests and the fuzzer drive it with any sequence of frames.
//
// One lease: every part granted -> LeaseGrant frame, timer at end_s -> LeaseEnd frame -> the
// agent's CheckpointDone{iterations in the lease} -> JobProgress(ran). No CheckpointDone within
// checkpoint_timeout_s wall seconds of the LeaseEnd (a checkpoint timer) is a fault: an agent that
// heartbeats but never checkpoints would otherwise hold its lease, and the round, for ever.
// A refused part: no frame, JobProgress(ran=false) at end_s, as an emulated job reports.
// LeaseLost: LeaseEnd{lost} and JobProgress(ran=false, wasted GPU-seconds) at once; that lease's
// CheckpointDone is then ignored.
// Finished from the agent during a lease: the job's last JobProgress (finished) at once.
// Anything else from the agent — a frame out of turn, iterations outside [0, left], an Error —
// is a fault: the agent is not trusted further.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "messages/agent.pb.h"
#include "messages/cluster_messages.hpp"
#include "messages/lease_assembly.hpp"

namespace troupe::agent_wire {

struct AgentJobFacts {
  int64_t job_id = 0;
  int32_t gpus = 1;
  int64_t iterations = 0;
  SensitivityMatrix sensitivity;     // the speedup reported for a lease's CPUs and memory
  double time_scale = 1;             // run seconds per wall second (lease durations for the agent)
  double checkpoint_timeout_s = 60;  // wall seconds from LeaseEnd to CheckpointDone, at most
};

struct MachineOutput {
  std::vector<agent::Envelope> to_agent;
  std::optional<JobProgress> report;
  double report_at_s = -1;                      // run clock; -1: at once
  std::optional<double> lease_timer_at_s;       // run clock: call OnLeaseTimer(round, start) then
  std::optional<double> checkpoint_timer_at_s;  // run clock: call OnCheckpointTimer then
  Status fault;                                 // not OK: fail the job with this reason
  bool finished = false;                        // the job is done after `report`
};

class AgentJobMachine {
 public:
  enum class Phase { kIdle, kAssembling, kRunning, kCheckpointing, kFinished, kFailed };

  explicit AgentJobMachine(AgentJobFacts facts);

  MachineOutput OnGrant(const LeaseGrant& grant);
  MachineOutput OnLeaseTimer(int64_t round, double start_s);
  MachineOutput OnCheckpointTimer(int64_t round, double start_s);
  MachineOutput OnLeaseLost(const LeaseLost& lost, double now_s);
  MachineOutput OnQuery(const ProgressQuery& query) const;
  MachineOutput OnAgentFrame(const agent::Envelope& frame);

  Phase phase() const { return phase_; }
  int64_t iterations_left() const { return iterations_left_; }
  const AgentJobFacts& facts() const { return facts_; }

 private:
  MachineOutput Fault(std::string why);
  JobProgress LeaseReport() const;  // parts and resources of the current lease, ran=false
  double ExpectedSpeedup(const JobProgress& lease) const;
  MachineOutput CompleteLease(int64_t iterations_done, bool finished);
  bool IsCurrentLease(int64_t round, double start_s) const;

  AgentJobFacts facts_;
  Phase phase_ = Phase::kIdle;
  int64_t iterations_left_ = 0;
  LeaseAssembly lease_;      // the lease being assembled or run (messages/lease_assembly.hpp)
  int64_t lost_round_ = -1;  // its late CheckpointDone is expected and ignored
  int64_t iterations_in_lease_ = 0;  // the agent's latest Progress
  // The last lease's report, re-sent on a ProgressQuery for it.
  std::optional<JobProgress> last_report_;
};

}  // namespace troupe::agent_wire
