// What a stretch of a job's lease does with its checkpoints and restarts (faults.recovery;
// docs/faults.md, "Recovery"): the one function both the job's own account
// (actors/job_lease_account.cpp) and the round engine's books of a standing lease
// (scheduling/lease_credit.hpp) run, so that the two always agree. Header-only and plain: the
// engine includes it without linking the faults library.
//
// Contract: RunSpan is a pure function of the costs, the job's cadence and the stretch's length:
// a stretch first pays what is left of a restart, then trains; each time the training since the
// last checkpoint reaches the interval the job cuts a checkpoint and writes it, training paused,
// and the checkpoint counts once its write is done (a write may run on into the job's next lease).
// A failure loses every second of training since the last checkpoint that counted.
#pragma once

#include <algorithm>
#include <cstdint>

#include "messages/records.hpp"

namespace troupe {

// One job's costs under the run's recovery plan (CostsFor, checkpoint_cadence.hpp).
struct CheckpointCosts {
  double interval_s = 0;  // training seconds between checkpoints; 0: at every lease end, free
  double write_s = 0;     // one checkpoint's write
  double restart_s = 0;   // one restart: restart_s plus reading the checkpoint back
};

// What span_s seconds of a lease did, from the cadence `in`.
struct LeaseSpan {
  double train_s = 0;
  double checkpoint_s = 0;
  double restart_s = 0;
  int32_t checkpoints = 0;  // writes completed in the span
  // Training seconds into the span at which the last completed checkpoint was cut (0: before
  // the span, its write finishing in it); -1: none completed.
  double cut_train_s = -1;
  CheckpointCadence after;
};

inline LeaseSpan RunSpan(const CheckpointCosts& costs, const CheckpointCadence& in, double span_s) {
  LeaseSpan out;
  CheckpointCadence& s = out.after;
  s = in;
  double left = std::max(0.0, span_s);
  const double restart = std::min(left, s.restart_left_s);
  out.restart_s = restart;
  s.restart_left_s -= restart;
  left -= restart;
  if (costs.interval_s <= 0) {  // every_lease: the checkpoint at the lease's end is the caller's
    out.train_s = left;
    s.unsaved_train_s += left;
    return out;
  }
  // The cut of a write carried in from an earlier span was before this one.
  double cut_train_s = s.writing_left_s > 0 ? 0 : -1;
  while (left > 0) {
    if (s.writing_left_s > 0) {
      const double w = std::min(left, s.writing_left_s);
      out.checkpoint_s += w;
      s.writing_left_s -= w;
      left -= w;
      if (s.writing_left_s > 0) break;
      s.writing_left_s = 0;
      s.unsaved_train_s = 0;  // training paused while it wrote: nothing since the cut
      ++out.checkpoints;
      out.cut_train_s = cut_train_s;
      continue;
    }
    const double until_cut = costs.interval_s - s.unsaved_train_s;
    if (until_cut > left) {
      out.train_s += left;
      s.unsaved_train_s += left;
      break;
    }
    out.train_s += until_cut;
    left -= until_cut;
    s.unsaved_train_s = costs.interval_s;
    cut_train_s = out.train_s;
    if (costs.write_s > 0) {
      s.writing_left_s = costs.write_s;
    } else {  // a free checkpoint counts at once
      s.unsaved_train_s = 0;
      ++out.checkpoints;
      out.cut_train_s = cut_train_s;
    }
  }
  return out;
}

}  // namespace troupe
