// OASiS's model (Bao et al., "Online Job Scheduling in Distributed Machine Learning Clusters",
// INFOCOM '18): a slotted horizon of T slots, H worker servers and K parameter-server
// (PS) machines with capacities over five resource types, and parameter-server training jobs
// whose value is a non-increasing utility of their completion time.
//
// Slots are numbered 0..T-1. A job arriving in slot a_i and last holding workers in slot t_hat
// has duration t_hat - a_i (0 if it finishes in its arrival slot) and utility f_i(t_hat - a_i).
// A worker of job i trains slot_s / (tau_i + 2 e_i / b_i) mini-batches a slot, so the job needs
// WorkerSlots() = ceil(E_i N_i M_i (tau_i + 2 e_i / b_i) / slot_s) worker-slots in all
// (constraint (2) of the seed). Plans are sparse: only slots holding workers are listed.
//
// Contract: plain values, no hidden state; CheckPlan() is the single judge of a plan's
// feasibility, used by the scheduler before it admits, by the offline optimum's tests and by the
// brute-force tests. Deterministic.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::scheduling::oasis {

enum class Resource : int { kGpu = 0, kCpu, kMemory, kStorage, kBandwidth };
inline constexpr int kResources = 5;
std::string_view ResourceName(Resource r);

// One amount per resource type, indexed by static_cast<int>(Resource).
using ResourceVector = std::array<double, kResources>;

// Resource checks ignore rounding noise up to this share of a quantity (or of 1, if larger).
inline constexpr double kResourceTolerance = 1e-9;
// used <= capacity, up to that noise.
inline bool FitsCapacity(double used, double capacity) {
  return used <= capacity + kResourceTolerance * (capacity > 1.0 ? capacity : 1.0);
}
inline double At(const ResourceVector& v, Resource r) { return v[static_cast<int>(r)]; }

struct Machine {
  ResourceVector capacity{};
};

struct Cluster {
  std::vector<Machine> workers;  // h in [H]: worker servers
  std::vector<Machine> ps;       // k in [K]: parameter-server machines
  int slots = 0;                 // T
  double slot_s = 3600;          // length of a slot, seconds
};

// f(d) of a duration d = t_hat - a in slots; non-increasing and non-negative for valid parameters.
//   kSigmoid: g1 / (1 + exp(g2 (d - g3)))  (the paper's choice: g1 in [1,100], g2 in [4,6],
//             g3 in [1,15] slots)
//   kLinear:  max(0, g1 - g2 d)            (g2: utility lost per slot)
//   kStep:    g1 if d <= g3, else 0        (a deadline g3 slots after arrival)
enum class UtilityKind { kSigmoid, kLinear, kStep };

struct Utility {
  UtilityKind kind = UtilityKind::kSigmoid;
  double g1 = 1;
  double g2 = 5;
  double g3 = 5;

  double Value(int duration) const;
  // ln Value(duration), exact where Value underflows (a sigmoid's tail); -inf where it is 0.
  double LogValue(int duration) const;
};

struct Job {
  int64_t id = 0;
  int arrival = 0;                // a_i, a slot
  int epochs = 1;                 // E_i
  int chunks = 1;                 // N_i: data chunks, also the most concurrent workers
  int minibatches_per_chunk = 1;  // M_i
  double minibatch_s = 1;         // tau_i: compute time of one mini-batch, seconds
  double gradient = 0;            // e_i, in the unit whose per-second rate bandwidth is (Gb, Gbps)
  ResourceVector worker{};        // w_i^r per worker; worker[kBandwidth] is b_i
  ResourceVector ps{};            // s_i^r per parameter server; ps[kBandwidth] is B_i
  Utility utility;

  double worker_bandwidth() const { return At(worker, Resource::kBandwidth); }
  double ps_bandwidth() const { return At(ps, Resource::kBandwidth); }
  // tau_i + 2 e_i / b_i: seconds a worker spends on one mini-batch, exchange included.
  double StepSeconds() const;
  // E_i N_i M_i.
  double Minibatches() const;
  // The fewest worker-slots that train E_i N_i M_i mini-batches in slots of slot_s seconds.
  int WorkerSlots(double slot_s) const;
  // The fewest parameter servers for `workers` workers: ceil(b_i workers / B_i).
  int PsFor(int workers) const;
};

// "" for a job the scheduler can plan, else what is wrong (non-positive counts, b_i or B_i <= 0,
// b_i > B_i so that no PS count satisfies (6) and (7) together, a negative demand, a utility that
// is negative or increasing).
std::string ValidateJob(const Job& job);

struct Placement {
  int machine = 0;  // index into Cluster::workers or Cluster::ps
  int count = 0;    // workers (y_ih(t)) or parameter servers (z_ik(t)) there, > 0
};

struct SlotPlan {
  int slot = 0;
  std::vector<Placement> workers;
  std::vector<Placement> ps;

  int WorkerCount() const;
  int PsCount() const;
};

struct Plan {
  std::vector<SlotPlan> slots;  // increasing slot; each holds at least one worker
  int end_slot = -1;            // t_hat: the last slot holding workers
  double utility = 0;           // f_i(end_slot - a_i)
  double cost = 0;              // sum of prices times demands over the plan, at decision time
  double payoff = 0;            // utility - cost

  int WorkerSlots() const;
};

// Allocated amounts g_h^r(t) (worker servers) and v_k^r(t) (PS machines) of every slot.
class Usage {
 public:
  Usage() = default;
  explicit Usage(const Cluster& cluster);

  double worker(int slot, int machine, Resource r) const {
    return worker_[Index(slot, machine, r)];
  }
  double ps(int slot, int machine, Resource r) const { return ps_[PsIndex(slot, machine, r)]; }
  // The kResources amounts of one machine in one slot.
  const double* worker_row(int slot, int machine) const {
    return &worker_[Index(slot, machine, Resource::kGpu)];
  }
  const double* ps_row(int slot, int machine) const {
    return &ps_[PsIndex(slot, machine, Resource::kGpu)];
  }
  // Adds the plan's workers and parameter servers times the job's demands.
  void Add(const Job& job, const Plan& plan);

  int slots() const { return slots_; }
  int worker_machines() const { return workers_; }
  int ps_machines() const { return ps_machines_; }

 private:
  size_t Index(int slot, int machine, Resource r) const {
    return (static_cast<size_t>(slot) * workers_ + machine) * kResources + static_cast<int>(r);
  }
  size_t PsIndex(int slot, int machine, Resource r) const {
    return (static_cast<size_t>(slot) * ps_machines_ + machine) * kResources + static_cast<int>(r);
  }

  int slots_ = 0;
  int workers_ = 0;
  int ps_machines_ = 0;
  std::vector<double> worker_;
  std::vector<double> ps_;
};

// How many more units of `demand` fit in `capacity` with `used` already allocated (the minimum
// over resources with a positive demand; `cap` if no resource is demanded).
int Room(const ResourceVector& capacity, const double* used, const ResourceVector& demand, int cap);

// "" if `plan` is a feasible schedule of `job` on top of `before`, else the first violated
// constraint, in this order: structure (slots inside [a_i, T), increasing, valid machines,
// positive counts, no machine listed twice, end_slot the last slot), (3) at most N_i workers,
// (7) at most as many PS as workers, (6) PS bandwidth covers worker bandwidth, capacities (4)
// and (5) on every machine, resource and slot, and last (2) enough worker-slots for E_i N_i M_i
// mini-batches. Utility, cost and payoff are not checked.
std::string CheckPlan(const Cluster& cluster, const Job& job, const Plan& plan,
                      const Usage& before);

}  // namespace troupe::scheduling::oasis
