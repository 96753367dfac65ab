// One notion of a run. A config describes one of three kinds of run — cluster scheduling (the
// default), parameter-server training (`paramserver {}`) or OASiS online scheduling (`oasis {}`) —
// and PlanAnyRun makes the right one from it. `troupe run`, `sweep`, `chaos` and `validate` go
// through this interface only, so each works for every kind (a sweep over parameter-server or
// OASiS fields included); what differs between kinds lives in each kind's Plan*/Execute*
// (runner/cluster/cluster_run, runner/ps/ps_run, runner/oasis/oasis_run).
//
// Life of a run: PlanAnyRun (everything checked, nothing run) -> set_out_dir (optional) ->
// Execute (once; writes the run directory when out_dir is set) -> SummaryTable / Metrics / Audit.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "runner/cluster/cluster_run.hpp"

namespace troupe {

// One figure of a finished run, as a sweep shows it: a sweep.csv column (in its own units) and,
// when table_label is set, a column of the printed table (value x table_scale).
struct RunMetric {
  std::string csv_name;
  double value = 0;
  int csv_decimals = 3;
  std::string table_label;  // "": in sweep.csv only
  double table_scale = 1;
  int table_decimals = 2;
};

// What a fault campaign (`troupe chaos`) checks after a run: the run's own invariants and what
// it lost, in terms every kind shares.
struct RunAudit {
  int64_t faults = 0, recoveries = 0;
  int64_t servers_lost = 0;  // servers lost for good (cluster runs)
  int64_t lost = 0;          // jobs lost (cluster) or acknowledged updates lost (parameter server)
  int64_t failed = 0;        // jobs failed with a reason (cluster)
  double wasted_gpu_hours = 0, jct_mean_h = 0;
  // Parameter-server runs: held-out AUC, which faults must not change.
  std::optional<double> auc;
  double end_s = 0;  // virtual seconds the run's work took: where a campaign's faults may fall
  std::vector<std::string> violations;  // empty: every invariant held
};

class PlannedRun {
 public:
  virtual ~PlannedRun() = default;

  // "cluster", "parameter server" or "oasis".
  virtual const char* kind() const = 0;
  // What was planned, for `troupe validate` ("16 servers, 128 GPUs, generator (...)").
  virtual std::string Describe() const = 0;
  // Where the run directory goes ("": none). Read it before Execute, which hands the plan over.
  virtual const std::string& out_dir() const = 0;
  virtual void set_out_dir(std::string out_dir) = 0;

  // Runs it (once) and writes the run directory when out_dir is set.
  virtual Status Execute(const ExecuteOptions& options) = 0;
  // After Execute: the summary `troupe run` prints, and the figures a sweep compares.
  virtual std::string SummaryTable() const = 0;
  virtual std::vector<RunMetric> Metrics() const = 0;
  // After Execute: the invariants a fault campaign checks.
  virtual RunAudit Audit() const = 0;
};

// Plans the run `cfg` describes. Precondition: ValidateConfig(cfg) is OK.
Status PlanAnyRun(const config::RunConfig& cfg, const std::string& config_name,
                  std::unique_ptr<PlannedRun>* out);

}  // namespace troupe
