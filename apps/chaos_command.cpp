#include "apps/chaos_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "runner/cluster/cluster_run.hpp"
#include "runner/ps/ps_run.hpp"
#include "runner/cluster/run_setup.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "emulation/run_invariants.hpp"

namespace troupe {
namespace {

struct ChaosRow {
  uint64_t fault_seed = 0;  // 0: the baseline
  int64_t faults = 0, recoveries = 0, servers_lost = 0, jobs_lost = 0, jobs_failed = 0;
  double wasted_gpu_hours = 0, jct_mean_h = 0;
  double auc = 0;  // parameter-server runs
  std::string verdict = "ok";
};

Status LoadBase(const ChaosSpec& spec, config::RunConfig* cfg) {
  if (Status s = LoadConfigFile(spec.config, cfg); !s.ok()) return s;
  for (const std::string& set : spec.sets) {
    if (Status s = ApplyOverride(set, cfg); !s.ok()) return s;
  }
  if (cfg->run().mode() != config::emulated) {
    return Status::InvalidInput(spec.config +
                                ": chaos campaigns run in emulated mode only "
                                "(run.mode), so that every run replays exactly");
  }
  if (cfg->has_oasis()) return Status::InvalidInput(spec.config + ": OASiS runs take no faults");
  cfg->clear_faults();
  cfg->mutable_run()->set_lease_log(true);
  return ValidateConfig(*cfg,
                        spec.config);  // runs write no directory: the plans' out_dir is cleared
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
      return Status::InvalidInput("--kinds: unknown fault kind '" + name + "'");
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

Status RunCluster(const ChaosSpec& spec, const config::RunConfig& cfg, ChaosRow* row,
                  double* makespan_s) {
  RunPlan plan;
  if (Status s = PlanRun(cfg, spec.config, &plan); !s.ok()) return s;
  plan.out_dir.clear();
  InvariantInput in;
  for (const ServerSpec& server : plan.servers) {
    in.servers.push_back({server.gpus, server.cpus, server.memory_gb});
  }
  const FaultPlan faults = plan.faults;
  row->servers_lost = static_cast<int64_t>(
      faults.ServersLostForGood(static_cast<int64_t>(plan.servers.size())).size());
  in.jobs_expected = plan.jobs_known;
  RunResult result;
  if (Status s = ExecuteRun(std::move(plan), ExecuteOptions{}, &result); !s.ok()) {
    row->verdict = "FAIL: " + s.message();
    return Status::Ok();
  }
  in.jobs = &result.jobs;
  in.rounds = &result.rounds;
  in.leases = &result.leases;
  in.faults = &faults;
  in.end_reason = result.summary.end_reason;
  const InvariantReport report = CheckRunInvariants(in);
  row->faults = result.summary.faults_injected;
  for (const FaultRecord& f : result.faults) row->recoveries += f.recovered_s >= 0;
  row->jobs_lost = report.jobs_lost;
  row->jobs_failed = report.jobs_failed;
  row->wasted_gpu_hours = report.wasted_gpu_hours;
  row->jct_mean_h = result.summary.jct_mean_s / 3600;
  if (!report.ok()) row->verdict = "FAIL: " + report.violations.front();
  *makespan_s = result.summary.makespan_s;
  return Status::Ok();
}

Status RunParamServer(const ChaosSpec& spec, const config::RunConfig& cfg, double baseline_auc,
                      ChaosRow* row, double* emulated_s) {
  PsPlan plan;
  if (Status s = PlanPsRun(cfg, spec.config, &plan); !s.ok()) return s;
  plan.out_dir.clear();
  PsRunResult result;
  if (Status s = ExecutePsRun(std::move(plan), ExecuteOptions{}, &result); !s.ok()) {
    row->verdict = "FAIL: " + s.message();
    return Status::Ok();
  }
  const PsSummary& s = result.summary;
  row->faults = s.faults_injected;
  row->recoveries = s.restarts + s.disk_recoveries;
  row->jobs_lost = s.updates_lost;
  row->auc = s.auc;
  if (s.updates_lost > 0) row->verdict = fmt::format("FAIL: {} updates lost", s.updates_lost);
  if (baseline_auc >= 0 && !(std::abs(s.auc - baseline_auc) <= 1e-6)) {
    row->verdict = fmt::format("FAIL: AUC {:.6f}, without faults {:.6f}", s.auc, baseline_auc);
  }
  *emulated_s = s.emulated_s;
  return Status::Ok();
}

std::string FormatTable(const std::vector<ChaosRow>& rows, bool ps) {
  std::string t =
      ps ? fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9}  {}\n", "run", "fault seed",
                       "faults", "recoveries", "updates lost", "AUC", "invariants")
         : fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9} {:>11} {:>12} {:>10}  {}\n", "run",
                       "fault seed", "faults", "recoveries", "servers lost", "jobs lost",
                       "jobs failed", "wasted GPU-h", "JCT mean h", "invariants");
  for (size_t i = 0; i < rows.size(); ++i) {
    const ChaosRow& r = rows[i];
    const std::string seed = i == 0 ? "none" : std::to_string(r.fault_seed);
    t += ps ? fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9.6f}  {}\n", i, seed, r.faults,
                          r.recoveries, r.jobs_lost, r.auc, r.verdict)
            : fmt::format("{:>4} {:>10} {:>6} {:>10} {:>12} {:>9} {:>11} {:>12.2f} {:>10.2f}  {}\n",
                          i, seed, r.faults, r.recoveries, r.servers_lost, r.jobs_lost,
                          r.jobs_failed, r.wasted_gpu_hours, r.jct_mean_h, r.verdict);
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

int RunChaos(const ChaosSpec& spec) {
  config::RunConfig base;
  Status s = spec.runs >= 1 && spec.faults_per_run >= 1
                 ? LoadBase(spec, &base)
                 : Status::InvalidInput("--runs and --faults must be at least 1");
  const bool ps = base.has_paramserver();
  std::vector<ChaosRow> rows(1);
  double horizon_s = 0;
  if (s.ok()) {
    s = ps ? RunParamServer(spec, base, -1, &rows[0], &horizon_s)
           : RunCluster(spec, base, &rows[0], &horizon_s);
  }
  for (int i = 1; s.ok() && i <= spec.runs; ++i) {
    config::RunConfig cfg = base;
    ChaosRow row;
    row.fault_seed = spec.seed + static_cast<uint64_t>(i - 1);
    double unused = 0;
    s = AddRandomFaults(spec, row.fault_seed, 0.8 * horizon_s, &cfg);
    if (s.ok()) {
      s = ps ? RunParamServer(spec, cfg, rows[0].auc, &row, &unused)
             : RunCluster(spec, cfg, &row, &unused);
    }
    rows.push_back(std::move(row));
  }
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
  std::cout << fmt::format("{} runs, {} failed\n", rows.size(), failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace troupe
