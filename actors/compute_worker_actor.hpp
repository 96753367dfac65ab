// The compute worker: the real work of one part of a lease of a real-mode job
// (RunConfig.backends.compute other than "emulated"; docs/gpu.md, "Real compute in real mode").
//
// The server of the part spawns it, in the server's own process (a `troupe node` for a placed
// server), detached (its own thread: a step blocks for its wall time, which must never hold a
// scheduler thread, the server or the job). It tells the job PartStarted, makes its
// ComputeBackend (and, for a part of N > 1 GPUs, its CollectiveBackend), Leases the step plan on
// the part's N devices (seed: the job id), then runs steps — each the GEMM chain on every device,
// then, with N > 1, an all-reduce of `scale` of the job's gradient among them — one message at a
// time, so an exit from the job stops it between two steps. It runs for the wall budget the job
// gave it (the lease's end, on the worker's own clock), then Releases the backend, tells the job
// PartDone (measured seconds per iteration, steps, where they ran) and quits.
//
// A part of a gang spread over several servers (PartWork.parts > 1) also exchanges the gang's
// gradient with the other parts every exchange_every_steps steps (gpu/gang_exchange.hpp): it
// spawns an all-reduce rank beside itself, names it in PartStarted, waits for the job's
// AllReduceGroup (handed to the rank) before its first step, and then all-reduces through its
// rank. The decision to stop travels in the exchange (one more float: a part past its budget
// votes 1), so all parts stop after the same exchange and end with the same weights.
// Training continues across leases: a gang part starts at the job's exchange index
// (PartWork.first_exchange) from the weights the job sends it in chunks (GangWeights; none on the
// first lease: the seeded initial weights), and waits for both them and its group before its
// first step; after its last exchange part 0 sends the job the weights, in chunks, before
// PartDone.
//
// A backend error, or an exchange that fails or gets no answer in a minute, answers
// PartDone{ok: false}. The worker monitors the job and quits when the job is gone; on any exit
// it stops its rank.
#pragma once

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/nccl_gang_part.hpp"
#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/real_progress.hpp"
#include "messages/gang_weights.hpp"
#include "messages/work_messages.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

using work_step_atom = caf::atom_constant<caf::atom("work_step")>;  // the worker's step loop

// The flat PartWork fields from the run's options and the model's step plan, and back.
void SetPartOptions(const gpu::RealComputeOptions& options, const gpu::StepPlan& plan,
                    PartWork* work);
gpu::RealComputeOptions PartOptions(const PartWork& work);
gpu::StepPlan PartPlan(const PartWork& work);

// Where a part ran: for the run's per-node step counters (nodes.csv).
struct PartRecord {
  int32_t server = 0;
  int64_t pid = 0;
  std::string host;
  std::vector<int32_t> devices;
  int64_t steps = 0;
  int64_t exchanges = 0;  // in this lease
  uint64_t weights_hash = 0;
};

// What a job credited for one measured lease: a run's record of its real compute, for tests and
// tools that want to check or plot it, and for nodes.csv.
struct MeasuredLease {
  int64_t job_id = 0;
  int64_t round = 0;
  double lease_s = 0;  // the lease's virtual length
  int32_t gpus = 0;
  int64_t steps = 0;                 // the fewest steps of a part
  double seconds_per_iteration = 0;  // measured: the slowest part's (0 when a part failed)
  double speedup = 0;                // the allocation's speedup (times a slow server's factor)
  int64_t iterations_possible = 0;   // IterationsFromMeasurement(lease_s, ...)
  int64_t iterations_done = 0;       // min(possible, iterations left)
  std::vector<PartRecord> parts;     // the parts that answered
  // A gang's training (gpu/gang_exchange.hpp): its exchange index when the lease began, and the
  // held-out loss of the weights the job kept after it (-1: no weights came back).
  int64_t first_exchange = 0;
  double held_out_loss = -1;
};

// Thread-safe: jobs on CAF's threads append, the caller reads once the run is over.
class MeasuredLeaseLog {
 public:
  void Add(const MeasuredLease& lease) {
    std::lock_guard<std::mutex> lock(mu_);
    leases_.push_back(lease);
  }
  std::vector<MeasuredLease> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(leases_);
  }
  std::vector<MeasuredLease> Copy() {
    std::lock_guard<std::mutex> lock(mu_);
    return leases_;
  }

 private:
  std::mutex mu_;
  std::vector<MeasuredLease> leases_;
};

// What a real-mode run hands its jobs when they do real compute (shared by all of them).
struct JobCompute {
  gpu::RealComputeOptions options;
  std::shared_ptr<MeasuredLeaseLog> log;  // none: nothing recorded
  // The run's fabric actor (actors/fabric_actor.hpp): a gang's exchange across servers crosses it
  // (AllReduceGroup.fabric). None: the run has no fabric.
  caf::actor fabric;
};

struct ComputeWorkerState {
  PartWork work;
  gpu::RealComputeOptions options;
  std::vector<int32_t> devices;  // the host's devices of the part's GPUs
  caf::actor_clock::time_point deadline;
  Telemetry* telemetry = nullptr;
  std::unique_ptr<gpu::ComputeBackend> compute;
  std::unique_ptr<gpu::CollectiveBackend> collective;  // only for devices > 1
  std::vector<std::vector<float>> gradients;           // each device's, all-reduced in place
  std::vector<std::vector<float>> pristine;            // restored before every all-reduce
  gpu::StepSample sample;
  // A gang over several parts: the rank beside this worker, the weights (assembled from the
  // job's chunks when it sent some), the job's exchanges done (from work.first_exchange on), and
  // whether the group has come.
  caf::actor rank;
  std::unique_ptr<NcclGangPart> nccl;  // instead of a rank: the gang all-reduces with NCCL
  GangWeightsAssembly weights;
  int64_t exchanges = 0;
  bool grouped = false;
  static inline const char* name = "troupe.compute_worker";
};

// `devices`: the host's device ids of work.gpu_ids (ServerSpec.devices mapped).
caf::behavior ComputeWorkerActor(caf::stateful_actor<ComputeWorkerState>* self, PartWork work,
                                 std::vector<int32_t> devices, Telemetry* telemetry);

}  // namespace troupe
