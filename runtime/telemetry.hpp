// Telemetry: counters a run keeps about itself, shared by the actors of one process, and the
// run's fault network, which every send consults (counted_send.hpp). Relaxed
// atomics: they never decide an outcome, they are only reported (summary.json, progress line).
#pragma once

#include <atomic>
#include <cstdint>

namespace troupe {

class FaultNetwork;
class LiveFeed;

struct Telemetry {
  std::atomic<uint64_t> messages{0};      // every message a troupe actor sent
  std::atomic<uint64_t> timed_events{0};  // of which delayed (the virtual clock jumps to them)
  std::atomic<int64_t> jobs_finished{0};
  std::atomic<int64_t> measured_ended{0};  // measured jobs (run.measure_*_job) finished or failed
  std::atomic<int64_t> rounds{0};
  std::atomic<double> virtual_s{0};   // start of the current round
  std::atomic<bool> planning{false};  // the scheduler's mechanism is placing a round's jobs
  std::atomic<bool> done{false};      // the run has ended and its records are handed over
  // The run's lossy network when it has link faults or partitions, else null (no cost).
  FaultNetwork* network = nullptr;
  // What a watched run (`troupe run --serve`) tells its viewer, else null (no cost).
  LiveFeed* live = nullptr;
};

}  // namespace troupe
