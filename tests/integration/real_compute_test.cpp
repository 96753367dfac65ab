// Real compute in real mode (RunConfig.backends, docs/gpu.md): jobs run real GEMM steps on CPU
// threads for their leases and are credited the iterations their measured step time gives. The
// assertions are relations between what was measured and what was credited, never timings.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "gpu/compute_backend.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// One server of 2 GPUs at the proportional share (3 CPUs, 62.5 GB a GPU: speedup 1). Rounds of
// 10^7 virtual seconds last 40 ms of wall time (time_scale 2.5e8), so that even a slow (or
// sanitised) CPU, whose measured iteration takes thousands of job seconds, finishes each job's few
// iterations within a round or two. A step is tiny: about 1 MFLOP of 64-wide GEMMs.
std::string Config(const std::string& trace, const std::string& compute) {
  return "cluster { servers { count: 1 gpus: 2 cpus: 6 memory_gb: 125 } }\n"
         "workload { trace_file: '" +
         trace +
         "' }\n"
         "scheduler { round_s: 10000000 }\n"
         "run { mode: real time_scale: 250000000 }\n"
         "backends { compute: '" +
         compute + "' scale: 1e-7 width: 64 gemms: 2 }\n";
}

// job 0 (1 GPU) and job 2 (1 GPU) share the server; job 1 needs both GPUs (all-reduces when it
// runs), unless this machine has a single hardware thread.
std::string WriteTrace(const std::string& dir, bool two_gpu_job) {
  const std::string path = dir + "/trace.csv";
  WriteFile(path, std::string("job_id,model,arrival_s,iterations,gpus\n") + "0,res50,0,40,1\n" +
                      (two_gpu_job ? "1,transformer,0,30,2\n" : "") + "2,lstm,100,25,1\n");
  return path;
}

bool CpuHasTwoDevices() {
  std::unique_ptr<gpu::ComputeBackend> cpu;
  return gpu::MakeComputeBackend("cpu", &cpu).ok() && cpu->max_devices() >= 2;
}

TEST(RealCompute, CpuStepsDriveProgress) {
  const std::string dir = FreshDir("real-compute");
  const bool two_gpu_job = CpuHasTwoDevices();
  config::RunConfig cfg;
  ASSERT_TRUE(
      ParseConfigText(Config(WriteTrace(dir, two_gpu_job), "cpu"), "rc.textproto", &cfg).ok());
  cfg.mutable_run()->set_out_dir(dir + "/run");
  ASSERT_TRUE(ValidateConfig(cfg, "rc.textproto").ok());
  RunPlan plan;
  Status planned = PlanRun(cfg, "rc.textproto", &plan);
  ASSERT_TRUE(planned.ok()) << planned.message();
  ASSERT_TRUE(plan.compute.enabled());
  auto log = std::make_shared<MeasuredLeaseLog>();
  plan.measured_leases = log;
  RunResult result;
  Status ran = ExecuteRun(std::move(plan), ExecuteOptions{}, &result);
  ASSERT_TRUE(ran.ok()) << ran.message();

  // Every job finished, and jobs.csv holds each with its iterations.
  const std::map<int64_t, int64_t> wanted =
      two_gpu_job ? std::map<int64_t, int64_t>{{0, 40}, {1, 30}, {2, 25}}
                  : std::map<int64_t, int64_t>{{0, 40}, {2, 25}};
  EXPECT_EQ(result.summary.jobs_finished(), static_cast<int64_t>(wanted.size()));
  const auto rows = ReadCsv(dir + "/run/jobs.csv");
  ASSERT_EQ(rows.size(), wanted.size());
  std::map<int64_t, int64_t> rounds_run;
  for (const auto& row : rows) {
    const int64_t id = std::stoll(row.at("job_id"));
    ASSERT_TRUE(wanted.count(id)) << id;
    EXPECT_EQ(std::stoll(row.at("iterations")), wanted.at(id));
    EXPECT_GE(std::stod(row.at("end_s")), std::stod(row.at("start_s")));
    rounds_run[id] = std::stoll(row.at("rounds_run"));
  }

  // Each lease was credited what its measurement gives, and the credits add up to the job.
  std::map<int64_t, int64_t> credited, leases;
  for (const MeasuredLease& m : log->Take()) {
    SCOPED_TRACE("job " + std::to_string(m.job_id) + " round " + std::to_string(m.round));
    EXPECT_GE(m.steps, 1);
    EXPECT_GT(m.seconds_per_iteration, 0);
    EXPECT_EQ(m.speedup, 1.0);  // the proportional share
    EXPECT_EQ(m.lease_s, 1e7);
    EXPECT_EQ(m.gpus, m.job_id == 1 ? 2 : 1);
    EXPECT_EQ(m.iterations_possible,
              static_cast<int64_t>(std::floor(m.lease_s / (m.seconds_per_iteration / m.speedup))));
    const int64_t left = wanted.at(m.job_id) - credited[m.job_id];
    EXPECT_EQ(m.iterations_done, std::min(m.iterations_possible, left));
    credited[m.job_id] += m.iterations_done;
    ++leases[m.job_id];
  }
  for (const auto& [id, iterations] : wanted) {
    EXPECT_EQ(credited[id], iterations) << "job " << id;
    EXPECT_EQ(leases[id], rounds_run[id]) << "job " << id;
  }
}

