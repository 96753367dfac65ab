// FIFO: arrival order. Every job has the same key, so arrival time (then id) decides. The
// starvation guard's mark is not read: a job that waited long never passes an older one, as in
// Synergy's simulator (schedulers/fifo_synergy_new.py sorts by arrival time alone).
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double Key(const SchedJob&, double, const OrderOptions&) { return 0; }

const PolicyRegistrar kRegistrar({
    .name = "fifo",
    .summary = "arrival order",
    .key = Key,
    .constant_key = true,
    .starving_first = false,
});

}  // namespace
}  // namespace troupe::scheduling
