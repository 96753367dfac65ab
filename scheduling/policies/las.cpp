// LAS: least attained service (GPU-seconds received so far) first.
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double Key(const SchedJob& job, double, const OrderOptions&) { return job.attained_gpu_s; }

const PolicyRegistrar kRegistrar({
    .name = "las",
    .summary = "least attained service (GPU-seconds) first",
    .key = Key,
});

}  // namespace
}  // namespace troupe::scheduling
