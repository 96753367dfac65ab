// A parameter-server run whose shards live in `troupe node` processes (paramserver.hosts;
// docs/paramserver.md, "Across processes"). PlanPsHosts checks the addresses and turns on what the
// run needs: the middleman, the deployment's credentials, and write-through updates (a node
// process may die at any moment, so every acknowledged update must already be on its SSD-PS).
// SpawnRemoteShards is driver code: it connects to each node and waits for its shard.
#pragma once

#include <caf/actor.hpp>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "messages/config.pb.h"
#include "runner/ps/ps_run.hpp"
#include "runtime/actor_runtime.hpp"

namespace troupe {

// Bad input (a count other than nodes, a malformed address, emulated mode, a faults block) is
// InvalidInput naming the field. A config without hosts is left as it is.
Status PlanPsHosts(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan);

// Asks node m (plan.hosts[m]) to host shard m; `shards` gets them in node order.
Status SpawnRemoteShards(ActorRuntime& runtime, const PsPlan& plan, const caf::actor& collector,
                         std::vector<caf::actor>* shards);

}  // namespace troupe
