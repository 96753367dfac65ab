// How well the communication bursts of jobs that share links interleave: CASSINI's unified circle
// ("CASSINI: Network-Aware Job Scheduling in Machine Learning Clusters", Rajasekaran et al.,
// NSDI '24, sections 3-4), and the time-shifts that line bursts up (its affinity graph).
//
// A job repeats compute_s of compute, then a burst of burst_s in which it puts `demand` bytes per
// second on each link it crosses; shift_s is when its first compute starts (PhasedJob.offset_s).
// A link's circle is a window of its jobs' iterations: the longest period, or the few turns of it
// (at most kMaxTurns) after which every period nearly repeats — a bounded stand-in for the least
// common multiple of the periods. Its score, in [0, 1], is 1 − the demand above the link's capacity
// over all the demand on the circle: 1 when the bursts never ask more than the link has.
//
// Contract: every function is deterministic and pure; a job that shares no link with another
// scores 1. BestShift tries kRotations shifts over the job's period, keeps the others where they
// are, and returns the one with the best mean score over the links it shares (ties: the
// earliest). AssignShifts gives every job without a shift one (BFS over the job–link graph from
// the jobs that have one, else from the first job of a component, which gets 0), so a job's one
// shift suits all its links; a job that has a shift keeps it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace troupe::fabric {

inline constexpr int32_t kRotations = 32;     // shifts tried over a job's period
inline constexpr int32_t kBinsPerTurn = 128;  // the circle's resolution per longest period
inline constexpr int32_t kMaxTurns = 4;

// One job's bursts as seen by one link.
struct Arc {
  double compute_s = 0;
  double burst_s = 0;
  double demand = 0;  // bytes per second on the link while it sends
  double shift_s = 0;
};

// 1 − excess / total demand of the arcs on one link's circle (1 when they ask nothing).
double LinkScore(double capacity, const std::vector<Arc>& arcs);

// A job's share of one link, beside the arcs already shifted there.
struct LinkShare {
  double capacity = 0;
  double demand = 0;  // the job's, while it sends
  std::vector<Arc> others;
};

struct ShiftChoice {
  double score = 1;  // the mean over the links with others (1: none)
  double shift_s = 0;
};

ShiftChoice BestShift(double compute_s, double burst_s, const std::vector<LinkShare>& links);
// The mean score over the links with others of the job at `shift_s` (1: no such link).
double MeanScoreAt(double compute_s, double burst_s, double shift_s,
                   const std::vector<LinkShare>& links);

// A job in the affinity graph: its iteration and the links it crosses with its demand on each.
struct CycleJob {
  double compute_s = 0;
  double burst_s = 0;
  std::vector<std::pair<int32_t, double>> link_demand;  // (link, bytes per second)
  double shift_s = -1;                                  // -1: none yet
};

// capacities: bytes per second by link index.
void AssignShifts(const std::vector<double>& capacities, std::vector<CycleJob>* jobs);

}  // namespace troupe::fabric
