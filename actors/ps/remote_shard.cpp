#include "actors/ps/remote_shard.hpp"

#include <spdlog/spdlog.h>

#include <caf/actor_system.hpp>
#include <filesystem>

#include "actors/ps/shard_actor.hpp"
#include "gpu/cuda_hbm_table.hpp"

namespace troupe {

PsShardSpawn ShardSpawnOf(const PsOptions& o, int32_t shard, const caf::actor& collector,
                          double virtual_now_s, double time_scale) {
  PsShardSpawn s;
  s.shard = shard;
  s.nodes = o.nodes;
  s.gpus_per_node = o.gpus_per_node;
  s.hbm_bytes_per_gpu = o.hbm_bytes_per_gpu;
  s.mem_bytes_per_node = o.mem_bytes_per_node;
  s.ssd_file_bytes = o.ssd_file_bytes;
  s.ssd_compaction_threshold = o.ssd_compaction_threshold;
  s.ssd_sync = o.ssd_sync;
  s.ssd_dir = o.ssd_dir;
  s.ssd_run_id = o.ssd_run_id;
  s.hbm_cuda = static_cast<bool>(o.hbm_device);
  s.dim = o.model.dim;
  s.hidden.assign(o.model.hidden.begin(), o.model.hidden.end());
  s.lr_dense = o.model.lr_dense;
  s.lr_embedding = o.model.lr_embedding;
  s.eps = o.model.eps;
  s.dense_optimizer = static_cast<int32_t>(o.model.dense_optimizer);
  s.model_seed = o.model.seed;
  s.batch_size = o.batch_size;
  s.batches = o.batches;
  s.prefetch = o.prefetch;
  const PsRates& r = o.rates;
  s.rates = {r.gpu_flops, r.hbm_bytes_per_s, r.network_bytes_per_s, r.ssd_bytes_per_s,
             r.disk_bytes_per_s};
  s.durable_updates = o.durable_updates;
  s.final_rows_per_message = o.final_rows_per_message;
  s.collector = collector;
  s.virtual_now_s = virtual_now_s;
  s.time_scale = time_scale;
  return s;
}

PsOptions OptionsOf(const PsShardSpawn& s) {
  PsOptions o;
  o.nodes = s.nodes;
  o.gpus_per_node = s.gpus_per_node;
  o.hbm_bytes_per_gpu = s.hbm_bytes_per_gpu;
  o.mem_bytes_per_node = s.mem_bytes_per_node;
  o.ssd_file_bytes = s.ssd_file_bytes;
  o.ssd_compaction_threshold = s.ssd_compaction_threshold;
  o.ssd_sync = s.ssd_sync;
  o.ssd_dir = s.ssd_dir;
  o.ssd_run_id = s.ssd_run_id;
  if (s.hbm_cuda) o.hbm_device = gpu::MakeCudaHbmTable;
  o.model.dim = s.dim;
  o.model.hidden.assign(s.hidden.begin(), s.hidden.end());
  o.model.lr_dense = s.lr_dense;
  o.model.lr_embedding = s.lr_embedding;
  o.model.eps = s.eps;
  o.model.dense_optimizer = static_cast<paramserver::DenseOptimizer>(s.dense_optimizer);
  o.model.seed = s.model_seed;
  o.batch_size = s.batch_size;
  o.batches = s.batches;
  o.prefetch = s.prefetch;
  if (s.rates.size() == 5) {
    o.rates = PsRates{s.rates[0], s.rates[1], s.rates[2], s.rates[3], s.rates[4]};
  }
  o.durable_updates = s.durable_updates;
  o.final_rows_per_message = s.final_rows_per_message;
  return o;
}

PsShardSpawned SpawnShardHere(caf::event_based_actor* node, const PsShardSpawn& spec,
                              Telemetry* telemetry) {
  PsShardSpawned out;
  const PsOptions options = OptionsOf(spec);
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
