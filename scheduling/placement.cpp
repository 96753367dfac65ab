#include "scheduling/placement.hpp"

namespace troupe::scheduling {

int32_t JobPlacement::gpus() const {
  int32_t sum = 0;
  for (const PlacementPart& p : parts) sum += p.gpus;
  return sum;
}

double JobPlacement::cpus() const {
  double sum = 0;
  for (const PlacementPart& p : parts) sum += p.cpus;
  return sum;
}

double JobPlacement::memory_gb() const {
  double sum = 0;
  for (const PlacementPart& p : parts) sum += p.memory_gb;
  return sum;
}

}  // namespace troupe::scheduling
