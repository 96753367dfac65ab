// FIFO: arrival order. Every job has the same key, so arrival time (then id) decides.
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double Key(const SchedJob&, double, const OrderOptions&) { return 0; }

const PolicyRegistrar kRegistrar({
    .name = "fifo",
    .summary = "arrival order",
    .key = Key,
    .constant_key = true,
});

}  // namespace
}  // namespace troupe::scheduling
