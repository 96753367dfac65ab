// Example policy (docs/extending.md): shortest job first, by ideal duration — the job's whole
// length at its GPU-proportional share, iterations_total x iter_time_s, known on arrival.
//
// It is all a policy needs: a key (smaller goes first; ties fall to arrival, then job id) and a
// registrar. This key never changes while the job waits or runs, so the scheduler keeps long
// queues sorted between rounds (key_reads_clock stays false) and never refreshes the expected
// speed-up for it (key_reads_expected_speedup stays false). Select it with
//   scheduler { policy_name: "sjf" }
// or --set scheduler.policy_name=sjf. Unlike SRTF it does not look at progress: a long job that
// is nearly done still yields to any shorter one.
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double IdealDuration(const SchedJob& job, double /*now_s*/, const OrderOptions& /*options*/) {
  return job.ideal_duration_s();
}

const PolicyRegistrar kRegistrar({
    .name = "sjf",
    .summary = "shortest job first, by ideal duration (the example of docs/extending.md)",
    .key = IdealDuration,
});

}  // namespace
}  // namespace troupe::scheduling
