// FitIndex (scheduling/fit_index.hpp): the same server as a scan of every server in (free GPUs,
// index) order, under random takes and gives on clusters of mixed shapes — sizes that fill no
// whole group of eight, one server, and thousands — and demands that differ per server; so too
// searches that name their question and pick up where the last one for it stopped, asked as a
// round asks them (runs of one question, placing on what they find) and at random, up to a large
// cluster filled round after round. And the ledger's bucket counts answer whether a best-fit
// server exists exactly when one does.
#include "scheduling/fit_index.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace troupe::scheduling {
namespace {

// What FitIndex::Find promises, server by server.
template <class DemandFn>
int32_t ScanForBestFit(const ClusterLedger& ledger, int32_t gpus, const DemandFn& demand) {
  if (gpus <= 0) return -1;
  for (int32_t free = gpus; free <= ledger.max_server_gpus(); ++free) {
    for (int32_t s : ledger.ServersWithFreeGpus(free)) {  // in index order
      const AuxDemand aux = demand(s, gpus);
      if (ledger.Fits(s, gpus, aux.cpus, aux.memory_gb)) return s;
    }
  }
  return -1;
}

std::vector<ServerShape> MixedShapes(int32_t servers, std::mt19937& rng) {
  std::vector<ServerShape> shapes;
  for (int32_t s = 0; s < servers; ++s) {
    const int32_t gpus = 1 << (rng() % 4);  // 1, 2, 4 or 8
    shapes.push_back({gpus, 3.0 * gpus * (1 + rng() % 3), 62.5 * gpus, 0});
  }
  return shapes;
}

// Takes a random part from a random server (or gives one back), as a mechanism would.
void Churn(ClusterLedger& ledger, FitIndex& index, std::mt19937& rng) {
  const auto s = static_cast<int32_t>(rng() % static_cast<uint32_t>(ledger.server_count()));
  const ServerShape& free = ledger.free(s);
  const ServerShape& shape = ledger.shape(s);
  if (rng() % 4 == 0) {
    const int32_t gpus = shape.gpus - free.gpus;
    const double cpus = (shape.cpus - free.cpus) * (rng() % 2);
    if (gpus > 0) ledger.Give(s, rng() % 2 ? gpus : 1, cpus, 0);
  } else if (free.gpus > 0) {
    const int32_t gpus = 1 + static_cast<int32_t>(rng() % static_cast<uint32_t>(free.gpus));
    const double cpus = free.cpus * (rng() % 5) / 4.0;
    const double memory = free.memory_gb * (rng() % 3) / 2.0;
    ledger.Take(s, gpus, cpus, memory);
  }
  index.Update(ledger, s);
}

TEST(FitIndex, FindsWhatAScanOfEveryServerFinds) {
  for (int32_t servers : {1, 7, 8, 9, 63, 300, 2048}) {
    std::mt19937 rng(static_cast<uint32_t>(servers));
    ClusterLedger ledger(MixedShapes(servers, rng));
    FitIndex index;
    index.Reset(ledger);
    int found = 0;
    for (int step = 0; step < 3000; ++step) {
      Churn(ledger, index, rng);
      const int32_t gpus = 1 + static_cast<int32_t>(rng() % 9);  // 9: more than any server
      const double per_gpu_cpus = static_cast<double>(rng() % 8);
      const double per_gpu_memory = 10.0 * static_cast<double>(rng() % 8);
      // A demand that depends on the server; the bound is at most it everywhere.
      const auto demand = [&](int32_t s, int32_t g) {
        return AuxDemand{g * per_gpu_cpus + (s % 3), g * per_gpu_memory};
      };
      const AuxDemand bound{gpus * per_gpu_cpus, gpus * per_gpu_memory};
      const int32_t expected = ScanForBestFit(ledger, gpus, demand);
      ASSERT_EQ(index.Find(ledger, gpus, bound, demand), expected)
          << servers << " servers, step " << step << ", " << gpus << " GPUs";
      found += expected >= 0;
    }
    EXPECT_GT(found, servers < 10 ? 5 : 100)
        << servers << " servers: the searches found too little to test";
  }
}

// A question: a part of `gpus` GPUs at a per-GPU demand that differs per server.
struct Question {
  int32_t gpus;
  double per_gpu_cpus, per_gpu_memory;
  AuxDemand Demand(int32_t s, int32_t g) const {
    return AuxDemand{g * per_gpu_cpus + (s % 3), g * per_gpu_memory};
  }
  AuxDemand Bound() const { return AuxDemand{gpus * per_gpu_cpus, gpus * per_gpu_memory}; }
};

TEST(FitIndex, NamedQuestionsFindWhatAScanFinds) {
  for (int32_t servers : {1, 9, 300, 2048}) {
    std::mt19937 rng(static_cast<uint32_t>(servers) + 3);
    std::vector<Question> questions;
    for (int k = 0; k < 7; ++k) {  // some asked again only after many updates
      questions.push_back({1 + static_cast<int32_t>(rng() % 8), static_cast<double>(rng() % 4),
                           10.0 * static_cast<double>(rng() % 6)});
    }
    ClusterLedger ledger(MixedShapes(servers, rng));
    FitIndex index;
    index.Reset(ledger);
    int found = 0;
    for (int step = 0; step < 4000; ++step) {
      if (step % 200 == 0) {  // a new round
        ledger.Reset();
        index.Reset(ledger);
      }
      // Runs of one question, as a round's sorted jobs ask; now and then churn in between.
      const size_t q = step % 50 < 40 ? (step / 10) % questions.size() : rng() % questions.size();
      if (rng() % 8 == 0) Churn(ledger, index, rng);
      const Question& question = questions[q];
      const auto demand = [&](int32_t s, int32_t g) { return question.Demand(s, g); };
      const int32_t expected = ScanForBestFit(ledger, question.gpus, demand);
      const int32_t got =
          index.Find(ledger, question.gpus, question.Bound(), demand, static_cast<uint32_t>(q) + 1);
      ASSERT_EQ(got, expected) << servers << " servers, step " << step << ", question " << q;
      if (got < 0) continue;
      ++found;
      const AuxDemand aux = demand(got, question.gpus);
      ledger.Take(got, question.gpus, aux.cpus, aux.memory_gb);  // the job placed there
      index.Update(ledger, got);
    }
    EXPECT_GT(found, servers < 10 ? 3 : 500) << servers << " servers: too few found to test";
  }
}

// Rounds that fill a cluster of 32,768 positions (six levels; a node four levels up holds the
// servers with one count of free GPUs): the nodes high up that a server left keep what it had
// until a search finds nothing below them, and no search may miss a fit for that, nor for a node
// lowered or raised too little.
TEST(FitIndex, FillingALargeClusterFindsWhatAScanFinds) {
  std::mt19937 rng(17);
  std::vector<ServerShape> shapes;
  for (int32_t s = 0; s < 4096; ++s) shapes.push_back({8, 12.0 * (1 + rng() % 4), 500.0, 0});
  ClusterLedger ledger(std::move(shapes));
  FitIndex index;
  int found = 0, missed = 0;
  for (int round = 0; round < 3; ++round) {
    ledger.Reset();
    index.Reset(ledger);
    for (int step = 0, failures = 0; failures < 40 && ledger.free_gpus() > 0; ++step) {
      const Question question{1 << (rng() % 4), static_cast<double>(1 + rng() % 6), 8.0};
      const auto demand = [&](int32_t s, int32_t g) { return question.Demand(s, g); };
      const int32_t expected = ScanForBestFit(ledger, question.gpus, demand);
      const auto named = static_cast<uint32_t>(question.gpus * 8 + question.per_gpu_cpus);
      const int32_t got =
          index.Find(ledger, question.gpus, question.Bound(), demand, step % 3 == 0 ? 0 : named);
      ASSERT_EQ(got, expected) << "round " << round << ", step " << step;
      if (got < 0) {
        ++failures;
        ++missed;
        continue;
      }
      ++found;
      const AuxDemand aux = demand(got, question.gpus);
      ledger.Take(got, question.gpus, aux.cpus, aux.memory_gb);
      index.Update(ledger, got);
      if (rng() % 16 == 0) Churn(ledger, index, rng);
    }
  }
  EXPECT_GT(found, 3000) << "the rounds placed too little to test";
  EXPECT_GT(missed, 50) << "the rounds never filled the cluster";
}

TEST(FitIndex, ResetAfterTheLedgerResetFindsTheEmptyCluster) {
  std::mt19937 rng(5);
  ClusterLedger ledger(MixedShapes(100, rng));
  FitIndex index;
  index.Reset(ledger);
  for (int step = 0; step < 500; ++step) Churn(ledger, index, rng);
  ledger.Reset();
  index.Reset(ledger);
  const auto share = [&](int32_t s, int32_t g) {
    return AuxDemand{ledger.ProportionalCpus(s, g), ledger.ProportionalMemoryGb(s, g)};
  };
  for (int32_t gpus = 1; gpus <= 8; ++gpus) {
    EXPECT_EQ(index.Find(ledger, gpus, AuxDemand{0, 0}, share),
              ScanForBestFit(ledger, gpus, share));
  }
  EXPECT_EQ(index.Find(ledger, 9, AuxDemand{0, 0}, share), -1);
  EXPECT_EQ(index.Find(ledger, 0, AuxDemand{0, 0}, share), -1);
}

TEST(ClusterLedger, SomeServerHasFreeGpusExactlyWhenABestFitServerExists) {
  for (int32_t servers : {1, 9, 300}) {
    std::mt19937 rng(static_cast<uint32_t>(servers) + 11);
    ClusterLedger ledger(MixedShapes(servers, rng));
    FitIndex index;
    index.Reset(ledger);
    int yes = 0, no = 0;
    for (int step = 0; step < 2000; ++step) {
      Churn(ledger, index, rng);
      for (int32_t gpus = -1; gpus <= 9; ++gpus) {
        const bool some = ledger.SomeServerHasFreeGpus(gpus);
        ASSERT_EQ(some, BestFitGpus(ledger, gpus) >= 0)
            << servers << " servers, step " << step << ", " << gpus << " GPUs";
        (some ? yes : no) += 1;
      }
    }
    EXPECT_GT(yes, 100) << servers << " servers";
    EXPECT_GT(no, 100) << servers << " servers";
  }
}

}  // namespace
}  // namespace troupe::scheduling
