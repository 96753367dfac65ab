#include "actors/node_actor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "actors/allreduce_rank_actor.hpp"
#include "actors/ps/remote_feed.hpp"
#include "actors/ps/remote_shard.hpp"
#include "actors/server_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

namespace {

// The node's devices not lent to a server, and who holds the others.
struct DevicePool {
  bool listed = false;  // a device list was given
  std::vector<int32_t> free;
  std::map<caf::actor_addr, std::vector<int32_t>> lent;

  // The first `count` free devices into spec->devices; false when fewer are free.
  bool Lend(ServerSpec* spec) {
    if (!listed) return true;
    if (spec->gpus < 0 || static_cast<size_t>(spec->gpus) > free.size()) return false;
    spec->devices.assign(free.begin(), free.begin() + spec->gpus);
    free.erase(free.begin(), free.begin() + spec->gpus);
    return true;
  }
  void Keep(const caf::actor_addr& server, const ServerSpec& spec) {
    if (listed) lent[server] = spec.devices;
  }
  void GiveBack(const caf::actor_addr& server) {
    auto it = lent.find(server);
    if (it == lent.end()) return;
    free.insert(free.end(), it->second.begin(), it->second.end());
    std::sort(free.begin(), free.end());
    lent.erase(it);
  }
};

// The servers spawned for each run, by the run's handle (the actor it names in its
// spawn_server_atom requests; runner/cluster/cluster_run.cpp).
using ServersByRun = std::map<caf::actor_addr, std::vector<caf::actor>>;

std::string Join(const std::vector<int32_t>& devices) {
  std::string text;
  for (int32_t d : devices) {
    if (!text.empty()) text += ',';
    text += std::to_string(d);
  }
  return text;
}

// When `down` is a run's handle going down: the run's servers stop and lend their devices again
// at once, not once they have stopped, so that a run started right after finds them free.
// `why` is down.reason rendered.
void RunGone(const caf::down_msg& down, const std::string& why, ServersByRun* runs,
             DevicePool* pool) {
  auto it = runs->find(down.source);
  if (it == runs->end()) return;
  std::vector<int32_t> freed;
  for (const caf::actor& server : it->second) {
    if (auto lent = pool->lent.find(server.address()); lent != pool->lent.end()) {
      freed.insert(freed.end(), lent->second.begin(), lent->second.end());
    }
    pool->GiveBack(server.address());
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  }
  // A run that ended tells its servers to exit itself; one that died or lost its connection
  // cannot, which is worth a line.
  if (down.reason && down.reason != caf::exit_reason::user_shutdown) {
    std::sort(freed.begin(), freed.end());
    spdlog::warn("node: a run went away ({}): stopped its {} servers; devices [{}] are free again",
                 why, it->second.size(), Join(freed));
  }
  runs->erase(it);
}

}  // namespace

caf::behavior NodeActor(caf::event_based_actor* self, Telemetry* telemetry,
                        std::vector<int32_t> devices) {
  // The servers hosted here that are still alive. A run that ends tells its servers to exit; one
  // that dies (its process killed) cannot, so the node stops whatever is left when it stops
  // itself, or `troupe node` would wait for them forever on SIGTERM.
  auto hosted = std::make_shared<std::set<caf::actor_addr>>();
  auto pool = std::make_shared<DevicePool>();
  pool->listed = !devices.empty();
  pool->free = std::move(devices);
  // A run's servers stop with the run however it goes: the node monitors the run's handle, whose
  // down message comes when the run ends, its process dies or its connection is lost.
  auto runs = std::make_shared<ServersByRun>();
  self->set_down_handler([self, hosted, pool, runs](caf::down_msg& down) {
    if (runs->count(down.source)) {
      RunGone(down, self->system().render(down.reason), runs.get(), pool.get());
    }
    hosted->erase(down.source);
    pool->GiveBack(down.source);
  });
  self->attach_functor([hosted] {
    for (const caf::actor_addr& server : *hosted) {
      caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    }
  });
  return {
      [=](spawn_server_atom, ServerSpec& spec, const caf::actor& run) -> caf::result<caf::actor> {
        if (!pool->Lend(&spec)) {
          spdlog::warn(
              "node: refused server {}: it has {} GPUs, {} of this node's devices are free",
              spec.name, spec.gpus, pool->free.size());
          return caf::make_error(caf::sec::invalid_argument,
                                 "server " + spec.name + " has " + std::to_string(spec.gpus) +
                                     " GPUs; " + std::to_string(pool->free.size()) +
                                     " of this node's devices (--devices) are free");
        }
        spdlog::info("node: hosting server {} ({} GPUs, {} CPUs, {} GB)", spec.name, spec.gpus,
                     spec.cpus, spec.memory_gb);
        caf::actor server = caf::actor_cast<caf::actor>(self->spawn(ServerActor, spec, telemetry));
        self->monitor(server);
        hosted->insert(server.address());
        pool->Keep(server.address(), spec);
        if (run && !runs->count(run.address())) self->monitor(run);
        if (run) (*runs)[run.address()].push_back(server);
        return server;
      },
      [=](spawn_rank_atom) {
        // A member of an all-reduce among processes (actors/allreduce_rank_actor.hpp); it lives
        // as long as the node, or until its group's driver tells it to exit.
        caf::actor rank = self->spawn(AllReduceRankActor, telemetry);
        self->monitor(rank);
        hosted->insert(rank.address());
        return rank;
      },
      [=](spawn_ps_atom, const PsShardSpawn& spec) {
        // A parameter-server shard of a run elsewhere (actors/ps/remote_shard.hpp), on this
        // node's own SSD-PS folder; it quits after the run's last step.
        PsShardSpawned spawned = SpawnShardHere(self, spec, telemetry);
        if (spawned.shard) {
          self->monitor(spawned.shard);
          hosted->insert(spawned.shard.address());
        }
        return spawned;
      },
      [=](spawn_feed_atom, const PsFeedSpawn& feed) {
        // A parameter-server trainer, reader and partitioner of a run elsewhere
        // (actors/ps/remote_feed.hpp); they stay until the run ends.
        PsFeedSpawned spawned = SpawnFeedHere(self, feed, telemetry);
        for (const caf::actor& a : {spawned.trainer, spawned.partitioner, spawned.reader}) {
          if (!a) continue;
          self->monitor(a);
          hosted->insert(a.address());
        }
        return spawned;
      },
      [=](crash_atom) {
        // A `crash node:HOST:PORT` fault: the process dies at once, as under kill -9 (no
        // goodbye to peers; they learn it from the broken connection or missing heartbeats).
        spdlog::warn("node: crash fault: exiting at once");
        std::fflush(nullptr);
        std::_Exit(137);
      },
  };
}

}  // namespace troupe
