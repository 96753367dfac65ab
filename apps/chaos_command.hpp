// `troupe chaos`: a campaign of runs of one config, each under its own random fault schedule,
// checked against the run invariants (faults/run_invariants.hpp) — or, for a parameter-server
// config, against "nothing acknowledged lost and the fault-free run's AUC".
//
//   troupe chaos CONFIG --runs N --seed S [--faults K] [--kinds crash,slow,...] [--set ...]
//
// Run 0 is the config without faults: the baseline each faulty run is compared with, and the
// source of the fault window (faults fall in the first 80% of its makespan). Run i (1..N) draws K
// faults from seed S + i - 1 (faults.random.seed), so a failing run replays exactly with the
// command printed under the table. Emulated mode only: the wall clock would make runs differ.
// The runs' log lines are tagged with their run ("[run 3]"); a progress line on stderr counts the
// runs (--quiet: none). With --keep DIR, each failing run's directory is kept as DIR/run-N (its
// config.textproto replays it with `troupe run`), with --keep-all every run's; DIR follows the
// output-folder rules (runner/output_folder.hpp): new, empty or troupe's.
// Exit status: 0 when every run holds every invariant, 1 otherwise, 2 on bad input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/run_record.hpp"

namespace troupe {

struct ChaosSpec {
  std::string config;
  int runs = 10;
  uint64_t seed = 1;
  int faults_per_run = 4;
  std::vector<std::string> kinds;  // empty: every kind the config's run can take
  std::vector<std::string> sets;
  std::string keep_dir;   // "": no run directory is kept
  bool keep_all = false;  // keep every run's directory, not only the failing ones'
  bool quiet = false;
  RunProvenance provenance;
};

int RunChaos(const ChaosSpec& spec);

}  // namespace troupe
