#include "scheduling/mechanism_registry.hpp"

#include "scheduling/registry.hpp"

namespace troupe::scheduling {
namespace {

Registry<MechanismDefinition>& Mechanisms() { return Registry<MechanismDefinition>::Instance(); }

}  // namespace

MechanismRegistrar::MechanismRegistrar(const MechanismDefinition& definition) {
  if (definition.make == nullptr) {
    std::fprintf(stderr, "troupe: mechanism '%.*s' registered without a make function\n",
                 static_cast<int>(definition.name.size()), definition.name.data());
    std::abort();
  }
  Mechanisms().Add(definition, "mechanism");
}

const MechanismDefinition* FindMechanism(std::string_view name) { return Mechanisms().Find(name); }

const MechanismDefinition& MechanismNamed(std::string_view name) {
  const MechanismDefinition* mechanism = FindMechanism(name);
  if (mechanism == nullptr) {
    std::fprintf(stderr, "troupe: no mechanism '%.*s' in this build (known: %s)\n",
                 static_cast<int>(name.size()), name.data(), RegisteredMechanismNames().c_str());
    std::abort();
  }
  return *mechanism;
}

std::unique_ptr<Mechanism> MakeMechanism(std::string_view name, const MechanismOptions& options) {
  return MechanismNamed(name).make(options);
}

std::vector<const MechanismDefinition*> RegisteredMechanisms() { return Mechanisms().All(); }

std::string RegisteredMechanismNames() { return Mechanisms().Names(); }

}  // namespace troupe::scheduling
