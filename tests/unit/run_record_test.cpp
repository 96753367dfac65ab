// config.textproto, the record a run directory keeps of its config: it must read back as exactly
// the config that ran (doubles included), and say which troupe and which command made it.
#include "runner/run_record.hpp"

#include <gtest/gtest.h>

#include "config/config_loader.hpp"

namespace troupe {
namespace {

TEST(RunRecord, ReadsBackAsTheConfigThatRan) {
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText(R"pb(
                                cluster { servers { name: "a b" count: 3 gpus: 8 cpus: 24.5 } }
                                workload { generator { jobs_per_hour: 0.1 num_jobs: 7 } }
                                scheduler {
                                  policy: srtf
                                  profiler { noise_stddev: 1e-7 }
                                }
                                paramserver { hidden: 16 hidden: 8 lr_dense: 0.3 }
                                run { seed: 18446744073709551615 out_dir: "runs/x" }
                              )pb",
                              "cfg", &cfg)
                  .ok());
  const std::string text = RunRecordText(cfg, {"1.2.3", "troupe run --set 'a=b c'"});
  config::RunConfig back;
  Status s = ParseConfigText(text, "config.textproto", &back);
  ASSERT_TRUE(s.ok()) << s.message() << "\n" << text;
  EXPECT_EQ(back.SerializeAsString(), cfg.SerializeAsString()) << text;
  EXPECT_NE(text.find("# troupe 1.2.3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# command: troupe run --set 'a=b c'\n"), std::string::npos) << text;
}

// A line break in a string, in the command line or in the folder's name must not end a comment
// line of the header and leave the rest to be read as config.
TEST(RunRecord, LineBreaksAnywhereStillReadBack) {
  config::RunConfig cfg;
  cfg.mutable_cluster()->add_servers()->set_name("a\nb\"c\\d'e\x01\xff");
  cfg.mutable_run()->set_out_dir("runs/x\ny");
  const std::string text =
      RunRecordText(cfg, {"1.2\n3", "troupe run --set 'cluster.servers[0].name=a\nb'\r\n x"});
  config::RunConfig back;
  Status s = ParseConfigText(text, "config.textproto", &back);
  ASSERT_TRUE(s.ok()) << s.message() << "\n" << text;
  EXPECT_EQ(back.SerializeAsString(), cfg.SerializeAsString()) << text;
  EXPECT_NE(text.find("# command: troupe run --set 'cluster.servers[0].name=a\\nb'\\r\\n x\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# troupe 1.2\\n3\n"), std::string::npos) << text;
}

TEST(RunRecord, AnUnknownVersionIsSaidSo) {
  const std::string text = RunRecordText(config::RunConfig{}, {});
  EXPECT_NE(text.find("# troupe (version unknown)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("# command:"), std::string::npos) << text;
}

}  // namespace
}  // namespace troupe
