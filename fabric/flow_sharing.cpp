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
// Storage is flat and reused: what the filling reads of a link, and of a flow (with up to
// kInlineLinks of its links: a route in a three-level tree has six), sit together in one record;
// link -> flows lists keep their capacity; epoch stamps replace cleared marks; Update's work lists
// are members. A warm Update allocates nothing.
#include "fabric/flow_sharing.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

namespace troupe::fabric {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr size_t kInlineLinks = 6;

using Key = std::pair<double, int32_t>;  // (level, link)

// Sorts keys with non-negative levels by level, stably: a radix sort on the level's bits (for
// non-negative doubles their order as unsigned integers), a byte a pass, skipping the bytes every
// key shares (std::sort on few keys). Several times faster than std::sort on the few thousand keys
// of a large component.
void SortByLevel(std::vector<Key>* keys, std::vector<Key>* scratch) {
  if (keys->size() < 512) {  // the passes' counting would cost more than comparing
    std::sort(keys->begin(), keys->end());
    return;
  }
  scratch->resize(keys->size());
  for (int shift = 0; shift < 64; shift += 8) {
    std::array<size_t, 257> start{};
    for (const Key& k : *keys) ++start[((std::bit_cast<uint64_t>(k.first) >> shift) & 0xff) + 1];
    if (std::find(start.begin(), start.end(), keys->size()) != start.end()) continue;  // shared
    for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
    for (const Key& k : *keys) {
      (*scratch)[start[(std::bit_cast<uint64_t>(k.first) >> shift) & 0xff]++] = k;
    }
    keys->swap(*scratch);
  }
}

}  // namespace

struct FlowSharing::Impl {
  struct LinkRecord {
    double capacity = 0;
    double weight = 0;  // the sum of its flows' weights, kept by Add and Remove
    // Filling state.
    double remaining = 0, weight_left = 0;
    int32_t flows_left = 0;
    // As of the last Update.
    double load = 0;
    int32_t load_flows = 0;
  };

  struct FlowRecord {
    double weight = 0, rate = 0;
    uint8_t frozen = 0, alive = 0;
    uint16_t count = 0;                         // links
    std::array<int32_t, kInlineLinks> links{};  // the first ones; the rest in Impl::more_links
  };

  explicit Impl(const std::vector<double>& capacities)
      : link(capacities.size()), link_flows(capacities.size()), link_mark(capacities.size(), 0) {
    for (size_t l = 0; l < capacities.size(); ++l) link[l].capacity = capacities[l];
  }

  std::vector<LinkRecord> link;
  std::vector<std::vector<FlowId>> link_flows;  // by link: the flows crossing it
  std::vector<FlowRecord> flow;
  std::vector<std::vector<int32_t>> more_links;  // by flow: its links, when over kInlineLinks
  std::vector<std::vector<int32_t>> flow_slot;   // by flow: its index in each link's list
  std::vector<FlowId> free_ids;
  size_t live_flows = 0;

  // What changed since the last Update.
  std::vector<int32_t> dirty_links;
  std::vector<FlowId> dirty_linkless;  // added flows that cross no link

  // Update's work space.
  uint32_t epoch = 0;
  // == epoch: in this Update's components (apart from the records: the walk reads little else).
  std::vector<uint32_t> link_mark, flow_mark;
  std::vector<int32_t> component_links;
  std::vector<FlowId> component_flows;
  size_t frozen_flows = 0;
  std::vector<Key> order;   // (first level, link), sorted
  std::vector<Key> raised;  // a min-heap of links taken stale
  std::vector<Key> sort_scratch;
  size_t last_update_flows = 0;

  std::span<const int32_t> LinksOf(FlowId id) const {
    const FlowRecord& f = flow[static_cast<size_t>(id)];
    if (f.count <= kInlineLinks) return {f.links.data(), f.count};
    return more_links[static_cast<size_t>(id)];
  }
  FlowId NewId();
  void SetLinks(FlowId id, std::span<const int32_t> links);
  void Unlink(FlowId id);
  void CollectComponents();
  void Fill();
  double Level(int32_t l);
  void Freeze(int32_t l, double fill_level);
};

FlowId FlowSharing::Impl::NewId() {
  if (!free_ids.empty()) {
    FlowId id = free_ids.back();
    free_ids.pop_back();
    return id;
  }
  flow.emplace_back();
  flow_mark.push_back(0);
  more_links.emplace_back();
  flow_slot.emplace_back();
  return static_cast<FlowId>(flow.size() - 1);
}

