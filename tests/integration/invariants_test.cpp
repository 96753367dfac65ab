// Invariants of every round of a 1,000-job run with gang jobs of 1-8 GPUs on a mixed cluster,
// checked from the lease log — what the servers granted, as the jobs received it:
//   no server is over capacity in any resource; GPU indices exist on their server and no two
//   jobs share one; a gang job holds all its GPUs or none; every job finishes exactly once; a JCT
//   is never shorter than the job's duration at the allocation it got.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/integration/run_fixture.hpp"
#include "workload/model_catalog.hpp"

namespace troupe::testing {
namespace {

constexpr char kConfig[] =
    "cluster {\n"
    "  servers { name: \"big\" count: 4 gpus: 8 cpus: 24 memory_gb: 500 }\n"
    "  servers { name: \"small\" count: 3 gpus: 4 cpus: 16 memory_gb: 256 }\n"
    "}\n"
    "workload { generator { jobs_per_hour: 6 num_jobs: 1000 multi_gpu: true } }\n"
    "run { seed: 11 lease_log: true }\n";

struct Shape {
  int gpus;
  double cpus, memory_gb;
};
// Server index -> shape, in the config's order.
const std::vector<Shape> kServers = {{8, 24, 500}, {8, 24, 500}, {8, 24, 500}, {8, 24, 500},
                                     {4, 16, 256}, {4, 16, 256}, {4, 16, 256}};

class Invariants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { result_ = new RunResult(RunConfigText(kConfig)); }
  static void TearDownTestSuite() { delete result_; }
  static RunResult* result_;
};
RunResult* Invariants::result_ = nullptr;

TEST_F(Invariants, NoServerIsEverOverCapacity) {
  std::map<std::pair<int64_t, int32_t>, std::vector<const LeaseRecord*>> by_round_server;
  for (const LeaseRecord& l : result_->leases) by_round_server[{l.round, l.server}].push_back(&l);
  ASSERT_GT(by_round_server.size(), 1000u);
  for (const auto& [key, leases] : by_round_server) {
    const Shape& shape = kServers.at(key.second);
    std::set<int32_t> gpus_in_use;
    double cpus = 0, memory = 0;
    for (const LeaseRecord* l : leases) {
      for (int32_t g : l->gpu_ids) {
        EXPECT_GE(g, 0);
        EXPECT_LT(g, shape.gpus) << "server " << key.second << " has no GPU " << g;
        EXPECT_TRUE(gpus_in_use.insert(g).second)
            << "GPU " << g << " of server " << key.second << " leased twice in round " << key.first;
      }
      cpus += l->cpus;
      memory += l->memory_gb;
    }
    EXPECT_LE(cpus, shape.cpus + 1e-6) << "round " << key.first << " server " << key.second;
    EXPECT_LE(memory, shape.memory_gb + 1e-6) << "round " << key.first << " server " << key.second;
  }
}

TEST_F(Invariants, GangJobsHoldAllTheirGpusOrNone) {
  std::map<int64_t, int32_t> gpus_of_job;
  for (const JobRecord& j : result_->jobs) gpus_of_job[j.job_id] = j.gpus;
  std::map<std::pair<int64_t, int64_t>, int32_t> held;  // (round, job) -> GPUs
  for (const LeaseRecord& l : result_->leases) {
    held[{l.round, l.job_id}] += static_cast<int32_t>(l.gpu_ids.size());
  }
  std::set<int32_t> sizes_seen;
  for (const auto& [key, gpus] : held) {
    EXPECT_EQ(gpus, gpus_of_job.at(key.second)) << "job " << key.second << " round " << key.first;
    sizes_seen.insert(gpus);
  }
  EXPECT_EQ(sizes_seen, (std::set<int32_t>{1, 2, 4, 8}));
}

TEST_F(Invariants, EveryJobFinishesExactlyOnce) {
  ASSERT_EQ(result_->jobs.size(), 1000u);
  std::set<int64_t> ids;
  for (const JobRecord& j : result_->jobs) {
    EXPECT_TRUE(ids.insert(j.job_id).second) << "job " << j.job_id << " recorded twice";
    EXPECT_GE(j.end_s, 0) << "job " << j.job_id << " never finished";
    EXPECT_DOUBLE_EQ(j.jct_s, j.end_s - j.arrival_s);
    EXPECT_EQ(std::fmod(j.end_s, 300.0), 0.0) << "a job ends with its round";
  }
  EXPECT_EQ(*ids.begin(), 0);
  EXPECT_EQ(*ids.rbegin(), 999);
  EXPECT_EQ(result_->summary.jobs_finished(), 1000);
}

TEST_F(Invariants, JctIsNeverShorterThanTheDurationAtTheAllocationGot) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  std::map<int64_t, const JobRecord*> jobs;
  for (const JobRecord& j : result_->jobs) jobs[j.job_id] = &j;
  std::map<std::pair<int64_t, int64_t>, std::array<double, 3>> per_round;  // gpus, cpus, mem
  for (const LeaseRecord& l : result_->leases) {
    auto& a = per_round[{l.job_id, l.round}];
    a[0] += static_cast<double>(l.gpu_ids.size());
    a[1] += l.cpus;
    a[2] += l.memory_gb;
  }
  std::map<int64_t, double> best_speedup;
  std::map<int64_t, int64_t> rounds_held;
  for (const auto& [key, a] : per_round) {
    const ModelProfile* model = catalog.Find(jobs.at(key.first)->model);
    const double speedup = model->Speedup(a[1] / a[0], a[2] / a[0]);
    best_speedup[key.first] = std::max(best_speedup[key.first], speedup);
    ++rounds_held[key.first];
  }
  for (const auto& [id, job] : jobs) {
    const ModelProfile* model = catalog.Find(job->model);
    const double fastest = job->iterations * model->iter_time_s / best_speedup.at(id);
    EXPECT_GE(job->jct_s + 1e-6, fastest) << "job " << id;
    EXPECT_GE(job->jct_s, job->rounds_run * 300.0) << "job " << id;
    EXPECT_EQ(job->rounds_run, rounds_held[id]) << "job " << id;
  }
}

}  // namespace
}  // namespace troupe::testing
