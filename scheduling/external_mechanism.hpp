// The "external" mechanism: rounds placed by a planner outside troupe (docs/external-scheduler.md;
// the process and its wire live in agent/external_source.hpp), checked before anything is leased.
//
// Each round it hands its AllocationSource the jobs offered (in the policy's order) and the
// ledger's free resources, and takes the proposal on the ledger only if TakeAllocation finds it
// sound: troupe never overcommits. A proposal refused, or none (no answer in time, a broken
// connection), is reported back to the source with the reason, and the round is placed by the
// fallback, a built-in mechanism named in the options (MechanismOptions::external_fallback).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

// The round being planned, as the scheduler knows it.
struct RoundContext {
  int64_t round = 0;
  double now_s = 0;
};

class AllocationSource {
 public:
  virtual ~AllocationSource() = default;
  // A proposal for the jobs `offered` on what `ledger` has free, or why there is none.
  virtual Status Propose(const RoundContext& round, const std::vector<const SchedJob*>& offered,
                         const ClusterLedger& ledger, std::vector<JobPlacement>* proposed) = 0;
  // What became of the last proposal: used (Ok), or refused with the reason and the round placed
  // by `fallback`.
  virtual void Verdict(const Status& verdict, std::string_view fallback) = 0;
};

class ExternalMechanism : public Mechanism {
 public:
  // `source` may be null: every round then falls back.
  ExternalMechanism(std::shared_ptr<AllocationSource> source, std::string fallback_name,
                    std::unique_ptr<Mechanism> fallback);

  void StartRound(int64_t round, double now_s) override { round_ = {round, now_s}; }
  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;

 private:
  std::shared_ptr<AllocationSource> source_;
  std::string fallback_name_;
  std::unique_ptr<Mechanism> fallback_;
  RoundContext round_;
};

}  // namespace troupe::scheduling
