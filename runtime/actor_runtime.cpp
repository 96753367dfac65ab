#include "runtime/actor_runtime.hpp"

#include <caf/atom.hpp>
#include <thread>

#include "messages/message_types.hpp"
#include "network/network_plugin.hpp"
#include "runtime/emulated_clock.hpp"

namespace troupe {
namespace {
constexpr std::chrono::milliseconds kProgressEvery{500};
}

ActorRuntime::ActorRuntime(const RuntimeOptions& options)
    : options_(options), wall_start_(std::chrono::steady_clock::now()) {
  config_ = std::make_unique<caf::actor_system_config>();
  RegisterMessageTypes(*config_);
  if (options_.emulated) {
    config_->set("scheduler.policy", caf::atom("testing"));
    // troupe's own coordinator: CAF's test coordinator with a cheaper virtual clock
    // (runtime/emulated_clock.hpp). A scheduler module given here replaces CAF's choice.
    config_->module_factories.push_back([](caf::actor_system& sys) -> caf::actor_system::module* {
      return new EmulatedCoordinator(sys);
    });
  } else if (options_.threads > 0) {
    config_->set("scheduler.max-threads", static_cast<size_t>(options_.threads));
  }
  const NetworkTable* network = nullptr;
  // A network plugin that cannot be loaded leaves the system without a middleman: ConnectNode and
  // PublishNode (runtime/remote_node.hpp) then answer the plugin's error.
  if (options_.middleman && LoadNetwork(&network).ok()) {
    network->load_middleman(*config_, options_.credentials.enabled());
    // CAF 0.17 closes a connection silent for connection-timeout even when the peer sends no
    // heartbeats of its own: both sides must send them (the node does, see troupe_main).
    if (options_.heartbeat_s > 0) {
      config_->set("middleman.heartbeat-interval", SecondsToTimespan(options_.heartbeat_s));
    }
    if (options_.peer_timeout_s > 0) {
      config_->set("middleman.connection-timeout", SecondsToTimespan(options_.peer_timeout_s));
    }
    if (options_.credentials.enabled()) {
      // CAF's OpenSSL module: publish and connect through it (runtime/remote_node.cpp) and every
      // peer must show a certificate signed by the deployment CA, as this process does.
      config_->openssl_certificate = options_.credentials.certificate_file;
      config_->openssl_key = options_.credentials.key_file;
      config_->openssl_cafile = options_.credentials.ca_file;
    }
  }
  system_ = std::make_unique<caf::actor_system>(*config_);
  clock_.epoch = system_->clock().now();
  clock_.time_scale = options_.emulated ? 1.0 : options_.time_scale;
}

ActorRuntime::~ActorRuntime() {
  if (options_.emulated) Drain();
  system_.reset();
  config_.reset();
}

bool ActorRuntime::Drive(const std::function<void()>& on_progress) {
  auto next_report = std::chrono::steady_clock::now() + kProgressEvery;
  auto report_if_due = [&] {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_report) return;
    next_report = now + kProgressEvery;
    if (on_progress) on_progress();
  };
  if (!options_.emulated) {
    while (!telemetry_.done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      report_if_due();
    }
    return true;
  }
  auto& coordinator = dynamic_cast<EmulatedCoordinator&>(system_->scheduler());
  EmulatedClock& clock = coordinator.clock();
  for (uint64_t step = 0;; ++step) {
    coordinator.RunReady();
    if (telemetry_.done.load(std::memory_order_relaxed)) return true;
    // Jump to the next timer and deliver every timer due at that instant before running the
    // actors: one pass of the coordinator per instant instead of one per timer. Timers keep their
    // insertion order.
    if (clock.DeliverNextInstant() == 0) return false;
    // Reading the clock every 1024 steps costs nothing measurable and keeps the line (and a
    // viewer) current even when a step takes long (large clusters, long traces).
    if ((step & 0x3ff) == 0) report_if_due();
  }
}

void ActorRuntime::Drain() {
  if (!options_.emulated || !system_) return;
  auto& coordinator = dynamic_cast<EmulatedCoordinator&>(system_->scheduler());
  do {
    coordinator.RunReady();
  } while (coordinator.clock().DeliverAll() > 0 || coordinator.has_job());
}

double ActorRuntime::WallSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
}

}  // namespace troupe
