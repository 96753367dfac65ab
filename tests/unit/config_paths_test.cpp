// Where a config's paths are taken from: the files it reads from its own folder (so a config and
// the traces beside it run from any current folder), a `--set` path from the current folder, and
// the places a run writes from the current folder, as `--out`.
#include "config/config_paths.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config_loader.hpp"
#include "tests/unit/scoped_temp_dir.hpp"

namespace troupe {
namespace {

constexpr char kEveryPath[] = R"pb(
  workload { trace_file: "t.csv" models_dir: "models" }
  paramserver { criteo_file: "c.tsv" ssd_dir: "ssd" }
  deployment { credentials_dir: "creds" }
  agents { secret_file: "a.secret" port_file: "a.port" }
  external_scheduler { secret_file: "e.secret" port_file: "e.port" }
  faults {
    failure_trace: "failures.csv"
    stragglers { trace: "slow.csv" }
  }
  run { out_dir: "runs/x" }
)pb";

TEST(ConfigPaths, InputsAreTakenFromTheFolderOutputsStayAsGiven) {
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText(kEveryPath, "cfg", &cfg).ok());
  ResolveInputPaths("/cfgs", &cfg);
  EXPECT_EQ(cfg.workload().trace_file(), "/cfgs/t.csv");
  EXPECT_EQ(cfg.workload().models_dir(), "/cfgs/models");
  EXPECT_EQ(cfg.paramserver().criteo_file(), "/cfgs/c.tsv");
  EXPECT_EQ(cfg.deployment().credentials_dir(), "/cfgs/creds");
  EXPECT_EQ(cfg.agents().secret_file(), "/cfgs/a.secret");
  EXPECT_EQ(cfg.external_scheduler().secret_file(), "/cfgs/e.secret");
  EXPECT_EQ(cfg.faults().failure_trace(), "/cfgs/failures.csv");
  EXPECT_EQ(cfg.faults().stragglers().trace(), "/cfgs/slow.csv");
  EXPECT_EQ(cfg.paramserver().ssd_dir(), "ssd");
  EXPECT_EQ(cfg.agents().port_file(), "a.port");
  EXPECT_EQ(cfg.external_scheduler().port_file(), "e.port");
  EXPECT_EQ(cfg.run().out_dir(), "runs/x");
}

TEST(ConfigPaths, AbsoluteEmptyAndUnsetPathsAreLeftAlone) {
  config::RunConfig cfg;
  cfg.mutable_workload()->set_trace_file("/data/t.csv");
  cfg.mutable_workload()->set_models_dir("");  // "": the catalogue built in
  ResolveInputPaths("/cfgs", &cfg);
  EXPECT_EQ(cfg.workload().trace_file(), "/data/t.csv");
  EXPECT_EQ(cfg.workload().models_dir(), "");
  // Setting a field inside agents or external_scheduler would switch them on.
  EXPECT_FALSE(cfg.has_agents());
  EXPECT_FALSE(cfg.has_external_scheduler());
  EXPECT_FALSE(cfg.has_deployment());
  EXPECT_FALSE(cfg.has_paramserver());
  EXPECT_FALSE(cfg.has_faults()) << "a faults block turns the re-asking of reports on";
}

TEST(ConfigPaths, ALoadedFileNamesItsInputsFromItsFolderAndASetFromTheCurrentOne) {
  test::ScopedTempDir dir("config_paths");
  std::filesystem::create_directories(dir.path() + "/configs");
  const std::string path = dir.path() + "/configs/c.textproto";
  std::ofstream(path) << kEveryPath;
  config::RunConfig cfg;
  Status s = LoadConfigFile(path, &cfg);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(cfg.workload().trace_file(), dir.path() + "/configs/t.csv");
  EXPECT_EQ(cfg.agents().secret_file(), dir.path() + "/configs/a.secret");
  EXPECT_EQ(cfg.run().out_dir(), "runs/x");
  ASSERT_TRUE(ApplyOverride("workload.trace_file=rel.csv", &cfg).ok());
  EXPECT_EQ(cfg.workload().trace_file(), "rel.csv");
}

TEST(ConfigPaths, AFileInTheCurrentFolderKeepsItsPathsAsWritten) {
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText(kEveryPath, "cfg", &cfg).ok());
  ResolveInputPaths("", &cfg);  // the folder of "c.textproto"
  EXPECT_EQ(cfg.workload().trace_file(), "t.csv");
}

}  // namespace
}  // namespace troupe
