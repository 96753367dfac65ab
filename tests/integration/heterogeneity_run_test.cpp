// Heterogeneous GPU types through whole runs (docs/heterogeneity.md): a job runs at its model's
// speed on its server's type; Gavel's heterogeneity-aware LAS beats the agnostic one on a small
// mixed cluster, never holds more GPUs of a type than the type has, and never spans types; a type
// troupe has no speeds for is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"
#include "workload/gpu_types.hpp"

namespace troupe::testing {
namespace {

constexpr double kRoundS = 300;

// One res50 job of 3000 s (at V100 speed) alone on one 1-GPU server of `type`.
RunResult OneJobOn(const std::string& type) {
  const std::string dir = FreshDir("one_job_" + type);
  WriteFile(dir + "/trace.csv", "job_id,model,arrival_s,duration_s,gpus\n0,res50,0,3000,1\n");
  return RunConfigText("cluster { servers { count: 1 gpus: 1 cpus: 3 memory_gb: 62.5 gpu_type: \"" +
                       type + "\" } }\nworkload { trace_file: \"" + dir +
                       "/trace.csv\" }\nscheduler { round_s: 300 }\n");
}

// The JCT of a job alone that runs whole rounds at `speed`: rounds of kRoundS until its
// iterations are done (a round counts whole iterations, as the job actor does).
double AloneJct(const JobRecord& job, double speed) {
  const double per_iteration = job.ideal_duration_s / static_cast<double>(job.iterations) / speed;
  const double per_round = std::floor(kRoundS / per_iteration);
  return std::ceil(static_cast<double>(job.iterations) / per_round) * kRoundS;
}

TEST(HeterogeneityRun, AJobRunsAtItsModelsSpeedOnTheServersType) {
  const RunResult v100 = OneJobOn("v100");
  const RunResult k80 = OneJobOn("k80");
  ASSERT_EQ(v100.jobs.size(), 1u);
  ASSERT_EQ(k80.jobs.size(), 1u);
  EXPECT_EQ(v100.jobs[0].jct_s, AloneJct(v100.jobs[0], 1));  // 3300 s
  // On a K80 res50 runs at Gavel's K80/V100 throughput ratio (0.139): about 7.2x longer.
  const double speed = *GpuTypeSpeed("res50", "k80");
  EXPECT_EQ(k80.jobs[0].jct_s, AloneJct(k80.jobs[0], speed));  // 21900 s
  EXPECT_GT(k80.jobs[0].jct_s, 7 * v100.jobs[0].ideal_duration_s);
}

// One 4-GPU server of each type; 50 single-GPU jobs of Synergy's generator.
std::string MixedCluster(const std::string& mechanism) {
  return "cluster {\n"
         "  servers { name: \"k\" count: 1 gpus: 4 cpus: 12 memory_gb: 250 gpu_type: \"k80\" }\n"
         "  servers { name: \"p\" count: 1 gpus: 4 cpus: 12 memory_gb: 250 gpu_type: \"p100\" }\n"
         "  servers { name: \"v\" count: 1 gpus: 4 cpus: 12 memory_gb: 250 gpu_type: \"v100\" }\n"
         "}\n"
         "workload { generator { jobs_per_hour: 0.6 num_jobs: 50 } }\n"
         "scheduler { policy: las mechanism_name: \"" +
         mechanism +
         "\" round_s: 360 }\n"
         "run { lease_log: true }\n";
}

double MeanJct(const RunResult& r) {
  double sum = 0;
  for (const JobRecord& j : r.jobs) sum += j.jct_s;
  return r.jobs.empty() ? 0 : sum / static_cast<double>(r.jobs.size());
}

// Per round and type, the GPUs leased never exceed the type's 4; every job's parts share a type.
void ExpectWithinTypes(const RunResult& r) {
  std::map<std::pair<int64_t, int32_t>, int32_t> held;                // (round, type) -> GPUs
  std::map<std::pair<int64_t, int64_t>, std::set<int32_t>> types_of;  // (round, job) -> types
  for (const LeaseRecord& l : r.leases) {
    const int32_t type = l.server;  // one server per type, in type order
    held[{l.round, type}] += static_cast<int32_t>(l.gpu_ids.size());
    types_of[{l.round, l.job_id}].insert(type);
  }
  ASSERT_FALSE(held.empty());
  for (const auto& [key, gpus] : held) EXPECT_LE(gpus, 4) << "round " << key.first;
  for (const auto& [key, types] : types_of) EXPECT_EQ(types.size(), 1u);
}

TEST(HeterogeneityRun, AwareLasFinishesJobsSoonerThanAgnosticLas) {
  const RunResult aware = RunConfigText(MixedCluster("gavel_las"));
  const RunResult agnostic = RunConfigText(MixedCluster("gavel_las_agnostic"));
  ASSERT_EQ(aware.jobs.size(), 50u);
  ASSERT_EQ(agnostic.jobs.size(), 50u);
  for (const RunResult* r : {&aware, &agnostic}) {
    for (const JobRecord& j : r->jobs) ASSERT_GE(j.jct_s, 0) << "job " << j.job_id;
    ExpectWithinTypes(*r);
  }
  EXPECT_LT(MeanJct(aware), 0.9 * MeanJct(agnostic));
}

std::string Servers(const std::string& name, int count, const std::string& type) {
  return "  servers { name: \"" + name + "\" count: " + std::to_string(count) +
         " gpus: 4 cpus: 12 memory_gb: 250 gpu_type: \"" + type + "\" }\n";
}

// `servers` (Servers lines) running `trace` (a trace file's lines after its header) under
// `mechanism`; the deadline ends a run that would otherwise never end.
RunResult TypedRun(const std::string& servers, const std::string& mechanism,
                   const std::string& trace, const std::string& faults = "") {
  const std::string dir = FreshDir("typed_" + mechanism);
  WriteFile(dir + "/trace.csv", "job_id,model,arrival_s,duration_s,gpus\n" + trace);
  return RunConfigText("cluster {\n" + servers + "}\nworkload { trace_file: \"" + dir +
                       "/trace.csv\" }\nscheduler { mechanism_name: \"" + mechanism +
                       "\" round_s: 300 }\nrun { deadline_s: 200000 }\n" + faults);
}

const char* const kGavelMechanisms[] = {"gavel_las", "gavel_ftf", "gavel_las_agnostic",
                                        "gavel_ftf_agnostic"};

// A Gavel mechanism places a job on one type: 12 GPUs fit 8 K80s and 8 V100s, but no type.
// Before, such a job was never placed, nor failed, and the rounds went on until the deadline.
TEST(HeterogeneityRun, GavelFailsAJobWiderThanEveryTypeWithTheReason) {
  const std::string cluster = Servers("k", 2, "k80") + Servers("v", 2, "v100");
  for (const std::string mechanism : kGavelMechanisms) {
    const RunResult r = TypedRun(cluster, mechanism, "0,res50,0,3000,12\n1,res50,0,3000,4\n");
    ASSERT_EQ(r.jobs.size(), 2u) << mechanism;
    EXPECT_EQ(r.summary.end_reason(), "all jobs finished") << mechanism;
    for (const JobRecord& j : r.jobs) {
      if (j.job_id == 1) {
        EXPECT_GE(j.end_s, 0) << mechanism;
        continue;
      }
      EXPECT_EQ(j.end_s, -1) << mechanism;
      EXPECT_EQ(j.failure, "needs 12 GPUs; " + mechanism +
                               " places a job on one GPU type, and the most of one type is 8");
    }
  }
  // Proportional spans types: it runs the job.
  const RunResult r = TypedRun(cluster, "proportional", "0,res50,0,3000,12\n");
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_GE(r.jobs[0].end_s, 0) << r.jobs[0].failure;
}

// 8 K80s, 4 P100s and 4 V100s; the K80s are lost for good at 1000 s. 8 GPUs survive in all, but
// at most 4 of a type: the 8-GPU job running on the K80s then, and the one arriving later, fail
// with the reason; the 4-GPU job finishes.
TEST(HeterogeneityRun, GavelFailsJobsNoSurvivingTypeHoldsAfterALoss) {
  const std::string cluster =
      Servers("k", 2, "k80") + Servers("p", 1, "p100") + Servers("v", 1, "v100");
  const std::string faults = "faults { fault { kind: crash target: \"server:0-1\" at_s: 1000 } }\n";
  for (const std::string mechanism : kGavelMechanisms) {
    const RunResult r = TypedRun(
        cluster, mechanism, "0,res50,0,3000,8\n1,res50,0,3000,4\n2,res50,2000,3000,8\n", faults);
    ASSERT_EQ(r.jobs.size(), 3u) << mechanism;
    EXPECT_EQ(r.summary.end_reason(), "all jobs finished") << mechanism;
    for (const JobRecord& j : r.jobs) {
      if (j.job_id == 1) {
        EXPECT_GE(j.end_s, 0) << mechanism;
        continue;
      }
      EXPECT_EQ(j.failure, "needs 8 GPUs; " + mechanism +
                               " places a job on one GPU type, and the most of one type is 4 (2 "
                               "of 4 servers lost for good; 8 GPUs survive in all)")
          << "job " << j.job_id;
    }
  }
}

TEST(HeterogeneityRun, UnknownTypeIsRefusedNamingTheField) {
  const std::string dir = FreshDir("unknown_type");
  WriteFile(dir + "/c.textproto",
            "cluster { servers { count: 1 gpus: 8 cpus: 24 memory_gb: 500 gpu_type: \"z9\" } }\n"
            "workload { generator { num_jobs: 5 } }\n");
  const ProcessResult r = RunTroupe({"run", dir + "/c.textproto", "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cluster.servers[0].gpu_type: unknown GPU type 'z9' (known: k80, p100, "
                       "v100, a100, h100)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace troupe::testing
