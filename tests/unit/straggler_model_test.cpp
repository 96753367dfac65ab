// Stragglers (faults/straggler_model.hpp, faults/straggler_trace.hpp; docs/failures.md
// "Stragglers"): draws replay from the seed and come at the configured rate, overlapping episodes
// on one server leave the slowest in force, and bad blocks and traces are one line naming where.
#include "faults/straggler_model.hpp"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "faults/straggler_trace.hpp"

namespace troupe {
namespace {

config::Stragglers Block(const std::string& text) {
  config::Stragglers block;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &block)) << text;
  return block;
}

FaultUniverse Servers(int64_t servers, int32_t gpus) {
  FaultUniverse u;
  u.servers = servers;
  u.gpus_of_server.assign(static_cast<size_t>(servers), gpus);
  return u;
}

std::vector<StragglerEpisode> Draw(const config::Stragglers& block, uint64_t seed,
                                   const FaultUniverse& u) {
  std::vector<StragglerEpisode> episodes;
  Status s = DrawStragglers(block, seed, u, &episodes);
  EXPECT_TRUE(s.ok()) << s.message();
  return episodes;
}

std::vector<std::string> Described(const std::vector<FaultEvent>& faults) {
  std::vector<std::string> out;
  for (const FaultEvent& e : faults) out.push_back(e.Describe());
  return out;
}

std::vector<FaultEvent> Planned(const config::Stragglers& block, uint64_t seed,
                                const FaultUniverse& u) {
  std::vector<FaultEvent> faults;
  std::vector<LinkStretch> stretches;
  Status s = PlanStragglers(block, seed, u, &faults, &stretches);
  EXPECT_TRUE(s.ok()) << s.message();
  return faults;
}

constexpr char kGpuAndHost[] =
    "component { component: \"gpu\" per_gpu_hour: 0.0005 } "
    "component { component: \"host\" mtbf_h: 400 factor_min: 0.2 factor_max: 0.3 } "
    "end_s: 2592000";

TEST(Stragglers, TheSameSeedDrawsTheSameEpisodesAndAnotherSeedOthers) {
  const FaultUniverse u = Servers(16, 8);
  const std::vector<FaultEvent> a = Planned(Block(kGpuAndHost), 7, u);
  ASSERT_GT(a.size(), 20u);
  EXPECT_EQ(Described(a), Described(Planned(Block(kGpuAndHost), 7, u)));
  EXPECT_NE(Described(a), Described(Planned(Block(kGpuAndHost), 8, u)));
  EXPECT_NE(Described(a), Described(Planned(Block(std::string(kGpuAndHost) + " seed: 9"), 7, u)));
  for (const FaultEvent& e : a) {
    EXPECT_EQ(e.kind, FaultKind::kSlow);
    EXPECT_EQ(e.target.kind, EndpointKind::kServer);
    EXPECT_GE(e.duration_s, 1);
    EXPECT_TRUE(e.cause == "straggler:gpu" || e.cause == "straggler:host") << e.cause;
  }
}

TEST(Stragglers, EpisodesComeAtTheConfiguredRateForTheirMeanDurationAndFactors) {
  // 16 servers x 8 GPUs x 0.0005 an hour x 720 h: 46.08 gpu episodes expected a seed; host: 16 x
  // 720 / 400 = 28.8. Summed over 20 seeds, each count's 99.9% Poisson interval is mean +- 3.3 sd.
  const FaultUniverse u = Servers(16, 8);
  std::map<int, double> count;
  double duration_sum = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (const StragglerEpisode& e : Draw(Block(kGpuAndHost), seed, u)) {
      ++count[e.component];
      duration_sum += e.duration_s;
      EXPECT_GE(e.start_s, 0);
      EXPECT_LT(e.start_s, 2592000);
      if (e.component == 1) {
        EXPECT_GE(e.factor, 0.2);
        EXPECT_LE(e.factor, 0.3);
      } else {
        EXPECT_GE(e.factor, 0.5);
        EXPECT_LE(e.factor, 0.9);
      }
    }
  }
  const double gpu_mean = 20 * 46.08, host_mean = 20 * 28.8;
  EXPECT_NEAR(count[0], gpu_mean, 3.3 * std::sqrt(gpu_mean));
  EXPECT_NEAR(count[1], host_mean, 3.3 * std::sqrt(host_mean));
  // Exponential durations of mean 3600 s: the mean of ~1,500 within 10%.
  EXPECT_NEAR(duration_sum / (count[0] + count[1]), 3600, 360);
}

