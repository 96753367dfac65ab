// Messages between the agent gateway's side of a run and its actors (all in the `troupe run`
// process: agents connect to that process, so none of these cross processes).
//
//   agent service --AgentsExpected--> workload   (how many agent jobs to wait for, until when)
//   agent service --AgentArrival--> workload     (a registered agent's job, for the next batch)
//   workload --JobScheduler--> agent job proxy   (who to report to, when the grant does not say)
//   gateway --AgentEvent--> agent job proxy      (a frame from the agent, or its connection's end)
//   proxy --(agent_end_atom, round, start_s)--> itself   (the lease's end on the run clock)
//   proxy --(agent_ckpt_atom, round, start_s)--> itself  (the checkpoint's deadline after it)
#pragma once

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <cstdint>

#include "agent/agent_gateway.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

using agent_end_atom = caf::atom_constant<caf::atom("agent_end")>;
using agent_ckpt_atom = caf::atom_constant<caf::atom("agent_ckpt")>;

struct AgentsExpected {
  int64_t count = 0;
  double deadline_s = -1;  // run clock; -1: wait for all of them however long it takes
};

struct AgentArrival {
  ArrivedJob job;
};

struct JobScheduler {
  scheduler_actor scheduler;
};

template <class Inspector>
auto inspect(Inspector& f, AgentsExpected& x) {
  return f(x.count, x.deadline_s);
}
template <class Inspector>
auto inspect(Inspector& f, AgentArrival& x) {
  return f(x.job);
}
template <class Inspector>
auto inspect(Inspector& f, JobScheduler& x) {
  return f(x.scheduler);
}

}  // namespace troupe

// Carries a parsed protobuf envelope within the process; never serialised.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::agent_wire::AgentEvent)
