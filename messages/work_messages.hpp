// Real compute where the GPUs are: a real-mode job (backends.compute other than "emulated") runs
// each part of a lease in the process of that part's server — the run's own process for a local
// server, a `troupe node` for a placed one — and stays the owner of progress and checkpoints.
//
//   job --PartWork--> server of each part   the part's work; the server spawns a compute worker
//                                           in its own process, on its leased devices
//   worker --PartStarted--> job             the worker's handle (the job stops it when the lease
//                                           is lost) and, for a gang over several parts, the
//                                           all-reduce rank it spawned beside itself
//   job --AllReduceGroup--> every worker    (gang only) who is who; the worker hands it to its
//                                           rank and then starts stepping
//   job --GangWeights--> every worker       (gang only, after PartStarted) the weights the lease
//                                           starts from, in chunks (messages/gang_weights.hpp)
//   part 0 --GangWeights--> job             (gang only) the weights after the lease, in chunks
//   worker --PartDone--> job                measured seconds per iteration and steps, where the
//                                           steps ran (process id, host), or why it failed
//
// The worker's options travel flat (this layer does not know gpu/'s types; actors convert).
// Every type has a free `inspect` and is registered under its name (message_types.hpp).
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

struct PartWork {
  int64_t job_id = 0;
  double lease_start_s = 0;  // names the lease in the answers
  // Wall seconds the part runs from when the worker starts: the lease's end is on the run's
  // clock, which another process does not share.
  double wall_budget_s = 0;
  int32_t server = 0;            // the part's server index
  std::vector<int32_t> gpu_ids;  // the server's GPUs leased to this part
  uint64_t seed = 0;             // the job id: every lease of a job computes the same values
  // gpu::RealComputeOptions and the step plan, flat.
  std::string compute;
  std::string collective;
  double scale = 0;
  int64_t width = 0;
  int32_t gemms = 0;
  double reference_flops_per_s = 0;
  double gradient_bytes = 0;
  double link_bytes_per_s = 0;
  double link_latency_s = 0;
  int64_t plan_rows = 0;
  int64_t plan_width = 0;
  int32_t plan_gemms = 0;
  // A gang over `parts` servers: this part's rank among them (parts in server order), and the
  // steps between two all-reduces of the gang's gradient across the parts.
  int32_t parts = 1;
  int32_t part_rank = 0;
  int32_t exchange_every_steps = 1;
  // Where a gang's training resumes: the exchanges done in earlier leases (this lease's first
  // exchange index) and the length of the weights the job sends after PartStarted (0: none, start
  // from the seeded initial weights).
  int64_t first_exchange = 0;
  int64_t weights_floats = 0;
  caf::actor job;
};
template <class Inspector>
auto inspect(Inspector& f, PartWork& x) {
  return f(x.job_id, x.lease_start_s, x.wall_budget_s, x.server, x.gpu_ids, x.seed, x.compute,
           x.collective, x.scale, x.width, x.gemms, x.reference_flops_per_s, x.gradient_bytes,
           x.link_bytes_per_s, x.link_latency_s, x.plan_rows, x.plan_width, x.plan_gemms, x.parts,
           x.part_rank, x.exchange_every_steps, x.first_exchange, x.weights_floats, x.job);
}

struct PartStarted {
  double lease_start_s = 0;
  int32_t server = 0;
  caf::actor rank;  // the gang's all-reduce rank in the worker's process; none for one part
};
template <class Inspector>
auto inspect(Inspector& f, PartStarted& x) {
  return f(x.lease_start_s, x.server, x.rank);
}

struct PartDone {
  double lease_start_s = 0;
  int32_t server = 0;
  bool ok = false;
  std::string why;                   // when not ok
  double seconds_per_iteration = 0;  // measured: mean step / scale
  int64_t steps = 0;
  int64_t pid = 0;               // the process that ran the steps
  std::string host;              // its host name
  std::vector<int32_t> devices;  // the node's devices the steps ran on
  // A gang's exchanges in this lease: how many, and a hash of the weights after the last one
  // (FNV-1a of their bytes; equal on every part, and to the single-process reference's).
  int64_t exchanges = 0;
  uint64_t weights_hash = 0;
};
template <class Inspector>
auto inspect(Inspector& f, PartDone& x) {
  return f(x.lease_start_s, x.server, x.ok, x.why, x.seconds_per_iteration, x.steps, x.pid, x.host,
           x.devices, x.exchanges, x.weights_hash);
}

}  // namespace troupe
