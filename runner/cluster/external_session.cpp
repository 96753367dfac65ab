#include "runner/cluster/external_session.hpp"

#include <spdlog/spdlog.h>

#include "agent/agent_auth.hpp"
#include "base/parse.hpp"
#include "base/status_macros.hpp"

namespace troupe {

Status ExternalSession::Start(const config::ExternalScheduler& cfg, RunPlan* plan,
                              std::unique_ptr<ExternalSession>* out) {
  agent_wire::ExternalLinkOptions options;
  if (!SplitHostPort(cfg.listen(), 0, &options.host, &options.port)) {
    return Status::InvalidInput("external_scheduler.listen: must be HOST:PORT, got '" +
                                cfg.listen() + "'");
  }
  options.secret = cfg.secret();
  if (!cfg.secret_file().empty()) {
    if (Status s = agent_wire::ReadSecretFile(cfg.secret_file(), &options.secret); !s.ok()) {
      return Status::InvalidInput("external_scheduler.secret_file: " + s.message());
    }
  }
  options.port_file = cfg.port_file();
  options.connect_timeout_s = cfg.connect_timeout_s();
  options.max_frame_bytes = static_cast<size_t>(cfg.max_frame_bytes());
  auto session = std::unique_ptr<ExternalSession>(new ExternalSession());
  session->link_ = std::make_shared<agent_wire::ExternalLink>(std::move(options));
  RETURN_IF_ERROR(session->link_->Listen());

  external::Hello hello;
  const std::vector<int32_t>& types = plan->scheduler.server_gpu_types;
  for (size_t i = 0; i < plan->servers.size(); ++i) {
    const ServerSpec& server = plan->servers[i];
    external::ServerShape* shape = hello.add_servers();
    shape->set_gpus(server.gpus);
    shape->set_cpus(server.cpus);
    shape->set_memory_gb(server.memory_gb);
    shape->set_gpu_type(i < types.size() ? types[i] : 0);
  }
  hello.set_round_s(plan->scheduler.round_s);
  hello.set_answer_timeout_s(cfg.answer_timeout_s());
  hello.set_fallback(cfg.fallback());
  hello.set_policy(plan->scheduler.policy);
  RETURN_IF_ERROR(session->link_->Accept(std::move(hello)));

  session->source_ =
      std::make_shared<agent_wire::ExternalSource>(session->link_, cfg.answer_timeout_s());
  plan->scheduler.mechanism_options.external = session->source_;
  plan->scheduler.mechanism_options.external_fallback = cfg.fallback();
  *out = std::move(session);
  return Status::Ok();
}

ExternalSession::~ExternalSession() {
  if (source_) spdlog::info("{}", source_->Report());
  if (link_) link_->Close("the run ended");
}

}  // namespace troupe
