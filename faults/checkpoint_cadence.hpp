// Checkpoints and restarts (faults.recovery; docs/faults.md, "Recovery"): when a job checkpoints,
// what a checkpoint and a restart cost it, and what a stretch of its lease does with them.
//
// Contract: CheckRecovery refuses, as one InvalidInput line naming the field, a fixed_interval
// policy without checkpoint_interval_s, a checkpoint_interval_s under another policy, young_daly
// without a failure model (or with one whose rates are all 0), and spare servers (not supported).
// What a stretch of a lease does with them is RunSpan (messages/lease_span.hpp). No CAF.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "messages/lease_span.hpp"
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

// The failures per second that hit a job of `gpus` GPUs under the plan's failure model: the
// rates of its components over the whole servers (and switches) the job holds.
double JobFailuresPerS(const RecoveryPlan& plan, int32_t gpus);
// The costs of a job of `gpus` GPUs whose model's gradient is gradient_bytes.
CheckpointCosts CostsFor(const RecoveryPlan& plan, double gradient_bytes, int32_t gpus);

// faults.recovery against the rest of the faults block; `where` names the block ("faults").
Status CheckRecovery(const config::Faults& faults, const std::string& where);

}  // namespace troupe
