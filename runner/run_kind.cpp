#include "runner/run_kind.hpp"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "base/status_macros.hpp"
#include "faults/run_invariants.hpp"
#include "runner/cluster/report_writer.hpp"
#include "runner/deployment.hpp"
#include "runner/oasis/oasis_run.hpp"
#include "runner/progress.hpp"
#include "runner/ps/ps_report.hpp"
#include "runner/ps/ps_run.hpp"
#include "runner/run_directory.hpp"
#include "runner/run_record.hpp"
#include "runtime/telemetry.hpp"
#include "workload/job_source.hpp"

namespace troupe {
namespace {

// Wall time is a figure of every kind of run.
RunMetric WallSeconds(double wall_s) { return {"wall_s", wall_s, 3, "wall s", 1, 2}; }

// What a progress line counts for a kind of run (runner/progress.hpp).
struct ProgressCount {
  const char* unit = "";
  int64_t total = 0;  // 0: unknown
  int64_t (*done)(const Telemetry&) = nullptr;
  std::string (*detail)(const Telemetry&) = nullptr;
};

// What every kind keeps alike: its plan (with out_dir) until Execute hands it over, then its
// result; the config it was planned from, which Execute records in the run directory
// (runner/run_record.hpp); and its progress line.
template <class Plan, class Result>
class KindOfRun : public PlannedRun {
 public:
  KindOfRun(Plan plan, config::RunConfig config)
      : plan_(std::move(plan)), config_(std::move(config)) {}
  const std::string& out_dir() const override { return plan_.out_dir; }
  void set_out_dir(std::string out_dir) override { plan_.out_dir = std::move(out_dir); }

  Status Execute(const ExecuteOptions& options) final {
    const std::string out_dir = plan_.out_dir;
    if (!out_dir.empty()) {
      RETURN_IF_ERROR(CheckRunDirectory(out_dir));
      config_.mutable_run()->set_out_dir(out_dir);  // a sweep's point sets its own
      RETURN_IF_ERROR(StageRunRecord(out_dir, config_, options.provenance));
    }
    const ProgressCount count = Counted();
    ProgressLine line(options.progress, "run", count.unit, count.total);
    ExecuteOptions with_progress = options;
    if (options.progress != ProgressMode::kOff) {
      with_progress.on_progress = [&line, count](const Telemetry& t) {
        line.Update(count.done(t), count.detail(t));
      };
      with_progress.watch = [&line, count](const Telemetry* t) {
        if (t == nullptr) return line.Watch(nullptr);
        line.Watch([count, t] { return std::make_pair(count.done(*t), count.detail(*t)); });
      };
    }
    Status status = ExecuteKind(with_progress);
    if (!status.ok()) {
      std::error_code ec;  // a failed run leaves nothing behind, the staged record included
      if (!out_dir.empty()) std::filesystem::remove_all(StagingDirectory(out_dir), ec);
      return status;
    }
    line.Finish(FinalCount());
    return status;
  }

 protected:
  // The kind's own execution; `options.on_progress` is set when a progress line is shown.
  virtual Status ExecuteKind(const ExecuteOptions& options) = 0;
  // What the progress line counts (called before ExecuteKind), and the count at the end.
  virtual ProgressCount Counted() const = 0;
  virtual int64_t FinalCount() const = 0;

