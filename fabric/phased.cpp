// The phased model as a fluid event simulation. Each job cycles compute -> transfer -> tail:
// the transfer holds the job's flows on their links (each flow leaves as soon as its bytes are
// through, so its share goes to the flows still running), the tail is the burst's latency_s after
// the last flow, and the burst is the transfer plus the tail. Between two events every rate is
// constant, so the next event is the earliest of a compute end, a tail end and a flow's finish
// (remaining bytes / rate); FlowSharing re-shares only the components an event touched.
// A job that has done max_iterations goes on sending its bursts, uncounted, until every job has:
// were it to fall silent, the jobs with longer iterations would have its links to themselves for
// the rest of their count, and contention would depend on how iteration lengths compare. So that
// a job of very short iterations beside one of long iterations does not make the run long, it
// also ends once some job has done kOverrun x max_iterations and every job has counted one.
//
// Guards: negative or NaN times and sizes count as 0, a weight that is not positive as 1; a flow
// with no bytes or no link is through at once (a flow crossing no link has an infinite rate); a
// job with an infinite offset or compute never bursts, and one with an infinite latency or flow
// size bursts once; the run waits for neither to count its iterations. A step always retires the
// event that fixed its time, so time never stalls on rounding; and a run stops after kMaxEvents
// (2^24) counted events — steps, compute ends, flow finishes, tail ends;
// an iteration of F flows counts at most 2F + 4 — which only inputs whose iterations take no time
// (or too little to move the clock) under a huge max_iterations reach; its means are then over the
// iterations done by that point.
#include "fabric/phased.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "fabric/flow_sharing.hpp"

namespace troupe::fabric {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxEvents = int64_t{1} << 24;
constexpr int64_t kOverrun = 16;

double NonNegative(double x) { return x > 0 ? x : 0; }  // NaN and negatives: 0
double PositiveOr1(double x) { return x > 0 && std::isfinite(x) ? x : 1; }

enum class Phase : int8_t { kCompute, kTransfer, kTail, kDone };

struct ActiveFlow {
  FlowId id = 0;
  double remaining = 0;  // bytes
};

struct JobState {
  Phase phase = Phase::kCompute;
  double due_s = 0;  // when the compute or the tail ends
  double burst_start_s = 0;
  std::vector<ActiveFlow> flows;  // in the job's flow order
  int32_t iterations = 0;         // completed and counted, max_iterations at most
  int64_t done = 0;               // completed, counted or not
  double comm_s = 0;              // summed over the counted iterations
};

class Simulation {
 public:
  Simulation(const std::vector<double>& capacities, const std::vector<PhasedJob>& jobs,
             const PhasedOptions& options)
      : sharing_(capacities),
        jobs_(jobs),
        horizon_s_(options.horizon_s > 0 ? options.horizon_s : kNever),
        max_iterations_(options.max_iterations),
        state_(jobs.size()) {
    for (size_t j = 0; j < jobs_.size(); ++j) {
      state_[j].due_s = NonNegative(jobs_[j].offset_s) + NonNegative(jobs_[j].compute_s);
      if (max_iterations_ <= 0 || !std::isfinite(state_[j].due_s)) {
        state_[j].phase = Phase::kDone;  // it never bursts
      } else if (std::isfinite(NonNegative(jobs_[j].latency_s)) &&
                 std::isfinite(NonNegative(jobs_[j].bytes_per_flow))) {
        ++counting_;
      }  // else its first burst loads its links and never ends: nobody waits for it
    }
    uncounted_ = counting_;
  }

  void Run() {
    while (events_ < kMaxEvents && counting_ > 0 && !(overrun_ && uncounted_ == 0)) {
      const double next_s = NextEventS();
      if (next_s == kNever || next_s > horizon_s_) return;
      RetireFlows(next_s);
      now_s_ = next_s;
      for (size_t j = 0; j < jobs_.size(); ++j) Settle(j);
      sharing_.Update();
      ++events_;  // the step too, so the cap holds even should a step retire nothing
    }
  }

  // The job's mean burst over its completed iterations; -1 when it completed none.
  double MeanCommSeconds(size_t job) const {
    const JobState& s = state_[job];
    return s.iterations > 0 ? s.comm_s / s.iterations : -1;
  }

 private:
  // When `flow` is through at the rates of the last Update.
  double FinishS(const ActiveFlow& flow) const {
    const double rate = sharing_.Rate(flow.id);
    if (!(rate > 0)) return kNever;
    return now_s_ + flow.remaining / rate;  // an infinite rate: now
  }

  double NextEventS() const {
    double next_s = kNever;
    for (const JobState& s : state_) {
      if (s.phase == Phase::kCompute || s.phase == Phase::kTail) next_s = std::min(next_s, s.due_s);
      for (const ActiveFlow& flow : s.flows) next_s = std::min(next_s, FinishS(flow));
    }
    return next_s;
  }

