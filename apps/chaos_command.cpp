#include "apps/chaos_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "base/closest_name.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "runner/output_folder.hpp"
#include "runner/progress.hpp"
#include "runner/run_kind.hpp"

namespace troupe {
namespace {

struct ChaosRow {
  uint64_t fault_seed = 0;  // 0: the baseline
  RunAudit audit;
  std::string verdict = "ok";
};

Status LoadBase(const ChaosSpec& spec, config::RunConfig* cfg) {
  RETURN_IF_ERROR(LoadConfigFile(spec.config, cfg));
  for (const std::string& set : spec.sets) {
    RETURN_IF_ERROR(ApplyOverride(set, cfg));
  }
  if (cfg->run().mode() != config::emulated) {
    return Status::InvalidInput(spec.config +
                                ": chaos campaigns run in emulated mode only "
                                "(run.mode), so that every run replays exactly");
  }
  if (cfg->has_oasis()) return Status::InvalidInput(spec.config + ": OASiS runs take no faults");
  cfg->clear_faults();
  cfg->mutable_run()->set_lease_log(true);
  // RunOnce sets each run's out_dir (--keep) or none.
  return LocateConfigError(ValidateConfig(*cfg, spec.config), spec.config, spec.sets);
}

// Where run `index` writes its directory: DIR/run-N with --keep, else nowhere.
std::string KeptDir(const ChaosSpec& spec, int index) {
  return spec.keep_dir.empty() ? "" : OutputTarget(spec.keep_dir) + "/run-" + std::to_string(index);
}

// --keep DIR, and every DIR/run-N a run may write, must be free or troupe's before anything runs.
Status CheckKeepFolders(const ChaosSpec& spec) {
  if (spec.keep_dir.empty()) return Status::Ok();
  RETURN_IF_ERROR(CheckOutputFolder(spec.keep_dir, "--keep"));
  for (int i = 0; i <= spec.runs; ++i) {
    RETURN_IF_ERROR(CheckOutputFolder(KeptDir(spec, i), "--keep"));
  }
  return Status::Ok();
}

// The share of drawn server and job crashes that never restart.
constexpr double kPermanentProbability = 0.25;

Status AddRandomFaults(const ChaosSpec& spec, uint64_t fault_seed, double window_s,
                       config::RunConfig* cfg) {
  config::RandomFaults* random = cfg->mutable_faults()->mutable_random();
  random->set_count(spec.faults_per_run);
  random->set_seed(fault_seed);
  random->set_start_s(0);
  random->set_end_s(std::max(window_s, 1.0));
  random->set_mean_duration_s(std::max(window_s / 20, 1.0));
  // Some crashes never restart: a server lost for good must end the run all the same, its jobs
  // that no longer fit failed with the reason. (Parameter-server runs draw no such crash.)
  if (!cfg->has_paramserver()) random->set_permanent_probability(kPermanentProbability);
  for (const std::string& name : spec.kinds) {
    config::FaultKind kind;
    if (!config::FaultKind_Parse(name, &kind)) {
      std::vector<std::string> known;
      for (int i = 0; i < config::FaultKind_descriptor()->value_count(); ++i) {
        known.push_back(config::FaultKind_descriptor()->value(i)->name());
      }
      return Status::InvalidInput("--kinds: unknown fault kind " + Quoted(name) +
                                  DidYouMean(name, known));
    }
    random->add_kinds(kind);
  }
  if (spec.kinds.empty() && !cfg->has_paramserver()) {
    for (config::FaultKind kind : {config::crash, config::slow, config::drop, config::delay,
                                   config::duplicate, config::partition}) {
      random->add_kinds(kind);
    }
  }
  return ValidateConfig(*cfg, spec.config);
}

// Every flag is checked before the baseline runs, so that a campaign its flags doom is refused at
// once rather than after the baseline: the drawn faults' config (kinds, counts) as run 1 gets it,
// and the kinds this kind of run can take (a drawn fault of another kind would fail run 1).
Status CheckFaultFlags(const ChaosSpec& spec, const config::RunConfig& base) {
  config::RunConfig probe = base;
  RETURN_IF_ERROR(AddRandomFaults(spec, spec.seed, 1.0, &probe));
  const bool ps = base.has_paramserver();
  for (const std::string& name : spec.kinds) {
    const bool ps_kind = name == "crash" || name == "slow" || name == "disk";
    if (ps && !ps_kind) {
      const std::string why = "a parameter-server run takes crash, slow and disk faults, not ";
      return Status::InvalidInput("--kinds: " + why + Quoted(name));
    }
    if (!ps && name == "disk") {
      return Status::InvalidInput("--kinds: disk faults hit a parameter server's SSD-PS; " +
                                  spec.config + " is a cluster run");
    }
  }
  return Status::Ok();
}

// Run `index` of the campaign, through the interface every kind of run shares. Its log lines are
// tagged with its number (runs go one after another, so one pattern at a time is right).
Status RunOnce(const ChaosSpec& spec, int index, const config::RunConfig& cfg, ChaosRow* row) {
  std::unique_ptr<PlannedRun> run;
  RETURN_IF_ERROR(PlanAnyRun(cfg, spec.config, &run));
  run->set_out_dir(KeptDir(spec, index));
  ExecuteOptions options;
  options.provenance = spec.provenance;
  spdlog::set_pattern(fmt::format("[%Y-%m-%d %H:%M:%S.%e] [run {}] [%l] %v", index));
  Status executed = run->Execute(options);
  spdlog::set_pattern("%+");
  if (Status s = executed; !s.ok()) {
    row->verdict = "FAIL: " + s.message();
    return Status::Ok();
  }
  row->audit = run->Audit();
  if (!row->audit.violations.empty()) row->verdict = "FAIL: " + row->audit.violations.front();
  return Status::Ok();
}

// Faults must not change what a parameter server learns: its AUC equals the fault-free run's.
void CompareWithBaseline(const ChaosRow& baseline, ChaosRow* row) {
  if (!baseline.audit.auc || !row->audit.auc || row->verdict != "ok") return;
  if (!(std::abs(*row->audit.auc - *baseline.audit.auc) <= 1e-6)) {
    row->verdict = fmt::format("FAIL: AUC {:.6f}, without faults {:.6f}", *row->audit.auc,
                               *baseline.audit.auc);
  }
}

std::string FormatTable(const std::vector<ChaosRow>& rows, bool ps) {
  std::string t =
      ps ? fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9}  {}\n", "run", "fault seed",
                       "faults", "recoveries", "updates lost", "AUC", "invariants")
         : fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9} {:>11} {:>12} {:>10}  {}\n", "run",
                       "fault seed", "faults", "recoveries", "servers lost", "jobs lost",
                       "jobs failed", "wasted GPU-h", "JCT mean h", "invariants");
  for (size_t i = 0; i < rows.size(); ++i) {
    const RunAudit& r = rows[i].audit;
    const std::string seed = i == 0 ? "none" : std::to_string(rows[i].fault_seed);
    t += ps ? fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9.6f}  {}\n", i, seed, r.faults,
                          r.recoveries, r.lost, r.auc.value_or(0), rows[i].verdict)
            : fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9} {:>11} {:>12.2f} {:>10.2f}  {}\n",
                          i, seed, r.faults, r.recoveries, r.servers_lost, r.lost, r.failed,
                          r.wasted_gpu_hours, r.jct_mean_h, rows[i].verdict);
  }
  return t;
}

