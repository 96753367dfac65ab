// What a user meets when a config is wrong: the message must point at the file, line and
// column (or the field), and a correct config must load with exactly the values written.
#include "config/config_loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config_validation.hpp"
#include "tests/unit/scoped_temp_dir.hpp"

namespace troupe {
namespace {

const std::string kSourceDir = TROUPE_SOURCE_DIR;

// A valid base every validation test breaks in exactly one place.
config::RunConfig ValidConfig() {
  config::RunConfig cfg;
  Status s = ParseConfigText(R"pb(
                               cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }
                               run { measure_first_job: 10 measure_last_job: 19 }
                             )pb",
                             "base", &cfg);
  EXPECT_TRUE(s.ok()) << s.message();
  return cfg;
}

Status Validate(const config::RunConfig& cfg) { return ValidateConfig(cfg, "x.textproto"); }

void ExpectInvalid(const Status& s, const std::string& fragment) {
  EXPECT_EQ(s.code(), Status::Code::kInvalidInput) << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos)
      << "'" << s.message() << "' lacks '" << fragment << "'";
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "not one line: " << s.message();
}

TEST(ConfigLoader, DefaultConfigLoadsWithSynergysSetup) {
  std::string path = kSourceDir + "/configs/default.textproto";
  config::RunConfig cfg;
  Status s = LoadConfigFile(path, &cfg);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(ValidateConfig(cfg, path).ok());
  ASSERT_EQ(cfg.cluster().servers_size(), 1);
  const auto& g = cfg.cluster().servers(0);
  EXPECT_EQ(g.count() * g.gpus(), 128);
  EXPECT_EQ(g.count(), 16);
  EXPECT_DOUBLE_EQ(g.cpus(), 24);
  EXPECT_DOUBLE_EQ(g.memory_gb(), 500);
  const auto& gen = cfg.workload().generator();
  EXPECT_TRUE(cfg.workload().trace_file().empty());
  EXPECT_DOUBLE_EQ(gen.jobs_per_hour(), 9);
  EXPECT_DOUBLE_EQ(gen.image_percent(), 20);
  EXPECT_DOUBLE_EQ(gen.language_percent(), 70);
  EXPECT_DOUBLE_EQ(gen.speech_percent(), 10);
  EXPECT_FALSE(gen.multi_gpu());
  EXPECT_EQ(cfg.scheduler().policy(), config::fifo);
  EXPECT_EQ(cfg.scheduler().mechanism(), config::proportional);
  EXPECT_DOUBLE_EQ(cfg.scheduler().round_s(), 300);
  EXPECT_EQ(cfg.run().mode(), config::emulated);
  EXPECT_EQ(cfg.run().seed(), 1u);
  EXPECT_EQ(cfg.run().measure_first_job(), 4000);
  EXPECT_EQ(cfg.run().measure_last_job(), 4999);
  EXPECT_EQ(cfg.run().out_dir(), "runs/default");
}

TEST(ConfigLoader, PhillyConfigLoadsWith512GpusAndTheTrace) {
  std::string path = kSourceDir + "/configs/philly-512.textproto";
  config::RunConfig cfg;
  Status s = LoadConfigFile(path, &cfg);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(ValidateConfig(cfg, path).ok());
  const auto& g = cfg.cluster().servers(0);
  EXPECT_EQ(g.count() * g.gpus(), 512);
  // Named relative to the config's own folder, so it loads from any current folder.
  EXPECT_EQ(cfg.workload().trace_file(), kSourceDir + "/configs/../data/philly.csv");
  EXPECT_EQ(cfg.run().measure_first_job(), -1);
  EXPECT_EQ(cfg.run().measure_last_job(), -1);
}

TEST(ConfigLoader, MissingFileNamesPathAndReason) {
  config::RunConfig cfg;
  Status s = LoadConfigFile("/nonexistent/dir/x.textproto", &cfg);
  ExpectInvalid(s, "/nonexistent/dir/x.textproto: cannot read: No such file or directory");
}

TEST(ConfigLoader, DirectoryIsNotReadable) {
  config::RunConfig cfg;
  ExpectInvalid(LoadConfigFile(kSourceDir + "/configs", &cfg), "configs: cannot read: ");
}

