#include "runner/run_kind.hpp"

#include <utility>

#include "emulation/run_invariants.hpp"
#include "runner/cluster/report_writer.hpp"
#include "runner/oasis/oasis_run.hpp"
#include "runner/ps/ps_report.hpp"
#include "runner/ps/ps_run.hpp"

namespace troupe {
namespace {

// Wall time is a figure of every kind of run.
RunMetric WallSeconds(double wall_s) { return {"wall_s", wall_s, 3, "wall s", 1, 2}; }

// What every kind keeps alike: its plan (with out_dir) until Execute hands it over, then its
// result.
template <class Plan, class Result>
class KindOfRun : public PlannedRun {
 public:
  explicit KindOfRun(Plan plan) : plan_(std::move(plan)) {}
  const std::string& out_dir() const override { return plan_.out_dir; }
  void set_out_dir(std::string out_dir) override { plan_.out_dir = std::move(out_dir); }

 protected:
  Plan plan_;
  Result result_;
};

class ClusterRun final : public KindOfRun<RunPlan, RunResult> {
 public:
  ClusterRun(RunPlan plan, std::optional<config::AgentGateway> agents)
      : KindOfRun(std::move(plan)), agents_(std::move(agents)) {}

  const char* kind() const override { return "cluster"; }
  std::string Describe() const override {
    return std::to_string(plan_.servers.size()) + " servers, " +
           std::to_string(plan_.capacity.gpus) + " GPUs, " + plan_.source->Describe();
  }
  Status Execute(const ExecuteOptions& options) override {
    ExecuteOptions with_agents = options;
    if (agents_) with_agents.agents = agents_;  // docs/agent.md
    for (const ServerSpec& server : plan_.servers) {
      invariants_.servers.push_back({server.gpus, server.cpus, server.memory_gb});
    }
    invariants_.jobs_expected = plan_.jobs_known;
    faults_ = plan_.faults;
    return ExecuteRun(std::move(plan_), with_agents, &result_);
  }
  std::string SummaryTable() const override { return FormatSummaryTable(result_.summary); }
  std::vector<RunMetric> Metrics() const override {
    const RunSummary& s = result_.summary;
    return {{"jct_mean_s", s.jct_mean_s, 3, "JCT mean h", 1.0 / 3600, 2},
            {"jct_median_s", s.jct_median_s, 3, "", 1, 2},
            {"jct_p95_s", s.jct_p95_s, 3, "", 1, 2},
            {"jct_p99_s", s.jct_p99_s, 3, "p99 h", 1.0 / 3600, 2},
            {"makespan_s", s.makespan_s, 3, "makespan h", 1.0 / 3600, 1},
            {"gpu_utilisation", s.gpu_utilisation, 6, "GPU %", 100, 1},
            {"cpu_utilisation", s.cpu_utilisation, 6, "CPU %", 100, 1},
            {"memory_utilisation", s.memory_utilisation, 6, "mem %", 100, 1},
            {"jobs_measured_finished", static_cast<double>(s.jobs_measured_finished), 0, "", 1, 0},
            {"rounds", static_cast<double>(s.rounds), 0, "", 1, 0},
            WallSeconds(s.wall_s)};
  }
  RunAudit Audit() const override {
    InvariantInput in = invariants_;
    in.jobs = &result_.jobs;
    in.rounds = &result_.rounds;
    in.leases = &result_.leases;
    in.faults = &faults_;
    in.end_reason = result_.summary.end_reason;
    const InvariantReport report = CheckRunInvariants(in);
    RunAudit audit;
    audit.faults = result_.summary.faults_injected;
    for (const FaultRecord& f : result_.faults) audit.recoveries += f.recovered_s >= 0;
    audit.servers_lost = static_cast<int64_t>(
        faults_.ServersLostForGood(static_cast<int64_t>(in.servers.size())).size());
    audit.lost = report.jobs_lost;
    audit.failed = report.jobs_failed;
    audit.wasted_gpu_hours = report.wasted_gpu_hours;
    audit.jct_mean_h = result_.summary.jct_mean_s / 3600;
    audit.end_s = result_.summary.makespan_s;
    audit.violations = report.violations;
    return audit;
  }

 private:
  std::optional<config::AgentGateway> agents_;
  InvariantInput invariants_;  // what the plan knew: servers, jobs expected
  FaultPlan faults_;
};

class ParamServerRun final : public KindOfRun<PsPlan, PsRunResult> {
 public:
  using KindOfRun::KindOfRun;

