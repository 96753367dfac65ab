// The live feed and its JSON: what the web view shows follows the records a run makes.
#include "runtime/live_feed.hpp"

#include <gtest/gtest.h>

#include "live/live_json.hpp"
#include "live/live_view.hpp"

namespace troupe {
namespace {

LiveFeed TwoServers() {
  return LiveFeed("cluster", "test", {LiveServer{"s0", 8, 24, 500}, LiveServer{"s1", 4, 12, 250}});
}

JobRecord Finished(int64_t id, double jct_s, bool measured = false) {
  JobRecord job;
  job.job_id = id;
  job.end_s = 100 + jct_s;
  job.jct_s = jct_s;
  job.measured = measured;
  return job;
}

TEST(LiveFeed, CountsJobsAsTheRoundsGo) {
  LiveFeed feed = TwoServers();
  RoundRecord r0{0, 0, 300, 10, 30, 600, 3, 2, 0};
  feed.OnRound(r0);
  feed.OnJob(Finished(1, 200, true));
  JobRecord failed;
  failed.failure = "lost";
  feed.OnJob(failed);
  JobRecord unfinished;  // recorded as the run ends: neither finished nor failed
  feed.OnJob(unfinished);
  RoundRecord r1{1, 300, 600, 4, 12, 250, 4, 1, 1};
  feed.OnRound(r1);
  const LiveSnapshot s = feed.Snapshot();
  EXPECT_EQ(s.rounds, 2);
  EXPECT_EQ(s.virtual_s, 300);
  EXPECT_EQ(s.jobs_finished, 1);
  EXPECT_EQ(s.measured_finished, 1);
  EXPECT_EQ(s.jobs_failed, 1);
  // Round 1 began with 4 jobs running and 1 queued; the 2 that ended in it (recorded before its
  // round record) were among them, so 5 had arrived, as in round 0.
  EXPECT_EQ(s.jobs_arrived, 5);
  EXPECT_EQ(s.gpus_total, 12);
  EXPECT_EQ(s.latest.gpus, 4);
  ASSERT_EQ(s.timeline.size(), 2u);
  EXPECT_EQ(s.jct_cdf, (std::vector<std::pair<double, double>>{{200, 1}}));
}

TEST(LiveFeed, ServersWithoutLeasesInARoundHoldNothing) {
  LiveFeed feed = TwoServers();
  feed.OnServerRound(0, 0, 8, 24, 500);
  feed.OnServerRound(1, 0, 2, 6, 100);
  feed.OnRound(RoundRecord{0, 0, 300, 10, 30, 600, 2, 0, 0});
  feed.OnServerRound(0, 1, 4, 12, 250);
  feed.OnRound(RoundRecord{1, 300, 600, 4, 12, 250, 1, 0, 0});
  LiveSnapshot s = feed.Snapshot();
  EXPECT_EQ(s.servers[0].gpus_used, 4);
  EXPECT_EQ(s.servers[1].gpus_used, 0);
  // A server already holding the next round's leases keeps them when this round is recorded.
  feed.OnServerRound(1, 3, 4, 12, 250);
  feed.OnRound(RoundRecord{2, 600, 900, 0, 0, 0, 0, 0, 0});
  s = feed.Snapshot();
  EXPECT_EQ(s.servers[0].gpus_used, 0);
  EXPECT_EQ(s.servers[1].gpus_used, 4);
}

TEST(LiveFeed, TimelineStaysBoundedAndSpansTheRun) {
  LiveFeed feed = TwoServers();
  for (int64_t r = 0; r < 10000; ++r) {
    feed.OnRound(RoundRecord{r, r * 300.0, (r + 1) * 300.0, 1, 1, 1, 1, 0, 0});
  }
  const LiveSnapshot s = feed.Snapshot();
  EXPECT_LT(s.timeline.size(), LiveFeed::kMaxTimeline);
  EXPECT_GT(s.timeline.size(), LiveFeed::kMaxTimeline / 4);
  EXPECT_EQ(s.timeline.front().start_s, 0);
  EXPECT_GT(s.timeline.back().start_s, 9000 * 300.0);
}

TEST(LiveFeed, CdfRunsFromTheShortestToTheLongestJob) {
  // Jobs finishing in any order, over several snapshots: the CDF is of all of them.
  LiveFeed feed = TwoServers();
  for (int i = 1000; i >= 1; --i) {
    feed.OnJob(Finished(i, i));
    if (i % 300 == 0) feed.Snapshot();
  }
  const auto cdf = feed.Snapshot().jct_cdf;
  ASSERT_EQ(cdf.size(), static_cast<size_t>(LiveFeed::kCdfPoints));
  EXPECT_EQ(cdf.front(), std::make_pair(1.0, 0.001));
  EXPECT_EQ(cdf[50], std::make_pair(500.0, 0.5));
  EXPECT_EQ(cdf.back(), std::make_pair(1000.0, 1.0));
  EXPECT_EQ(CdfOfSorted({3, 5}, LiveFeed::kCdfPoints).size(), 2u);
  EXPECT_TRUE(CdfOfSorted({}, LiveFeed::kCdfPoints).empty());
}

TEST(LiveFeed, ParameterServerStepsAreThoseEveryNodeFinished) {
  LiveFeed feed("parameter server", "ps", {});
  feed.MakePs(10, 2);
  feed.OnPsTrainer(0, 0, 0.7, 0.001, 0.002, 0.003, 0.004);
  feed.OnPsTrainer(1, 0, 0.6, 0.001, 0.002, 0.003, 0.004);
  TierCounts counts;
  counts.keys = 10;
  counts.hbm_hits = 4;
  feed.OnPsShard(0.5, counts);
  feed.OnPsShard(0.5, counts);
  LiveSnapshot s = feed.Snapshot();
  EXPECT_TRUE(s.has_ps);
  EXPECT_EQ(s.ps.steps_done, 0);  // node 1 has finished none
  feed.OnPsTrainer(0, 1, 0.7, 0.001, 0.002, 0.003, 0.004);
  s = feed.Snapshot();
  EXPECT_EQ(s.ps.steps_done, 1);
  EXPECT_EQ(s.ps.tiers.keys, 20);
  EXPECT_DOUBLE_EQ(s.ps.tiers.hbm_hit_rate(), 0.4);
  const std::string json = SnapshotJson(s, 3);
  EXPECT_NE(json.find(R"("steps_total":10,"steps_done":1)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("ssd":0.5,)"), std::string::npos) << json;  // mean per shard report
  EXPECT_NE(json.find(R"("hbm_hit_rate":0.4,)"), std::string::npos) << json;
}

TEST(LiveJson, SnapshotIsJsonWithTheRunsNumbers) {
  LiveFeed feed = TwoServers();
  feed.OnRound(RoundRecord{0, 0, 300, 10, 30, 600, 3, 2, 0});
  feed.OnJob(Finished(1, 200));
  feed.OnFault(FaultRecord{60, "crash:server 1@60", "killed \"server\" 1\n", -1});
  LiveSnapshot s = feed.Snapshot();
  s.done = true;
  const std::string json = SnapshotJson(s, 7);
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_NE(json.find("\"version\":7"), std::string::npos) << json;
  EXPECT_NE(json.find("\"done\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"finished\":1,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"jct_cdf\":[[200,1]]"), std::string::npos) << json;
  // Quotes and control characters are escaped; a fault never recovered is -1.
  EXPECT_NE(json.find(R"("effect":"killed \"server\" 1\u000a","recovered_s":-1)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"name":"s1","gpus":4,"used":0,)"), std::string::npos) << json;
}

// A run on a fabric: the links of the latest round, busiest first; a round without traffic
// shows none.
TEST(LiveFeed, HotLinksAreTheLatestRoundsBusiestFirst) {
  LiveFeed feed = TwoServers();
  std::vector<LiveLink> links = {{"server0.up", 1e9}, {"server0.down", 1e9}, {"rack0.up", 2e9}};
  for (int i = 0; i < 20; ++i) links.push_back({"server" + std::to_string(i + 1) + ".up", 1e9});
  feed.SetFabric(links);
  // Over 300 s: 0.5, 0.9 and 0.5 of capacity (a tie, kept in the topology's order).
  feed.OnLinks(
      {{0, 0, 0, 300, 150e9, 1, 0}, {0, 1, 0, 300, 270e9, 2, 0}, {0, 2, 0, 300, 300e9, 1, 0}});
  feed.OnRound(RoundRecord{0, 0, 300, 10, 30, 600, 2, 0, 0});
  LiveSnapshot s = feed.Snapshot();
  ASSERT_TRUE(s.has_fabric);
  EXPECT_EQ(s.fabric.links, 23);
  EXPECT_EQ(s.fabric.busy, 3);
  ASSERT_EQ(s.fabric.hot.size(), 3u);
  EXPECT_EQ(s.fabric.hot[0].name, "server0.down");
  EXPECT_DOUBLE_EQ(s.fabric.hot[0].utilisation, 0.9);
  EXPECT_EQ(s.fabric.hot[0].flows, 2);
  EXPECT_EQ(s.fabric.hot[1].name, "server0.up");
  EXPECT_EQ(s.fabric.hot[2].name, "rack0.up");
  EXPECT_NE(
      SnapshotJson(s, 1).find(
          R"("fabric":{"links":23,"busy":3,"hot":[{"name":"server0.down","util":0.9,"flows":2},)"),
      std::string::npos)
      << SnapshotJson(s, 1);

  feed.OnRound(RoundRecord{1, 300, 600, 10, 30, 600, 2, 0, 0});  // no link carried traffic
  s = feed.Snapshot();
  EXPECT_EQ(s.fabric.busy, 0);
  EXPECT_TRUE(s.fabric.hot.empty());

  std::vector<LinkRecord> all;  // every link busy: the view lists the busiest kHotLinks
  for (int32_t i = 0; i < 23; ++i) all.push_back({2, i, 600, 900, 1e9 * (i + 1), 1, 0});
  feed.OnLinks(all);
  feed.OnRound(RoundRecord{2, 600, 900, 10, 30, 600, 2, 0, 0});
  s = feed.Snapshot();
  EXPECT_EQ(s.fabric.busy, 23);
  ASSERT_EQ(s.fabric.hot.size(), LiveFeed::kHotLinks);
  EXPECT_EQ(s.fabric.hot.front().name, "server20.up");
}

TEST(LiveJson, ARunWithoutAFabricSendsNoLinks) {
  LiveFeed feed = TwoServers();
  feed.OnRound(RoundRecord{0, 0, 300, 10, 30, 600, 2, 0, 0});
  const LiveSnapshot s = feed.Snapshot();
  EXPECT_FALSE(s.has_fabric);
  EXPECT_EQ(SnapshotJson(s, 1).find("fabric"), std::string::npos);
}

TEST(LiveView, ServesTheLatestSnapshotUntilStopped) {
  LiveView view;
  ASSERT_TRUE(view.Start("127.0.0.1", 0, "--serve").ok());
  EXPECT_GT(view.port(), 0);
  int64_t version = -1;
  view.StateJson(&version);
  EXPECT_EQ(version, 0);
  EXPECT_EQ(view.StateJson(), "{\"version\":0}");
  LiveSnapshot s;
  s.rounds = 42;
  view.Publish(SnapshotJson(s, 1), 1);
  EXPECT_TRUE(view.WaitNewer(0, 1000));
  EXPECT_NE(view.StateJson(&version).find("\"rounds\":42"), std::string::npos);
  EXPECT_EQ(version, 1);
  view.Stop();
  EXPECT_FALSE(view.WaitNewer(1, 1000));  // a stopped view ends its event streams
}

TEST(LiveView, APortInUseIsBadInputNamingTheFlag) {
  LiveView first;
  ASSERT_TRUE(first.Start("127.0.0.1", 0, "--serve").ok());
  LiveView second;
  const Status s = second.Start("127.0.0.1", first.port(), "--serve");
  EXPECT_EQ(s.exit_code(), 2);
  EXPECT_NE(s.message().find("--serve 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace troupe
