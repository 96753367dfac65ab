// ExternalSource: the "external" mechanism's proposals (scheduling/external_mechanism.hpp) asked
// of an external scheduler process over an ExternalLink (docs/external-scheduler.md).
//
// Propose sends a RoundState — the jobs offered, in the policy's order, with their demands and
// sensitivities, and what each server has free — and waits up to answer_timeout_s wall seconds
// for the Allocation answering it (late answers to earlier asks are skipped). Verdict tells the
// scheduler when its answer was refused (Refusal: the reason and the fallback). Once the
// connection is gone (closed, malformed frame), every later round is proposed nothing and falls
// back. Counters say how it went; the run logs them at its end.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/external_link.hpp"
#include "scheduling/external_mechanism.hpp"

namespace troupe::agent_wire {

struct ExternalCounters {
  int64_t asks = 0;      // RoundStates sent
  int64_t accepted = 0;  // answered, checked and used
  int64_t refused = 0;   // refused, unanswered in time, or asked with no connection
  double wait_s = 0;     // wall seconds from each RoundState sent to its answer read
  std::string first_refusal;
};

class ExternalSource : public scheduling::AllocationSource {
 public:
  ExternalSource(std::shared_ptr<ExternalLink> link, double answer_timeout_s)
      : link_(std::move(link)), answer_timeout_s_(answer_timeout_s) {}

  Status Propose(const scheduling::RoundContext& round,
                 const std::vector<const scheduling::SchedJob*>& offered,
                 const scheduling::ClusterLedger& ledger,
                 std::vector<scheduling::JobPlacement>* proposed) override;
  void Verdict(const Status& verdict, std::string_view fallback) override;

  const ExternalCounters& counters() const { return counters_; }
  // One line: asks, accepted, refused (and the first reason), mean wait per ask.
  std::string Report() const;

 private:
  external::Envelope RoundStateOf(const scheduling::RoundContext& round,
                                  const std::vector<const scheduling::SchedJob*>& offered,
                                  const scheduling::ClusterLedger& ledger);
  Status AwaitAllocation(std::vector<scheduling::JobPlacement>* proposed);

  std::shared_ptr<ExternalLink> link_;
  double answer_timeout_s_;
  ExternalCounters counters_;
  int64_t ask_ = -1;
  // The matrix last sent for each job of the previous ask: unchanged ones are not sent again.
  absl::flat_hash_map<int64_t, std::shared_ptr<const SensitivityMatrix>> sent_;
};

}  // namespace troupe::agent_wire
