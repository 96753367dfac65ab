// Progressive filling over the connected components an Update touches.
//
// All unfrozen flows of a component share one fill level: a flow's rate is its weight times the
// level. Link l fills when level = remaining(l) / unfrozen_weight(l), where remaining(l) is its
// capacity less the rates of its frozen flows. The link with the lowest such level is the next
// bottleneck: its unfrozen flows freeze at that level, which can only raise the levels of the
// other links they cross. So a min-heap of (level, link) with lazy deletion finds the bottlenecks
// in order: a popped entry whose level is no longer the link's current one is stale.
//
// Storage is flat and reused: flow -> links and link -> flows as vectors of vectors whose
// capacity survives Remove and reuse of ids, epoch stamps instead of cleared marks, and the
// work lists of Update kept as members, so a warm Update allocates nothing.
#include "fabric/flow_sharing.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

namespace troupe::fabric {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}  // namespace

struct FlowSharing::Impl {
  explicit Impl(std::vector<double> caps)
      : capacity(std::move(caps)),
        link_flows(capacity.size()),
        link_mark(capacity.size(), 0),
        remaining(capacity.size(), 0),
        weight_left(capacity.size(), 0),
        flows_left(capacity.size(), 0),
        level(capacity.size(), 0),
        touched_mark(capacity.size(), 0),
        load(capacity.size(), 0),
        load_flows(capacity.size(), 0) {}

  // Links and flows.
  std::vector<double> capacity;
  std::vector<std::vector<FlowId>> link_flows;   // by link: the flows crossing it
  std::vector<std::vector<int32_t>> flow_links;  // by flow: its links
  std::vector<std::vector<int32_t>> flow_slot;   // by flow, parallel: its index in link_flows
  std::vector<double> weight, rate;
  std::vector<uint8_t> alive;
  std::vector<FlowId> free_ids;
  size_t live_flows = 0;

  // What changed since the last Update.
  std::vector<int32_t> dirty_links;
  std::vector<FlowId> dirty_linkless;  // added flows that cross no link

  // Update's work space.
  uint32_t epoch = 0;
  std::vector<uint32_t> link_mark, flow_mark;  // == epoch: in this Update's components
  std::vector<int32_t> component_links;
  std::vector<FlowId> component_flows;
  std::vector<double> remaining, weight_left;
  std::vector<int32_t> flows_left;
  std::vector<double> level;  // each link's current fill level (heap entries must match it)
  std::vector<uint8_t> frozen;
  std::vector<uint32_t> touched_mark;
  uint32_t touch_epoch = 0;
  std::vector<int32_t> touched;
  std::vector<std::pair<double, int32_t>> heap;

  // As of the last Update.
  std::vector<double> load;
  std::vector<int32_t> load_flows;
  size_t last_update_flows = 0;

  FlowId NewId();
  void Unlink(FlowId flow);
  void CollectComponents();
  void Fill();
  void FreezeBottleneck(int32_t link, double fill_level);
  void PushLevel(int32_t link);
};

FlowId FlowSharing::Impl::NewId() {
  if (!free_ids.empty()) {
    FlowId id = free_ids.back();
    free_ids.pop_back();
    return id;
  }
  auto id = static_cast<FlowId>(alive.size());
  flow_links.emplace_back();
  flow_slot.emplace_back();
  weight.push_back(0);
  rate.push_back(0);
  alive.push_back(0);
  flow_mark.push_back(0);
  frozen.push_back(0);
  return id;
}

// Takes `flow` out of its links' lists: the last flow of each list moves into its slot.
void FlowSharing::Impl::Unlink(FlowId flow) {
  const auto& links = flow_links[static_cast<size_t>(flow)];
  const auto& slots = flow_slot[static_cast<size_t>(flow)];
  for (size_t i = 0; i < links.size(); ++i) {
    auto& list = link_flows[static_cast<size_t>(links[i])];
    FlowId moved = list.back();
    list[static_cast<size_t>(slots[i])] = moved;
    list.pop_back();
    // The moved flow's slot for this link (a flow crosses a handful of links: a scan). The moved
    // flow may be `flow` itself, when it crosses this link twice.
    const auto& moved_links = flow_links[static_cast<size_t>(moved)];
    auto& moved_slots = flow_slot[static_cast<size_t>(moved)];
    for (size_t j = 0; j < moved_links.size(); ++j) {
      if (moved_links[j] == links[i] && moved_slots[j] == static_cast<int32_t>(list.size())) {
        moved_slots[j] = slots[i];
        break;
      }
    }
  }
}

// Marks the links and flows reachable from the dirty links (links <-> flows) with this epoch and
// lists them in component_links and component_flows.
void FlowSharing::Impl::CollectComponents() {
  ++epoch;
  component_links.clear();
  component_flows.clear();
  for (int32_t link : dirty_links) {
    if (link_mark[static_cast<size_t>(link)] == epoch) continue;
    link_mark[static_cast<size_t>(link)] = epoch;
    component_links.push_back(link);
  }
  dirty_links.clear();
  // component_links doubles as the queue of the breadth-first walk.
  for (size_t next = 0; next < component_links.size(); ++next) {
    for (FlowId flow : link_flows[static_cast<size_t>(component_links[next])]) {
      if (flow_mark[static_cast<size_t>(flow)] == epoch) continue;
      flow_mark[static_cast<size_t>(flow)] = epoch;
      component_flows.push_back(flow);
      for (int32_t link : flow_links[static_cast<size_t>(flow)]) {
        if (link_mark[static_cast<size_t>(link)] == epoch) continue;
        link_mark[static_cast<size_t>(link)] = epoch;
        component_links.push_back(link);
      }
    }
  }
}

