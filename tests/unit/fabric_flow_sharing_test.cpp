// FlowSharing (fabric/flow_sharing.hpp): max-min shares against the closed forms — one link
// split equally and by weight, the parking lot with equal and unequal capacities — a flow
// crossing no link; and incremental Update: after random adds and removes the rates equal those
// of a FlowSharing built from scratch over the same flows, and an Update recomputes only the
// component a change reaches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "fabric/flow_sharing.hpp"

namespace troupe::fabric {
namespace {

using Links = std::vector<int32_t>;

TEST(FabricFlowSharing, TwoEqualFlowsOnOneLinkGetHalfEach) {
  FlowSharing sharing({10e9});
  FlowId a = sharing.Add(Links{0});
  FlowId b = sharing.Add(Links{0});
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(a), 5e9);
  EXPECT_DOUBLE_EQ(sharing.Rate(b), 5e9);
  EXPECT_DOUBLE_EQ(sharing.LinkLoad(0), 10e9);
  EXPECT_EQ(sharing.LinkFlows(0), 2);
}

TEST(FabricFlowSharing, WeightsSplitALinkInProportion) {
  FlowSharing sharing({12});
  FlowId light = sharing.Add(Links{0}, 1);
  FlowId heavy = sharing.Add(Links{0}, 3);
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(light), 3);
  EXPECT_DOUBLE_EQ(sharing.Rate(heavy), 9);
}

TEST(FabricFlowSharing, ALoneFlowTakesItsNarrowestLink) {
  FlowSharing sharing({10, 4, 7});
  FlowId flow = sharing.Add(Links{0, 1, 2});
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(flow), 4);
}

// The parking lot: one long flow over links 0..n-1 and one short flow on each link. With equal
// capacities C every link is a bottleneck and every flow gets C/2.
TEST(FabricFlowSharing, ParkingLotSharesEqualTheClosedForm) {
  for (int n : {1, 2, 5, 20}) {
    const double capacity = 40e9;
    FlowSharing sharing(std::vector<double>(static_cast<size_t>(n), capacity));
    Links all;
    for (int l = 0; l < n; ++l) all.push_back(l);
    FlowId long_flow = sharing.Add(all);
    std::vector<FlowId> short_flows;
    for (int l = 0; l < n; ++l) short_flows.push_back(sharing.Add(Links{l}));
    sharing.Update();
    EXPECT_DOUBLE_EQ(sharing.Rate(long_flow), capacity / 2) << n << " links";
    for (FlowId flow : short_flows) EXPECT_DOUBLE_EQ(sharing.Rate(flow), capacity / 2);
  }
}

// Unequal capacities, by hand: links 10, 4, 6 and one more short flow on link 2. Link 1 is the
// first bottleneck at 4/2 = 2: the long flow and link 1's short flow get 2. Link 0 leaves 10 - 2
// = 8 to its short flow; link 2 leaves 6 - 2 = 4 to its two short flows, 2 each.
TEST(FabricFlowSharing, ParkingLotWithUnequalCapacitiesMatchesTheHandComputation) {
  FlowSharing sharing({10, 4, 6});
  FlowId long_flow = sharing.Add(Links{0, 1, 2});
  FlowId on0 = sharing.Add(Links{0});
  FlowId on1 = sharing.Add(Links{1});
  FlowId on2 = sharing.Add(Links{2});
  FlowId on2_again = sharing.Add(Links{2});
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(long_flow), 2);
  EXPECT_DOUBLE_EQ(sharing.Rate(on1), 2);
  EXPECT_DOUBLE_EQ(sharing.Rate(on0), 8);
  EXPECT_DOUBLE_EQ(sharing.Rate(on2), 2);
  EXPECT_DOUBLE_EQ(sharing.Rate(on2_again), 2);
  EXPECT_DOUBLE_EQ(sharing.LinkLoad(0), 10);
  EXPECT_DOUBLE_EQ(sharing.LinkLoad(2), 6);
}

TEST(FabricFlowSharing, AFlowCrossingNoLinkHasAnInfiniteRate) {
  FlowSharing sharing({5});
  FlowId local = sharing.Add(Links{});
  FlowId other = sharing.Add(Links{0});
  sharing.Update();
  EXPECT_EQ(sharing.Rate(local), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(sharing.Rate(other), 5);
  EXPECT_EQ(sharing.LinkFlows(0), 1);
}

TEST(FabricFlowSharing, RemovingAFlowGivesItsShareBackAndFreesItsId) {
  FlowSharing sharing({6});
  FlowId a = sharing.Add(Links{0});
  FlowId b = sharing.Add(Links{0});
  sharing.Update();
  sharing.Remove(a);
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(b), 6);
  EXPECT_EQ(sharing.flows(), 1u);
  EXPECT_EQ(sharing.Add(Links{0}), a);  // reused
}