TEST(Stragglers, OverlappingEpisodesOnAServerLeaveTheSlowestInForce) {
  const std::vector<FaultEvent> faults = SlowFaultsOf({
      {.component = 0, .server = 2, .start_s = 100, .duration_s = 300, .factor = 0.5},
      {.component = 1, .server = 2, .start_s = 200, .duration_s = 100, .factor = 0.2},
      {.component = 0, .server = 2, .start_s = 250, .duration_s = 100, .factor = 0.8},
      {.component = 1, .server = 0, .start_s = 150, .duration_s = 50, .factor = 0.7},
  });
  EXPECT_EQ(Described(faults), (std::vector<std::string>{
                                   "slow server:0 @150s +50s x0.7 (straggler:host)",
                                   "slow server:2 @100s +100s x0.5 (straggler:gpu)",
                                   "slow server:2 @200s +100s x0.2 (straggler:host)",
                                   "slow server:2 @300s +100s x0.5 (straggler:gpu)",
                               }));
}

TEST(Stragglers, BadBlocksAreOneLineNamingTheField) {
  const struct {
    std::string block, expected;
  } cases[] = {
      {"", "faults.stragglers: needs a component to draw slow episodes from, or a trace"},
      {"component { component: \"fan\" mtbf_h: 5 }",
       "faults.stragglers.component[0].component: unknown component 'fan' (gpu, host, link)"},
      {"component { component: \"gpu\" }",
       "faults.stragglers.component[0]: gpu needs a rate: per_gpu_hour, per_server_hour or mtbf_h"},
      {"component { component: \"gpu\" mtbf_h: 5 per_gpu_hour: 0.1 }",
       "faults.stragglers.component[0]: gpu has 2 rates; give one"},
      {"component { component: \"host\" mtbf_h: 5 factor_min: 0.8 factor_max: 0.4 }",
       "faults.stragglers.component[0].factor_min: 0.8 is above factor_max 0.4"},
      {"component { component: \"host\" mtbf_h: 5 } component { component: \"host\" mtbf_h: 9 }",
       "faults.stragglers.component[1].component: host is listed twice"},
      {"component { component: \"host\" mtbf_h: 5 } start_s: 100 end_s: 100",
       "faults.stragglers.end_s: must be after start_s"},
      {"component { component: \"link\" per_server_hour: 0.01 }",
       "faults.stragglers.component[0]: a link's rate is mtbf_h (hours between slow episodes of "
       "one rack's uplink); per_gpu_hour and per_server_hour are for gpu and host"},
  };
  for (const auto& c : cases) {
    Status s = CheckStragglers(Block(c.block), "faults.stragglers");
    EXPECT_FALSE(s.ok()) << c.block;
    EXPECT_EQ(s.message(), c.expected);
  }
}

// 16 servers in racks of 4: the universe of a run with a fabric.
FaultUniverse FourRacks() {
  FaultUniverse u = Servers(16, 8);
  for (int32_t s = 0; s < 16; ++s) u.rack_of_server.push_back(s / 4);
  return u;
}

TEST(Stragglers, LinkEpisodesSlowRackUplinksAtTheirRateAndNeverTheServers) {
  // 4 racks x 720 h / 100 h: 28.8 link episodes expected a seed; over 20 seeds within 3.3 sd.
  const config::Stragglers block =
      Block("component { component: \"link\" mtbf_h: 100 } end_s: 2592000");
  double count = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (const StragglerEpisode& e : Draw(block, seed, FourRacks())) {
      ++count;
      EXPECT_EQ(e.component, kLinkComponent);
      EXPECT_GE(e.server, 0);
      EXPECT_LT(e.server, 4) << "a link episode names a rack";
    }
  }
  EXPECT_NEAR(count, 20 * 28.8, 3.3 * std::sqrt(20 * 28.8));
  EXPECT_TRUE(Planned(block, 1, FourRacks()).empty()) << "no server slows";
  std::vector<FaultEvent> faults;
  std::vector<LinkStretch> stretches;
  ASSERT_TRUE(PlanStragglers(block, 1, FourRacks(), &faults, &stretches).ok());
  EXPECT_FALSE(stretches.empty());
  // Adding a link component moves none of the gpu and host draws.
  const std::string both =
      std::string(kGpuAndHost) + " component { component: \"link\" mtbf_h: 100 }";
  EXPECT_EQ(Described(Planned(Block(both), 7, FourRacks())),
            Described(Planned(Block(kGpuAndHost), 7, FourRacks())));
}

TEST(Stragglers, AMillionEpisodesOfAllComponentsTogetherIsTheCap) {
  // 128 GPUs x 5 an hour x 1000 h = 640,000 gpu episodes expected, 4 racks x 160 an hour x
  // 1000 h = 640,000 link episodes: each kind alone stays under the cap (by over 400 standard
  // deviations), both together pass it.
  const std::string both =
      "component { component: \"gpu\" per_gpu_hour: 5 } "
      "component { component: \"link\" mtbf_h: 0.00625 } end_s: 3600000";
  std::vector<FaultEvent> faults;
  std::vector<LinkStretch> stretches;
  const Status s = PlanStragglers(Block(both), 1, FourRacks(), &faults, &stretches);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("more than 1000000 slow episodes"), std::string::npos) << s.message();
}

