// What the OASiS run tests share (oasis_run_test, oasis_fabric_test): a small case, and a run of
// it planned and executed as `troupe run` would.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "runner/oasis/oasis_run.hpp"

namespace troupe::testing {

// 6 worker servers + 6 PS machines, 48 one-hour slots, ~70 jobs: contended at the diurnal peaks.
inline constexpr char kSmallOasis[] = R"(
oasis {
  slots: 48
  worker_servers: 6
  ps_machines: 6
  jobs_per_slot: 1.5
  epochs { lo: 5 hi: 20 }
}
)";

struct OasisRunOut {
  Status status;
  OasisPlan plan;
  OasisRunResult result;
};

// kSmallOasis with `more` appended and each `--set` of `sets` applied, validated, planned, run.
inline OasisRunOut RunOasis(const std::vector<std::string>& sets, const std::string& more = "") {
  OasisRunOut run;
  config::RunConfig cfg;
  run.status = ParseConfigText(kSmallOasis + more, "oasis.textproto", &cfg);
  for (size_t i = 0; run.status.ok() && i < sets.size(); ++i) {
    run.status = ApplyOverride(sets[i], &cfg);
  }
  if (run.status.ok()) run.status = ValidateConfig(cfg, "oasis.textproto");
  if (run.status.ok()) run.status = PlanOasisRun(cfg, "oasis.textproto", &run.plan);
  if (run.status.ok()) run.status = ExecuteOasisRun(run.plan, ExecuteOptions{}, &run.result);
  return run;
}

}  // namespace troupe::testing
