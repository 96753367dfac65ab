#include "config/scheduler_names.hpp"

#include <string>
#include <vector>

#include "base/closest_name.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/policy_registry.hpp"

namespace troupe {

std::string PolicyNameOf(const config::Scheduler& scheduler) {
  return scheduler.has_policy_name() ? scheduler.policy_name()
                                     : config::Policy_Name(scheduler.policy());
}

std::string MechanismNameOf(const config::Scheduler& scheduler) {
  return scheduler.has_mechanism_name() ? scheduler.mechanism_name()
                                        : config::Mechanism_Name(scheduler.mechanism());
}

namespace {

template <typename Definition>
std::vector<std::string> NamesOf(const std::vector<const Definition*>& definitions) {
  std::vector<std::string> names;
  for (const Definition* d : definitions) names.emplace_back(d->name);
  return names;
}

}  // namespace

Status CheckSchedulerNames(const config::Scheduler& scheduler, const std::string& name) {
  const std::string field = scheduler.has_policy_name() ? "policy_name" : "policy";
  const std::string policy = PolicyNameOf(scheduler);
  if (scheduling::FindPolicy(policy) == nullptr) {
    return Status::InvalidInput(name + ": scheduler." + field + ": '" + policy +
                                "' is not a registered policy" +
                                DidYouMean(policy, NamesOf(scheduling::RegisteredPolicies())) +
                                " (known: " + scheduling::RegisteredPolicyNames() + ")");
  }
  const std::string mechanism_field =
      scheduler.has_mechanism_name() ? "mechanism_name" : "mechanism";
  const std::string mechanism = MechanismNameOf(scheduler);
  if (scheduling::FindMechanism(mechanism) == nullptr) {
    return Status::InvalidInput(name + ": scheduler." + mechanism_field + ": '" + mechanism +
                                "' is not a registered mechanism" +
                                DidYouMean(mechanism, NamesOf(scheduling::RegisteredMechanisms())) +
                                " (known: " + scheduling::RegisteredMechanismNames() + ")");
  }
  return Status::Ok();
}

}  // namespace troupe
