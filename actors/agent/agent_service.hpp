// AgentService: a run's agent gateway (RunConfig.agents, docs/agent.md) tied to its actors.
//
// Start() reads the secret, listens (127.0.0.1 unless the config names another address), writes
// the port file and tells the workload how many agent jobs to wait for and until when. Each agent
// that registers with a valid token and job becomes an AgentJobProxy actor, handed to the workload
// (AgentArrival) for the scheduler's next batch; registrations past expected_jobs or past the
// registration timeout are refused. Stop() closes the gateway (Goodbye to every agent still
// connected) and stops every proxy that is still alive. Real mode only: agents run on the wall
// clock.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/agent/agent_job_proxy.hpp"
#include "agent/agent_gateway.hpp"
#include "base/status.hpp"
#include "config/config.pb.h"
#include "messages/actor_interfaces.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

// The gateway's options from the config: the secret (read from secret_file if set), the listen
// address split into host and port. Errors name the field ("agents.listen: ...").
Status AgentGatewayOptionsFromConfig(const config::AgentGateway& cfg, double time_scale,
                                     agent_wire::GatewayOptions* options);

class AgentService {
 public:
  AgentService(caf::actor_system& system, workload_actor workload,
               std::shared_ptr<const ModelCatalog> catalog, int32_t cluster_gpus, RunClock clock,
               Telemetry* telemetry);
  ~AgentService();

  Status Start(const config::AgentGateway& cfg);
  void Stop();
  uint16_t port() const { return gateway_ ? gateway_->port() : 0; }
  const agent_wire::AgentGateway* gateway() const { return gateway_.get(); }

 private:
  agent_wire::Admission Admit(const agent::Register& request,
                              const std::shared_ptr<agent_wire::AgentLink>& link);

  caf::actor_system& system_;
  workload_actor workload_;
  std::shared_ptr<const ModelCatalog> catalog_;
  int32_t cluster_gpus_;
  RunClock clock_;
  Telemetry* telemetry_;
  std::unique_ptr<agent_wire::AgentGateway> gateway_;
  std::mutex mutex_;  // the fields below: the gateway's thread admits, Stop() reads
  int64_t expected_ = 0;
  double deadline_s_ = -1;
  double checkpoint_timeout_s_ = 60;  // agents.checkpoint_timeout_s
  int64_t next_job_id_ = 0;
  std::vector<agent_job_actor> proxies_;
};

}  // namespace troupe
