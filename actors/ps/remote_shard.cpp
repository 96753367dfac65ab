#include "actors/ps/remote_shard.hpp"

#include <spdlog/spdlog.h>

#include <caf/actor_system.hpp>
#include <filesystem>

#include "actors/ps/ps_options_of.hpp"
#include "actors/ps/shard_actor.hpp"

namespace troupe {

PsShardSpawn ShardSpawnOf(const config::ParamServer& block, const PsOptions& o, int32_t shard,
                          const caf::actor& collector, double virtual_now_s, double time_scale) {
  config::ParamServer resolved = block;
  resolved.set_ssd_dir(o.ssd_dir);
  resolved.set_batches(o.batches);
  PsShardSpawn s;
  s.shard = shard;
  s.paramserver = ProtoBytes<config::ParamServer>::Pack(resolved);
  s.seed = o.model.seed;
  s.ssd_run_id = o.ssd_run_id;
  s.durable_updates = o.durable_updates;
  s.final_rows_per_message = o.final_rows_per_message;
  s.collector = collector;
  s.virtual_now_s = virtual_now_s;
  s.time_scale = time_scale;
  return s;
}

Status OptionsOf(const PsShardSpawn& s, PsOptions* out) {
  config::ParamServer block;
  if (!s.paramserver.Unpack(&block)) {
    return Status::InvalidInput("the run's paramserver block did not parse");
  }
  *out = PsOptionsOf(block, s.seed);
  out->ssd_run_id = s.ssd_run_id;
  out->durable_updates = s.durable_updates;
  out->final_rows_per_message = s.final_rows_per_message;
  return Status::Ok();
}

PsShardSpawned SpawnShardHere(caf::event_based_actor* node, const PsShardSpawn& spec,
                              Telemetry* telemetry) {
  PsShardSpawned out;
  PsOptions options;
  if (Status s = OptionsOf(spec, &options); !s.ok()) {
    out.error = "ps:" + std::to_string(spec.shard) + ": " + s.message();
    return out;
  }
  const std::string dir =
      (std::filesystem::path(options.ssd_dir) / ("node-" + std::to_string(spec.shard))).string();
  std::unique_ptr<ShardCore> core;
  if (Status s = ShardCore::Open(options, spec.shard, dir, &core); !s.ok()) {
    out.error = "ps:" + std::to_string(spec.shard) + " cannot open its SSD-PS: " + s.message();
    return out;
  }
  if (spec.incarnation == 0 && (core->recovered_step() >= 0 || core->ssd().size() > 0)) {
    // A fresh shard on a store some earlier run left: recovering it would train from the wrong
    // parameters. The run empties the folder when it is on the run's own host; here it is not.
    out.error = "ps:" + std::to_string(spec.shard) + ": " + dir +
                " already holds an SSD-PS (of an earlier run): empty it or choose another "
                "paramserver.ssd_dir";
    return out;
  }
  ShardSetup setup;
  setup.shard = spec.shard;
  setup.options = options;
  setup.collector = spec.collector;
  setup.clock.time_scale = spec.time_scale;
  setup.clock.epoch = node->clock().now() - SecondsToTimespan(spec.virtual_now_s / spec.time_scale);
  setup.telemetry = telemetry;
  setup.incarnation = spec.incarnation;
  setup.recovered_step = core->recovered_step();
  setup.ssd_free_s = spec.virtual_now_s +
                     static_cast<double>(core->recovery_bytes()) / options.rates.ssd_bytes_per_s;
  out.recovered_step = core->recovered_step();
  out.keys = static_cast<int64_t>(core->ssd().size());
  out.recovery_bytes = core->recovery_bytes();
  setup.core = std::move(core);
  spdlog::info("node: hosting parameter-server shard {} (incarnation {}, recovered up to step {})",
               spec.shard, spec.incarnation, out.recovered_step);
  out.shard = node->spawn(ShardActor, std::move(setup));
  return out;
}

}  // namespace troupe
