// `troupe run` on the public-trace samples: configs/{helios,pai,acme}-sample.textproto validate
// and run every GPU job of their sample (configs/traces/) to completion, with the arrivals and GPU
// counts of the trace; a bad line of such a trace is one line naming file:line, exit status 2,
// and no run directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

struct Sample {
  const char* config;
  const char* trace;
  std::vector<double> arrivals;  // of the jobs in id order
  std::vector<int> gpus;
};

const Sample kSamples[] = {
    {"configs/helios-sample.textproto",
     "configs/traces/helios_cluster_log.csv",
     {0, 26, 129, 539, 1292, 2998, 4739, 4739},
     {1, 4, 8, 2, 16, 1, 4, 1}},
    {"configs/pai-sample.textproto",
     "configs/traces/pai_task_table.csv",
     {0, 0, 88, 138, 838},
     {1, 2, 16, 4, 1}},
    {"configs/acme-sample.textproto",
     "configs/traces/acme_trace_seren.csv",
     {0, 336, 2497, 2498, 6703, 6703, 9698},
     {8, 8, 1, 32, 16, 4, 2}},
};

TEST(PublicTraceRuns, EachSampleRunsToCompletion) {
  for (const Sample& sample : kSamples) {
    SCOPED_TRACE(sample.config);
    const std::string out = FreshDir("public-trace-run") + "/out";
    ProcessResult validate = RunTroupe({"validate", SourcePath(sample.config), "--set",
                                        "workload.trace_file=" + SourcePath(sample.trace)});
    EXPECT_EQ(validate.exit_code, 0) << validate.err;
    ProcessResult r =
        RunTroupe({"run", SourcePath(sample.config), "--set",
                   "workload.trace_file=" + SourcePath(sample.trace), "--out", out, "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto jobs = ReadCsv(out + "/jobs.csv");
    ASSERT_EQ(jobs.size(), sample.arrivals.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      SCOPED_TRACE("job " + std::to_string(i));
      EXPECT_EQ(std::stoll(jobs[i].at("job_id")), static_cast<long long>(i));
      EXPECT_EQ(std::stod(jobs[i].at("arrival_s")), sample.arrivals[i]);
      EXPECT_EQ(std::stoi(jobs[i].at("gpus")), sample.gpus[i]);
      EXPECT_GE(std::stod(jobs[i].at("end_s")), std::stod(jobs[i].at("arrival_s")));
    }
    EXPECT_NE(ReadFile(out + "/summary.json").find("all jobs finished"), std::string::npos);
  }
}

TEST(PublicTraceRuns, ABadTraceLineIsOneLineAndExitTwo) {
  const std::string dir = FreshDir("public-trace-bad");
  std::string trace = ReadFile(SourcePath("configs/traces/helios_cluster_log.csv"));
  trace +=
      "1425521,uXBbc,vcJkd,two,1,1,COMPLETED,2020-06-09 20:01:00,2020-06-09 20:01:00,"
      "2020-06-09 20:02:00,60,0\n";
  WriteFile(dir + "/cluster_log.csv", trace);
  ProcessResult r =
      RunTroupe({"run", SourcePath("configs/helios-sample.textproto"), "--set",
                 "workload.trace_file=" + dir + "/cluster_log.csv", "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("cluster_log.csv:12: column 'gpu_num': not a number: 'two'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}

}  // namespace
}  // namespace troupe::testing
