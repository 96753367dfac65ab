// A parameter-server run whose shards live in `troupe node` processes (paramserver.hosts;
// docs/paramserver.md, "Across processes"). PlanPsHosts checks the addresses and turns on what the
// run needs: the middleman, the deployment's credentials, and write-through updates (a node
// process may die at any moment, so every acknowledged update must already be on its SSD-PS).
// SpawnRemoteShards is driver code: it connects to each node and waits for its shard.
// paramserver.trainer_hosts places each node's trainer, reader and partitioner likewise
// (SpawnRemoteFeeds); their updates are as lossless as in one process, but a trainer's process
// that dies stops the run (remote_supervisor.hpp). deployment.host entries with role "ps" name
// whole nodes instead of the two lists (ps_node: which node), and plan into both.
#pragma once

#include <caf/actor.hpp>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "runner/ps/ps_run.hpp"
#include "runtime/actor_runtime.hpp"

namespace troupe {

// Bad input (a count other than nodes, a malformed address, emulated mode, a faults block) in
// paramserver.hosts, trainer_hosts or the "ps" hosts is InvalidInput naming the field. A config
// without either is left as it is.
Status PlanPsHosts(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan);

// Asks node m (plan.hosts[m]) to host shard m; `shards` gets them in node order.
Status SpawnRemoteShards(ActorRuntime& runtime, const PsPlan& plan, const caf::actor& collector,
                         std::vector<caf::actor>* shards);

// The trainers, partitioners and readers of a run, by node.
struct PsFeeds {
  std::vector<caf::actor> trainers, partitioners, readers;
};

// Asks node n (plan.trainer_hosts[n]) to host trainer n and its feed, pulling from and pushing to
// `shards`, and sends its reader the node's examples. The trainers still wait for their PsPeers.
Status SpawnRemoteFeeds(ActorRuntime& runtime, const PsPlan& plan, const caf::actor& collector,
                        const std::vector<caf::actor>& shards, PsFeeds* feeds);

}  // namespace troupe
