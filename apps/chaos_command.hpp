// `troupe chaos`: a campaign of runs of one config, each under its own random fault schedule,
// checked against the run invariants (emulation/run_invariants.hpp) — or, for a parameter-server
// config, against "nothing acknowledged lost and the fault-free run's AUC".
//
//   troupe chaos CONFIG --runs N --seed S [--faults K] [--kinds crash,slow,...] [--set ...]
//
// Run 0 is the config without faults: the baseline each faulty run is compared with, and the
// source of the fault window (faults fall in the first 80% of its makespan). Run i (1..N) draws K
// faults from seed S + i - 1 (faults.random.seed), so a failing run replays exactly with the
// command printed under the table. Emulated mode only: the wall clock would make runs differ.
// Exit status: 0 when every run holds every invariant, 1 otherwise, 2 on bad input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

struct ChaosSpec {
  std::string config;
  int runs = 10;
  uint64_t seed = 1;
  int faults_per_run = 4;
  std::vector<std::string> kinds;  // empty: every kind the config's run can take
  std::vector<std::string> sets;
};

int RunChaos(const ChaosSpec& spec);

}  // namespace troupe