// Two components: links {0, 1} and link {2}. A change on link 2 recomputes its flows only, and
// the rates of the other component stay as they were.
TEST(FabricFlowSharing, UpdateRecomputesOnlyTheTouchedComponent) {
  FlowSharing sharing({10, 10, 10});
  FlowId a = sharing.Add(Links{0, 1});
  FlowId b = sharing.Add(Links{1});
  FlowId c = sharing.Add(Links{2});
  sharing.Update();
  EXPECT_EQ(sharing.last_update_flows(), 3u);
  FlowId d = sharing.Add(Links{2});
  sharing.Update();
  EXPECT_EQ(sharing.last_update_flows(), 2u);  // c and d
  EXPECT_DOUBLE_EQ(sharing.Rate(c), 5);
  EXPECT_DOUBLE_EQ(sharing.Rate(d), 5);
  EXPECT_DOUBLE_EQ(sharing.Rate(a), 5);
  EXPECT_DOUBLE_EQ(sharing.Rate(b), 5);
  sharing.Update();  // nothing changed
  EXPECT_EQ(sharing.last_update_flows(), 0u);
}

// A rack's uplink slowed (a link straggler): a lone cross-rack flow over NIC, uplink, downlink,
// NIC gets the uplink's slowed capacity, and its full capacity once it is restored; only the
// component of the link whose capacity was set is re-shared.
TEST(FabricFlowSharing, ALinkSlowedByAFactorGivesItsFlowsThatShareUntilRestored) {
  const double nic = 12.5e9, uplink = 12.5e9, factor = 0.3;
  FlowSharing sharing({nic, uplink, uplink, nic, 10});
  FlowId cross = sharing.Add(Links{0, 1, 2, 3});
  FlowId other = sharing.Add(Links{4});
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(cross), uplink);
  sharing.SetCapacity(1, factor * uplink);
  sharing.Update();
  EXPECT_EQ(sharing.last_update_flows(), 1u) << "the other component is not re-shared";
  EXPECT_DOUBLE_EQ(sharing.Rate(cross), factor * uplink);
  EXPECT_DOUBLE_EQ(sharing.LinkLoad(1), factor * uplink);
  EXPECT_DOUBLE_EQ(sharing.LinkLoad(0), factor * uplink);
  EXPECT_DOUBLE_EQ(sharing.Rate(other), 10);
  sharing.SetCapacity(1, uplink);
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(cross), uplink);
  sharing.SetCapacity(1, uplink);  // unchanged: nothing to re-share
  sharing.Update();
  EXPECT_EQ(sharing.last_update_flows(), 0u);
}

TEST(FabricFlowSharing, TheSameCallsGiveTheSameRatesBitForBit) {
  std::vector<double> capacities = {7, 3.5, 11, 2.25, 9};
  FlowSharing one(capacities), two(capacities);
  std::mt19937_64 rng(3);
  std::vector<FlowId> ids;
  for (int i = 0; i < 40; ++i) {
    Links links = {static_cast<int32_t>(rng() % 5), static_cast<int32_t>(rng() % 5)};
    if (links[0] == links[1]) links.pop_back();
    double weight = 1 + static_cast<double>(rng() % 3) / 2;
    FlowId id = one.Add(links, weight);
    EXPECT_EQ(two.Add(links, weight), id);
    ids.push_back(id);
    if (i % 4 == 3) {
      one.Remove(ids[i / 2]);
      two.Remove(ids[i / 2]);
    }
    one.Update();
    two.Update();
  }
  for (FlowId id : ids) EXPECT_EQ(one.Rate(id), two.Rate(id));
}