  const char* kind() const override { return "parameter server"; }
  std::string Describe() const override {
    return std::to_string(plan_.options.nodes) + " nodes, " +
           std::to_string(plan_.options.batches) + " steps, " + plan_.data;
  }
  Status Execute(const ExecuteOptions& options) override {
    return ExecutePsRun(std::move(plan_), options, &result_);
  }
  std::string SummaryTable() const override { return FormatPsSummaryTable(result_.summary); }
  std::vector<RunMetric> Metrics() const override {
    const PsSummary& s = result_.summary;
    return {{"examples_per_s", s.examples_per_s, 1, "examples/s", 1, 0},
            {"auc", s.auc, 6, "AUC", 1, 4},
            {"final_loss", s.final_loss, 6, "loss", 1, 4},
            {"batch_time_s", s.batch_time_s, 6, "batch ms", 1000, 3},
            {"hbm_hit_rate", s.hbm_hit_rate, 6, "HBM hit %", 100, 1},
            {"mem_hit_rate", s.mem_hit_rate, 6, "MEM hit %", 100, 1},
            {"emulated_s", s.emulated_s, 6, "", 1, 3},
            WallSeconds(s.wall_s)};
  }
  RunAudit Audit() const override {
    const PsSummary& s = result_.summary;
    RunAudit audit;
    audit.faults = s.faults_injected;
    audit.recoveries = s.restarts + s.disk_recoveries;
    audit.lost = s.updates_lost;
    audit.auc = s.auc;
    audit.end_s = s.emulated_s;
    if (s.updates_lost > 0) {
      audit.violations.push_back(std::to_string(s.updates_lost) + " updates lost");
    }
    return audit;
  }
};

class OasisOnlineRun final : public KindOfRun<OasisPlan, OasisRunResult> {
 public:
  using KindOfRun::KindOfRun;

  const char* kind() const override { return "oasis"; }
  std::string Describe() const override {
    return "policy " + plan_.policy + ", " + std::to_string(plan_.jobs.size()) + " jobs, " +
           std::to_string(plan_.cluster.slots) + " slots";
  }
  Status Execute(const ExecuteOptions& options) override {
    return ExecuteOasisRun(std::move(plan_), options, &result_);
  }
  std::string SummaryTable() const override { return FormatOasisSummary(result_.summary); }
  std::vector<RunMetric> Metrics() const override {
    const OasisSummary& s = result_.summary;
    return {{"total_utility", s.total_utility, 3, "utility", 1, 2},
            {"admitted", static_cast<double>(s.admitted), 0, "admitted", 1, 0},
            {"rejected", static_cast<double>(s.rejected), 0, "rejected", 1, 0},
            {"finished", static_cast<double>(s.finished), 0, "finished", 1, 0},
            {"late", static_cast<double>(s.late), 0, "late", 1, 0},
            {"mean_gpu_use", s.mean_gpu_use, 6, "GPU %", 100, 1},
            WallSeconds(s.wall_s)};
  }
  // OASiS runs take no faults (ValidateConfig refuses them): nothing can be lost.
  RunAudit Audit() const override { return RunAudit{}; }
};

}  // namespace

Status PlanAnyRun(const config::RunConfig& cfg, const std::string& config_name,
                  std::unique_ptr<PlannedRun>* out) {
  if (cfg.has_paramserver()) {
    PsPlan plan;
    if (Status s = PlanPsRun(cfg, config_name, &plan); !s.ok()) return s;
    *out = std::make_unique<ParamServerRun>(std::move(plan));
    return Status::Ok();
  }
  if (cfg.has_oasis()) {
    OasisPlan plan;
    if (Status s = PlanOasisRun(cfg, config_name, &plan); !s.ok()) return s;
    *out = std::make_unique<OasisOnlineRun>(std::move(plan));
    return Status::Ok();
  }
  RunPlan plan;
  if (Status s = PlanRun(cfg, config_name, &plan); !s.ok()) return s;
  std::optional<config::AgentGateway> agents;
  if (cfg.has_agents()) agents = cfg.agents();
  *out = std::make_unique<ClusterRun>(std::move(plan), std::move(agents));
  return Status::Ok();
}

}  // namespace troupe
