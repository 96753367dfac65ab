#include "scheduling/external_mechanism.hpp"

#include "scheduling/allocation_check.hpp"
#include "scheduling/mechanism_registry.hpp"

namespace troupe::scheduling {

ExternalMechanism::ExternalMechanism(std::shared_ptr<AllocationSource> source,
                                     std::string fallback_name, std::unique_ptr<Mechanism> fallback)
    : source_(std::move(source)),
      fallback_name_(std::move(fallback_name)),
      fallback_(std::move(fallback)) {}

std::vector<JobPlacement> ExternalMechanism::PlaceRound(const std::vector<const SchedJob*>& ordered,
                                                        ClusterLedger& ledger) {
  if (ordered.empty()) return {};  // nothing to place: no question to ask
  if (!source_) return fallback_->PlaceRound(ordered, ledger);
  std::vector<JobPlacement> proposed;
  Status verdict = source_->Propose(round_, ordered, ledger, &proposed);
  if (verdict.ok()) verdict = TakeAllocation(ordered, proposed, ledger);
  source_->Verdict(verdict, fallback_name_);
  if (verdict.ok()) return proposed;
  return fallback_->PlaceRound(ordered, ledger);
}

namespace {

std::unique_ptr<Mechanism> MakeExternal(const MechanismOptions& options) {
  // The config check refuses "external" as its own fallback; a stray one here would recurse.
  const std::string fallback =
      options.external_fallback == "external" ? "proportional" : options.external_fallback;
  return std::make_unique<ExternalMechanism>(options.external, fallback,
                                             MakeMechanism(fallback, options));
}

const MechanismRegistrar kExternalRegistrar({
    .name = "external",
    .summary = "an external scheduler process answers each round (docs/external-scheduler.md)",
    .make = MakeExternal,
});

}  // namespace

}  // namespace troupe::scheduling
