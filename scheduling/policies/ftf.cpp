// FTF: finish-time fairness rho = (now - arrival + remaining) / ideal duration, largest first
// (Themis, NSDI '20: the job treated least fairly goes first); FtfOrder::kSmallestFirst sorts
// the other way, as Synergy's simulator does (ftf_synergy_new.py). rho grows with the clock at a
// different rate for every job, so the key reads now_s.
#include <algorithm>

#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double Key(const SchedJob& job, double now_s, const OrderOptions& options) {
  const double ideal = std::max(job.ideal_duration_s(), 1e-9);
  const double rho = (now_s - job.arrival_s + job.remaining_s()) / ideal;
  return options.ftf_order == FtfOrder::kSmallestFirst ? rho : -rho;
}

const PolicyRegistrar kRegistrar({
    .name = "ftf",
    .summary = "finish-time fairness: largest rho first (ftf_order: synergy, smallest)",
    .key = Key,
    .key_reads_clock = true,
    .key_reads_expected_speedup = true,
});

}  // namespace
}  // namespace troupe::scheduling
