// OptMechanism: Synergy-OPT, the throughput upper bound (Synergy, OSDI '22, LP (1)-(5) and the
// second LP), solved with GLPK. Not a deployable scheduler: a yardstick for TUNE and GREEDY.
//
// Runnable set and GPUs: the same GPU-only skip-and-continue selection as ProportionalMechanism
// (jobs in policy order; a job runs when that many GPUs can be had; PlaceGpus consolidates it on
// the best-fit server or spreads it over the fewest). On a ledger that starts the round empty,
// OPT runs exactly the jobs, on exactly the GPUs, that ProportionalMechanism would.
//
// LP 1, the bound (the paper's (1)-(5), relaxed: y in [0,1]). All free CPUs C and memory M sit on
// one super-machine. Job j (g_j GPUs) mixes the points (c, m) of its estimated sensitivity matrix
// W_j (per GPU; the job then uses c*g_j CPUs and m*g_j GB):
//   max sum W_j[c,m] y_jcm  s.t.  sum c g_j y <= C,  sum m g_j y <= M,  sum_cm y_jcm = 1,
//   sum_cm W_j[c,m] y_jcm >= W_j(proportional point)           (5: never below fair share)
// The proportional point is the share its GPUs carry (capacity / GPUs per GPU on its servers);
// off the grid, W_j there is At()'s interpolation. Points dominated by a cheaper point at least
// as fast are dropped first (the optimum is unchanged). last_objective() is this LP's optimum:
// an upper bound on the total throughput (relative to proportional share) of any placement of
// these jobs that keeps (5), TUNE's and the proportional one's included.
//
// LP 2, the mapping onto real servers. The same mixes, but each job's CPUs and memory must come
// from the servers holding its GPUs, within each server's free capacity; a job spanning servers
// may split them across its parts in any proportion (only its totals set its speed).
// last_mapped_objective() is its optimum, <= last_objective().
//
// Rounding (scheduling/opt_round.hpp). A job runs at its matrix's interpolated speed at the CPUs
// and memory it leases, not at a linear mix of grid points, and for real (supermodular) matrices
// a mix's mean can fall far below both the mix's promise and the fair share. So each job first
// takes one candidate, a grid point or its proportional point, at or above its fair value: jobs
// LP 2 mixed round to the best candidate within their mix's CPUs and memory (failing that, within
// their servers' spare capacity; failing that, their servers' jobs go back to proportional
// shares, counted in last_reset_jobs()), then every job moves up to the best candidate its
// allotment plus its servers' spare capacity allows. Last, job by job, each may top up with what
// its servers still have spare, to the fastest point (on or off the grid) that allows.
// last_placed_objective() is the leased total (each job's W_j at what it leases, exactly):
// proportional total <= placed <= last_objective() (the latter where every proportional point
// lies inside or above its matrix's grid, as on the catalogue's).
//
// What "fractional" means here. Leases carry integral GPUs per part, so Synergy's fractional GPU
// splits (3.3 + 2.7 GPUs for a 6-GPU job) are never leased: GPUs stay where PlaceGpus put them,
// and the bound, LP 1, does not depend on where GPUs are at all (nor on integrality: its y are
// fractional mixes of grid points). What is leased fractionally is a spread job's CPUs and memory:
// each part gets its GPUs' share where its server has room, and the rest goes where there is room
// (the job actor runs a job at its totals). last_fractional_jobs() counts the jobs LP 2 mixed
// (before rounding). A fragmented job is one whose placement spans servers; every
// spread part but the last drains its server's free GPUs, so at most s of s servers' jobs
// fragment, within Synergy's 3s.
//
// Fallback: an infeasible LP, a GLPK failure or the time limit gives every job the proportional
// share on the same GPUs (ProportionalMechanism's placement on an empty ledger) and is counted.
// Ledger: Takes exactly what the placements lease; a part is cut to what its server has free, so no
// server is ever overcommitted. Deterministic (GLPK's simplex is; timings are only reported) unless
// a time limit is set, which makes whether a round falls back depend on the machine.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

struct OptOptions {
  double time_limit_s = 0;  // per LP; 0: none
};

// One runnable job's outcome in the last round; speeds relative to the proportional share.
struct OptJobOutcome {
  int64_t job_id = 0;
  int32_t gpus = 0;
  double fair_value = 1;    // W_j at the proportional point: constraint (5)'s right-hand side
  double bound_value = 0;   // sum W y in LP 1
  double mapped_value = 0;  // sum W y in LP 2
  double placed_value = 1;  // W_j at what it leases (its fair value after a fallback)
  double cpus = 0;          // leased, all parts
  double memory_gb = 0;
  int mix_points = 1;  // grid points LP 2 mixed
};

namespace opt_detail {
struct OptJob;
}

class OptMechanism : public Mechanism {
 public:
  explicit OptMechanism(OptOptions options = {}) : options_(options) {}
  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;

  // LP 1's optimum, the upper bound (the proportional total where LP 1 has no optimum); LP 2's
  // optimum; the total speed of what was leased.
  double last_objective() const { return last_objective_; }
  double last_mapped_objective() const { return last_mapped_objective_; }
  double last_placed_objective() const { return last_placed_objective_; }
  int last_fragmented_jobs() const { return last_fragmented_jobs_; }
  int last_fractional_jobs() const { return last_fractional_jobs_; }
  // Jobs rounding put back at their proportional share to keep a neighbour at its fair value.
  int last_reset_jobs() const { return last_reset_jobs_; }
  bool last_fell_back() const { return last_fell_back_; }
  int64_t fallback_rounds() const { return fallback_rounds_; }
  const std::vector<OptJobOutcome>& last_jobs() const { return last_jobs_; }

 private:
  // Both LPs and the rounding; false when the round must fall back.
  bool Solve(std::vector<opt_detail::OptJob>& jobs, const ClusterLedger& ledger);

  OptOptions options_;
  double last_objective_ = 0;
  double last_mapped_objective_ = 0;
  double last_placed_objective_ = 0;
  int last_fragmented_jobs_ = 0;
  int last_fractional_jobs_ = 0;
  int last_reset_jobs_ = 0;
  bool last_fell_back_ = false;
  int64_t fallback_rounds_ = 0;
  std::vector<OptJobOutcome> last_jobs_;
};

}  // namespace troupe::scheduling
