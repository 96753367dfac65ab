// The fault injector: applies a run's FaultPlan (faults/fault_plan.hpp) on the run's clock.
//
// At each fault's time it kills what a `crash` hits — servers (exit reason kill), jobs (through
// the workload, which spawned them), the scheduler, or a `troupe node` process (real mode: the
// process exits at once, as kill -9 would) — and at the end of the fault restarts it: a fresh
// server with the same shape (ServerUp to the scheduler), the job from its last checkpoint, a
// scheduler that rebuilds its state. It tells a server of a `slow` fault. Partitions and link
// faults need no action here: the fault network applies them to every send. Every fault applied
// becomes a FaultRecord for the run's faults.csv. Deterministic in emulated mode: its timers are
// the run's virtual clock.
//
// Crashes of one server, or of the scheduler, may overlap: a crash of what is down already kills
// nothing; it stays down until the later restart (for good if either crash never restarts), and
// only one replacement is ever spawned. The scheduler is told before a server dies when it will
// come back (ServerNotice), so that it can fail the jobs that no longer fit the servers that
// survive; a restarted scheduler is told again of every server still down.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <string>
#include <vector>

#include "actors/scheduler_actor.hpp"
#include "faults/fault_plan.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct FaultInjectorSetup {
  FaultPlan plan;
  // The workload's job ids, ascending; empty: ids 0 .. jobs - 1 (jobs 0: unknown; job:* then hits
  // ids < 100). A crash of job:* hits the jobs there are, however large their ids.
  std::vector<int64_t> job_ids;
  int64_t jobs = 0;
  SchedulerOptions scheduler_options;       // to restart a crashed scheduler
  ClusterHandles cluster;                   // injector unset; servers as spawned
  std::vector<bool> server_is_local;        // a crashed remote server restarts in this process
  std::map<std::string, caf::actor> nodes;  // "host:port" -> the node actor there
};

// A server the injector killed while the scheduler was up.
struct ServerKill {
  FaultEvent fault;
  int64_t server = 0;
  double down_until = 0;
};

struct FaultInjectorState {
  FaultInjectorSetup setup;
  scheduler_actor scheduler;
  // Until when each server, and the scheduler, is down: -1 while up, then its restart time, or
  // infinity when it never restarts.
  std::vector<double> server_down_until;
  double scheduler_down_until = -1;
  // The servers killed at the latest instant a server was killed: a scheduler killed at that
  // instant too dies before it learns of them, and they are recorded as failures without it.
  std::vector<ServerKill> killed_now;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.injector";
};

// Starts its timers at once; learns the scheduler's handle from a (put_atom, actor) message.
caf::behavior FaultInjectorActor(caf::stateful_actor<FaultInjectorState>* self,
                                 FaultInjectorSetup setup, RunClock clock, Telemetry* telemetry);

}  // namespace troupe
