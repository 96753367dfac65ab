// JobSpec: one training job as a workload source describes it, before it reaches the cluster.
// Plain data; `inspect` lets CAF serialise it when it crosses processes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

// How a trace says a job ended, where it ended in failure (workload.replay_job_failures,
// docs/failures.md "Failures from a trace"); kNone: it did not fail, or the run does not replay
// failures. Each value stands for the trace's own spelling of the state (TraceEndName).
enum class TraceEnd : int32_t {
  kNone,
  kSlurmFailed,       // Helios, Acme: FAILED
  kSlurmNodeFail,     // Helios, Acme: NODE_FAIL
  kSlurmOutOfMemory,  // Helios, Acme: OUT_OF_MEMORY
  kFailed,            // Philly's job log, Alibaba PAI: Failed
};

inline const char* TraceEndName(TraceEnd end) {
  switch (end) {
    case TraceEnd::kSlurmFailed:
      return "FAILED";
    case TraceEnd::kSlurmNodeFail:
      return "NODE_FAIL";
    case TraceEnd::kSlurmOutOfMemory:
      return "OUT_OF_MEMORY";
    case TraceEnd::kFailed:
      return "Failed";
    default:
      return "";
  }
}

struct JobSpec {
  int64_t job_id = 0;
  std::string model;                     // a name from the model catalogue
  int32_t gpus = 1;                      // fixed for the job's lifetime
  TraceEnd trace_end = TraceEnd::kNone;  // kept in gpus' padding: no byte more a job
  int64_t iterations = 0;                // iterations to train
  double arrival_s = 0;                  // virtual seconds from the start of the run
  int64_t source_line = 0;               // line of the trace file it came from; 0 when generated
  // workload.replay_job_failures: the trace's attempts before the last (Philly's job log), each
  // the seconds it ran before it crashed; the job crashes after each and restarts.
  std::vector<double> crashed_attempts_s;
};
template <class Inspector>
auto inspect(Inspector& f, JobSpec& x) {
  return f(x.job_id, x.model, x.gpus, x.trace_end, x.iterations, x.arrival_s, x.source_line,
           x.crashed_attempts_s);
}

}  // namespace troupe