  // Moves every flow's bytes on to `to_s` and removes the flows through by then. A flow counts
  // as through when its finish time (the same expression NextEventS took its minimum of) is not
  // after `to_s`, so the flow that set `to_s` always leaves.
  void RetireFlows(double to_s) {
    const double dt = to_s - now_s_;
    for (JobState& s : state_) {
      size_t kept = 0;
      for (const ActiveFlow& flow : s.flows) {
        if (FinishS(flow) <= to_s) {
          sharing_.Remove(flow.id);
          ++events_;
          continue;
        }
        ActiveFlow moved = flow;
        moved.remaining = std::max(0.0, flow.remaining - sharing_.Rate(flow.id) * dt);
        s.flows[kept++] = moved;
      }
      s.flows.resize(kept);
    }
  }

  // Takes job j through every phase change due by now (several when some take no time).
  void Settle(size_t j) {
    JobState& s = state_[j];
    const PhasedJob& job = jobs_[j];
    while (events_ < kMaxEvents) {
      if (s.phase == Phase::kCompute && s.due_s <= now_s_) {
        StartBurst(job, s);
      } else if (s.phase == Phase::kTransfer && s.flows.empty()) {
        s.phase = Phase::kTail;
        s.due_s = now_s_ + NonNegative(job.latency_s);
        continue;  // not an event of its own: the last flow's finish was
      } else if (s.phase == Phase::kTail && s.due_s <= now_s_) {
        EndIteration(job, s);
      } else {
        return;
      }
      ++events_;
    }
  }

  // Counts the burst just ended while the job is short of max_iterations; then the job computes
  // again, or, once counted out, stops if its bursts load no link (nobody would miss them).
  void EndIteration(const PhasedJob& job, JobState& s) {
    if (s.iterations < max_iterations_) {
      s.comm_s += now_s_ - s.burst_start_s;
      if (s.iterations == 0) --uncounted_;
      if (++s.iterations == max_iterations_) --counting_;
    }
    overrun_ = overrun_ || ++s.done >= kOverrun * max_iterations_;
    s.phase = s.iterations >= max_iterations_ && !LoadsLinks(job) ? Phase::kDone : Phase::kCompute;
    s.due_s = now_s_ + NonNegative(job.compute_s);
  }

  static bool LoadsLinks(const PhasedJob& job) {
    if (!(NonNegative(job.bytes_per_flow) > 0)) return false;
    return std::any_of(job.flow_links.begin(), job.flow_links.end(),
                       [](const std::vector<int32_t>& links) { return !links.empty(); });
  }

  void StartBurst(const PhasedJob& job, JobState& s) {
    s.phase = Phase::kTransfer;
    s.burst_start_s = now_s_;
    const double bytes = NonNegative(job.bytes_per_flow);
    if (bytes == 0) return;
    for (const std::vector<int32_t>& links : job.flow_links) {
      if (links.empty()) continue;
      s.flows.push_back({sharing_.Add(links, PositiveOr1(job.weight)), bytes});
    }
  }

  FlowSharing sharing_;
  const std::vector<PhasedJob>& jobs_;
  const double horizon_s_;
  const int32_t max_iterations_;
  std::vector<JobState> state_;
  size_t counting_ = 0;   // jobs short of max_iterations, of those whose iterations can end
  size_t uncounted_ = 0;  // jobs that have counted no iteration
  bool overrun_ = false;  // some job has done kOverrun x max_iterations
  double now_s_ = 0;
  int64_t events_ = 0;
};

// The job's burst with the links to itself: one iteration from time 0, no compute.
double SoloBurstSeconds(const std::vector<double>& capacities, const PhasedJob& job) {
  PhasedJob alone = job;
  alone.compute_s = 0;
  alone.offset_s = 0;
  const std::vector<PhasedJob> jobs = {alone};
  Simulation simulation(capacities, jobs, PhasedOptions{.horizon_s = 0, .max_iterations = 1});
  simulation.Run();
  const double mean = simulation.MeanCommSeconds(0);
  return mean >= 0 ? mean : kNever;  // a burst that cannot end (bytes without end)
}

}  // namespace

std::vector<double> SimulatePhased(const std::vector<double>& capacities,
                                   const std::vector<PhasedJob>& jobs,
                                   const PhasedOptions& options) {
  Simulation simulation(capacities, jobs, options);
  simulation.Run();
  std::vector<double> mean_comm_s(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const double mean = simulation.MeanCommSeconds(j);
    mean_comm_s[j] = mean >= 0 ? mean : SoloBurstSeconds(capacities, jobs[j]);
  }
  return mean_comm_s;
}

}  // namespace troupe::fabric
