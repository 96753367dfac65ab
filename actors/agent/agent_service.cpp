#include "actors/agent/agent_service.hpp"

#include <spdlog/spdlog.h>

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "actors/agent/agent_job_proxy.hpp"
#include "actors/agent/agent_messages.hpp"
#include "agent/agent_auth.hpp"
#include "agent/job_request.hpp"
#include "base/parse.hpp"
#include "base/status_macros.hpp"
#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string staging = path + ".tmp";
  {
    std::ofstream out(staging, std::ios::trunc);
    out << port << "\n";
    if (!out) return Status::IoError("agents.port_file: cannot write '" + staging + "'");
  }
  std::error_code ec;
  std::filesystem::rename(staging, path, ec);
  if (ec) return Status::IoError("agents.port_file: cannot write '" + path + "': " + ec.message());
  return Status::Ok();
}

}  // namespace

Status AgentGatewayOptionsFromConfig(const config::AgentGateway& cfg, double time_scale,
                                     agent_wire::GatewayOptions* options) {
  const std::string& listen = cfg.listen();
  if (!SplitHostPort(listen, 0, &options->host, &options->port)) {
    return Status::InvalidInput("agents.listen: '" + listen + "' is not HOST:PORT (port 0-65535)");
  }
  if (cfg.has_secret_file() && !cfg.secret_file().empty()) {
    if (Status s = agent_wire::ReadSecretFile(cfg.secret_file(), &options->secret); !s.ok()) {
      return Status::InvalidInput("agents.secret_file: " + s.message());
    }
  } else {
    options->secret = cfg.secret();
  }
  if (options->secret.empty()) {
    return Status::InvalidInput("agents: a secret (agents.secret or agents.secret_file) is needed");
  }
  options->max_connections = cfg.max_connections();
  options->max_unauthenticated = cfg.max_unauthenticated();
  options->register_timeout_s = cfg.register_timeout_s();
  options->max_frame_bytes = static_cast<size_t>(cfg.max_frame_bytes());
  options->read_timeout_s = cfg.read_timeout_s();
  options->heartbeat_s = cfg.heartbeat_s();
  options->time_scale = time_scale;
  return Status::Ok();
}

AgentService::AgentService(caf::actor_system& system, workload_actor workload,
                           std::shared_ptr<const ModelCatalog> catalog, int32_t cluster_gpus,
                           RunClock clock, Telemetry* telemetry)
    : system_(system),
      workload_(std::move(workload)),
      catalog_(std::move(catalog)),
      cluster_gpus_(cluster_gpus),
      clock_(clock),
      telemetry_(telemetry) {}

AgentService::~AgentService() { Stop(); }

Status AgentService::Start(const config::AgentGateway& cfg) {
  agent_wire::GatewayOptions options;
  RETURN_IF_ERROR(AgentGatewayOptionsFromConfig(cfg, clock_.time_scale, &options));
  {
    std::lock_guard lock(mutex_);
    expected_ = cfg.expected_jobs();
    next_job_id_ = cfg.first_job_id();
    checkpoint_timeout_s_ = cfg.checkpoint_timeout_s();
    deadline_s_ =
        clock_.Seconds(system_.clock().now()) + cfg.registration_timeout_s() * clock_.time_scale;
  }
  gateway_ = std::make_unique<agent_wire::AgentGateway>(
      std::move(options),
      [this](const agent::Register& request, const std::shared_ptr<agent_wire::AgentLink>& link) {
        return Admit(request, link);
      });
  if (Status s = gateway_->Start(); !s.ok()) {
    gateway_.reset();  // never listened: nothing to stop or report
    return Status(s.code() == Status::Code::kInvalidInput
                      ? Status::InvalidInput("agents.listen: " + s.message())
                      : Status::IoError("agents.listen: " + s.message()));
  }
  if (!cfg.port_file().empty()) {
    RETURN_IF_ERROR(WritePortFile(cfg.port_file(), gateway_->port()));
  }
  TellAnon(telemetry_, workload_,
           AgentsExpected{.count = cfg.expected_jobs(), .deadline_s = deadline_s_});
  return Status::Ok();
}

agent_wire::Admission AgentService::Admit(const agent::Register& request,
                                          const std::shared_ptr<agent_wire::AgentLink>& link) {
  std::lock_guard lock(mutex_);
  agent_wire::Admission admission;
  const int64_t admitted = static_cast<int64_t>(proxies_.size());
  if (admitted >= expected_) {
    admission.status = Status::InvalidInput("the run expects no more agents (" +
                                            std::to_string(expected_) + " registered)");
    return admission;
  }
  const double now_s = clock_.Seconds(system_.clock().now());
  if (now_s > deadline_s_) {
    admission.status = Status::InvalidInput("registration closed (agents.registration_timeout_s)");
    return admission;
  }
  ArrivedJob arrived;
  agent_wire::JobRequestLimits limits{cluster_gpus_};
  admission.status =
      agent_wire::MakeArrivedJob(request.job(), *catalog_, limits, next_job_id_, now_s, &arrived);
  if (!admission.status.ok()) return admission;
  agent_wire::AgentJobFacts facts;
  facts.job_id = arrived.spec.job_id;
  facts.gpus = arrived.spec.gpus;
  facts.iterations = arrived.spec.iterations;
  facts.sensitivity = arrived.sensitivity;
  facts.time_scale = clock_.time_scale;
  facts.checkpoint_timeout_s = checkpoint_timeout_s_;
  agent_job_actor proxy =
      system_.spawn(AgentJobProxy, std::move(facts), link, ActorContext{clock_, telemetry_});
  arrived.job = proxy;
  proxies_.push_back(proxy);
  admission.job_id = next_job_id_++;
  admission.sink = [proxy, telemetry = telemetry_](agent_wire::AgentEvent event) {
    TellAnon(telemetry, proxy, std::move(event));
  };
  TellAnon(telemetry_, workload_, AgentArrival{.job = std::move(arrived)});
  return admission;
}

void AgentService::Stop() {
  if (!gateway_) return;
  gateway_->Stop("the run ended");
  std::lock_guard lock(mutex_);
  for (const agent_job_actor& proxy : proxies_) {
    caf::anon_send_exit(proxy, caf::exit_reason::user_shutdown);
  }
  proxies_.clear();
  const agent_wire::GatewayCounters& c = gateway_->counters();
  spdlog::info(
      "agent gateway: {} connections, {} registered, {} refused (full), {} bad tokens, {} bad "
      "frames, {} timed out, {} jobs refused",
      c.accepted.load(), c.registered.load(), c.refused_full.load(), c.auth_failed.load(),
      c.bad_frames.load(), c.timed_out.load(), c.refused_jobs.load());
  gateway_.reset();
}

}  // namespace troupe
