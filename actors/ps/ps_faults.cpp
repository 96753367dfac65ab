#include "actors/ps/ps_faults.hpp"

#include <cerrno>

namespace troupe {

double PsNodeFaults::SlowFactorAt(double t) const {
  double factor = 1;
  for (const PsFaultWindow& w : slow) {
    if (t >= w.from_s && t < w.to_s) factor *= w.factor;
  }
  return factor;
}

int PsNodeFaults::DiskErrorAt(double t) const {
  for (const PsFaultWindow& w : disk) {
    if (t >= w.from_s && t < w.to_s) return w.error;
  }
  return 0;
}

std::vector<int32_t> PsNodesOf(const FaultEvent& event, int32_t nodes) {
  std::vector<int32_t> out;
  if (event.target.kind != EndpointKind::kPs) return out;
  for (const int64_t m : event.target.IndicesAmong(nodes)) out.push_back(static_cast<int32_t>(m));
  return out;
}

PsNodeFaults PsNodeFaultsOf(const FaultPlan& plan, int32_t node, int32_t nodes) {
  PsNodeFaults out;
  for (const FaultEvent& e : plan.events) {
    if (e.kind != FaultKind::kSlow && e.kind != FaultKind::kDisk) continue;
    if (node >= nodes || !e.target.Contains(EndpointKind::kPs, node)) continue;
    PsFaultWindow w{e.at_s, e.EndS(), e.factor, 0};
    if (e.kind == FaultKind::kSlow) {
      out.slow.push_back(w);
    } else {
      w.error = e.disk_full ? ENOSPC : EIO;
      out.disk.push_back(w);
    }
  }
  return out;
}

bool PlanCrashesPsNodes(const FaultPlan& plan, int32_t nodes) {
  for (const FaultEvent& e : plan.events) {
    if (e.kind == FaultKind::kCrash && !PsNodesOf(e, nodes).empty()) return true;
  }
  return false;
}

}  // namespace troupe
