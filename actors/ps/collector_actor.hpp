// The collector of a parameter-server run: receives every stage's per-step reports and, after the
// last step, every shard's parameters and every trainer's dense replica; then (or at the first
// PsFailure) hands the records to the driver and sets telemetry->done. It keeps no clock. A shard
// restarted after it finished sends its final again: the later one replaces the earlier.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "messages/ps_messages.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct PsRecords {
  std::vector<PsStageReport> stages;      // stages 1 and 2, one per node and step
  std::vector<PsShardReport> shards;      // stage 3, one per shard and step
  std::vector<PsTrainerReport> trainers;  // stage 4, one per node and step
  std::vector<PsShardFinal> shard_finals;
  std::vector<PsTrainerFinal> trainer_finals;
  std::vector<PsFaultRecord> faults;  // in arrival order
  std::string failure;                // non-empty: the run failed
};

struct CollectorState {
  int32_t nodes = 0;
  PsRecords records;
  std::map<int32_t, PsShardFinal> final_parts;  // a shard's final, until its last part is in
  std::shared_ptr<std::promise<PsRecords>> handover;
  Telemetry* telemetry = nullptr;
  bool handed_over = false;
  static inline const char* name = "troupe.ps.collector";
};

caf::behavior CollectorActor(caf::stateful_actor<CollectorState>* self, int32_t nodes,
                             std::shared_ptr<std::promise<PsRecords>> handover,
                             Telemetry* telemetry);

}  // namespace troupe
