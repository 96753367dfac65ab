#include "apps/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "base/parse.hpp"
#include "base/status_macros.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "runner/output_folder.hpp"
#include "runner/run_directory.hpp"
#include "runner/run_kind.hpp"

namespace troupe {
namespace {

constexpr char kSweepCsv[] = "sweep.csv";

struct Combination {
  std::vector<std::string> values;
  uint64_t seed = 0;
  std::unique_ptr<PlannedRun> run;
};

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// A value as it may stand in a folder name: letters, digits, '.', '+' and '-' are kept (a leading
// '.' is not), anything else becomes '_', and at most 40 characters. A value that had to change
// (a path, say) gets a hash of itself appended, so two values never share a folder.
std::string SafeValue(const std::string& value) {
  std::string safe;
  for (char c : value.substr(0, 40)) {
    const bool kept = std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' ||
                      (c == '.' && !safe.empty());
    safe += kept ? c : '_';
  }
  if (safe == value) return safe;
  uint32_t hash = 2166136261u;  // FNV-1a
  for (char c : value) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "~%08x", hash);
  return safe + suffix;
}

// A folder name for one run: field leaves and values, e.g. "mechanism-tune_seed-3".
std::string RunName(const std::vector<SweepAxis>& axes, const Combination& c) {
  std::string name;
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::string& field = axes[i].field;
    name += SafeValue(field.substr(field.rfind('.') + 1)) + "-" + SafeValue(c.values[i]) + "_";
  }
  return name + "seed-" + std::to_string(c.seed);
}

// Every run's folder inside the sweep's must be free or troupe's, and no two runs may share one.
Status CheckRunFolders(const SweepSpec& spec, const std::vector<Combination>& grid) {
  RETURN_IF_ERROR(CheckOutputFolder(spec.out_dir, "--out"));
  std::set<std::string> seen;
  for (const Combination& c : grid) {
    if (!seen.insert(c.run->out_dir()).second) {
      return Status::InvalidInput("--over: two runs would share the folder " + c.run->out_dir() +
                                  " (a value or seed is repeated)");
    }
    RETURN_IF_ERROR(CheckOutputFolder(c.run->out_dir(), "sweep run"));
  }
  std::error_code ec;
  std::filesystem::create_directories(spec.out_dir, ec);
  if (ec) return Status::IoError(spec.out_dir + ": cannot create folder: " + ec.message());
  // An earlier sweep's table no longer describes the runs about to replace its own.
  std::filesystem::remove(spec.out_dir + "/" + kSweepCsv, ec);
  return WriteOutputMarker(OutputTarget(spec.out_dir), "sweep");
}

// sweep.csv, written whole or not at all: under a temporary name (named in the folder's marker,
// so that a sweep killed meanwhile leaves a folder the next one takes for troupe's), then renamed.
Status WriteSweepCsv(const std::string& out_dir, const std::string& csv) {
  const std::string folder = OutputTarget(out_dir);
  const std::string partial = std::string(kSweepCsv) + ".tmp";
  RETURN_IF_ERROR(WriteOutputFile(folder, partial, csv));
  std::error_code ec;
  std::filesystem::rename(folder + "/" + partial, folder + "/" + kSweepCsv, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(folder + "/" + partial, ignored);
    return Status::IoError(folder + "/" + kSweepCsv + ": cannot write: " + ec.message());
  }
  return WriteOutputMarker(folder, "sweep");
}