TEST(ConfigLoader, UnknownFieldInFileGivesOneBasedLineAndColumn) {
  std::string path = (std::filesystem::temp_directory_path() / "troupe_bad_field.textproto");
  std::ofstream(path) << "run {\n  seed: 3\n  colour: 1\n}\n";
  config::RunConfig cfg;
  Status s = LoadConfigFile(path, &cfg);
  std::filesystem::remove(path);
  // The culprit is the name itself, though protobuf notices it only at the colon after it.
  ExpectInvalid(s, path + ":3:3: ");
  ExpectInvalid(s, "colour");
}

TEST(ConfigLoader, WrongTypeGivesLineAndColumnOfTheValue) {
  config::RunConfig cfg;
  Status s = ParseConfigText("run {\n  seed: \"seven\"\n}\n", "cfg.textproto", &cfg);
  ExpectInvalid(s, "cfg.textproto:2:9: ");
  ExpectInvalid(s, "integer");
}

TEST(ConfigLoader, BadEnumNameGivesLineAndColumnAndTheName) {
  config::RunConfig cfg;
  Status s = ParseConfigText("scheduler {\n    policy: shortest\n}\n", "cfg.textproto", &cfg);
  ExpectInvalid(s, "cfg.textproto:2:13: ");
  ExpectInvalid(s, "shortest");
}

TEST(ConfigLoader, MisspeltNamesGetADidYouMean) {
  config::RunConfig cfg;
  ExpectInvalid(ParseConfigText("cluster {\n  sever { count: 1 }\n}\n", "cfg.textproto", &cfg),
                "cfg.textproto:2:3: Message type \"troupe.config.Cluster\" has no field named "
                "\"sever\" (did you mean 'servers'?)");
  ExpectInvalid(ParseConfigText("faults { fault { kind: crsh } }\n", "cfg.textproto", &cfg),
                "Unknown enumeration value of \"crsh\" for field \"kind\" (did you mean 'crash'?)");
  cfg = ValidConfig();
  ExpectInvalid(ApplyOverride("cluster.sever[0].count=2", &cfg),
                "--set cluster.sever[0].count=2: no field 'sever' in troupe.config.Cluster (did "
                "you mean 'servers'?)");
  ExpectInvalid(ApplyOverride("scheduler.mechanism=tun", &cfg),
                "'tun' is not a value of troupe.config.Mechanism (did you mean 'tune'?) (");
  cfg.mutable_scheduler()->set_policy_name("fifp");
  ExpectInvalid(Validate(cfg), "'fifp' is not a registered policy (did you mean 'fifo'?) (known: ");
  cfg = ValidConfig();
  cfg.mutable_scheduler()->set_mechanism_name("gavel_lass");
  ExpectInvalid(Validate(cfg), "is not a registered mechanism (did you mean 'gavel_las'?)");
  // Nothing close: no guess.
  const Status far = ApplyOverride("scheduler.colour=1", &cfg);
  ExpectInvalid(far, "no field 'colour' in troupe.config.Scheduler");
  EXPECT_EQ(far.message().find("did you mean"), std::string::npos) << far.message();
}

TEST(ConfigLoader, AnOutOfRangeValueInAFileNamesItsLine) {
  const test::ScopedTempDir dir("config_range_line");
  std::filesystem::create_directories(dir.path());
  const std::string path = dir.path() + "/cfg.textproto";
  const std::string text =
      "cluster {\n"
      "  servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 }\n"
      "  servers {\n"
      "    count: -1\n"
      "    gpus: 8 cpus: 24 memory_gb: 500\n"
      "  }\n"
      "}\n"
      "scheduler { round_s: -5 }\n";
  std::ofstream(path) << text;
  EXPECT_EQ(FieldLine(text, "cluster.servers[1].count"), 4);
  EXPECT_EQ(FieldLine(text, "scheduler.round_s"), 8);
  EXPECT_EQ(FieldLine(text, "run.seed"), 0);  // not in the file: a default
  config::RunConfig cfg;
  ASSERT_TRUE(LoadConfigFile(path, &cfg).ok());
  const Status count = LocateConfigError(ValidateConfig(cfg, path), path, {});
  ExpectInvalid(count, path + ":4: cluster.servers[1].count: must be in [1, 10000], got -1");
  cfg.mutable_cluster()->mutable_servers(1)->set_count(2);
  ExpectInvalid(LocateConfigError(ValidateConfig(cfg, path), path, {}),
                path + ":8: scheduler.round_s: must be in ");
  // A value a --set gave is the flag's, not the file's.
  const std::string set = "scheduler.round_s=-7";
  ASSERT_TRUE(ApplyOverride(set, &cfg).ok());
  const Status flagged = LocateConfigError(ValidateConfig(cfg, path), path, {set});
  ExpectInvalid(flagged, "--set scheduler.round_s=-7: scheduler.round_s: must be in ");
  EXPECT_EQ(flagged.message().find(path), std::string::npos) << flagged.message();
}