void FlowSharing::Impl::PushLevel(int32_t link) {
  auto l = static_cast<size_t>(link);
  if (weight_left[l] <= 0) {  // rounding left nothing of weights still unfrozen: sum them anew
    weight_left[l] = 0;
    for (FlowId flow : link_flows[l]) {
      if (!frozen[static_cast<size_t>(flow)]) weight_left[l] += weight[static_cast<size_t>(flow)];
    }
  }
  level[l] = std::max(remaining[l], 0.0) / weight_left[l];
  heap.emplace_back(level[l], link);
  std::push_heap(heap.begin(), heap.end(), std::greater<>());
}

// Freezes the unfrozen flows of `link` at `fill_level` and takes their rates and weights off
// every link they cross; the levels of those links are pushed anew once each.
void FlowSharing::Impl::FreezeBottleneck(int32_t link, double fill_level) {
  ++touch_epoch;
  touched.clear();
  for (FlowId flow : link_flows[static_cast<size_t>(link)]) {
    auto f = static_cast<size_t>(flow);
    if (frozen[f]) continue;
    frozen[f] = 1;
    rate[f] = weight[f] * fill_level;
    for (int32_t other : flow_links[f]) {
      auto o = static_cast<size_t>(other);
      remaining[o] -= rate[f];
      weight_left[o] -= weight[f];
      --flows_left[o];
      if (touched_mark[o] != touch_epoch) {
        touched_mark[o] = touch_epoch;
        touched.push_back(other);
      }
    }
  }
  for (int32_t other : touched) {
    if (flows_left[static_cast<size_t>(other)] > 0) PushLevel(other);
  }
}

void FlowSharing::Impl::Fill() {
  heap.clear();
  for (FlowId flow : component_flows) frozen[static_cast<size_t>(flow)] = 0;
  for (int32_t link : component_links) {
    auto l = static_cast<size_t>(link);
    remaining[l] = capacity[l];
    weight_left[l] = 0;
    for (FlowId flow : link_flows[l]) weight_left[l] += weight[static_cast<size_t>(flow)];
    flows_left[l] = static_cast<int32_t>(link_flows[l].size());
    if (flows_left[l] > 0) PushLevel(link);
  }
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    auto [fill_level, link] = heap.back();
    heap.pop_back();
    auto l = static_cast<size_t>(link);
    if (flows_left[l] == 0 || fill_level != level[l]) continue;  // full already, or stale
    FreezeBottleneck(link, fill_level);
  }
  for (int32_t link : component_links) {
    auto l = static_cast<size_t>(link);
    double sum = 0;
    for (FlowId flow : link_flows[l]) sum += rate[static_cast<size_t>(flow)];
    load[l] = sum;
    load_flows[l] = static_cast<int32_t>(link_flows[l].size());
  }
}

FlowSharing::FlowSharing(std::vector<double> capacities)
    : impl_(new Impl(std::move(capacities))) {}

void FlowSharing::ImplDeleter::operator()(Impl* impl) const { delete impl; }

FlowId FlowSharing::Add(std::span<const int32_t> links, double weight) {
  Impl& s = *impl_;
  FlowId id = s.NewId();
  auto f = static_cast<size_t>(id);
  s.flow_links[f].assign(links.begin(), links.end());
  s.flow_slot[f].clear();
  for (int32_t link : links) {
    auto& list = s.link_flows[static_cast<size_t>(link)];
    s.flow_slot[f].push_back(static_cast<int32_t>(list.size()));
    list.push_back(id);
    s.dirty_links.push_back(link);
  }
  s.weight[f] = weight;
  s.rate[f] = 0;
  s.alive[f] = 1;
  ++s.live_flows;
  if (links.empty()) s.dirty_linkless.push_back(id);
  return id;
}

void FlowSharing::Remove(FlowId flow) {
  Impl& s = *impl_;
  auto f = static_cast<size_t>(flow);
  if (flow < 0 || f >= s.alive.size() || !s.alive[f]) return;
  s.Unlink(flow);
  for (int32_t link : s.flow_links[f]) s.dirty_links.push_back(link);
  s.alive[f] = 0;
  s.rate[f] = 0;
  --s.live_flows;
  s.free_ids.push_back(flow);
}

void FlowSharing::Update() {
  Impl& s = *impl_;
  s.CollectComponents();
  s.Fill();
  size_t linkless = 0;
  for (FlowId flow : s.dirty_linkless) {
    auto f = static_cast<size_t>(flow);
    // Skip one removed since (and maybe reused), or listed twice through a reused id.
    if (!s.alive[f] || !s.flow_links[f].empty() || s.flow_mark[f] == s.epoch) continue;
    s.flow_mark[f] = s.epoch;
    s.rate[f] = kInfinity;
    ++linkless;
  }
  s.dirty_linkless.clear();
  s.last_update_flows = s.component_flows.size() + linkless;
}

double FlowSharing::Rate(FlowId flow) const {
  auto f = static_cast<size_t>(flow);
  if (flow < 0 || f >= impl_->alive.size() || !impl_->alive[f]) return 0;
  return impl_->rate[f];
}

double FlowSharing::LinkLoad(int32_t link) const { return impl_->load[static_cast<size_t>(link)]; }

int32_t FlowSharing::LinkFlows(int32_t link) const {
  return impl_->load_flows[static_cast<size_t>(link)];
}

size_t FlowSharing::flows() const { return impl_->live_flows; }
size_t FlowSharing::links() const { return impl_->capacity.size(); }
size_t FlowSharing::last_update_flows() const { return impl_->last_update_flows; }

}  // namespace troupe::fabric
