// Checkpoints and restarts (faults.recovery; docs/faults.md, "Recovery"): when a job checkpoints,
// what a checkpoint and a restart cost it, and what a stretch of its lease does with them.
//
// Contract: CheckRecovery refuses, as one InvalidInput line naming the field, a fixed_interval
// policy without checkpoint_interval_s, a checkpoint_interval_s under another policy, young_daly
// without a failure model (or with one whose rates are all 0), and spare servers (not supported).
// RunSpan is a pure function of the costs, the job's cadence and the stretch's length: a stretch
// first pays what is left of a restart, then trains; each time the training since the last
// checkpoint reaches the interval the job cuts a checkpoint and writes it, training paused, and
// the checkpoint counts once its write is done (a write may run on into the job's next lease). A
// failure loses every second of training since the last checkpoint that counted. No CAF.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "messages/records.hpp"

namespace troupe {

// Young/Daly's optimum: the checkpoint interval sqrt(2 C M) for a checkpoint that takes
// write_s (C) to write and a mean time between failures of mtbf_s (M), both in seconds.
double YoungDalyIntervalS(double write_s, double mtbf_s);

// What the run's recovery block and failure model say, before any job is known.
struct RecoveryPlan {
  config::Recovery recovery;
  config::FailureModel failures;  // resolved (preset applied); no component: none
  int32_t gpus_per_server = 8;    // a job spreads over whole servers of the cluster's largest
  int32_t servers_per_rack = 0;   // with a fabric: how many servers a switch failure takes out
};

// One job's costs under the plan.
struct CheckpointCosts {
  double interval_s = 0;  // training seconds between checkpoints; 0: at every lease end, free
  double write_s = 0;     // one checkpoint's write
  double restart_s = 0;   // one restart: restart_s plus reading the checkpoint back
};

// The failures per second that hit a job of `gpus` GPUs under the plan's failure model: the
// rates of its components over the whole servers (and switches) the job holds.
double JobFailuresPerS(const RecoveryPlan& plan, int32_t gpus);
// The costs of a job of `gpus` GPUs whose model's gradient is gradient_bytes.
CheckpointCosts CostsFor(const RecoveryPlan& plan, double gradient_bytes, int32_t gpus);

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
LeaseSpan RunSpan(const CheckpointCosts& costs, const CheckpointCadence& in, double span_s);

// faults.recovery against the rest of the faults block; `where` names the block ("faults").
Status CheckRecovery(const config::Faults& faults, const std::string& where);

}  // namespace troupe