TEST(ConfigLoader, OverridesEachKindOfField) {
  config::RunConfig cfg = ValidConfig();
  ASSERT_TRUE(ApplyOverride("workload.generator.jobs_per_hour=4.5", &cfg).ok());
  ASSERT_TRUE(ApplyOverride("run.seed=7", &cfg).ok());
  ASSERT_TRUE(ApplyOverride("scheduler.policy=srtf", &cfg).ok());
  ASSERT_TRUE(ApplyOverride("run.mode=real", &cfg).ok());
  ASSERT_TRUE(ApplyOverride("workload.trace_file=traces/x y.csv", &cfg).ok());
  ASSERT_TRUE(ApplyOverride("workload.generator.multi_gpu=true", &cfg).ok());
  ASSERT_TRUE(ApplyOverride("run.measure_first_job=-1", &cfg).ok());
  EXPECT_DOUBLE_EQ(cfg.workload().generator().jobs_per_hour(), 4.5);
  EXPECT_EQ(cfg.run().seed(), 7u);
  EXPECT_EQ(cfg.scheduler().policy(), config::srtf);
  EXPECT_EQ(cfg.run().mode(), config::real);
  EXPECT_EQ(cfg.workload().trace_file(), "traces/x y.csv");
  EXPECT_TRUE(cfg.workload().generator().multi_gpu());
  EXPECT_EQ(cfg.run().measure_first_job(), -1);
  // Untouched neighbours keep their values.
  EXPECT_EQ(cfg.run().measure_last_job(), 19);
  EXPECT_EQ(cfg.scheduler().mechanism(), config::proportional);
}

TEST(ConfigLoader, OverrideOfUnknownFieldNamesFieldAndMessage) {
  config::RunConfig cfg;
  ExpectInvalid(ApplyOverride("scheduler.polcy=srtf", &cfg),
                "--set scheduler.polcy=srtf: no field 'polcy' in troupe.config.Scheduler");
  ExpectInvalid(ApplyOverride("sched.policy=srtf", &cfg), "no field 'sched' in troupe.config");
}

TEST(ConfigLoader, OverrideWithBadValueIsRejectedAndLeavesConfig) {
  config::RunConfig cfg = ValidConfig();
  ExpectInvalid(ApplyOverride("run.seed=abc", &cfg), "--set run.seed=abc: ");
  ExpectInvalid(ApplyOverride("run.seed=-3", &cfg), "run.seed");
  ExpectInvalid(ApplyOverride("run.seed=7x", &cfg), "run.seed");
  ExpectInvalid(ApplyOverride("run.threads=99999999999", &cfg), "run.threads");
  ExpectInvalid(ApplyOverride("scheduler.round_s=fast", &cfg), "scheduler.round_s");
  ExpectInvalid(ApplyOverride("workload.generator.multi_gpu=maybe", &cfg), "multi_gpu");
  ExpectInvalid(ApplyOverride("scheduler.policy=sjf", &cfg), "'sjf' is not a value of");
  ExpectInvalid(ApplyOverride("run.seed", &cfg), "expected field.path=value");
  ExpectInvalid(ApplyOverride("workload.generator.bogus=1", &cfg), "no field 'bogus'");
  // A rejected override leaves no trace: not the 7 of "7x", not the sub-messages on its path.
  EXPECT_EQ(cfg.run().seed(), 1u);
  EXPECT_EQ(cfg.scheduler().policy(), config::fifo);
  EXPECT_FALSE(cfg.has_workload());
}

TEST(ConfigLoader, OverrideCannotSetMessagesOrRepeatedFields) {
  config::RunConfig cfg;
  ExpectInvalid(ApplyOverride("run=1", &cfg), "'run' is a message");
  ExpectInvalid(ApplyOverride("cluster.servers=1", &cfg), "repeated field");
  ExpectInvalid(ApplyOverride("cluster.servers.count=2", &cfg), "name one entry, e.g. servers[0]");
  ExpectInvalid(ApplyOverride("run.seed.low=2", &cfg), "not a message");
}

