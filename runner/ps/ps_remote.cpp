#include "runner/ps/ps_remote.hpp"

#include <caf/scoped_actor.hpp>
#include <chrono>

#include "actors/ps/remote_feed.hpp"
#include "actors/ps/remote_shard.hpp"
#include "base/parse.hpp"
#include "base/status_macros.hpp"
#include "messages/atoms.hpp"
#include "runner/deployment.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/remote_node.hpp"

namespace troupe {

namespace {

// One "host:port" per node in `field` (already known to be non-empty), in real mode, without
// faults.
Status CheckHostList(const config::RunConfig& cfg, const std::string& config_name,
                     const std::string& field,
                     const google::protobuf::RepeatedPtrField<std::string>& hosts) {
  const config::ParamServer& p = cfg.paramserver();
  auto bad = [&](const std::string& where, const std::string& why) {
    return Status::InvalidInput(config_name + ": " + where + ": " + why);
  };
  if (hosts.size() != p.nodes()) {
    return bad(field, "names " + std::to_string(hosts.size()) + " nodes; paramserver.nodes is " +
                          std::to_string(p.nodes()) + " (one address per node)");
  }
  if (cfg.run().mode() != config::real) {
    return bad(field, "needs run.mode: real (" +
                          std::string(field.ends_with("trainer_hosts") ? "trainers" : "shards") +
                          " live in other processes)");
  }
  if (cfg.has_faults()) {
    return bad("faults", "a parameter-server run with " + field +
                             " takes no faults block (kill a node process instead: its shard "
                             "restarts and recovers)");
  }
  for (int i = 0; i < hosts.size(); ++i) {
    std::string host;
    uint16_t port = 0;
    if (!SplitHostPort(hosts[i], 1, &host, &port)) {
      return bad(field + "[" + std::to_string(i) + "]",
                 "must be \"host:port\" with a port in 1..65535, got \"" + hosts[i] + "\"");
    }
  }
  return Status::Ok();
}

// deployment.host entries with role "ps", one per parameter-server node: `by_node` gets their
// addresses in node order (empty when there are none). Hosts of another role, a node named twice
// or not at all, and a malformed address are InvalidInput naming the host.
Status PsHostsOfDeployment(const config::RunConfig& cfg, const std::string& config_name,
                           std::vector<std::string>* by_node) {
  const config::ParamServer& p = cfg.paramserver();
  const auto& hosts = cfg.deployment().host();
  if (hosts.empty()) return Status::Ok();
  auto bad = [&](const std::string& where, const std::string& why) {
    return Status::InvalidInput(config_name + ": " + where + ": " + why);
  };
  if (p.hosts_size() > 0 || p.trainer_hosts_size() > 0) {
    return bad("deployment.host",
               "a parameter-server run names its nodes' places once: in deployment.host (role "
               "\"ps\") or in paramserver.hosts and trainer_hosts");
  }
  by_node->assign(static_cast<size_t>(p.nodes()), "");
  for (int i = 0; i < hosts.size(); ++i) {
    const config::Host& h = hosts[i];
    const std::string at = "deployment.host[" + std::to_string(i) + "]";
    if (h.role() != "ps") {
      return bad(at + ".role",
                 "a paramserver run's hosts run parameter-server nodes: must be "
                 "\"ps\", got \"" +
                     h.role() + "\"");
    }
    if (!h.has_ps_node() || h.ps_node() >= p.nodes()) {
      return bad(at + ".ps_node", "must name a parameter-server node in 0.." +
                                      std::to_string(p.nodes() - 1) + " (paramserver.nodes is " +
                                      std::to_string(p.nodes()) + ")");
    }
    std::string& slot = (*by_node)[static_cast<size_t>(h.ps_node())];
    if (!slot.empty()) {
      return bad(at + ".ps_node", "parameter-server node " + std::to_string(h.ps_node()) +
                                      " already runs on " + slot);
    }
    std::string host;
    uint16_t port = 0;
    if (!SplitHostPort(h.address(), 1, &host, &port)) {
      return bad(at + ".address",
                 "must be \"host:port\" with a port in 1..65535, got \"" + h.address() + "\"");
    }
    slot = h.address();
  }
  for (int32_t n = 0; n < p.nodes(); ++n) {
    if (!(*by_node)[static_cast<size_t>(n)].empty()) continue;
    return bad("deployment.host", "no \"ps\" host runs parameter-server node " + std::to_string(n) +
                                      " (paramserver.nodes is " + std::to_string(p.nodes()) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status PlanPsHosts(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan) {
  config::ParamServer p = cfg.paramserver();
  std::vector<std::string> whole;  // deployment.host, role "ps": whole nodes
  RETURN_IF_ERROR(PsHostsOfDeployment(cfg, config_name, &whole));
  for (const std::string& address : whole) {
    p.add_hosts(address);
    p.add_trainer_hosts(address);
  }
  if (p.hosts_size() == 0 && p.trainer_hosts_size() == 0) return Status::Ok();
  const bool deployed = !whole.empty();
  if (p.hosts_size() > 0) {
    const std::string field = deployed ? "deployment.host" : "paramserver.hosts";
    RETURN_IF_ERROR(CheckHostList(cfg, config_name, field, p.hosts()));
    // A node process may die at any moment: every acknowledged update must be on its SSD-PS.
    plan->options.durable_updates = true;
  }
  if (p.trainer_hosts_size() > 0) {
    const std::string field = deployed ? "deployment.host" : "paramserver.trainer_hosts";
    RETURN_IF_ERROR(CheckHostList(cfg, config_name, field, p.trainer_hosts()));
  }
  plan->hosts.assign(p.hosts().begin(), p.hosts().end());
  plan->trainer_hosts.assign(p.trainer_hosts().begin(), p.trainer_hosts().end());
  plan->runtime.middleman = true;
  std::vector<std::string> all = plan->hosts;
  all.insert(all.end(), plan->trainer_hosts.begin(), plan->trainer_hosts.end());
  return PlanDeployment(cfg, config_name, all, &plan->runtime);
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
    const PsShardSpawn spec = ShardSpawnOf(plan.paramserver, plan.options, m, collector, now_s,
                                           runtime.clock().time_scale);
    Status status = Status::Ok();
    AskWithin(self.ptr(), runtime.telemetry(), node, std::chrono::seconds(30), spawn_ps_atom::value,
              spec)
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

Status SpawnRemoteFeeds(ActorRuntime& runtime, const PsPlan& plan, const caf::actor& collector,
                        const std::vector<caf::actor>& shards, PsFeeds* feeds) {
  caf::actor_system& sys = runtime.system();
  caf::scoped_actor self{sys};
  const PsOptions& o = plan.options;
  for (int32_t n = 0; n < o.nodes; ++n) {
    const std::string& address = plan.trainer_hosts[static_cast<size_t>(n)];
    caf::actor node;
    if (Status s = ConnectNode(sys, address, &node); !s.ok()) {
      return Status::IoError("paramserver.trainer_hosts[" + std::to_string(n) +
                             "]: " + s.message());
    }
    const double now_s = runtime.clock().Seconds(sys.clock().now());
    const PsFeedSpawn spec{
        ShardSpawnOf(plan.paramserver, o, n, collector, now_s, runtime.clock().time_scale), shards};
    Status status = Status::Ok();
    AskWithin(self.ptr(), runtime.telemetry(), node, std::chrono::seconds(30),
              spawn_feed_atom::value, spec)
        .receive(
            [&](PsFeedSpawned& spawned) {
              if (!spawned.error.empty()) {
                status = Status::IoError(address + ": " + spawned.error);
                return;
              }
              feeds->trainers.push_back(std::move(spawned.trainer));
              feeds->partitioners.push_back(std::move(spawned.partitioner));
              feeds->readers.push_back(std::move(spawned.reader));
            },
            [&](caf::error& e) {
              status = Status::IoError("node " + address + " did not host trainer " +
                                       std::to_string(n) + ": " + sys.render(e));
            });
    if (!status.ok()) return status;
    SendFeedExamples(runtime.telemetry(), feeds->readers.back(), n, o.nodes, o.batch_size,
                     o.batches, *plan.train);
  }
  return Status::Ok();
}

}  // namespace troupe
