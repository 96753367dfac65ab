// The checkpoint store: the shared storage Synergy's jobs checkpoint to when a lease ends. It
// keeps each job's latest checkpoint (JobCheckpoint) and answers a CheckpointQuery with one job's
// or all of them, so that a restarted job resumes from its last lease and a restarted scheduler
// rebuilds its view. It is storage, not a process of the cluster: faults never hit it. Spawned only
// in runs with faults.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "messages/fault_messages.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct CheckpointStoreState {
  absl::flat_hash_map<int64_t, JobCheckpoint> latest;
  static inline const char* name = "troupe.checkpoints";
};

caf::behavior CheckpointStoreActor(caf::stateful_actor<CheckpointStoreState>* self);

}  // namespace troupe
