#include "actors/agent/agent_job_proxy.hpp"

#include <spdlog/spdlog.h>

#include <caf/exit_reason.hpp>

#include "actors/agent/agent_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using ProxySelf = agent_job_actor::stateful_pointer<AgentJobProxyState>;
using agent_wire::AgentJobMachine;
using agent_wire::MachineOutput;

void Fail(ProxySelf self, const std::string& why) {
  AgentJobProxyState& st = self->state;
  spdlog::warn("agent job {} ({}): {}; the job fails", st.machine->facts().job_id, st.link->peer(),
               why);
  st.link->Close(nullptr);
  self->quit(caf::exit_reason::remote_link_unreachable);
}

// Carries out what the machine decided; `round` and `start_s` name the lease a timer is for.
void Apply(ProxySelf self, MachineOutput out, int64_t round, double start_s) {
  AgentJobProxyState& st = self->state;
  for (agent::Envelope& frame : out.to_agent) st.link->Send(std::move(frame));
  if (out.report) {
    if (!st.scheduler) {
      spdlog::error("agent job {}: a report but no scheduler to send it to", out.report->job_id);
    } else if (out.report_at_s >= 0) {
      TellAt(self, st.ctx, st.scheduler, out.report_at_s, std::move(*out.report));
    } else {
      Tell(self, st.ctx, st.scheduler, std::move(*out.report));
    }
  }
  if (out.lease_timer_at_s) {
    TellAt(self, st.ctx, self, *out.lease_timer_at_s, agent_end_atom::value, round, start_s);
  }
  if (out.checkpoint_timer_at_s) {
    TellAt(self, st.ctx, self, *out.checkpoint_timer_at_s, agent_ckpt_atom::value, round, start_s);
  }
  if (!out.fault.ok()) return Fail(self, out.fault.message());
  if (out.finished) {
    // The scheduler stops a finished job when it has recorded it; the agent can go now.
    agent::Envelope goodbye;
    goodbye.mutable_goodbye()->set_reason("job finished");
    st.link->Close(std::make_shared<const agent::Envelope>(std::move(goodbye)));
  }
}

}  // namespace

agent_job_actor::behavior_type AgentJobProxy(ProxySelf self, agent_wire::AgentJobFacts facts,
                                             std::shared_ptr<agent_wire::AgentLink> link,
                                             ActorContext ctx) {
  AgentJobProxyState& st = self->state;
  st.machine = std::make_unique<AgentJobMachine>(std::move(facts));
  st.link = std::move(link);
  st.ctx = ctx;
  // However the proxy ends, the agent's connection ends with it (a no-op if already closed).
  self->attach_functor([link = st.link](const caf::error& reason) {
    agent::Envelope goodbye;
    goodbye.mutable_goodbye()->set_reason(reason ? "the job was stopped" : "job finished");
    link->Close(std::make_shared<const agent::Envelope>(std::move(goodbye)));
  });
  return {
      [=](const LeaseGrant& grant) {
        if (grant.scheduler) self->state.scheduler = grant.scheduler;
        Apply(self, self->state.machine->OnGrant(grant), grant.round, grant.start_s);
      },
      [=](agent_end_atom, int64_t round, double start_s) {
        Apply(self, self->state.machine->OnLeaseTimer(round, start_s), round, start_s);
      },
      [=](agent_ckpt_atom, int64_t round, double start_s) {
        Apply(self, self->state.machine->OnCheckpointTimer(round, start_s), round, start_s);
      },
      [=](const LeaseLost& lost) {
        Apply(self, self->state.machine->OnLeaseLost(lost, self->state.ctx.clock.Now(self)),
              lost.round, lost.lease_start_s);
      },
      [=](const ProgressQuery& query) {
        Apply(self, self->state.machine->OnQuery(query), query.round, query.lease_start_s);
      },
      [=](const JobScheduler& named) {
        if (!self->state.scheduler) self->state.scheduler = named.scheduler;
      },
      [=](const agent_wire::AgentEvent& event) {
        AgentJobProxyState& st = self->state;
        if (st.machine->phase() == AgentJobMachine::Phase::kFinished) return;
        if (event.closed) return Fail(self, "the agent's connection ended: " + event.reason);
        Apply(self, st.machine->OnAgentFrame(*event.frame), -1, 0);
      },
  };
}

}  // namespace troupe
