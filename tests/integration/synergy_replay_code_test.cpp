// Job for job against Synergy's own simulator, with GREEDY and TUNE as its code has them
// (scheduler.mechanism_name greedy_synergy_sim / tune_synergy_sim, under LAS the _las ones;
// scheduling/synergy_sim.hpp).
//
// tests/data/synergy-replay/multigpu-seed7/ holds 300 jobs of Synergy's generator with its
// multi-GPU mix (1, 2, 4 and 8 GPUs), replayed on 4 servers of 8 GPUs, 24 CPUs and 500 GB, and
// Synergy's JCT of every job under each policy and mechanism, written by
// `scripts/compare-synergy.sh --multi-gpu --seed 7 --jobs 300 --servers 4 --test-data DIR`; its
// models are named as configs/models/synergy-simulator/ states them (capped ideals, Synergy's
// speed-ups), the catalogue the replay reads. Jobs span servers, TUNE makes room for them and
// GREEDY skips them: every job must finish when Synergy's simulator finished it, under every
// policy (FTF in Synergy's order) and mechanism. The single-GPU sequences of
// synergy_replay_test.cpp are replayed here too with these mechanisms, LAS under GREEDY included
// (Synergy's LAS leaves the GPUs of a job whose CPUs do not fit idle), and the starving FTF
// sequence (ftf-starving-seed7) under GREEDY and TUNE. multigpu-starving-seed7/ (500 jobs,
// `--multi-gpu --seed 7 --jobs 500 --servers 2`) overloads 2 servers so that jobs wait past the
// starvation guard's 1000 h under FIFO + GREEDY: Synergy's FIFO marks them but sorts by arrival
// alone, and 45 of its jobs finish elsewhere if troupe's FIFO reads the mark.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

struct Replay {
  std::string name;  // the folder under tests/data/synergy-replay
  int servers = 2;
  bool synergy_models = false;  // configs/models/synergy-simulator
  std::string policy;
  std::string mechanism;  // the column of expected.csv
};

void PrintTo(const Replay& r, std::ostream* os) {
  *os << r.name << " " << r.policy << "/" << r.mechanism;
}

// The mechanism troupe runs for Synergy's `mechanism` under `policy`.
std::string CodeMechanism(const std::string& policy, const std::string& mechanism) {
  if (mechanism == "proportional") return mechanism;
  return mechanism + "_synergy_sim" + (policy == "las" ? "_las" : "");
}

std::string ConfigFor(const Replay& r, const std::string& trace) {
  std::string models;
  if (r.synergy_models) {
    models = " models_dir: \"" + SourcePath("configs/models/synergy-simulator") + "\"";
  }
  return "cluster { servers { name: \"synergy\" count: " + std::to_string(r.servers) +
         " gpus: 8 cpus: 24 memory_gb: 500 } }\nworkload { trace_file: \"" + trace + "\"" + models +
         " }\nscheduler { round_s: 300 }\nrun { mode: emulated seed: 1 }\n";
}

std::map<int64_t, double> Expected(const std::string& folder, const std::string& column) {
  std::map<int64_t, double> jct;
  for (const auto& row : ReadCsv(folder + "/expected.csv")) {
    auto it = row.find(column);
    if (it == row.end()) {
      ADD_FAILURE() << folder << "/expected.csv has no column " << column;
      return {};
    }
    jct[std::stoll(row.at("job_id"))] = std::stod(it->second);
  }
  return jct;
}

class SynergyCodeReplay : public ::testing::TestWithParam<Replay> {};

TEST_P(SynergyCodeReplay, EveryJobFinishesWhenSynergysSimulatorFinishedIt) {
  const Replay& p = GetParam();
  const std::string folder = SourcePath("tests/data/synergy-replay/" + p.name);
  const std::map<int64_t, double> expected = Expected(folder, p.policy + "/" + p.mechanism);
  ASSERT_GE(expected.size(), 100u);
  std::vector<std::string> sets = {
      "scheduler.policy=" + p.policy,
      "scheduler.mechanism_name=" + CodeMechanism(p.policy, p.mechanism)};
  if (p.policy == "ftf") sets.push_back("scheduler.ftf_order=synergy");
  const RunResult r = RunConfigText(ConfigFor(p, folder + "/trace.csv"), sets);
  ASSERT_EQ(r.jobs.size(), expected.size());
  int differing = 0;
  for (const JobRecord& job : r.jobs) {
    auto it = expected.find(job.job_id);
    ASSERT_NE(it, expected.end()) << "job " << job.job_id << " is not in Synergy's run";
    if (std::abs(job.jct_s - it->second) > 1e-3) {
      if (++differing <= 5) {
        ADD_FAILURE() << "job " << job.job_id << ": troupe " << job.jct_s << " s, Synergy "
                      << it->second << " s";
      }
    }
  }
  EXPECT_EQ(differing, 0) << "of " << expected.size() << " jobs";
}

std::vector<Replay> AllReplays() {
  std::vector<Replay> all;
  for (const char* policy : {"fifo", "srtf", "las", "ftf"}) {
    for (const char* mechanism : {"proportional", "greedy", "tune"}) {
      all.push_back(Replay{"multigpu-seed7", 4, true, policy, mechanism});
    }
    for (const char* seed : {"seed7", "seed11"}) {
      for (const char* mechanism : {"greedy", "tune"}) {
        all.push_back(Replay{seed, 2, false, policy, mechanism});
      }
    }
  }
  for (const char* mechanism : {"greedy", "tune"}) {
    all.push_back(Replay{"ftf-starving-seed7", 2, false, "ftf", mechanism});
  }
  all.push_back(Replay{"multigpu-starving-seed7", 2, true, "fifo", "greedy"});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Sequences, SynergyCodeReplay, ::testing::ValuesIn(AllReplays()),
                         [](const ::testing::TestParamInfo<Replay>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name + "_" + info.param.policy + "_" + info.param.mechanism;
                         });

}  // namespace
}  // namespace troupe::testing