// Repeated fields are set entry by entry, by index; the entry must exist.
TEST(ConfigLoader, OverrideSetsAnEntryOfARepeatedField) {
  config::RunConfig cfg = ValidConfig();
  cfg.mutable_cluster()->add_servers()->set_count(2);
  ASSERT_TRUE(ApplyOverride("cluster.servers[1].count=8", &cfg).ok());
  EXPECT_EQ(cfg.cluster().servers(0).count(), 4);
  EXPECT_EQ(cfg.cluster().servers(1).count(), 8);
  ASSERT_TRUE(ApplyOverride("cluster.servers[0].name=big", &cfg).ok());
  EXPECT_EQ(cfg.cluster().servers(0).name(), "big");
  cfg.mutable_paramserver()->add_hidden(64);
  cfg.mutable_paramserver()->add_hidden(32);
  ASSERT_TRUE(ApplyOverride("paramserver.hidden[0]=128", &cfg).ok());
  ASSERT_EQ(cfg.paramserver().hidden_size(), 2);
  EXPECT_EQ(cfg.paramserver().hidden(0), 128);
  EXPECT_EQ(cfg.paramserver().hidden(1), 32);
  cfg.mutable_faults()->mutable_random()->add_kinds(config::crash);
  ASSERT_TRUE(ApplyOverride("faults.random.kinds[0]=slow", &cfg).ok());
  EXPECT_EQ(cfg.faults().random().kinds(0), config::slow);
}

TEST(ConfigLoader, OverrideWithABadIndexIsRejectedAndLeavesConfig) {
  config::RunConfig cfg = ValidConfig();
  ExpectInvalid(ApplyOverride("cluster.servers[1].count=8", &cfg),
                "--set cluster.servers[1].count=8: index 1 out of range: "
                "troupe.config.Cluster.servers has 1 entry (index 0)");
  ExpectInvalid(ApplyOverride("cluster.servers[-1].count=8", &cfg), "NAME[INDEX]");
  ExpectInvalid(ApplyOverride("cluster.servers[x].count=8", &cfg), "NAME[INDEX]");
  ExpectInvalid(ApplyOverride("cluster.servers[0.count=8", &cfg), "NAME[INDEX]");
  ExpectInvalid(ApplyOverride("run[0].seed=2", &cfg), "not a repeated field");
  ExpectInvalid(ApplyOverride("paramserver.hidden[0]=5", &cfg), "has no entries");
  ExpectInvalid(ApplyOverride("cluster.servers[0].count=many", &cfg), "count");
  EXPECT_EQ(cfg.cluster().servers_size(), 1);
  EXPECT_EQ(cfg.cluster().servers(0).count(), 4);
  EXPECT_FALSE(cfg.has_paramserver());
}

TEST(ConfigLoader, ValidationRejectsEachBrokenRuleNamingTheField) {
  struct Case {
    const char* set;  // an override that breaks one rule
    const char* message;
  };
  const Case cases[] = {
      {"scheduler.round_s=0", "x.textproto: scheduler.round_s: must be in [1, 1000000000], got 0"},
      {"run.time_scale=-1", "run.time_scale: must be in [0.001, 1000000000], got -1"},
      {"run.time_scale=nan", "run.time_scale: must be in [0.001, 1000000000], got nan"},
      {"scheduler.round_s=inf", "scheduler.round_s: must be in [1, 1000000000], got inf"},
      {"run.measure_last_job=-2", "run.measure_last_job: must be in [-1, 10000000], got -2"},
      {"run.threads=-1", "run.threads: must be in [0, 1024], got -1"},
      {"workload.max_jobs=-1", "workload.max_jobs: must be in [0, 10000000], got -1"},
      {"workload.generator.jobs_per_hour=0",
       "workload.generator.jobs_per_hour: must be in [0.001, 1000000], got 0"},
      {"workload.generator.speech_percent=-5",
       "workload.generator.speech_percent: must be in [0, 100], got -5"},
      {"run.deadline_s=-1", "run.deadline_s: must be in [0, 1000000000], got -1"},
      {"run.measure_first_job=20", "run.measure_first_job: must be <= run.measure_last_job"},
      {"run.out_dir=", "run.out_dir: must not be empty"},
  };
  for (const Case& c : cases) {
    config::RunConfig cfg = ValidConfig();
    ASSERT_TRUE(ApplyOverride(c.set, &cfg).ok()) << c.set;
    ExpectInvalid(Validate(cfg), c.message);
  }
}

