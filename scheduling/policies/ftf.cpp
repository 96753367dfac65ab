// FTF: finish-time fairness rho = (now - arrival + remaining) / ideal duration, largest first
// (Themis, NSDI '20: the job treated least fairly goes first); FtfOrder::kSmallestFirst sorts
// the other way, as Synergy's simulator does (ftf_synergy_new.py). rho grows with the clock at a
// different rate for every job, so the key reads now_s; a long queue keeps each job's arrival,
// remaining time and ideal duration (ClockTerms) and computes rho from them each round.
#include <algorithm>

#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

// a: arrival, b: remaining time, c: ideal duration (at least 1e-9).
ClockTerms Terms(const SchedJob& job, const OrderOptions&) {
  return ClockTerms{job.arrival_s, job.remaining_s(), std::max(job.ideal_duration_s(), 1e-9)};
}

double TermsKey(const ClockTerms& t, double now_s, const OrderOptions& options) {
  const double rho = (now_s - t.a + t.b) / t.c;
  return options.ftf_order == FtfOrder::kSmallestFirst ? rho : -rho;
}

double Key(const SchedJob& job, double now_s, const OrderOptions& options) {
  return TermsKey(Terms(job, options), now_s, options);
}

const PolicyRegistrar kRegistrar({
    .name = "ftf",
    .summary = "finish-time fairness: largest rho first (ftf_order: synergy, smallest)",
    .key = Key,
    .key_reads_clock = true,
    .clock_terms = Terms,
    .clock_key = TermsKey,
    .key_reads_expected_speedup = true,
});

}  // namespace
}  // namespace troupe::scheduling
