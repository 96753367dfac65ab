#include "scheduling/policy_registry.hpp"

#include "scheduling/registry.hpp"

namespace troupe::scheduling {
namespace {

Registry<PolicyDefinition>& Policies() { return Registry<PolicyDefinition>::Instance(); }

}  // namespace

PolicyRegistrar::PolicyRegistrar(const PolicyDefinition& definition) {
  if (definition.key == nullptr) {
    std::fprintf(stderr, "troupe: policy '%.*s' registered without a key\n",
                 static_cast<int>(definition.name.size()), definition.name.data());
    std::abort();
  }
  Policies().Add(definition, "policy");
}

const PolicyDefinition* FindPolicy(std::string_view name) { return Policies().Find(name); }

const PolicyDefinition& PolicyNamed(std::string_view name) {
  const PolicyDefinition* policy = FindPolicy(name);
  if (policy == nullptr) {
    std::fprintf(stderr, "troupe: no policy '%.*s' in this build (known: %s)\n",
                 static_cast<int>(name.size()), name.data(), RegisteredPolicyNames().c_str());
    std::abort();
  }
  return *policy;
}

std::vector<const PolicyDefinition*> RegisteredPolicies() { return Policies().All(); }

std::string RegisteredPolicyNames() { return Policies().Names(); }

}  // namespace troupe::scheduling
