// SRTF: shortest remaining time first, the remaining iterations at the job's expected speed-up.
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double Key(const SchedJob& job, double, const OrderOptions&) { return job.remaining_s(); }

const PolicyRegistrar kRegistrar({
    .name = "srtf",
    .summary = "shortest remaining time first (at the expected speed-up)",
    .key = Key,
    .key_reads_expected_speedup = true,
});

}  // namespace
}  // namespace troupe::scheduling
