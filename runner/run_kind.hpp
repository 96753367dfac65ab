// One notion of a run. A config describes one of three kinds of run — cluster scheduling (the
// default), parameter-server training (`paramserver {}`) or OASiS online scheduling (`oasis {}`) —
// and PlanAnyRun makes the right one from it. `troupe run`, `sweep` and `validate` go through this
// interface only, so each works for every kind (a sweep over parameter-server or OASiS fields
// included); what differs between kinds lives in each kind's Plan*/Execute* (actors/cluster_run,
// actors/ps/ps_run, actors/oasis/oasis_run).
//
// Life of a run: PlanAnyRun (everything checked, nothing run) -> set_out_dir (optional) ->
// Execute (once; writes the run directory when out_dir is set) -> SummaryTable / Metrics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "messages/config.pb.h"
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
};

// Plans the run `cfg` describes. Precondition: ValidateConfig(cfg) is OK.
Status PlanAnyRun(const config::RunConfig& cfg, const std::string& config_name,
                  std::unique_ptr<PlannedRun>* out);

}  // namespace troupe
