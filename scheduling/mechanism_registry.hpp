// Mechanisms by name. A mechanism is one .cpp file that defines a Mechanism and registers it:
//
//   namespace {
//   std::unique_ptr<Mechanism> Make(const MechanismOptions&) {
//     return std::make_unique<MyMechanism>();
//   }
//   const MechanismRegistrar kRegistrar({.name = "mine", .summary = "...", .make = Make});
//   }  // namespace
//
// Nothing else is edited: a config selects it by name (scheduler.mechanism_name, or
// scheduler.mechanism for troupe's own four). docs/extending.md walks through it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

// Registers `definition` when constructed (as a namespace-scope static, before main()).
class MechanismRegistrar {
 public:
  explicit MechanismRegistrar(const MechanismDefinition& definition);
};

// The mechanism registered under `name`, or null.
const MechanismDefinition* FindMechanism(std::string_view name);
// The mechanism registered under `name`, which must exist (troupe's own, in code and tests).
const MechanismDefinition& MechanismNamed(std::string_view name);
// A new instance of the mechanism registered under `name`, which must exist.
std::unique_ptr<Mechanism> MakeMechanism(std::string_view name,
                                         const MechanismOptions& options = {});
// Every registered mechanism, by name.
std::vector<const MechanismDefinition*> RegisteredMechanisms();
// "greedy, opt, proportional, tune": for a message that lists the choices.
std::string RegisteredMechanismNames();

}  // namespace troupe::scheduling
