#include "tests/integration/ps_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "paramserver/ctr_model.hpp"
#include "paramserver/partitioner.hpp"

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

double PullBytes(const PsPlan& plan, int64_t step, int32_t from, int32_t to) {
  const PsOptions& o = plan.options;
  const auto b = static_cast<size_t>(o.batch_size);
  const size_t first =
      (static_cast<size_t>(step) * static_cast<size_t>(o.nodes) + static_cast<size_t>(to)) * b;
  const std::vector<paramserver::Key> unique =
      paramserver::UniqueKeys(std::span(*plan.train).subspan(first, b));
  paramserver::Partition partition;
  EXPECT_TRUE(paramserver::PartitionByNodeInto(unique, o.nodes, &partition).ok());
  const double row_bytes = static_cast<double>(kPsKeyBytes + 4 * int64_t{o.model.dim});
  return static_cast<double>(partition.keys[static_cast<size_t>(from)].size()) * row_bytes;
}

}  // namespace troupe::testing
