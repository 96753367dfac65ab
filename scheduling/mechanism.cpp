#include "scheduling/mechanism.hpp"

#include "scheduling/proportional.hpp"

namespace troupe::scheduling {

std::string_view MechanismName(MechanismKind kind) {
  switch (kind) {
    case MechanismKind::kProportional:
      return "proportional";
    case MechanismKind::kGreedy:
      return "greedy";
    case MechanismKind::kTune:
      return "tune";
    case MechanismKind::kOpt:
      return "opt";
  }
  return "?";
}

std::unique_ptr<Mechanism> MakeMechanism(MechanismKind kind) {
  switch (kind) {
    case MechanismKind::kProportional:
      return std::make_unique<ProportionalMechanism>();
    default:
      return nullptr;
  }
}

}  // namespace troupe::scheduling
