// ValidateConfig's rules for RunConfig.backends (docs/config.md, "backends"): names, real mode for
// real compute, the collective's pairing with the compute, a positive step sizing. Errors name
// the field.
#include <gtest/gtest.h>

#include <string>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"

namespace troupe {
namespace {

constexpr char kBase[] =
    "cluster { servers { count: 1 gpus: 2 cpus: 6 memory_gb: 125 } }\n"
    "workload { generator { num_jobs: 3 } }\n";

// The validation error of kBase + `extra` ("" when valid).
std::string ErrorOf(const std::string& extra) {
  config::RunConfig cfg;
  Status s = ParseConfigText(std::string(kBase) + extra, "b.textproto", &cfg);
  EXPECT_TRUE(s.ok()) << s.message();
  s = ValidateConfig(cfg, "b.textproto");
  EXPECT_TRUE(s.ok() || s.exit_code() == 2);
  return s.ok() ? "" : s.message();
}

TEST(ConfigBackends, DefaultsAreEmulatedAndValidInBothModes) {
  config::RunConfig cfg;
  EXPECT_EQ(cfg.backends().compute(), "emulated");
  EXPECT_EQ(cfg.backends().collective(), "emulated");
  EXPECT_EQ(cfg.backends().scale(), 1e-3);
  EXPECT_EQ(ErrorOf(""), "");
  EXPECT_EQ(ErrorOf("backends { }\n"), "");
  EXPECT_EQ(ErrorOf("run { mode: real }\nbackends { compute: 'emulated' }\n"), "");
}

TEST(ConfigBackends, RealComputeNeedsRealMode) {
  EXPECT_EQ(ErrorOf("backends { compute: 'cpu' }\n"),
            "b.textproto: backends.compute: 'cpu' runs real steps on the wall clock: set run.mode "
            "to real");
  EXPECT_EQ(ErrorOf("run { mode: real }\nbackends { compute: 'cpu' collective: 'cpu' }\n"), "");
}

TEST(ConfigBackends, NamesAndPairingsAreChecked) {
  EXPECT_EQ(ErrorOf("run { mode: real }\nbackends { compute: 'tpu' }\n"),
            "b.textproto: backends.compute: must be emulated, cpu or cuda, got 'tpu'");
  EXPECT_EQ(ErrorOf("run { mode: real }\nbackends { compute: 'cpu' collective: 'mpi' }\n"),
            "b.textproto: backends.collective: must be emulated, cpu or nccl, got 'mpi'");
  EXPECT_EQ(ErrorOf("run { mode: real }\nbackends { collective: 'cpu' }\n"),
            "b.textproto: backends.collective: 'cpu' all-reduces real steps: set backends.compute "
            "to cpu or cuda");
  EXPECT_EQ(ErrorOf("run { mode: real }\nbackends { compute: 'cpu' collective: 'nccl' }\n"),
            "b.textproto: backends.collective: 'nccl' needs backends.compute: cuda");
}

TEST(ConfigBackends, SizingMustBeInRange) {
  const std::string real = "run { mode: real }\n";
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' scale: 0 }\n"),
            "b.textproto: backends.scale: must be > 0, got 0");
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' scale: 2 }\n"),
            "b.textproto: backends.scale: must be in [0, 1], got 2");
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' width: 0 }\n"),
            "b.textproto: backends.width: must be in [1, 65536], got 0");
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' gemms: 0 }\n"),
            "b.textproto: backends.gemms: must be in [1, 1000], got 0");
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' gradient_mib: -1 }\n"),
            "b.textproto: backends.gradient_mib: must be in [0, 1000000], got -1");
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' link_gbps: 0 }\n"),
            "b.textproto: backends.link_gbps: must be in [0.01, 100000], got 0");
}

// 0 (the default) measures the host (cpu) or takes the V100's (cuda); a given rate is >= 1e6.
TEST(ConfigBackends, ReferenceFlopsIsZeroOrAtLeastAMegaflop) {
  const std::string real = "run { mode: real }\n";
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' }\n"), "");
  EXPECT_EQ(ErrorOf(real + "backends { compute: 'cpu' reference_flops_per_s: 2e9 }\n"), "");
  EXPECT_NE(ErrorOf(real + "backends { compute: 'cpu' reference_flops_per_s: 5 }\n")
                .find("b.textproto: backends.reference_flops_per_s: must be 0"),
            std::string::npos);
}

}  // namespace
}  // namespace troupe
