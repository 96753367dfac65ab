// Progressive filling over the connected components an Update touches.
//
// All unfrozen flows of a component share one fill level: a flow's rate is its weight times the
// level. Link l fills when level = remaining(l) / unfrozen_weight(l), where remaining(l) is its
// capacity less the rates of its frozen flows. The link with the lowest such level is the next
// bottleneck: its unfrozen flows freeze at that level, which can only raise the levels of the
// other links they cross. So (level, link) keys that are lower bounds find the bottlenecks in
// order: freezing touches no key; a link taken whose current level is above its key goes back in
// at that level, and one whose level is not is the bottleneck (every other link's level is at
// least its key, which is at least this one). The first keys are sorted once and walked; the
// links taken stale go into a min-heap merged with that walk, so a link that fills with another
// costs one step of the walk, and a link is re-keyed only when taken stale, not each time one of
// its flows freezes.
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
        link_weight(capacity.size(), 0),
        link_mark(capacity.size(), 0),
        remaining(capacity.size(), 0),
        weight_left(capacity.size(), 0),
        flows_left(capacity.size(), 0),
        load(capacity.size(), 0),
        load_flows(capacity.size(), 0) {}

  // Links and flows.
  std::vector<double> capacity;
  std::vector<std::vector<FlowId>> link_flows;   // by link: the flows crossing it
  std::vector<double> link_weight;               // by link: the sum of its flows' weights
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
  std::vector<uint8_t> frozen;
  size_t frozen_flows = 0;
  std::vector<std::pair<double, int32_t>> order;   // (first level, link), sorted
  std::vector<std::pair<double, int32_t>> raised;  // a min-heap of links popped stale

  // As of the last Update.
  std::vector<double> load;
  std::vector<int32_t> load_flows;
  size_t last_update_flows = 0;

  FlowId NewId();
  void Unlink(FlowId flow);
  void CollectComponents();
  void Fill();
  double Level(int32_t link);
  void Freeze(int32_t link, double fill_level);
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
    // Exactly 0 on an empty link, so rounding does not pile up over adds and removes.
    link_weight[static_cast<size_t>(links[i])] =
        list.empty()
            ? 0
            : link_weight[static_cast<size_t>(links[i])] - weight[static_cast<size_t>(flow)];
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

// The level at which `link` fills, given the flows frozen so far.
double FlowSharing::Impl::Level(int32_t link) {
  auto l = static_cast<size_t>(link);
  if (weight_left[l] <= 0) {  // rounding left nothing of weights still unfrozen: sum them anew
    weight_left[l] = 0;
    for (FlowId flow : link_flows[l]) {
      if (!frozen[static_cast<size_t>(flow)]) weight_left[l] += weight[static_cast<size_t>(flow)];
    }
  }
  return std::max(remaining[l], 0.0) / weight_left[l];
}

// Freezes the unfrozen flows of `link` at `fill_level` and takes their rates and weights off
// every link they cross.
void FlowSharing::Impl::Freeze(int32_t link, double fill_level) {
  for (FlowId flow : link_flows[static_cast<size_t>(link)]) {
    auto f = static_cast<size_t>(flow);
    if (frozen[f]) continue;
    frozen[f] = 1;
    rate[f] = weight[f] * fill_level;
    ++frozen_flows;
    for (int32_t other : flow_links[f]) {
      auto o = static_cast<size_t>(other);
      load[o] += rate[f];
      remaining[o] -= rate[f];
      weight_left[o] -= weight[f];
      --flows_left[o];
    }
  }
}

void FlowSharing::Impl::Fill() {
  order.clear();
  raised.clear();
  for (FlowId flow : component_flows) frozen[static_cast<size_t>(flow)] = 0;
  frozen_flows = 0;
  for (int32_t link : component_links) {
    auto l = static_cast<size_t>(link);
    remaining[l] = capacity[l];
    weight_left[l] = link_weight[l];
    flows_left[l] = static_cast<int32_t>(link_flows[l].size());
    load[l] = 0;
    load_flows[l] = flows_left[l];
    if (flows_left[l] > 0) order.emplace_back(Level(link), link);
  }
  std::sort(order.begin(), order.end());
  size_t next = 0;
  // Once every flow is frozen, what is left is full links.
  while (frozen_flows < component_flows.size()) {
    std::pair<double, int32_t> top;
    if (!raised.empty() && (next == order.size() || raised.front() < order[next])) {
      std::pop_heap(raised.begin(), raised.end(), std::greater<>());
      top = raised.back();
      raised.pop_back();
    } else if (next < order.size()) {
      top = order[next++];
    } else {
      break;
    }
    auto [key, link] = top;
    if (flows_left[static_cast<size_t>(link)] == 0) continue;  // filled with another link
    double now = Level(link);
    if (now > key) {  // raised since its key was taken
      raised.emplace_back(now, link);
      std::push_heap(raised.begin(), raised.end(), std::greater<>());
      continue;
    }
    Freeze(link, now);
  }
}

FlowSharing::FlowSharing(std::vector<double> capacities) : impl_(new Impl(std::move(capacities))) {}

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
    s.link_weight[static_cast<size_t>(link)] += weight;
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