// backends.reference_flops_per_s left 0: a "cpu" run converts at this host's measured rate (the
// V100's 14e12 made a CPU job ~1000x slower than the catalogue); a given rate is kept.
TEST(RealCompute, CpuMeasuresTheReferenceUnlessGiven) {
  const std::string dir = FreshDir("real-compute-reference");
  const std::string text = Config(WriteTrace(dir, false), "cpu");
  for (const double given : {0.0, 3e9}) {
    config::RunConfig cfg;
    ASSERT_TRUE(ParseConfigText(text, "rc.textproto", &cfg).ok());
    if (given > 0) cfg.mutable_backends()->set_reference_flops_per_s(given);
    ASSERT_TRUE(ValidateConfig(cfg, "rc.textproto").ok());
    RunPlan plan;
    Status planned = PlanRun(cfg, "rc.textproto", &plan);
    ASSERT_TRUE(planned.ok()) << planned.message();
    const double reference = plan.compute.sizing.reference_flops_per_s;
    if (given > 0) {
      EXPECT_EQ(reference, given);
    } else {
      EXPECT_TRUE(std::isfinite(reference));
      EXPECT_GT(reference, 1e6);
      EXPECT_NE(reference, gpu::kCatalogueGpuFlopsPerS);
    }
  }
}

// A server dying mid-lease stops the lease's worker and drops its answer: the lease is wasted,
// never credited, and the job finishes later on the restarted server, every credited lease still
// what its measurement gives.
TEST(RealCompute, LostLeaseStopsTheWorker) {
  const std::string dir = FreshDir("real-compute-lost");
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText(Config(WriteTrace(dir, false), "cpu") +
                                  "faults { fault { kind: crash target: 'server:0' at_s: 5000000 "
                                  "duration_s: 10000000 } }\n",
                              "rc.textproto", &cfg)
                  .ok());
  ASSERT_TRUE(ValidateConfig(cfg, "rc.textproto").ok());
  RunPlan plan;
  ASSERT_TRUE(PlanRun(cfg, "rc.textproto", &plan).ok());
  auto log = std::make_shared<MeasuredLeaseLog>();
  plan.measured_leases = log;
  plan.out_dir.clear();
  RunResult result;
  Status ran = ExecuteRun(std::move(plan), ExecuteOptions{}, &result);
  ASSERT_TRUE(ran.ok()) << ran.message();
  EXPECT_EQ(result.summary.jobs_finished(), 2);
  std::map<int64_t, const JobRecord*> jobs;
  for (const JobRecord& j : result.jobs) jobs[j.job_id] = &j;
  ASSERT_TRUE(jobs.count(0));
  // Job 0 held server 0 in round 0 when it died at 5e6 (on the wall clock, so about then): part of
  // a lease of one GPU was wasted.
  EXPECT_GT(jobs[0]->wasted_gpu_s, 0);
  EXPECT_LE(jobs[0]->wasted_gpu_s, 1e7);
  std::map<int64_t, int64_t> credited;
  for (const MeasuredLease& m : log->Take()) {
    EXPECT_NE(m.round, 0) << "the lost lease was credited";
    EXPECT_EQ(m.iterations_possible,
              static_cast<int64_t>(std::floor(m.lease_s / (m.seconds_per_iteration / m.speedup))));
    credited[m.job_id] += m.iterations_done;
  }
  EXPECT_EQ(credited[0], 40);
  EXPECT_EQ(credited[2], 25);
}

// "cuda" where this build or machine cannot run it: exit 2 naming backends.compute, from both
// validate and run, and nothing written. Where a GPU answers, the config is valid.
TEST(RealCompute, UnusableCudaIsABadConfig) {
  const std::string dir = FreshDir("real-compute-cuda");
  const std::string config = dir + "/cuda.textproto";
  WriteFile(config, Config(WriteTrace(dir, false), "cuda"));
  std::unique_ptr<gpu::ComputeBackend> cuda;
  const bool usable = gpu::MakeComputeBackend("cuda", &cuda).ok();
  cuda.reset();
  ProcessResult validate = RunTroupe({"validate", config});
  if (usable) {
    EXPECT_EQ(validate.exit_code, 0) << validate.err;
    GTEST_SKIP() << "a GPU answers here: cuda is a valid choice";
  }
  EXPECT_EQ(validate.exit_code, 2);
  EXPECT_NE(validate.err.find("backends.compute"), std::string::npos) << validate.err;
  EXPECT_NE(validate.err.find("cuda"), std::string::npos) << validate.err;
  ProcessResult run = RunTroupe({"run", config, "--out", dir + "/run", "--quiet"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("backends.compute"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run"));
}

TEST(RealCompute, RealComputeNeedsRealMode) {
  const std::string dir = FreshDir("real-compute-mode");
  const std::string config = dir + "/emulated.textproto";
  WriteFile(config, Config(WriteTrace(dir, false), "cpu"));
  ProcessResult r = RunTroupe({"run", config, "--set", "run.mode=emulated", "--quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("backends.compute"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run.mode"), std::string::npos) << r.err;
  ProcessResult bad = RunTroupe({"run", config, "--set", "backends.compute=tpu", "--quiet"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("backends.compute"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace troupe::testing
