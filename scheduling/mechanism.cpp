#include "scheduling/mechanism.hpp"

#include "scheduling/greedy.hpp"
#include "scheduling/opt.hpp"
#include "scheduling/proportional.hpp"
#include "scheduling/tune.hpp"

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

std::unique_ptr<Mechanism> MakeMechanism(MechanismKind kind, const MechanismOptions& options) {
  // Each case returns its mechanism; nullptr where this build does not have it.
  switch (kind) {
    case MechanismKind::kProportional:
      return std::make_unique<ProportionalMechanism>();
    case MechanismKind::kGreedy:
      return std::make_unique<GreedyMechanism>();
    case MechanismKind::kTune:
      return std::make_unique<TuneMechanism>(options.tune_sort_by_demand);
    case MechanismKind::kOpt:
      return std::make_unique<OptMechanism>();
  }
  return nullptr;
}

}  // namespace troupe::scheduling