Status PlanCombination(const SweepSpec& spec, Combination* c) {
  config::RunConfig cfg;
  RETURN_IF_ERROR(LoadConfigFile(spec.config, &cfg));
  for (const std::string& set : spec.sets) {
    RETURN_IF_ERROR(ApplyOverride(set, &cfg));
  }
  std::vector<std::string> sets = spec.sets;
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    sets.push_back(spec.axes[i].field + "=" + c->values[i]);
    RETURN_IF_ERROR(ApplyOverride(sets.back(), &cfg));
  }
  if (spec.seeds.empty()) {
    c->seed = cfg.run().seed();
  } else {
    cfg.mutable_run()->set_seed(c->seed);
  }
  if (Status s = ValidateConfig(cfg, spec.config); !s.ok()) {
    return LocateConfigError(s, spec.config, sets);
  }
  RETURN_IF_ERROR(PlanAnyRun(cfg, spec.config, &c->run));
  c->run->set_out_dir(spec.out_dir.empty() ? "" : spec.out_dir + "/" + RunName(spec.axes, *c));
  return Status::Ok();
}

// Every combination of axis values (last axis fastest), each with every seed.
std::vector<Combination> Grid(const SweepSpec& spec) {
  std::vector<std::vector<std::string>> tuples = {{}};
  for (const SweepAxis& axis : spec.axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& tuple : tuples) {
      for (const std::string& v : axis.values) {
        next.push_back(tuple);
        next.back().push_back(v);
      }
    }
    tuples = std::move(next);
  }
  const std::vector<uint64_t> seeds = spec.seeds.empty() ? std::vector<uint64_t>{0} : spec.seeds;
  std::vector<Combination> grid;
  for (const auto& tuple : tuples) {
    for (uint64_t seed : seeds) grid.push_back(Combination{tuple, seed, {}});
  }
  return grid;
}

}  // namespace

Status ParseSweepAxis(const std::string& text, SweepAxis* axis) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidInput("--over " + text + ": expected field=value1,value2,...");
  }
  axis->field = text.substr(0, eq);
  axis->values.clear();
  size_t start = eq + 1;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma == start) return Status::InvalidInput("--over " + text + ": empty value");
    axis->values.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return Status::Ok();
}

namespace {

// A seed in plain decimal, at most 2^63 - 1 (what `troupe run --seed` takes).
bool ParseSeed(std::string_view text, uint64_t* out) {
  return ParseWholeNumber(text, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), out);
}

constexpr uint64_t kMaxSeeds = 10000;

}  // namespace

Status ParseSeeds(const std::string& text, std::vector<uint64_t>* seeds) {
  seeds->clear();
  const Status bad = Status::InvalidInput(
      "--seeds " + text + ": expected A-B or A,B,C: at most 10000 whole numbers in [0, 2^63 - 1]");
  const size_t dash = text.find('-');
  if (dash != std::string::npos && text.find(',') == std::string::npos) {
    uint64_t first = 0, last = 0;
    const std::string_view view(text);
    if (!ParseSeed(view.substr(0, dash), &first) || !ParseSeed(view.substr(dash + 1), &last) ||
        last < first || last - first >= kMaxSeeds) {
      return bad;
    }
    for (uint64_t s = first; s <= last; ++s) seeds->push_back(s);
    return Status::Ok();
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    uint64_t seed = 0;
    if (!ParseSeed(std::string_view(text).substr(start, comma - start), &seed) ||
        seeds->size() >= kMaxSeeds) {
      seeds->clear();
      return bad;
    }
    seeds->push_back(seed);
    start = comma + 1;
  }
  return Status::Ok();
}

namespace {

// What `sweep --serve` shows: every run's state, published as each starts and ends (from the
// worker threads, one at a time).
class SweepWatch {
 public:
  SweepWatch(const SweepSpec& spec, const std::vector<Combination>& grid) : live_(spec.live) {
    snapshot_.kind = "sweep";
    snapshot_.name = spec.config;
    for (const Combination& c : grid) {
      LiveSweepRun run;
      run.name = RunName(spec.axes, c);
      snapshot_.sweep.push_back(std::move(run));
    }
    Publish();
  }
  void Started(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_.sweep[i].state = "running";
    started_[i] = Clock::now();
    Publish();
  }
  void Ended(size_t i, const std::vector<RunMetric>* metrics) {  // null: the run failed
    std::lock_guard<std::mutex> lock(mu_);
    LiveSweepRun& run = snapshot_.sweep[i];
    run.state = metrics ? "done" : "failed";
    run.wall_s = Seconds(started_[i]);
    for (const RunMetric& m : metrics ? *metrics : std::vector<RunMetric>{}) {
      if (!m.table_label.empty()) run.figures.emplace_back(m.table_label, m.value * m.table_scale);
    }
    Publish();
  }
  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_.done = true;
    Publish();
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }
  void Publish() {
    if (live_ == nullptr) return;
    snapshot_.wall_s = Seconds(start_);
    live_->Publish(snapshot_);
  }