// A flow that lists a link twice crosses it twice: it uses two shares, and counts twice in the
// link's load and flows; removing it leaves the link's list clean.
TEST(FabricFlowSharing, AFlowListingALinkTwiceTakesTwoShares) {
  FlowSharing sharing({9});
  FlowId twice = sharing.Add(Links{0, 0});
  FlowId once = sharing.Add(Links{0});
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(twice), 3);
  EXPECT_DOUBLE_EQ(sharing.Rate(once), 3);
  EXPECT_DOUBLE_EQ(sharing.LinkLoad(0), 9);
  EXPECT_EQ(sharing.LinkFlows(0), 3);
  sharing.Remove(twice);
  sharing.Update();
  EXPECT_DOUBLE_EQ(sharing.Rate(once), 9);
  EXPECT_EQ(sharing.LinkFlows(0), 1);
}

// Random flows over a few random links each, with random weights; after each batch of adds and
// removes the incremental rates equal a from-scratch FlowSharing's, and the Update recomputed
// exactly the flows that share a link, directly or through others, with a changed one.
TEST(FabricFlowSharing, IncrementalUpdateEqualsFromScratch) {
  constexpr int kLinks = 60;
  std::mt19937_64 rng(45);
  std::vector<double> capacities;
  std::uniform_real_distribution<double> capacity(1, 100);
  for (int l = 0; l < kLinks; ++l) capacities.push_back(capacity(rng));
  FlowSharing incremental(capacities);
  std::map<FlowId, std::pair<Links, double>> live;
  std::uniform_int_distribution<int> link(0, kLinks - 1), hops(0, 3), weight(1, 4);
  for (int batch = 0; batch < 200; ++batch) {
    std::vector<int32_t> changed;  // links of what was added or removed
    std::vector<FlowId> added_linkless;
    for (int change = 0; change < 1 + batch % 3; ++change) {
      if (!live.empty() && rng() % 3 == 0) {
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        changed.insert(changed.end(), it->second.first.begin(), it->second.first.end());
        incremental.Remove(it->first);
        live.erase(it);
      } else {
        Links links;
        for (int h = hops(rng); h > 0; --h) links.push_back(link(rng));
        std::sort(links.begin(), links.end());
        links.erase(std::unique(links.begin(), links.end()), links.end());
        double w = weight(rng);
        changed.insert(changed.end(), links.begin(), links.end());
        FlowId id = incremental.Add(links, w);
        live[id] = {links, w};
        if (links.empty()) added_linkless.push_back(id);
      }
    }
    incremental.Update();

    FlowSharing scratch(capacities);
    std::map<FlowId, FlowId> scratch_id;
    for (const auto& [id, flow] : live) scratch_id[id] = scratch.Add(flow.first, flow.second);
    scratch.Update();
    for (const auto& [id, flow] : live) {
      double want = scratch.Rate(scratch_id[id]), got = incremental.Rate(id);
      if (std::isinf(want)) {
        EXPECT_TRUE(std::isinf(got));
      } else {
        EXPECT_NEAR(got, want, 1e-9 * want) << "batch " << batch << " flow " << id;
      }
    }
    for (int l = 0; l < kLinks; ++l) {
      EXPECT_NEAR(incremental.LinkLoad(l), scratch.LinkLoad(l), 1e-9 * capacities[l]);
      EXPECT_EQ(incremental.LinkFlows(l), scratch.LinkFlows(l));
    }

    // The flows the changed links reach (links <-> flows), by a walk of our own.
    std::vector<bool> link_seen(kLinks, false);
    std::vector<int32_t> frontier = changed;
    for (int32_t l : changed) link_seen[static_cast<size_t>(l)] = true;
    size_t reached = 0;
    std::map<FlowId, bool> flow_seen;
    while (!frontier.empty()) {
      int32_t l = frontier.back();
      frontier.pop_back();
      for (const auto& [id, flow] : live) {
        if (flow_seen[id] || std::find(flow.first.begin(), flow.first.end(), l) == flow.first.end())
          continue;
        flow_seen[id] = true;
        ++reached;
        for (int32_t next : flow.first) {
          if (!link_seen[static_cast<size_t>(next)]) {
            link_seen[static_cast<size_t>(next)] = true;
            frontier.push_back(next);
          }
        }
      }
    }
    // Flows crossing no link are computed when added (an id removed and reused counts once).
    std::sort(added_linkless.begin(), added_linkless.end());
    added_linkless.erase(std::unique(added_linkless.begin(), added_linkless.end()),
                         added_linkless.end());
    for (FlowId id : added_linkless) reached += live.count(id) && live[id].first.empty();
    EXPECT_EQ(incremental.last_update_flows(), reached) << "batch " << batch;
  }
}

}  // namespace
}  // namespace troupe::fabric
