#include "actors/ps/remote_supervisor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/actor_system.hpp>
#include <chrono>

#include "actors/ps/remote_shard.hpp"
#include "messages/atoms.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/remote_node.hpp"

namespace troupe {
namespace {

using SupervisorSelf = caf::stateful_actor<PsRemoteSupervisorState>;

std::string NodeName(int32_t node) { return "ps:" + std::to_string(node); }

void Record(SupervisorSelf* self, int32_t node, const std::string& event, int64_t count,
            std::string detail) {
  PsRemoteSupervisorState& st = self->state;
  Tell(self, st.setup.telemetry, st.setup.collector,
       PsFaultRecord{st.setup.clock.Now(self), node, "crash", event, -1, count, std::move(detail)});
}

void Fail(SupervisorSelf* self, std::string why) {
  PsRemoteSupervisorState& st = self->state;
  Tell(self, st.setup.telemetry, st.setup.collector, PsFailure{std::move(why)});
}

void Restarted(SupervisorSelf* self, int32_t node, PsShardSpawned& spawned) {
  PsRemoteSupervisorState& st = self->state;
  if (!spawned.error.empty()) return Fail(self, spawned.error);
  const std::string& host = st.setup.hosts[static_cast<size_t>(node)];
  Record(self, node, "restarted", spawned.keys,
         NodeName(node) + " at " + host + " recovered " + std::to_string(spawned.keys) +
             " keys from SSD-PS, every update up to step " +
             std::to_string(spawned.recovered_step) + " (" +
             std::to_string(spawned.recovery_bytes) + " bytes read)");
  caf::actor shard = spawned.shard;
  st.setup.shards[static_cast<size_t>(node)] = shard;
  self->monitor(shard);
  const PsShardRestarted restarted{node, shard, st.incarnation[static_cast<size_t>(node)],
                                   spawned.recovered_step};
  for (const caf::actor& a : st.setup.partitioners) Tell(self, st.setup.telemetry, a, restarted);
  for (const caf::actor& a : st.setup.trainers) Tell(self, st.setup.telemetry, a, restarted);
  Tell(self, st.setup.telemetry, shard, PsStart{0});
}

// Reconnecting waits on the wall clock (ReconnectNode: up to about 10 s), so a helper with a
// thread of its own does it and answers with node_back_atom. The supervisor itself stays an
// ordinary actor: the actor system's shutdown waits for every detached actor to be destroyed, and
// once a detached supervisor was still referenced after its run (by what is not known: it talks
// to remote nodes through the middleman), so the shutdown waited for ever.
void Reconnect(SupervisorSelf* self, int32_t node, const std::string& host) {
  const caf::actor supervisor = caf::actor_cast<caf::actor>(self);
  Telemetry* telemetry = self->state.setup.telemetry;
  self->spawn<caf::detached>(
      [supervisor, telemetry, node, host](caf::event_based_actor* helper) -> caf::behavior {
        caf::actor remote;
        const Status s = ReconnectNode(helper->system(), host, &remote);
        Tell(helper, telemetry, supervisor, node_back_atom::value, node, remote,
             s.ok() ? std::string() : s.message());
        helper->quit();
        return {};
      });
}

void Restart(SupervisorSelf* self, int32_t node, const std::string& reason) {
  PsRemoteSupervisorState& st = self->state;
  const std::string& host = st.setup.hosts[static_cast<size_t>(node)];
  const std::vector<std::string>& feeds = st.setup.feed_hosts;
  if (const auto it = std::find(feeds.begin(), feeds.end(), host); it != feeds.end()) {
    return Fail(self, NodeName(node) + " at " + host + " went down (" + reason + ") with trainer " +
                          std::to_string(it - feeds.begin()) +
                          ": a trainer's process is not restarted; the run stops");
  }
  Record(self, node, "crashed", 0, NodeName(node) + " at " + host + " went down: " + reason);
  spdlog::warn("{} at {} went down ({}): waiting for its node to come back", NodeName(node), host,
               reason);
  Reconnect(self, node, host);
}

// The node is back (`remote`), or did not come back (`error`): it hosts the shard's next
// incarnation, which recovers from the node's SSD-PS.
void NodeBack(SupervisorSelf* self, int32_t node, const caf::actor& remote,
              const std::string& error) {
  PsRemoteSupervisorState& st = self->state;
  const std::string& host = st.setup.hosts[static_cast<size_t>(node)];
  if (!error.empty()) {
    return Fail(self, NodeName(node) + " went down and its node did not come back: " + error);
  }
  const int32_t incarnation = ++st.incarnation[static_cast<size_t>(node)];
  PsShardSpawn spec = st.setup.spawn;
  spec.shard = node;
  spec.incarnation = incarnation;
  spec.virtual_now_s = st.setup.clock.Now(self);
  AskWithin(self, st.setup.telemetry, remote, std::chrono::seconds(30), spawn_ps_atom::value,
            std::move(spec))
      .then([=](PsShardSpawned& spawned) { Restarted(self, node, spawned); },
            [=](caf::error& e) {
              Fail(self,
                   NodeName(node) + " at " + host +
                       ": the restarted node did not host the shard: " + self->system().render(e));
            });
}

}  // namespace

caf::behavior PsRemoteSupervisorActor(caf::stateful_actor<PsRemoteSupervisorState>* self,
                                      PsRemoteSupervisorSetup setup) {
  PsRemoteSupervisorState& st = self->state;
  st.setup = std::move(setup);
  st.incarnation.assign(st.setup.shards.size(), 0);
  if (!st.setup.hosts.empty()) {
    for (const caf::actor& shard : st.setup.shards) self->monitor(shard);
  }
  if (!st.setup.feed_hosts.empty()) {
    for (const auto* group : {&st.setup.trainers, &st.setup.partitioners, &st.setup.readers}) {
      for (const caf::actor& a : *group) self->monitor(a);
    }
  }
  self->set_down_handler([=](caf::down_msg& down) {
    // A shard that finished, or one the run stops at its end.
    if (down.reason == caf::exit_reason::normal || down.reason == caf::exit_reason::user_shutdown) {
      return;
    }
    const PsRemoteSupervisorSetup& setup = self->state.setup;
    const std::string reason = self->system().render(down.reason);
    for (size_t m = 0; m < setup.shards.size() && !setup.hosts.empty(); ++m) {
      if (setup.shards[m].address() == down.source) {
        return Restart(self, static_cast<int32_t>(m), reason);
      }
    }
    for (size_t n = 0; n < setup.feed_hosts.size(); ++n) {
      for (const caf::actor* a : {&setup.trainers[n], &setup.partitioners[n], &setup.readers[n]}) {
        if (a->address() != down.source) continue;
        return Fail(self, "trainer " + std::to_string(n) + " at " + setup.feed_hosts[n] +
                              " went down (" + reason +
                              "): a trainer's process is not restarted; the run stops");
      }
    }
  });
  return {
      [](const PsStart&) {},
      [=](node_back_atom, int32_t node, const caf::actor& remote, const std::string& error) {
        NodeBack(self, node, remote, error);
      },
  };
}

}  // namespace troupe
