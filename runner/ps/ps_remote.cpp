#include "runner/ps/ps_remote.hpp"

#include <caf/scoped_actor.hpp>
#include <chrono>

#include "actors/ps/remote_shard.hpp"
#include "base/parse.hpp"
#include "messages/atoms.hpp"
#include "runner/deployment.hpp"
#include "runtime/remote_node.hpp"

namespace troupe {

Status PlanPsHosts(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan) {
  const config::ParamServer& p = cfg.paramserver();
  if (p.hosts_size() == 0) return Status::Ok();
  auto bad = [&](const std::string& field, const std::string& why) {
    return Status::InvalidInput(config_name + ": " + field + ": " + why);
  };
  if (p.hosts_size() != p.nodes()) {
    return bad("paramserver.hosts", "names " + std::to_string(p.hosts_size()) +
                                        " nodes; paramserver.nodes is " +
                                        std::to_string(p.nodes()) + " (one address per node)");
  }
  if (cfg.run().mode() != config::real) {
    return bad("paramserver.hosts", "needs run.mode: real (shards live in other processes)");
  }
  if (cfg.has_faults()) {
    return bad("faults",
               "a parameter-server run with paramserver.hosts takes no faults block "
               "(kill a node process instead: its shard restarts and recovers)");
  }
  for (int i = 0; i < p.hosts_size(); ++i) {
    std::string host;
    uint16_t port = 0;
    if (!SplitHostPort(p.hosts(i), 1, &host, &port)) {
      return bad("paramserver.hosts[" + std::to_string(i) + "]",
                 "must be \"host:port\" with a port in 1..65535, got \"" + p.hosts(i) + "\"");
    }
  }
  plan->hosts.assign(p.hosts().begin(), p.hosts().end());
  plan->runtime.middleman = true;
  plan->options.durable_updates = true;
  return PlanDeployment(cfg, config_name, plan->hosts, &plan->runtime);
}

Status SpawnRemoteShards(ActorRuntime& runtime, const PsPlan& plan, const caf::actor& collector,
                         std::vector<caf::actor>* shards) {
  caf::actor_system& sys = runtime.system();
  caf::scoped_actor self{sys};
  for (int32_t m = 0; m < plan.options.nodes; ++m) {
    const std::string& address = plan.hosts[static_cast<size_t>(m)];
    caf::actor node;
    if (Status s = ConnectNode(sys, address, &node); !s.ok()) {
      return Status::IoError("paramserver.hosts[" + std::to_string(m) + "]: " + s.message());
    }
    const double now_s = runtime.clock().Seconds(sys.clock().now());
    const PsShardSpawn spec =
        ShardSpawnOf(plan.options, m, collector, now_s, runtime.clock().time_scale);
    Status status = Status::Ok();
    self->request(node, std::chrono::seconds(30), spawn_ps_atom::value, spec)
        .receive(
            [&](PsShardSpawned& spawned) {
              if (!spawned.error.empty()) {
                status = Status::IoError(address + ": " + spawned.error);
              } else {
                shards->push_back(std::move(spawned.shard));
              }
            },
            [&](caf::error& e) {
              status = Status::IoError("node " + address + " did not host shard " +
                                       std::to_string(m) + ": " + sys.render(e));
            });
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

}  // namespace troupe
