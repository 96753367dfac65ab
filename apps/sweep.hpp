// Sweeps: one config run over a grid of field values and seeds — the way experiments compare
// mechanisms, policies or loads side by side.
//
//   troupe sweep [CONFIG] --over scheduler.mechanism=proportional,tune --seeds 1-5 [--out DIR]
// Every combination is checked (config, overrides, workload) before any is run, so bad input
// fails fast with exit status 2 and no output. Runs are independent actor systems and run in
// parallel (emulated runs are single-threaded and deterministic, so the results do not depend on
// the parallelism). With --out, DIR/sweep.csv holds one row a run and DIR/<combination>/ each
// run's directory, its config.textproto the point's config. Any kind of run can be swept
// (runner/run_kind.hpp): its figures are the columns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "runner/progress.hpp"
#include "runner/run_kind.hpp"
#include "runtime/live_feed.hpp"

namespace troupe {

struct SweepAxis {
  std::string field;  // a --set path, e.g. scheduler.mechanism
  std::vector<std::string> values;
};

struct SweepSpec {
  std::string config;
  std::vector<std::string> sets;  // applied to every run before the axes
  std::vector<SweepAxis> axes;
  std::vector<uint64_t> seeds;  // empty: the config's seed
  std::string out_dir;          // "" writes no files
  int parallel = 1;
  ProgressMode progress = ProgressMode::kOff;  // a line as each run ends ("sweep: 3/12 runs ...")
  RunProvenance provenance;                    // every run's config.textproto header
  LiveSink* live = nullptr;  // --serve: the web view, told as each run starts and ends
};

struct SweepRow {
  std::vector<std::string> values;  // one per axis
  uint64_t seed = 0;
  std::vector<RunMetric>
      metrics;          // the run's figures (runner/run_kind.hpp), the same for every row
  std::string run_dir;  // the run's folder inside the sweep's ("": a sweep without --out)
};

// "field=v1,v2,..." -> axis; "1-5" or "1,3,7" -> seeds.
Status ParseSweepAxis(const std::string& text, SweepAxis* axis);
Status ParseSeeds(const std::string& text, std::vector<uint64_t>* seeds);

// Runs every combination; rows come back in grid order (axes in order, last axis fastest, then
// seeds), whatever order they ran in.
Status RunSweep(const SweepSpec& spec, std::vector<SweepRow>* rows);

// A table of every run, then — with several seeds — each combination's mean over seeds ± the
// standard deviation (runner/seed_spread.hpp), and how many seeds.
std::string FormatSweepTable(const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows);
std::string SweepCsv(const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows);

}  // namespace troupe