  Plan plan_;
  Result result_;
  config::RunConfig config_;
};

std::string Fixed(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// What a cluster run's progress line counts: with a measurement window, the measured jobs that
// have ended (the run ends when all have); else every job, of the workload's (0: unknown, an
// endless generator stopped by a deadline).
ProgressCount JobsCounted(const config::RunConfig& cfg, const RunPlan& plan) {
  // A round whose planning takes long (OPT's programs on a large cluster) says so.
  auto detail = [](const Telemetry& t) {
    const int64_t rounds = t.rounds.load();
    return Fixed("%.1f h virtual", t.virtual_s.load() / 3600) + ", round " +
           std::to_string(rounds) +
           (t.planning.load() ? ", planning round " + std::to_string(rounds + 1) : "");
  };
  if (plan.jobs_measured > 0) {
    return {"measured jobs", plan.jobs_measured,
            [](const Telemetry& t) { return t.measured_ended.load(); }, detail};
  }
  int64_t known = cfg.workload().generator().num_jobs();
  if (auto* trace = dynamic_cast<const VectorJobSource*>(plan.source.get())) {
    known = static_cast<int64_t>(trace->size());
  }
  return {"jobs", known, [](const Telemetry& t) { return t.jobs_finished.load(); }, detail};
}

class ClusterRun final : public KindOfRun<RunPlan, RunResult> {
 public:
  ClusterRun(RunPlan plan, config::RunConfig config, std::optional<config::AgentGateway> agents)
      : KindOfRun(std::move(plan), std::move(config)),
        agents_(std::move(agents)),
        counted_(JobsCounted(config_, plan_)),
        window_(plan_.jobs_measured > 0) {}

  const char* kind() const override { return "cluster"; }
  std::string Describe() const override {
    return std::to_string(plan_.servers.size()) + " servers, " +
           std::to_string(plan_.capacity.gpus) + " GPUs, " + plan_.source->Describe();
  }
  Status ExecuteKind(const ExecuteOptions& options) override {
    ExecuteOptions with_agents = options;
    if (agents_) with_agents.agents = agents_;  // docs/agent.md
    if (config_.has_external_scheduler()) {     // docs/external-scheduler.md
      with_agents.external_scheduler = config_.external_scheduler();
    }
    for (const ServerSpec& server : plan_.servers) {
      invariants_.servers.push_back({server.gpus, server.cpus, server.memory_gb});
    }
    invariants_.jobs_expected = plan_.jobs_known;
    faults_ = plan_.faults;
    return ExecuteRun(std::move(plan_), with_agents, &result_);
  }
  ProgressCount Counted() const override { return counted_; }
  int64_t FinalCount() const override {
    return window_ ? result_.summary.jobs_measured() : static_cast<int64_t>(result_.jobs.size());
  }
  std::string SummaryTable() const override { return FormatSummaryTable(result_.summary); }
  std::vector<RunMetric> Metrics() const override {
    const summaries::ClusterRunSummary& s = result_.summary;
    std::vector<RunMetric> metrics = {
        {"jct_mean_s", s.jct_mean_s(), 3, "JCT mean h", 1.0 / 3600, 2},
        {"jct_median_s", s.jct_median_s(), 3, "", 1, 2},
        {"jct_p95_s", s.jct_p95_s(), 3, "", 1, 2},
        {"jct_p99_s", s.jct_p99_s(), 3, "p99 h", 1.0 / 3600, 2},
        {"makespan_s", s.makespan_s(), 3, "makespan h", 1.0 / 3600, 1},
        {"gpu_utilisation", s.gpu_utilisation(), 6, "GPU %", 100, 1},
        {"cpu_utilisation", s.cpu_utilisation(), 6, "CPU %", 100, 1},
        {"memory_utilisation", s.memory_utilisation(), 6, "mem %", 100, 1},
        {"jobs_measured_finished", static_cast<double>(s.jobs_measured_finished()), 0, "", 1, 0},
        {"rounds", static_cast<double>(s.rounds()), 0, "", 1, 0},
        WallSeconds(s.wall_s())};
    if (s.has_network()) {  // with a fabric: what contention cost (docs/network.md)
      const summaries::NetworkSummary& n = s.network();
      metrics.insert(
          metrics.end() - 1,
          {{"comm_hours", n.comm_hours(), 3, "", 1, 2},
           {"contention_hours", n.contention_hours(), 3, "contention h", 1, 2},
           {"contention_slowdown_mean", n.contention_slowdown_mean(), 6, "", 1, 4},
           {"contention_slowdown_p99", n.contention_slowdown_p99(), 6, "slowdown p99", 1, 3}});
    }
    return metrics;
  }
  RunAudit Audit() const override {
    InvariantInput in = invariants_;
    in.jobs = &result_.jobs;
    in.rounds = &result_.rounds;
    in.leases = &result_.leases;
    in.faults = &faults_;
    in.end_reason = result_.summary.end_reason();
    const InvariantReport report = CheckRunInvariants(in);
    RunAudit audit;
    audit.faults = result_.summary.faults_injected();
    for (const FaultRecord& f : result_.faults) audit.recoveries += f.recovered_s >= 0;
    audit.servers_lost = static_cast<int64_t>(
        faults_.ServersLostForGood(static_cast<int64_t>(in.servers.size())).size());
    audit.lost = report.jobs_lost;
    audit.failed = report.jobs_failed;
    audit.wasted_gpu_hours = report.wasted_gpu_hours;
    audit.jct_mean_h = result_.summary.jct_mean_s() / 3600;
    audit.end_s = result_.summary.makespan_s();
    audit.violations = report.violations;
    return audit;
  }

 private:
  std::optional<config::AgentGateway> agents_;
  ProgressCount counted_;      // for the progress line
  bool window_ = false;        // it counts the measured jobs
  InvariantInput invariants_;  // what the plan knew: servers, jobs expected
  FaultPlan faults_;
};

class ParamServerRun final : public KindOfRun<PsPlan, PsRunResult> {
 public:
  ParamServerRun(PsPlan plan, config::RunConfig config)
      : KindOfRun(std::move(plan), std::move(config)), batches_(plan_.options.batches) {}

  const char* kind() const override { return "parameter server"; }
  std::string Describe() const override {
    return std::to_string(plan_.options.nodes) + " nodes, " +
           std::to_string(plan_.options.batches) + " steps, " + plan_.data;
  }
  Status ExecuteKind(const ExecuteOptions& options) override {
    return ExecutePsRun(std::move(plan_), options, &result_);
  }
  ProgressCount Counted() const override {
    return {"batches", plan_.options.batches, [](const Telemetry& t) { return t.rounds.load(); },
            [](const Telemetry& t) { return Fixed("%.4f s virtual", t.virtual_s.load()); }};
  }
  int64_t FinalCount() const override { return batches_; }
  std::string SummaryTable() const override { return FormatPsSummaryTable(result_.summary); }
  std::vector<RunMetric> Metrics() const override {
    const summaries::PsRunSummary& s = result_.summary;
    return {{"examples_per_s", s.examples_per_s(), 1, "examples/s", 1, 0},
            {"auc", s.auc(), 6, "AUC", 1, 4},
            {"final_loss", s.final_loss(), 6, "loss", 1, 4},
            {"batch_time_s", s.batch_time_s(), 6, "batch ms", 1000, 3},
            {"hbm_hit_rate", s.hbm_hit_rate(), 6, "HBM hit %", 100, 1},
            {"mem_hit_rate", s.mem_hit_rate(), 6, "MEM hit %", 100, 1},
            {"emulated_s", s.emulated_s(), 6, "", 1, 3},
            WallSeconds(s.wall_s())};
  }
  RunAudit Audit() const override {
    const summaries::PsRunSummary& s = result_.summary;
    RunAudit audit;
    audit.faults = s.faults_injected();
    audit.recoveries = s.restarts() + s.disk_recoveries();
    audit.lost = s.updates_lost();
    audit.auc = s.auc();
    audit.end_s = s.emulated_s();
    if (s.updates_lost() > 0) {
      audit.violations.push_back(std::to_string(s.updates_lost()) + " updates lost");
    }
    return audit;
  }

 private:
  int64_t batches_ = 0;  // every one is trained when the run succeeds
};

class OasisOnlineRun final : public KindOfRun<OasisPlan, OasisRunResult> {
 public:
  OasisOnlineRun(OasisPlan plan, config::RunConfig config)
      : KindOfRun(std::move(plan), std::move(config)), slots_(plan_.cluster.slots) {}

  const char* kind() const override { return "oasis"; }
  std::string Describe() const override {
    return "policy " + plan_.policy + ", " + std::to_string(plan_.jobs.size()) + " jobs, " +
           std::to_string(plan_.cluster.slots) + " slots";
  }
  Status ExecuteKind(const ExecuteOptions& options) override {
    return ExecuteOasisRun(std::move(plan_), options, &result_);
  }
  ProgressCount Counted() const override {
    return {"slots", slots_, [](const Telemetry& t) { return t.rounds.load(); },
            [](const Telemetry& t) {
              return std::to_string(t.jobs_finished.load()) + " jobs finished";
            }};
  }
  int64_t FinalCount() const override { return slots_; }
  std::string SummaryTable() const override { return FormatOasisSummary(result_.summary); }
  std::vector<RunMetric> Metrics() const override {
    const summaries::OasisRunSummary& s = result_.summary;
    return {{"total_utility", s.total_utility(), 3, "utility", 1, 2},
            {"admitted", static_cast<double>(s.admitted()), 0, "admitted", 1, 0},
            {"rejected", static_cast<double>(s.rejected()), 0, "rejected", 1, 0},
            {"finished", static_cast<double>(s.finished()), 0, "finished", 1, 0},
            {"late", static_cast<double>(s.late()), 0, "late", 1, 0},
            {"mean_gpu_use", s.mean_gpu_use(), 6, "GPU %", 100, 1},
            WallSeconds(s.wall_s())};
  }
  // OASiS runs take no faults (ValidateConfig refuses them): nothing can be lost.
  RunAudit Audit() const override { return RunAudit{}; }

 private:
  int64_t slots_ = 0;
};

}  // namespace

Status PlanAnyRun(const config::RunConfig& cfg, const std::string& config_name,
                  std::unique_ptr<PlannedRun>* out) {
  RETURN_IF_ERROR(CheckDeploymentCredentials(cfg, config_name));
  if (cfg.has_paramserver()) {
    PsPlan plan;
    RETURN_IF_ERROR(PlanPsRun(cfg, config_name, &plan));
    *out = std::make_unique<ParamServerRun>(std::move(plan), cfg);
    return Status::Ok();
  }
  if (cfg.has_oasis()) {
    OasisPlan plan;
    RETURN_IF_ERROR(PlanOasisRun(cfg, config_name, &plan));
    *out = std::make_unique<OasisOnlineRun>(std::move(plan), cfg);
    return Status::Ok();
  }
  RunPlan plan;
  RETURN_IF_ERROR(PlanRun(cfg, config_name, &plan));
  std::optional<config::AgentGateway> agents;
  if (cfg.has_agents()) agents = cfg.agents();
  *out = std::make_unique<ClusterRun>(std::move(plan), cfg, std::move(agents));
  return Status::Ok();
}

}  // namespace troupe