constexpr char kHeader[] = "time_s,component,server,duration_s,factor\n";

TEST(StragglerTrace, ALinkRowNamesARackAndOverlapsLeaveTheSlowestInForce) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/links.csv";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      (std::string(kHeader) + "100,link,3,300,0.5\n200,link,3,50,0.25\n0,host,15,9,0.5\n").c_str(),
      f);
  std::fclose(f);
  config::Stragglers block;
  block.set_trace(path);
  std::vector<FaultEvent> faults;
  std::vector<LinkStretch> stretches;
  ASSERT_TRUE(PlanStragglers(block, 1, FourRacks(), &faults, &stretches).ok());
  ASSERT_EQ(stretches.size(), 3u);
  const double expected[][3] = {{100, 200, 0.5}, {200, 250, 0.25}, {250, 400, 0.5}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(stretches[i].rack, 3);
    EXPECT_EQ(stretches[i].from_s, expected[i][0]);
    EXPECT_EQ(stretches[i].to_s, expected[i][1]);
    EXPECT_EQ(stretches[i].factor, expected[i][2]);
  }
  EXPECT_EQ(Described(Planned(block, 1, FourRacks())),
            (std::vector<std::string>{"slow server:15 @0s +9s x0.5 (straggler:host)"}));
  std::vector<StragglerEpisode> episodes;
  Status s = ParseStragglerTrace(std::string(kHeader) + "0,link,4,60,0.5\n", "slow.csv",
                                 FourRacks(), &episodes);
  EXPECT_EQ(s.message(), "slow.csv:2: column 'server': rack 4 is not in the fabric (racks 0..3)");
}

TEST(StragglerTrace, RowsAreEpisodesInAnyColumnOrder) {
  std::vector<StragglerEpisode> episodes;
  Status s = ParseStragglerTrace(
      "server,factor,time_s,duration_s,component\n# a comment\n\n"
      "3,0.5,7200,600,gpu\n0,1,0,1,host\n",
      "slow.csv", Servers(4, 8), &episodes);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(episodes.size(), 2u);
  EXPECT_EQ(episodes[0].server, 3);
  EXPECT_EQ(episodes[0].start_s, 7200);
  EXPECT_EQ(episodes[0].duration_s, 600);
  EXPECT_EQ(episodes[0].factor, 0.5);
  EXPECT_EQ(episodes[0].component, 0);
  EXPECT_EQ(episodes[1].component, 1);
}

TEST(StragglerTrace, EveryBadRowIsOneLineNamingFileLineAndColumnAndAppendsNothing) {
  const struct {
    std::string rows, expected;
  } cases[] = {
      {"0,gpu,1,60,0.5\n10,gpu,4,60,0.5\n",
       "slow.csv:3: column 'server': server 4 is not in the cluster (servers 0..3)"},
      {"0,gpu,-1,60,0.5\n",
       "slow.csv:2: column 'server': server -1 is not in the cluster (servers 0..3)"},
      {"-5,gpu,0,60,0.5\n", "slow.csv:2: column 'time_s': must be in [0, 1000000000], got -5"},
      {"0,gpu,0,0,0.5\n", "slow.csv:2: column 'duration_s': must be > 0, got 0"},
      {"0,gpu,0,60,0\n", "slow.csv:2: column 'factor': must be in [0.001, 1], got 0"},
      {"0,gpu,0,60,1.5\n", "slow.csv:2: column 'factor': must be in [0.001, 1], got 1.5"},
      {"0,gpu,0,60,slow\n", "slow.csv:2: column 'factor': "},
      {"0,fan,0,60,0.5\n", "slow.csv:2: column 'component': unknown component 'fan'"},
      {"0,link,0,60,0.5\n",
       "slow.csv:2: column 'server': a link row slows a rack's uplink (server: the rack), and the "
       "run has no fabric"},
      {"0,gpu,0,60\n", "slow.csv:2: expected 5 columns, found 4"},
  };
  for (const auto& c : cases) {
    std::vector<StragglerEpisode> episodes;
    Status s = ParseStragglerTrace(kHeader + c.rows, "slow.csv", Servers(4, 8), &episodes);
    EXPECT_FALSE(s.ok()) << c.rows;
    EXPECT_EQ(s.message().rfind(c.expected, 0), 0u) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
    EXPECT_TRUE(episodes.empty()) << c.rows;
  }
  std::vector<StragglerEpisode> episodes;
  Status s =
      ParseStragglerTrace("time_s,component,server,factor\n", "slow.csv", Servers(4, 8), &episodes);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("duration_s"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace troupe
