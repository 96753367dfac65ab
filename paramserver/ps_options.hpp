// What every actor of a parameter-server run is configured with (from RunConfig.paramserver,
// runner/ps/ps_run.hpp): the cluster's shape and budgets, the model, the pipeline and the device
// rates of the timing model. Plain data. What the config's paramserver block holds is set from it
// (actors/ps/ps_options_of.hpp), so its defaults live in config/config.proto alone; here every
// such field is zero until then.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "paramserver/ctr_model.hpp"
#include "paramserver/hbm_table.hpp"

namespace troupe {

// The timing model's rates: GPU and HBM per GPU, the rest per node.
struct PsRates {
  double gpu_flops = 0;
  double hbm_bytes_per_s = 0;
  double network_bytes_per_s = 0;
  double ssd_bytes_per_s = 0;
  double disk_bytes_per_s = 0;
};

// Bytes one example occupies when read (label, 13 dense floats, 26 keys): stage 1's unit.
inline constexpr int64_t kPsExampleBytes = 4 + 13 * 4 + 26 * 8;
inline constexpr int64_t kPsKeyBytes = 8;

// Makes a device-memory HBM-PS backend (gpu/cuda_hbm_table's MakeCudaHbmTable in a run with
// paramserver.hbm_backend "cuda"); the library itself never names a device.
using HbmDeviceFactory =
    std::function<Status(const paramserver::HbmConfig&, std::unique_ptr<paramserver::HbmBackend>*)>;

struct PsOptions {
  int32_t nodes = 0;
  int32_t gpus_per_node = 0;
  int64_t hbm_bytes_per_gpu = 0;
  int64_t mem_bytes_per_node = 0;
  int64_t ssd_file_bytes = 0;
  int64_t ssd_compaction_threshold = 0;
  bool ssd_sync = false;
  std::string ssd_dir;  // node m's SSD-PS lives in <ssd_dir>/node-<m>
  // Drawn once per run: a shard's SSD-PS records it with the shard's number, and recovers only a
  // store that records the same (paramserver/ssd_manifest.hpp, StoreIdentity).
  uint64_t ssd_run_id = 0;
  HbmDeviceFactory hbm_device;  // set: HBM-PS in device memory; empty: in host memory
  paramserver::CtrModelConfig model;
  int32_t batch_size = 0;  // per node
  int64_t batches = 0;     // global steps
  int32_t prefetch = 0;    // batches stages 1-3 may run ahead of stage 4
  PsRates rates;
  // Write-through: a shard makes every step's updated rows durable in SSD-PS (tagged with the
  // step) before it acknowledges the step, so a crashed shard recovers every acknowledged update
  // from SSD-PS alone. On when the run's faults crash a PS node (docs/paramserver.md, "Faults").
  bool durable_updates = false;
  // A shard's final parameters travel in messages of at most this many rows (PsShardFinal parts),
  // and of at most 64 MiB each (the shard caps both), so that no message nears the frame ceiling
  // a troupe process accepts from a peer (1 GiB, network/plugin/bounded_multiplexer.hpp) when
  // shards live in other processes; 2^18 rows of the default model are about 19 MB.
  int64_t final_rows_per_message = int64_t{1} << 18;
};

}  // namespace troupe
