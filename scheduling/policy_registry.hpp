// Policies by name. A policy is one .cpp file that defines its key and registers itself:
//
//   namespace {
//   double Key(const SchedJob& job, double, const OrderOptions&) { return job.ideal_duration_s(); }
//   const PolicyRegistrar kRegistrar({.name = "sjf", .summary = "...", .key = Key});
//   }  // namespace
//
// Nothing else is edited: a config selects it by name (scheduler.policy_name, or scheduler.policy
// for troupe's own four). docs/extending.md walks through it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scheduling/policy.hpp"

namespace troupe::scheduling {

// Registers `definition` when constructed (as a namespace-scope static, before main()).
class PolicyRegistrar {
 public:
  explicit PolicyRegistrar(const PolicyDefinition& definition);
};

// The policy registered under `name`, or null.
const PolicyDefinition* FindPolicy(std::string_view name);
// The policy registered under `name`, which must exist (troupe's own, in code and tests).
const PolicyDefinition& PolicyNamed(std::string_view name);
// Every registered policy, by name.
std::vector<const PolicyDefinition*> RegisteredPolicies();
// "fifo, ftf, las, srtf": for a message that lists the choices.
std::string RegisteredPolicyNames();

}  // namespace troupe::scheduling
