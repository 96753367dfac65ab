// The workload actor: the source of jobs (a trace or Synergy's generator) as an actor. Asked for
// the arrivals up to a virtual time, it spawns a job actor for each and answers with them and the
// time of the next arrival. The scheduler pulls at the start of each round, so arrivals reach it
// in the same order in emulated and real mode, whatever the wall clock does.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>

#include "emulation/job_source.hpp"
#include "emulation/model_catalog.hpp"
#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

struct WorkloadState {
  std::shared_ptr<JobSource> source;  // owned by this actor alone once the run starts
  std::shared_ptr<const ModelCatalog> catalog;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.workload";
};

caf::behavior WorkloadActor(caf::stateful_actor<WorkloadState>* self,
                            std::shared_ptr<JobSource> source,
                            std::shared_ptr<const ModelCatalog> catalog, RunClock clock,
                            Telemetry* telemetry);

}  // namespace troupe
