#include "actors/ps/ps_options_of.hpp"

#include <vector>

#include "gpu/cuda_hbm_table.hpp"

namespace troupe {

PsOptions PsOptionsOf(const config::ParamServer& p, uint64_t seed) {
  PsOptions o;
  o.nodes = p.nodes();
  o.gpus_per_node = p.gpus_per_node();
  o.hbm_bytes_per_gpu = p.hbm_bytes_per_gpu();
  o.mem_bytes_per_node = p.mem_bytes_per_node();
  o.ssd_file_bytes = p.ssd_file_bytes();
  o.ssd_compaction_threshold = p.ssd_compaction_threshold_bytes();
  o.ssd_sync = p.ssd_sync();
  o.ssd_dir = p.ssd_dir();
  if (p.hbm_backend() == "cuda") o.hbm_device = gpu::MakeCudaHbmTable;
  o.model.dim = p.dim();
  // A repeated field has no default in config.proto: the block's comment there names this one.
  o.model.hidden = p.hidden_size() > 0 ? std::vector<int>(p.hidden().begin(), p.hidden().end())
                                       : std::vector<int>{64, 32};
  o.model.lr_dense = p.lr_dense();
  o.model.lr_embedding = p.lr_embedding();
  o.model.seed = seed;
  o.batch_size = p.batch_size();
  o.batches = p.batches();
  o.prefetch = p.prefetch();
  o.rates = PsRates{p.gpu_flops(), p.hbm_bytes_per_s(), p.network_bytes_per_s(),
                    p.ssd_bytes_per_s(), p.disk_bytes_per_s()};
  return o;
}

}  // namespace troupe
