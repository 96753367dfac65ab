#include "tests/integration/ps_fixture.hpp"

#include <algorithm>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"

namespace troupe::testing {

PsRun RunPs(const std::string& text, const std::vector<std::string>& sets) {
  PsRun run;
  config::RunConfig cfg;
  run.status = ParseConfigText(text, "ps.textproto", &cfg);
  for (size_t i = 0; run.status.ok() && i < sets.size(); ++i) {
    run.status = ApplyOverride(sets[i], &cfg);
  }
  if (run.status.ok()) run.status = ValidateConfig(cfg, "ps.textproto");
  if (run.status.ok()) run.status = PlanPsRun(cfg, "ps.textproto", &run.plan);
  const bool wants_out_dir = std::any_of(sets.begin(), sets.end(), [](const std::string& set) {
    return set.rfind("run.out_dir=", 0) == 0;
  });
  if (run.status.ok()) {
    PsPlan copy = run.plan;
    if (!wants_out_dir) copy.out_dir.clear();
    run.status = ExecutePsRun(std::move(copy), ExecuteOptions{}, &run.result);
  }
  return run;
}

}  // namespace troupe::testing
