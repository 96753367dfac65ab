// Per-part CPU and memory demands of a job, the throughput they buy, and the placement searches
// the Synergy mechanisms (greedy.hpp, tune.hpp) share.
//
// Demands of a part of `gpus` GPUs on `server`:
//   proportional  the server's capacity / GPUs, times `gpus` (ClusterLedger::Proportional*).
//   ideal         gpus x the job's ideal CPUs / memory per GPU, each capped at the server's whole
//                 capacity; a dimension the job has no ideal for (<= 0) takes the proportional
//                 value. Where the job's matrix says the ideal buys less throughput than the
//                 proportional share on that server, the ideal is the proportional share
//                 (matrices are taken to be monotone: only an ideal below the share in some
//                 dimension is looked up).
//   fallback      the ideal where it is at or below proportional in both dimensions (it frees
//                 resources for others), else the proportional share.
// The estimated throughput of a part is W_j(cpus/gpu, memory/gpu) (1 for a null matrix); a job
// spread over several servers runs at its slowest part.
//
// Placement searches: the best fit for a consolidated part is the server with the fewest free
// GPUs that holds the part (ties: lowest index); a job no server holds is spread over the fewest
// servers, most free GPUs first (ties: lowest index), by GPUs alone. FitIndex (fit_index.hpp)
// answers best-fit searches without rescanning full servers for every job of a full queue.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/gpu_placement.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/queued_job.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

// Tolerance for comparing a demand against a share or a free amount (the ledger's own slack).
inline constexpr double kDemandSlack = 1e-9;

AuxDemand ProportionalDemand(const ClusterLedger& ledger, int32_t server, int32_t gpus);
AuxDemand IdealDemand(const SchedJob& job, const ClusterLedger& ledger, int32_t server,
                      int32_t gpus);
AuxDemand FallbackDemand(const SchedJob& job, const ClusterLedger& ledger, int32_t server,
                         int32_t gpus);
// True where `demand` holds more than `share` in CPUs or in memory.
bool AboveShare(const AuxDemand& demand, const AuxDemand& share);

// Estimated throughput (relative to the proportional share) of one part, of a whole placement
// (its slowest part), and of the same parts at their proportional share.
double PartThroughput(const SchedJob& job, const PlacementPart& part);
double PlacementThroughput(const SchedJob& job, const JobPlacement& placement);
double ProportionalThroughput(const SchedJob& job, const ClusterLedger& ledger,
                              const JobPlacement& placement);

// The best-fit server for all `gpus` GPUs by GPUs alone, or -1 if no server has that many free.
int32_t BestFitGpus(const ClusterLedger& ledger, int32_t gpus);
// The fewest-servers split of `gpus` GPUs (parts with no CPUs or memory yet), or empty if the
// cluster has fewer free. `job`: as PlaceGpus's (gpu_placement.hpp).
PlacementParts SpreadGpus(const ClusterLedger& ledger, int32_t gpus, const SchedJob* job = nullptr);

// One job's demands for one round, with the guard on its ideal precomputed once per distinct
// server shape (so a search over many servers reads no matrix). Jobs that share their matrix,
// ideal and GPU count share their demands: a round works each such class out once.
class RoundDemands {
 public:
  struct Job {
    const SchedJob* job = nullptr;
    int64_t id = 0;  // job->id: a placement need not read the job again
    int32_t gpus = 0;
    // Jobs with equal questions (> 0) have equal ideal (fallback) demands on every server this
    // round: a best-fit search may take up where the last one for them stopped (FitIndex). 0: not
    // known.
    uint32_t ideal_question = 0, fallback_question = 0;
    bool above = false;     // the ideal exceeds the proportional share on some shape
    uint64_t ideal_ok = 0;  // bit per shape class: the ideal buys at least the share there
    // Every server of one shape (uniform()): the demands of the job's GPUs on any server.
    // Aligned to the 16-byte moves a Job is copied with, so that a search reads each in one
    // load from the copy's store (a load across two stores waits for both to drain).
    alignas(16) AuxDemand ideal;
    alignas(16) AuxDemand fallback;
  };

  explicit RoundDemands(const ClusterLedger& ledger);
  Job Prepare(const SchedJob& job) const;
  // The same from what a queue's order keeps of the job: the job itself is read only for a kind
  // of job the round has not met yet.
  Job Prepare(const QueuedJob& job) const;
  // Demands of a part of `gpus` GPUs on `server` (cheap for the job's own GPU count, and inline:
  // a best-fit search asks at every server it tries).
  AuxDemand Ideal(const Job& job, int32_t server, int32_t gpus) const {
    if (uniform_ && gpus == job.gpus) return job.ideal;
    return IdealOn(job, server, gpus);
  }
  AuxDemand Fallback(const Job& job, int32_t server, int32_t gpus) const {
    if (uniform_ && gpus == job.gpus) return job.fallback;
    return FallbackOn(job, server, gpus);
  }
  AuxDemand Proportional(int32_t server, int32_t gpus) const {
    return ProportionalDemand(ledger_, server, gpus);
  }
  // At most the ideal (or fallback) demand of the job's whole GPUs on any server.
  AuxDemand IdealBound(const Job& job) const {
    return uniform_ ? job.ideal : IdealBoundOverShapes(job);  // one shape: its demands
  }
  AuxDemand FallbackBound(const Job& job) const {
    return uniform_ ? job.fallback : FallbackBoundOverShapes(job);
  }
  // Every server has the same shape: the bounds are the demands on every server.
  bool uniform() const { return uniform_; }

 private:
  // What decides a job's demands, and what they are.
  struct DemandClass {
    bool used = false;
    const SensitivityMatrix* matrix = nullptr;
    uint64_t cpus_per_gpu = 0, memory_gb_per_gpu = 0;  // the ideal's bits
    int32_t gpus = 0;
    Job demands;  // without job and id
  };
  static constexpr size_t kClassSlots = 256;  // open addressing, at most half of them used
  // What decides a job's demands on every server, at its ideal or at its fallback: on servers of
  // one shape, the demands themselves; else the GPUs, the ideal per GPU and where it pays.
  using QuestionKey = std::array<uint64_t, 4>;
  struct Question {
    bool used = false;
    QuestionKey key{};
  };

  Job Work(const SchedJob& job) const;  // the demands, from the matrix
  void AskQuestions(const SchedJob& job, Job& demands) const;
  uint32_t QuestionId(const QuestionKey& key) const;  // 0: the round keeps no more
  // The job's class's slot (unused: not met yet), or nullptr where the round keeps no more.
  DemandClass* ClassSlot(const QueuedJob& job) const;
  AuxDemand IdealOn(const Job& job, int32_t server, int32_t gpus) const;  // no shortcut
  AuxDemand FallbackOn(const Job& job, int32_t server, int32_t gpus) const;
  AuxDemand IdealBoundOverShapes(const Job& job) const;
  AuxDemand FallbackBoundOverShapes(const Job& job) const;

  const ClusterLedger& ledger_;
  std::vector<int32_t> class_of_;     // per server
  std::vector<int32_t> class_model_;  // one server of each shape class
  bool overflow_ = false;             // some server is in no class
  bool uniform_ = false;
  mutable std::array<DemandClass, kClassSlots> classes_{};
  mutable uint32_t classes_met_ = 0;
  mutable std::array<Question, kClassSlots> questions_{};  // slot index + 1: the question's id
  mutable uint32_t questions_met_ = 0;
};

}  // namespace troupe::scheduling