void FlowSharing::Impl::SetLinks(FlowId id, std::span<const int32_t> links) {
  FlowRecord& f = flow[static_cast<size_t>(id)];
  f.count = static_cast<uint16_t>(links.size());
  if (links.size() <= kInlineLinks) {
    std::copy(links.begin(), links.end(), f.links.begin());
  } else {
    more_links[static_cast<size_t>(id)].assign(links.begin(), links.end());
  }
}

// Takes flow `id` out of its links' lists: the last flow of each list moves into its slot.
void FlowSharing::Impl::Unlink(FlowId id) {
  std::span<const int32_t> links = LinksOf(id);
  const auto& slots = flow_slot[static_cast<size_t>(id)];
  for (size_t i = 0; i < links.size(); ++i) {
    auto l = static_cast<size_t>(links[i]);
    auto& list = link_flows[l];
    FlowId moved = list.back();
    list[static_cast<size_t>(slots[i])] = moved;
    list.pop_back();
    // Exactly 0 on an empty link, so rounding does not pile up over adds and removes.
    link[l].weight = list.empty() ? 0 : link[l].weight - flow[static_cast<size_t>(id)].weight;
    // The moved flow's slot for this link (a flow crosses a handful of links: a scan). The moved
    // flow may be `id` itself, when it crosses this link twice.
    std::span<const int32_t> moved_links = LinksOf(moved);
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
  if (++epoch == 0) {  // wrapped: no mark may look current
    std::fill(link_mark.begin(), link_mark.end(), 0);
    std::fill(flow_mark.begin(), flow_mark.end(), 0);
    epoch = 1;
  }
  const uint32_t now = epoch;
  // The arrays by local pointer: the pushes cannot move them, and the compiler need not reload
  // them after each push.
  uint32_t* const link_marks = link_mark.data();
  uint32_t* const flow_marks = flow_mark.data();
  component_links.clear();
  component_flows.clear();
  for (int32_t l : dirty_links) {
    if (link_marks[l] == now) continue;
    link_marks[l] = now;
    component_links.push_back(l);
  }
  dirty_links.clear();
  // component_links doubles as the queue of the breadth-first walk.
  for (size_t next = 0; next < component_links.size(); ++next) {
    for (FlowId id : link_flows[static_cast<size_t>(component_links[next])]) {
      if (flow_marks[id] == now) continue;
      flow_marks[id] = now;
      component_flows.push_back(id);
      for (int32_t l : LinksOf(id)) {
        if (link_marks[l] == now) continue;
        link_marks[l] = now;
        component_links.push_back(l);
      }
    }
  }
}

// The level at which link `l` fills, given the flows frozen so far.
double FlowSharing::Impl::Level(int32_t l) {
  LinkRecord& r = link[static_cast<size_t>(l)];
  if (r.weight_left <= 0) {  // rounding left nothing of weights still unfrozen: sum them anew
    r.weight_left = 0;
    for (FlowId id : link_flows[static_cast<size_t>(l)]) {
      const FlowRecord& f = flow[static_cast<size_t>(id)];
      if (!f.frozen) r.weight_left += f.weight;
    }
  }
  return (r.remaining > 0 ? r.remaining : 0.0) / r.weight_left;  // never -0.0: see SortByLevel
}

// Freezes the unfrozen flows of link `l` at `fill_level` and takes their rates and weights off
// every link they cross.
void FlowSharing::Impl::Freeze(int32_t l, double fill_level) {
  for (FlowId id : link_flows[static_cast<size_t>(l)]) {
    FlowRecord& f = flow[static_cast<size_t>(id)];
    if (f.frozen) continue;
    f.frozen = 1;
    f.rate = f.weight * fill_level;
    ++frozen_flows;
    for (int32_t other : LinksOf(id)) {
      LinkRecord& r = link[static_cast<size_t>(other)];
      r.load += f.rate;
      r.remaining -= f.rate;
      r.weight_left -= f.weight;
      --r.flows_left;
    }
  }
}

void FlowSharing::Impl::Fill() {
  order.clear();
  raised.clear();
  for (FlowId id : component_flows) flow[static_cast<size_t>(id)].frozen = 0;
  frozen_flows = 0;
  for (int32_t l : component_links) {
    LinkRecord& r = link[static_cast<size_t>(l)];
    r.remaining = r.capacity;
    r.weight_left = r.weight;
    r.flows_left = static_cast<int32_t>(link_flows[static_cast<size_t>(l)].size());
    r.load = 0;
    r.load_flows = r.flows_left;
    if (r.flows_left > 0) order.emplace_back(Level(l), l);
  }
  SortByLevel(&order, &sort_scratch);
  size_t next = 0;
  // Once every flow is frozen, what is left is full links.
  while (frozen_flows < component_flows.size()) {
    Key top;
    if (!raised.empty() && (next == order.size() || raised.front() < order[next])) {
      std::pop_heap(raised.begin(), raised.end(), std::greater<>());
      top = raised.back();
      raised.pop_back();
    } else if (next < order.size()) {
      top = order[next++];
    } else {
      break;
    }
    auto [key, l] = top;
    if (link[static_cast<size_t>(l)].flows_left == 0) continue;  // filled with another link
    double now = Level(l);
    if (now > key) {  // raised since its key was taken
      raised.emplace_back(now, l);
      std::push_heap(raised.begin(), raised.end(), std::greater<>());
      continue;
    }
    Freeze(l, now);
  }
}

FlowSharing::FlowSharing(std::vector<double> capacities) : impl_(new Impl(capacities)) {}

void FlowSharing::ImplDeleter::operator()(Impl* impl) const { delete impl; }

FlowId FlowSharing::Add(std::span<const int32_t> links, double weight) {
  Impl& s = *impl_;
  FlowId id = s.NewId();
  s.SetLinks(id, links);
  auto& slots = s.flow_slot[static_cast<size_t>(id)];
  slots.clear();
  for (int32_t l : links) {
    auto& list = s.link_flows[static_cast<size_t>(l)];
    slots.push_back(static_cast<int32_t>(list.size()));
    list.push_back(id);
    s.link[static_cast<size_t>(l)].weight += weight;
    s.dirty_links.push_back(l);
  }
  Impl::FlowRecord& f = s.flow[static_cast<size_t>(id)];
  f.weight = weight;
  f.rate = 0;
  f.alive = 1;
  ++s.live_flows;
  if (links.empty()) s.dirty_linkless.push_back(id);
  return id;
}

void FlowSharing::Remove(FlowId id) {
  Impl& s = *impl_;
  auto f = static_cast<size_t>(id);
  if (id < 0 || f >= s.flow.size() || !s.flow[f].alive) return;
  s.Unlink(id);
  for (int32_t l : s.LinksOf(id)) s.dirty_links.push_back(l);
  s.flow[f].alive = 0;
  s.flow[f].rate = 0;
  --s.live_flows;
  s.free_ids.push_back(id);
}

void FlowSharing::SetCapacity(int32_t link, double capacity) {
  Impl& s = *impl_;
  if (s.link[static_cast<size_t>(link)].capacity == capacity) return;
  s.link[static_cast<size_t>(link)].capacity = capacity;
  s.dirty_links.push_back(link);
}

void FlowSharing::Update() {
  Impl& s = *impl_;
  s.CollectComponents();
  s.Fill();
  size_t linkless = 0;
  for (FlowId id : s.dirty_linkless) {
    Impl::FlowRecord& f = s.flow[static_cast<size_t>(id)];
    // Skip one removed since (and maybe reused), or listed twice through a reused id.
    if (!f.alive || f.count > 0 || s.flow_mark[static_cast<size_t>(id)] == s.epoch) continue;
    s.flow_mark[static_cast<size_t>(id)] = s.epoch;
    f.rate = kInfinity;
    ++linkless;
  }
  s.dirty_linkless.clear();
  s.last_update_flows = s.component_flows.size() + linkless;
}

double FlowSharing::Rate(FlowId id) const {
  auto f = static_cast<size_t>(id);
  if (id < 0 || f >= impl_->flow.size() || !impl_->flow[f].alive) return 0;
  return impl_->flow[f].rate;
}

double FlowSharing::LinkLoad(int32_t l) const { return impl_->link[static_cast<size_t>(l)].load; }

int32_t FlowSharing::LinkFlows(int32_t l) const {
  return impl_->link[static_cast<size_t>(l)].load_flows;
}

size_t FlowSharing::flows() const { return impl_->live_flows; }
size_t FlowSharing::links() const { return impl_->link.size(); }
size_t FlowSharing::last_update_flows() const { return impl_->last_update_flows; }

}  // namespace troupe::fabric