TEST(ConfigLoader, ValidationChecksEveryServerGroup) {
  config::RunConfig cfg = ValidConfig();
  cfg.mutable_cluster()->add_servers()->CopyFrom(cfg.cluster().servers(0));
  cfg.mutable_cluster()->add_servers()->CopyFrom(cfg.cluster().servers(0));
  ASSERT_TRUE(Validate(cfg).ok());
  cfg.mutable_cluster()->mutable_servers(2)->set_cpus(-4);
  ExpectInvalid(Validate(cfg),
                "x.textproto: cluster.servers[2].cpus: must be in [0, 10000], got -4");
  cfg.mutable_cluster()->mutable_servers(2)->set_cpus(4);
  cfg.mutable_cluster()->mutable_servers(1)->set_count(0);
  ExpectInvalid(Validate(cfg), "cluster.servers[1].count: must be in [1, 10000], got 0");
  cfg.mutable_cluster()->mutable_servers(1)->set_count(1);
  cfg.mutable_cluster()->mutable_servers(1)->clear_gpus();
  ExpectInvalid(Validate(cfg), "cluster.servers[1].gpus: must be in [1, 64], got 0");
  cfg.mutable_cluster()->mutable_servers(1)->set_gpus(1);
  cfg.mutable_cluster()->mutable_servers(0)->set_memory_gb(0);
  ExpectInvalid(Validate(cfg), "cluster.servers[0].memory_gb: must be > 0");
  cfg.mutable_cluster()->clear_servers();
  ExpectInvalid(Validate(cfg), "cluster.servers: at least one server group");
}

TEST(ConfigLoader, ValidationRejectsAllClassPercentsZero) {
  config::RunConfig cfg = ValidConfig();
  auto* gen = cfg.mutable_workload()->mutable_generator();
  gen->set_image_percent(0);
  gen->set_language_percent(0);
  gen->set_speech_percent(0);
  ExpectInvalid(Validate(cfg), "workload.generator: class percents must sum to > 0");
}

TEST(ConfigLoader, EndlessGeneratorNeedsAWindowOrADeadline) {
  config::RunConfig cfg = ValidConfig();
  cfg.mutable_run()->set_measure_last_job(-1);
  ExpectInvalid(Validate(cfg), "workload.generator.num_jobs: is 0");
  cfg.mutable_run()->set_deadline_s(3600);
  EXPECT_TRUE(Validate(cfg).ok());
  cfg.mutable_run()->set_deadline_s(0);
  cfg.mutable_workload()->mutable_generator()->set_num_jobs(100);
  EXPECT_TRUE(Validate(cfg).ok());
  cfg.mutable_workload()->mutable_generator()->set_num_jobs(0);
  cfg.mutable_workload()->set_trace_file("t.csv");  // a trace ends by itself
  EXPECT_TRUE(Validate(cfg).ok());
}

TEST(ConfigLoader, PlacementMustBeRealModeWithValidNodesAndDisjointRanges) {
  config::RunConfig cfg = ValidConfig();  // 4 servers: 0..3
  Status s = ParseConfigText(
      "cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
      "run { measure_first_job: 10 measure_last_job: 19 }\n"
      "placement { node: \"a:4000\" first_server: 0 last_server: 1 }\n"
      "placement { node: \"b:4000\" first_server: 2 last_server: 3 }\n",
      "p", &cfg);
  ASSERT_TRUE(s.ok()) << s.message();
  ExpectInvalid(Validate(cfg), "placement: needs run.mode: real");
  cfg.mutable_run()->set_mode(config::real);
  ASSERT_TRUE(Validate(cfg).ok()) << Validate(cfg).message();

  config::RunConfig bad = cfg;
  bad.mutable_placement(1)->set_node("b:70000");
  ExpectInvalid(Validate(bad), "placement[1].node: must be \"host:port\"");
  bad.mutable_placement(1)->set_node("b");
  ExpectInvalid(Validate(bad), "placement[1].node");
  bad.mutable_placement(1)->set_node(":4000");
  ExpectInvalid(Validate(bad), "placement[1].node");

  bad = cfg;
  bad.mutable_placement(1)->set_last_server(4);
  ExpectInvalid(Validate(bad), "placement[1]: servers 2..4 are not a range inside");
  bad.mutable_placement(1)->set_last_server(1);
  ExpectInvalid(Validate(bad), "placement[1]: servers 2..1");

  bad = cfg;
  bad.mutable_placement(0)->set_last_server(2);
  ExpectInvalid(Validate(bad), "placement[1]: servers 2..3 overlap placement[0] (0..2)");
}

}  // namespace
}  // namespace troupe
