// The slot loop that runs one online scheduling policy (OASiS or a baseline, baselines.hpp) over
// a stream of jobs on OASiS's model (model.hpp), and scores it by total utility.
//
// Each slot t = 0..T-1: the jobs arriving in t are offered to the policy in arrival order
// (Arrive: admit or reject with a reason), then the policy allocates the slot (Slot: workers and
// parameter servers per machine for some active jobs). The simulator enforces, per job and slot,
// that the job is admitted, arrived and unfinished, the mini-batch constraints of the seed ((3) at
// most N_i workers, so one data chunk per worker; (6) PS bandwidth covers worker bandwidth; (7) no
// more PS than workers) and, over all jobs, the capacities (4) and (5) of every machine. An
// allocation that breaks any of them is dropped whole and recorded in `violations` (so usage
// never exceeds capacity). A worker trains slot_s / (tau_i + 2 e_i / b_i) mini-batches a slot, so
// progress is counted in worker-slots: a job finishes in the slot its worker-slots reach
// W_i = Job::WorkerSlots() (constraint (2)), with utility f_i(t - a_i); unfinished by T, 0.
//
// Contract: jobs are indexed by their position in the input vector, which must be sorted by
// arrival (a job arriving outside [0, T) never arrives and is recorded as rejected). Policies see
// every job's progress but only of jobs that have arrived. Deterministic.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scheduling/oasis/model.hpp"

namespace troupe::scheduling::oasis {

// One job as the simulator tracks it.
struct JobProgress {
  Job job;
  int work = 0;  // W_i, worker-slots
  int done = 0;  // worker-slots received so far
  bool arrived = false;
  bool admitted = false;
  int completion = -1;  // the slot in which `done` reached `work`; -1 while unfinished

  bool active() const { return arrived && admitted && completion < 0; }
  int remaining() const { return work - done; }
  // The most workers worth giving it this slot: min(N_i, remaining worker-slots).
  int WorkerCap() const;
};

struct JobSlot {
  int job = 0;  // index into the job vector
  SlotPlan plan;
};
using SlotAllocation = std::vector<JobSlot>;

struct Admission {
  bool admitted = false;
  std::string reason;    // why not, "" when admitted
  int planned_end = -1;  // the slot the policy's plan ends in, -1 when it makes no plan
};

class OnlinePolicy {
 public:
  virtual ~OnlinePolicy() = default;
  virtual std::string_view name() const = 0;
  // jobs[index] arrives (jobs[index].arrived is already true). Called in arrival order, before
  // Slot() of its arrival slot.
  virtual Admission Arrive(int index, const std::vector<JobProgress>& jobs) = 0;
  // The allocation of slot t among the active jobs.
  virtual SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) = 0;
  // jobs[index] finished in slot t: whatever the policy reserved for it later is released.
  virtual void Finished(int /*index*/, int /*t*/) {}
};

struct JobOutcome {
  int64_t id = 0;
  int arrival = 0;
  bool admitted = false;
  std::string reason;
  int planned_end = -1;
  int completion = -1;  // the slot it finished in, -1 if unfinished by T
  double utility = 0;   // f_i(completion - arrival), 0 if unfinished
  int worker_slots = 0;
};

struct SlotRecord {
  ResourceVector worker_use{};  // allocated / total capacity of the worker servers, per resource
  ResourceVector ps_use{};      // the same over the PS machines
  int active = 0;               // active jobs (admitted, arrived, unfinished) at the slot's start
  int workers = 0;              // workers allocated
  int ps = 0;                   // parameter servers allocated
};

struct SimResult {
  std::string policy;
  double total_utility = 0;
  int admitted = 0;
  int finished = 0;
  std::vector<JobOutcome> jobs;  // one per input job, same order
  std::vector<SlotRecord> slots;
  std::vector<std::string> violations;  // dropped allocations, "" kinds; empty for a sound policy
};

// "" if `s` (job `job`'s allocation of slot `t`) keeps (3), (6) and (7) and fits on top of the
// slot's `used` amounts (worker servers then PS machines, kResources doubles per machine);
// otherwise what it breaks. Checks structure too: slot == t, valid machines, positive counts.
std::string CheckSlot(const Cluster& cluster, const Job& job, int t, const SlotPlan& s,
                      const std::vector<double>& worker_used, const std::vector<double>& ps_used);

// One slot's allocated amounts on every machine, built allocation by allocation.
class SlotUsage {
 public:
  explicit SlotUsage(const Cluster& cluster);
  // Adds `s` (job's allocation of slot t) if CheckSlot passes; returns CheckSlot's verdict.
  std::string Add(const Job& job, int t, const SlotPlan& s);
  // Allocated / total capacity of each pool, per resource (0 where a pool has none).
  ResourceVector WorkerUse() const;
  ResourceVector PsUse() const;

 private:
  const Cluster& cluster_;
  std::vector<double> worker_used_, ps_used_;
};

// Runs `policy` over `jobs` (sorted by arrival) on `cluster`.
SimResult Simulate(const Cluster& cluster, const std::vector<Job>& jobs, OnlinePolicy& policy);

}  // namespace troupe::scheduling::oasis