// Run i of a campaign depends only on the config, the flags and its fault seed: a campaign of
// one run from that seed replays it exactly.
std::string ReplayCommand(const ChaosSpec& spec, const ChaosRow& row) {
  std::string cmd = fmt::format("troupe chaos {} --runs 1 --seed {} --faults {}", spec.config,
                                row.fault_seed, spec.faults_per_run);
  if (!spec.kinds.empty()) cmd += " --kinds " + fmt::format("{}", fmt::join(spec.kinds, ","));
  for (const std::string& set : spec.sets) cmd += " --set " + set;
  return cmd;
}

}  // namespace

// With --keep (and not --keep-all): a run that held is not kept.
void DropIfHeld(const ChaosSpec& spec, int index, const ChaosRow& row) {
  if (spec.keep_dir.empty() || spec.keep_all || row.verdict != "ok") return;
  std::error_code ec;
  std::filesystem::remove_all(KeptDir(spec, index), ec);
}

int RunChaos(const ChaosSpec& spec) {
  config::RunConfig base;
  Status s = spec.runs >= 1 && spec.faults_per_run >= 1
                 ? LoadBase(spec, &base)
                 : Status::InvalidInput("--runs and --faults must be at least 1");
  if (s.ok()) s = CheckKeepFolders(spec);
  if (s.ok()) s = CheckFaultFlags(spec, base);
  ProgressLine progress(ChooseProgressMode(spec.quiet), "chaos", "runs", spec.runs + 1);
  int failed = 0;
  std::vector<ChaosRow> rows(1);
  if (s.ok()) s = RunOnce(spec, 0, base, &rows[0]);
  if (s.ok()) DropIfHeld(spec, 0, rows[0]);
  failed += rows[0].verdict != "ok";
  for (int i = 1; s.ok() && i <= spec.runs; ++i) {
    progress.Update(i, fmt::format("{} failed", failed));
    config::RunConfig cfg = base;
    ChaosRow row;
    row.fault_seed = spec.seed + static_cast<uint64_t>(i - 1);
    s = AddRandomFaults(spec, row.fault_seed, 0.8 * rows[0].audit.end_s, &cfg);
    progress.Clear();  // the run's log lines start on a line of their own
    if (s.ok()) s = RunOnce(spec, i, cfg, &row);
    CompareWithBaseline(rows[0], &row);
    if (s.ok()) DropIfHeld(spec, i, row);
    failed += row.verdict != "ok";
    rows.push_back(std::move(row));
  }
  if (s.ok()) progress.Finish(spec.runs + 1, fmt::format("{} failed", failed));
  if (s.ok() && !spec.keep_dir.empty() && std::filesystem::is_directory(spec.keep_dir)) {
    s = WriteOutputMarker(OutputTarget(spec.keep_dir), "chaos");
  }
  const bool ps = rows[0].audit.auc.has_value();  // the table's columns: a parameter server's
  if (!s.ok()) {
    std::cerr << "troupe: " << s.message() << "\n";
    return s.exit_code();
  }
  std::cout << FormatTable(rows, ps);
  int failures = 0;
  for (const ChaosRow& row : rows) {
    if (row.verdict == "ok") continue;
    if (++failures == 1) std::cout << "\nreplay a failing run:\n";
    std::cout << "  " << ReplayCommand(spec, row) << "\n";
  }
  if (failures > 0 && !spec.keep_dir.empty()) {
    std::cout << "the failing runs' directories: " << OutputTarget(spec.keep_dir) << "/run-N\n";
  }
  std::cout << fmt::format("{} runs, {} failed\n", rows.size(), failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace troupe
