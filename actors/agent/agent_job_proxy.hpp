// The agent job proxy: the job actor of a job whose training runs in an agent process (a real
// training loop wrapped by scripts/troupe_agent.py), connected through the agent gateway.
//
// To the scheduler and the servers it is a job like any other: it takes LeaseGrant parts,
// ProgressQuery and LeaseLost, and reports JobProgress to the scheduler of the lease (the grant's,
// or the one the workload named). What an emulated job computes, it asks the agent for: the lease
// goes to the agent as a LeaseGrant frame; at the lease's end on the run clock the agent gets
// LeaseEnd, checkpoints and answers CheckpointDone with the iterations it trained, and only then
// does the proxy report. The protocol itself is AgentJobMachine (wire/agent_job_machine.hpp).
//
// The agent vanishing — connection closed, read timeout (missed heartbeats), no CheckpointDone
// within agents.checkpoint_timeout_s of a LeaseEnd, a bad frame or a protocol violation — ends
// the proxy with exit reason remote_link_unreachable, which a scheduler monitoring its jobs sees
// as a crashed job. Stopped by an exit message (the scheduler ending the job or the run), it says
// Goodbye to the agent and closes the connection.
#pragma once

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <memory>

#include "actors/agent/agent_messages.hpp"
#include "agent/agent_gateway.hpp"
#include "agent/agent_job_machine.hpp"
#include "messages/actor_interfaces.hpp"
#include "runtime/actor_context.hpp"

namespace troupe {

struct AgentJobProxyState {
  std::unique_ptr<agent_wire::AgentJobMachine> machine;
  std::shared_ptr<agent_wire::AgentLink> link;
  scheduler_actor scheduler;  // from the latest grant, else from the workload
  ActorContext ctx;
  static inline const char* name = "troupe.agent_job";
};

// What the proxy handles: a job's interface (job_actor, messages/actor_interfaces.hpp), its own
// lease and checkpoint timers, and its agent's frames (from the gateway).
using agent_job_actor = job_actor::extend<caf::reacts_to<agent_end_atom, int64_t, double>,
                                          caf::reacts_to<agent_ckpt_atom, int64_t, double>,
                                          caf::reacts_to<agent_wire::AgentEvent>>;

agent_job_actor::behavior_type AgentJobProxy(
    agent_job_actor::stateful_pointer<AgentJobProxyState> self, agent_wire::AgentJobFacts facts,
    std::shared_ptr<agent_wire::AgentLink> link, ActorContext ctx);

}  // namespace troupe
