// What the parameter-server tests share: their small run and the way they run a config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "runner/ps/ps_run.hpp"

namespace troupe::testing {

// 4 nodes of 64-example batches, 40 steps; 2,000 categories a field, so most of the ~40 K keys
// it touches are used a few times; MEM-PS holds 1,024 rows a node; SSD-PS compacts past 1 MB.
// Its steps take about 0.4 ms of virtual time, so the run lasts about 16 ms.
inline constexpr char kSmallPsConfig[] = R"(
paramserver {
  nodes: 4
  gpus_per_node: 2
  batch_size: 64
  batches: 40
  prefetch: 3
  keys_per_field: 2000
  hidden: 16
  mem_bytes_per_node: 98304
  hbm_bytes_per_gpu: 524288
  ssd_file_bytes: 16384
  ssd_compaction_threshold_bytes: 1048576
  holdout_examples: 4096
}
)";

struct PsRun {
  Status status;
  PsPlan plan;  // its data, for the reference
  PsRunResult result;
};

// Parses `text`, applies `sets`, validates, plans and executes it. A run directory is written
// only when `sets` name one (run.out_dir=...).
PsRun RunPs(const std::string& text, const std::vector<std::string>& sets = {});

// The bytes node `to` pulls from shard `from` in `step` of `plan`'s training data: its batch's
// unique keys that `from` owns, each a key and its dim weights.
double PullBytes(const PsPlan& plan, int64_t step, int32_t from, int32_t to);

}  // namespace troupe::testing
