// RoundDemands (scheduling/demand.hpp): what it answers from what it keeps — its memo of whether
// a job's ideal pays, a job's demands on a cluster of one server shape — is exactly what the
// demands computed from scratch say (IdealDemand, FallbackDemand): for jobs of models that share
// a matrix and an ideal, jobs with a matrix of their own or none, on clusters of one shape and of
// several, whatever order the jobs are asked in. And jobs it gives one question (what a best-fit
// search may pick up on) have the same demands on every server.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "scheduling/demand.hpp"
#include "tests/support/random_sensitivity.hpp"

namespace troupe::scheduling {
namespace {

std::shared_ptr<const SensitivityMatrix> RandomMatrix(std::mt19937_64& rng) {
  return std::make_shared<const SensitivityMatrix>(testing::RandomMonotoneMatrix(rng));
}

// Ideals below, at and above the proportional share of the shapes below; 0: none.
double RandomIdealCpus(std::mt19937_64& rng) { return static_cast<double>(rng() % 13); }
double RandomIdealMemory(std::mt19937_64& rng) {
  const double memory[] = {0, 20, 40, 62.5, 125, 187.5, 600};
  return memory[rng() % 7];
}

// Half the jobs of five "models" (one matrix and one ideal each, as jobs of one model share
// them), the rest with a matrix of their own or none.
std::vector<SchedJob> Jobs(size_t count, std::mt19937_64& rng) {
  struct Model {
    std::shared_ptr<const SensitivityMatrix> matrix;
    double cpus, memory_gb;
  };
  std::vector<Model> models;
  for (int m = 0; m < 5; ++m) {
    models.push_back({RandomMatrix(rng), RandomIdealCpus(rng), RandomIdealMemory(rng)});
  }
  std::vector<SchedJob> jobs(count);
  for (size_t i = 0; i < count; ++i) {
    SchedJob& j = jobs[i];
    j.id = static_cast<int64_t>(i);
    j.gpus = 1 << (rng() % 4);
    if (rng() % 2 == 0) {
      const Model& m = models[rng() % models.size()];
      j.sensitivity = m.matrix;
      j.ideal_cpus_per_gpu = m.cpus;
      j.ideal_memory_gb_per_gpu = m.memory_gb;
      continue;
    }
    if (rng() % 3 != 0) j.sensitivity = RandomMatrix(rng);
    j.ideal_cpus_per_gpu = RandomIdealCpus(rng);
    j.ideal_memory_gb_per_gpu = RandomIdealMemory(rng);
  }
  return jobs;
}

void ExpectSame(const AuxDemand& got, const AuxDemand& want, const char* what, int64_t job,
                int32_t server, int32_t gpus) {
  EXPECT_EQ(got.cpus, want.cpus) << what << ": job " << job << " on " << server << " x" << gpus;
  EXPECT_EQ(got.memory_gb, want.memory_gb)
      << what << ": job " << job << " on " << server << " x" << gpus;
}

// Every job's ideal and fallback demands on every server, for its own GPUs and for one GPU.
void ExpectDemandsFromScratch(const ClusterLedger& ledger, const std::vector<SchedJob>& jobs,
                              const std::vector<size_t>& order) {
  const RoundDemands demands(ledger);
  for (size_t i : order) {
    const SchedJob& job = jobs[i];
    const RoundDemands::Job prepared = demands.Prepare(job);
    for (int32_t s = 0; s < ledger.server_count(); ++s) {
      for (int32_t gpus : {job.gpus, 1}) {
        ExpectSame(demands.Ideal(prepared, s, gpus), IdealDemand(job, ledger, s, gpus), "ideal",
                   job.id, s, gpus);
        ExpectSame(demands.Fallback(prepared, s, gpus), FallbackDemand(job, ledger, s, gpus),
                   "fallback", job.id, s, gpus);
      }
    }
  }
}

void ExpectDemandsFromScratchInAnyOrder(const std::vector<ServerShape>& shapes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const ClusterLedger ledger(shapes);
  const std::vector<SchedJob> jobs = Jobs(300, rng);
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  ExpectDemandsFromScratch(ledger, jobs, order);
  std::reverse(order.begin(), order.end());
  ExpectDemandsFromScratch(ledger, jobs, order);
  std::shuffle(order.begin(), order.end(), rng);
  ExpectDemandsFromScratch(ledger, jobs, order);
}

TEST(RoundDemands, OneServerShapeGivesTheDemandsComputedFromScratch) {
  const std::vector<ServerShape> shapes(6, ServerShape{8, 24, 500, 0});
  ExpectDemandsFromScratchInAnyOrder(shapes, 1);
  const ClusterLedger ledger(shapes);
  EXPECT_TRUE(RoundDemands(ledger).uniform());
}

TEST(RoundDemands, SeveralServerShapesGiveTheDemandsComputedFromScratch) {
  const std::vector<ServerShape> shapes = {
      {8, 24, 500, 0}, {8, 48, 1000, 0}, {4, 12, 250, 1}, {8, 24, 500, 0}, {2, 32, 128, 1}};
  ExpectDemandsFromScratchInAnyOrder(shapes, 2);
  const ClusterLedger ledger(shapes);
  EXPECT_FALSE(RoundDemands(ledger).uniform());
}

// Jobs with one question have equal demands (and bounds) on every server; some share one.
void ExpectQuestionsShareDemands(const std::vector<ServerShape>& shapes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const ClusterLedger ledger(shapes);
  const std::vector<SchedJob> jobs = Jobs(300, rng);
  const RoundDemands demands(ledger);
  std::map<uint32_t, RoundDemands::Job> first;  // by question: ideal ones even, fallback odd
  int shared = 0;
  for (const SchedJob& job : jobs) {
    const RoundDemands::Job prepared = demands.Prepare(job);
    for (const bool fallback : {false, true}) {
      const uint32_t question = fallback ? prepared.fallback_question : prepared.ideal_question;
      if (question == 0) continue;
      const auto [it, fresh] = first.emplace(question * 2 + (fallback ? 1 : 0), prepared);
      if (fresh) continue;
      ++shared;
      const RoundDemands::Job& other = it->second;
      ASSERT_EQ(other.gpus, prepared.gpus) << "job " << job.id;
      const auto demand = [&](const RoundDemands::Job& j, int32_t s) {
        return fallback ? demands.Fallback(j, s, j.gpus) : demands.Ideal(j, s, j.gpus);
      };
      for (int32_t s = 0; s < ledger.server_count(); ++s) {
        ExpectSame(demand(prepared, s), demand(other, s), "question", job.id, s, job.gpus);
      }
      ExpectSame(fallback ? demands.FallbackBound(prepared) : demands.IdealBound(prepared),
                 fallback ? demands.FallbackBound(other) : demands.IdealBound(other), "bound",
                 job.id, -1, job.gpus);
    }
  }
  EXPECT_GT(shared, 100) << "too few jobs share a question to test";
}

TEST(RoundDemands, JobsThatShareAQuestionShareTheirDemandsOnEveryServer) {
  ExpectQuestionsShareDemands(std::vector<ServerShape>(6, ServerShape{8, 24, 500, 0}), 3);
  ExpectQuestionsShareDemands(
      {{8, 24, 500, 0}, {8, 48, 1000, 0}, {4, 12, 250, 1}, {8, 24, 500, 0}, {2, 32, 128, 1}}, 4);
}

}  // namespace
}  // namespace troupe::scheduling
