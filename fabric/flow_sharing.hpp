// Max-min fair sharing of links among flows, by progressive filling: every flow's rate grows at
// the pace of its weight until a link it crosses is full; the flows of that link are frozen there
// and the rest grow on (Bertsekas and Gallager, "Data Networks"; the flow model SimGrid validated
// against TCP, Velho et al., ACM TOMACS 2013). With weights, each link's capacity is split in
// proportion to its flows' weights (weighted max-min).
//
// Contract: flows are added and removed between calls to Update, which recomputes the rates of
// the flows that share a link, directly or through other flows, with one that was added or
// removed, or whose capacity was set, since the last Update (its connected component), and no
// others: the rates a change cannot reach stay as they were. Rates are exact max-min rates up to
// floating-point rounding and the same for the same sequence of calls (no hashing order, no clock).
// A flow that crosses no link has an infinite rate. Ids are reused after Remove.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace troupe::fabric {

using FlowId = int32_t;

class FlowSharing {
 public:
  // capacities[l]: link l's capacity (bytes per second, > 0).
  explicit FlowSharing(std::vector<double> capacities);

  // A flow over `links` (indices into capacities) with a weight > 0.
  FlowId Add(std::span<const int32_t> links, double weight = 1);
  void Remove(FlowId flow);
  // Link `link` has `capacity` (> 0) from the next Update on, which re-shares its component.
  void SetCapacity(int32_t link, double capacity);
  // Recomputes the rates of the components changed since the last Update.
  void Update();

  double Rate(FlowId flow) const;  // bytes per second, as of the last Update
  // The sum of the rates of the flows crossing `link`, and their count, as of the last Update.
  double LinkLoad(int32_t link) const;
  int32_t LinkFlows(int32_t link) const;
  size_t flows() const;  // flows added and not removed
  size_t links() const;
  // Flows whose rate the last Update recomputed (for benchmarks and tests of incrementality).
  size_t last_update_flows() const;

 private:
  struct Impl;  // defined in flow_sharing.cpp
  struct ImplDeleter {
    void operator()(Impl* impl) const;
  };
  std::unique_ptr<Impl, ImplDeleter> impl_;
};

}  // namespace troupe::fabric