  LiveSink* live_;
  std::mutex mu_;
  Clock::time_point start_ = Clock::now();
  std::map<size_t, Clock::time_point> started_;
  LiveSnapshot snapshot_;
};

}  // namespace

Status RunSweep(const SweepSpec& spec, std::vector<SweepRow>* rows) {
  std::vector<Combination> grid = Grid(spec);
  for (Combination& c : grid) {
    RETURN_IF_ERROR(PlanCombination(spec, &c));
  }
  if (!spec.out_dir.empty()) {
    RETURN_IF_ERROR(CheckRunFolders(spec, grid));
  }
  rows->assign(grid.size(), SweepRow{});
  ExecuteOptions options;
  options.provenance = spec.provenance;
  ProgressLine progress(spec.progress, "sweep", "runs", static_cast<int64_t>(grid.size()));
  std::atomic<int64_t> finished{0};
  std::atomic<size_t> next{0};
  SweepWatch watch(spec, grid);
  std::mutex failure_mutex;
  Status failure = Status::Ok();
  auto worker = [&] {
    for (size_t i = next++; i < grid.size(); i = next++) {
      // Read before Execute, which hands the plan (and its folder) over.
      const std::string dir = std::filesystem::path(grid[i].run->out_dir()).filename().string();
      watch.Started(i);
      Status s = grid[i].run->Execute(options);
      if (!s.ok()) {
        watch.Ended(i, nullptr);
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (failure.ok()) failure = s;
        continue;
      }
      (*rows)[i] = SweepRow{grid[i].values, grid[i].seed, grid[i].run->Metrics(), dir};
      watch.Ended(i, &(*rows)[i].metrics);
      grid[i].run.reset();  // its records are no longer needed
      progress.Update(++finished);
    }
  };
  std::vector<std::thread> threads;
  const int parallel = std::max(1, std::min<int>(spec.parallel, static_cast<int>(grid.size())));
  for (int t = 0; t < parallel; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  watch.Finish();
  if (!failure.ok()) return failure;
  progress.Finish(finished);
  if (spec.out_dir.empty()) return Status::Ok();
  return WriteSweepCsv(spec.out_dir, SweepCsv(spec.axes, *rows));
}

std::string SweepCsv(const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows) {
  // Swept values are the user's text (a path, a name): quoted where they hold a comma, a quote
  // or a line break, as `troupe report` reads them.
  std::string out;
  for (const SweepAxis& axis : axes) {
    AppendCsvField(axis.field, &out);
    out += ',';
  }
  out += "seed";
  if (!rows.empty()) {
    for (const RunMetric& m : rows.front().metrics) {
      out += ',';
      out += m.csv_name;
    }
  }
  out += ",run_dir\n";  // last: `troupe report SWEEP_DIR` draws the runs in this order
  for (const SweepRow& r : rows) {
    for (const std::string& v : r.values) {
      AppendCsvField(v, &out);
      out += ',';
    }
    out += std::to_string(r.seed);
    for (const RunMetric& m : r.metrics) {
      out += ',';
      out += Fixed(m.value, m.csv_decimals);
    }
    out += ',';
    AppendCsvField(r.run_dir, &out);
    out += "\n";
  }
  return out;
}

}  // namespace troupe
