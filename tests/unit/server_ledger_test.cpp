// ServerLedger (scheduling/server_ledger.hpp): one server's authoritative books of leases.
//
// Contract checked here: a grant gets the lowest free GPU indices; a lease that would overcommit
// GPUs, CPUs or memory is refused as invalid input with a message naming that resource, and the
// books are left unchanged; a second lease for the same job is refused; ExpireUntil(t) frees the
// leases that ended by t and keeps the rest; Resize grows and shrinks a lease's CPUs and memory
// and refuses growth beyond what is free; Release ends a lease once. A seeded random sequence of
// all of these never uses more than capacity, keeps GPU ids disjoint across leases, and grants
// exactly the requests a brute-force check says fit.
#include "scheduling/server_ledger.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace troupe {
namespace {

using Ids = std::vector<int32_t>;

// The GPU ids the job's lease holds (none when it holds no lease).
Ids HeldIds(const ServerLedger& ledger, int64_t job_id) {
  const ServerLease* lease = ledger.Find(job_id);
  return lease == nullptr ? Ids{} : lease->GpuIds();
}

TEST(ServerLedgerTest, GrantsTheLowestFreeGpuIndices) {
  ServerLedger ledger(8, 24, 500);
  Ids a, b, c;
  ASSERT_TRUE(ledger.Grant(1, 3, 9, 187.5, 300, &a).ok());
  ASSERT_TRUE(ledger.Grant(2, 2, 6, 125, 300, &b).ok());
  EXPECT_EQ(a, (Ids{0, 1, 2}));
  EXPECT_EQ(b, (Ids{3, 4}));
  ASSERT_TRUE(ledger.Release(1));
  // The freed 0-2 come before 5.
  ASSERT_TRUE(ledger.Grant(3, 4, 12, 250, 600, &c).ok());
  EXPECT_EQ(c, (Ids{0, 1, 2, 5}));
  EXPECT_EQ(ledger.free_gpus(), 2);
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 6);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), 125);
  ASSERT_EQ(ledger.lease_count(), 2u);
  ASSERT_NE(ledger.Find(3), nullptr);
  EXPECT_EQ(HeldIds(ledger, 3), c);
  EXPECT_DOUBLE_EQ(ledger.Find(3)->end_s, 600);
}

TEST(ServerLedgerTest, EightProportionalSharesFillTheServerExactly) {
  ServerLedger ledger(8, 24, 500);
  for (int64_t job = 0; job < 8; ++job) {
    Ids ids;
    ASSERT_TRUE(ledger.Grant(job, 1, 3, 62.5, 300, &ids).ok()) << "job " << job;
    EXPECT_EQ(ids, (Ids{static_cast<int32_t>(job)}));
  }
  EXPECT_EQ(ledger.free_gpus(), 0);
  EXPECT_NEAR(ledger.free_memory_gb(), 0, 1e-9);
}

// Expects a grant to be refused for `resource`, leaving the books as they were.
void ExpectRefused(ServerLedger& ledger, int32_t gpus, double cpus, double memory_gb,
                   const std::string& resource) {
  const int32_t free_gpus = ledger.free_gpus();
  const double free_cpus = ledger.free_cpus();
  const double free_memory = ledger.free_memory_gb();
  const size_t leases = ledger.lease_count();
  Ids ids;
  const Status s = ledger.Grant(99, gpus, cpus, memory_gb, 300, &ids);
  ASSERT_FALSE(s.ok()) << resource;
  EXPECT_EQ(s.code(), Status::Code::kInvalidInput);
  EXPECT_NE(s.message().find(resource), std::string::npos) << s.message();
  EXPECT_EQ(ledger.free_gpus(), free_gpus);
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), free_cpus);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), free_memory);
  EXPECT_EQ(ledger.lease_count(), leases);
  EXPECT_EQ(ledger.Find(99), nullptr);
}

TEST(ServerLedgerTest, RefusesOvercommitNamingTheShortResource) {
  ServerLedger ledger(8, 24, 500);
  Ids ids;
  ASSERT_TRUE(ledger.Grant(1, 6, 18, 375, 300, &ids).ok());
  ExpectRefused(ledger, 3, 3, 62.5, "GPUs");              // 2 GPUs free
  ExpectRefused(ledger, 2, 6.5, 125, "CPUs");             // 6 CPUs free
  ExpectRefused(ledger, 2, 6, 125.5, "memory");           // 125 GB free
  EXPECT_TRUE(ledger.Grant(2, 2, 6, 0, 300, &ids).ok());  // the last GPUs and CPUs, exactly
  ExpectRefused(ledger, 0, 0.1, 0, "CPUs");               // none left
  ExpectRefused(ledger, 0, 0, 125.01, "memory");
}

TEST(ServerLedgerTest, RefusesASecondLeaseForTheSameJobAndNegativeDemands) {
  ServerLedger ledger(8, 24, 500);
  Ids ids;
  ASSERT_TRUE(ledger.Grant(7, 1, 3, 62.5, 300, &ids).ok());
  const Status twice = ledger.Grant(7, 1, 3, 62.5, 300, &ids);
  EXPECT_EQ(twice.code(), Status::Code::kInvalidInput);
  EXPECT_NE(twice.message().find("already"), std::string::npos) << twice.message();
  EXPECT_EQ(ledger.free_gpus(), 7);
  EXPECT_FALSE(ledger.Grant(8, -1, 0, 0, 300, &ids).ok());
  EXPECT_FALSE(ledger.Grant(8, 1, -3, 0, 300, &ids).ok());
  EXPECT_FALSE(ledger.Grant(8, 1, 3, -1, 300, &ids).ok());
  EXPECT_EQ(ledger.lease_count(), 1u);
}

TEST(ServerLedgerTest, ExpireUntilFreesTheLeasesEndedByThen) {
  ServerLedger ledger(8, 24, 500);
  Ids ids;
  ASSERT_TRUE(ledger.Grant(1, 2, 6, 125, 300, &ids).ok());
  ASSERT_TRUE(ledger.Grant(2, 4, 12, 250, 600, &ids).ok());
  ledger.ExpireUntil(299.5);
  EXPECT_EQ(ledger.lease_count(), 2u);
  // A lease ending at 300 has ended at 300: the next round's leases start then.
  ledger.ExpireUntil(300);
  ASSERT_EQ(ledger.lease_count(), 1u);
  EXPECT_NE(ledger.Find(2), nullptr);
  EXPECT_EQ(ledger.free_gpus(), 4);
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 12);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), 250);
  // Job 1's GPUs 0-1 are free again and are the lowest.
  ASSERT_TRUE(ledger.Grant(3, 3, 3, 3, 900, &ids).ok());
  EXPECT_EQ(ids, (Ids{0, 1, 6}));
  ledger.ExpireUntil(10'000);
  EXPECT_EQ(ledger.lease_count(), 0u);
  EXPECT_EQ(ledger.free_gpus(), 8);
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 24);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), 500);
}

TEST(ServerLedgerTest, ResizeGrowsAndShrinksWithinWhatIsFree) {
  ServerLedger ledger(8, 24, 500);
  Ids ids;
  ASSERT_TRUE(ledger.Grant(1, 2, 6, 125, 300, &ids).ok());
  ASSERT_TRUE(ledger.Grant(2, 2, 6, 125, 300, &ids).ok());
  ASSERT_TRUE(ledger.Resize(1, 16, 300).ok());  // grows by 10 of the 12 free CPUs
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 2);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), 75);
  EXPECT_DOUBLE_EQ(ledger.Find(1)->cpus, 16);
  EXPECT_EQ(HeldIds(ledger, 1), (Ids{0, 1}));  // GPUs are not touched
  const Status cpus = ledger.Resize(2, 8.5, 125);
  EXPECT_EQ(cpus.code(), Status::Code::kInvalidInput);
  EXPECT_NE(cpus.message().find("CPUs"), std::string::npos) << cpus.message();
  const Status memory = ledger.Resize(2, 6, 201);
  EXPECT_NE(memory.message().find("memory"), std::string::npos) << memory.message();
  EXPECT_DOUBLE_EQ(ledger.Find(2)->cpus, 6);  // refusals change nothing
  EXPECT_DOUBLE_EQ(ledger.Find(2)->memory_gb, 125);
  ASSERT_TRUE(ledger.Resize(1, 1, 10).ok());  // shrinks, freeing the rest
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 17);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), 365);
  EXPECT_FALSE(ledger.Resize(3, 1, 1).ok());  // no such lease
  EXPECT_FALSE(ledger.Resize(1, -1, 1).ok());
}

TEST(ServerLedgerTest, AnExtendedLeaseOutlivesItsEndWithTheSameGpus) {
  ServerLedger ledger(4, 12, 250);
  Ids first, second;
  ASSERT_TRUE(ledger.Grant(1, 2, 6, 100, 300, &first).ok());
  ASSERT_TRUE(ledger.Grant(2, 2, 6, 100, 300, &second).ok());
  EXPECT_TRUE(ledger.Extend(2, 2, 6, 100, 600));
  EXPECT_FALSE(ledger.Extend(3, 2, 6, 100, 600));  // holds nothing here
  EXPECT_FALSE(ledger.Extend(1, 2, 5, 100, 600));  // holds a lease of another size
  EXPECT_FALSE(ledger.Extend(1, 1, 6, 100, 600));
  EXPECT_FALSE(ledger.Extend(1, 2, 6, 90, 600));
  ledger.ExpireUntil(300);
  ASSERT_EQ(ledger.lease_count(), 1u);
  ASSERT_NE(ledger.Find(2), nullptr);
  EXPECT_EQ(HeldIds(ledger, 2), second);
  EXPECT_EQ(ledger.free_gpus(), 2);
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 6);
  ledger.ExpireUntil(600);
  EXPECT_EQ(ledger.lease_count(), 0u);
  EXPECT_EQ(ledger.free_gpus(), 4);
}

// A round's standing parts come in job id order; out of order, or with parts not held here among
// them, each is still found (or not) exactly. The largest server, 64 GPUs, is leased whole.
TEST(ServerLedgerTest, ExtendsStandingLeasesInAnyOrderOnTheLargestServer) {
  ServerLedger ledger(ServerLedger::kMaxGpus, 128, 1024);
  for (int64_t job = 0; job < 8; ++job) {
    Ids ids;
    ASSERT_TRUE(ledger.Grant(10 * job, 8, 16, 128, 300, &ids).ok());
    ASSERT_EQ(ids.size(), 8u);
    EXPECT_EQ(ids.front(), 8 * job);
    EXPECT_EQ(ids.back(), 8 * job + 7);
  }
  EXPECT_EQ(ledger.free_gpus(), 0);
  const std::vector<int64_t> order = {0, 5, 10, 30, 20, 70, 71, 60, 40};
  std::set<int64_t> extended;
  for (int64_t job : order) {
    const bool held = job % 10 == 0;
    EXPECT_EQ(ledger.Extend(job, 8, 16, 128, 600), held) << "job " << job;
    if (held) extended.insert(job);
  }
  ledger.ExpireUntil(300);
  ASSERT_EQ(ledger.lease_count(), extended.size());
  for (int64_t job : extended) {
    ASSERT_NE(ledger.Find(job), nullptr) << "job " << job;
    EXPECT_DOUBLE_EQ(ledger.Find(job)->end_s, 600);
  }
  EXPECT_EQ(ledger.free_gpus(), 8 * (8 - static_cast<int32_t>(extended.size())));
  // Job 50's GPUs, the only ones free, go to the next lease.
  Ids ids;
  ASSERT_TRUE(ledger.Grant(99, 8, 0, 0, 600, &ids).ok());
  EXPECT_EQ(ids, (Ids{40, 41, 42, 43, 44, 45, 46, 47}));
  EXPECT_EQ(ledger.free_gpus(), 0);
}

TEST(ServerLedgerTest, ReleaseEndsALeaseOnce) {
  ServerLedger ledger(4, 12, 250);
  Ids ids;
  ASSERT_TRUE(ledger.Grant(5, 4, 12, 250, 300, &ids).ok());
  EXPECT_TRUE(ledger.Release(5));
  EXPECT_FALSE(ledger.Release(5));
  EXPECT_FALSE(ledger.Release(6));
  EXPECT_EQ(ledger.free_gpus(), 4);
  EXPECT_DOUBLE_EQ(ledger.free_cpus(), 12);
  EXPECT_DOUBLE_EQ(ledger.free_memory_gb(), 250);
  EXPECT_EQ(ledger.lease_count(), 0u);
}

// Checks the books against their leases: used within capacity, GPU ids disjoint and in range,
// free figures equal to capacity minus the leases.
void ExpectConsistent(const ServerLedger& ledger, int32_t gpus, double cpus, double memory) {
  std::set<int32_t> taken;
  double used_cpus = 0, used_memory = 0;
  for (size_t i = 0; i < ledger.lease_count(); ++i) {
    const ServerLease& lease = ledger.lease(i);
    if (i > 0) {
      ASSERT_LT(ledger.lease(i - 1).job_id, lease.job_id) << "not in job id order";
    }
    ASSERT_EQ(ledger.Find(lease.job_id), &lease);
    for (int32_t g : lease.GpuIds()) {
      ASSERT_TRUE(g >= 0 && g < gpus) << "GPU " << g;
      ASSERT_TRUE(taken.insert(g).second) << "GPU " << g << " leased twice";
    }
    used_cpus += lease.cpus;
    used_memory += lease.memory_gb;
  }
  ASSERT_EQ(ledger.free_gpus(), gpus - static_cast<int32_t>(taken.size()));
  ASSERT_LE(used_cpus, cpus + 1e-6);
  ASSERT_LE(used_memory, memory + 1e-6);
  ASSERT_NEAR(ledger.free_cpus(), cpus - used_cpus, 1e-6);
  ASSERT_NEAR(ledger.free_memory_gb(), memory - used_memory, 1e-6);
}

TEST(ServerLedgerTest, RandomOperationsNeverOvercommit) {
  std::mt19937_64 rng(1129);
  const int32_t gpus = 8;
  const double cpus = 24, memory = 500;
  ServerLedger ledger(gpus, cpus, memory);
  std::uniform_int_distribution<int> op(0, 9), job(0, 11), gpu_count(0, 5);
  std::uniform_real_distribution<double> share(0, 1);
  double now = 0;
  int granted = 0, refused = 0;
  for (int step = 0; step < 5000; ++step) {
    const int64_t id = job(rng);
    const int o = op(rng);
    if (o < 5) {
      const int32_t g = gpu_count(rng);
      const double c = share(rng) * 12, m = share(rng) * 250;
      // Brute force: the grant must succeed exactly when nothing would be overcommitted.
      const bool fits = ledger.Find(id) == nullptr && g <= ledger.free_gpus() &&
                        c <= ledger.free_cpus() + 1e-9 && m <= ledger.free_memory_gb() + 1e-9;
      Ids ids;
      const Status s = ledger.Grant(id, g, c, m, now + 300 * (1 + op(rng) % 3), &ids);
      ASSERT_EQ(s.ok(), fits) << "step " << step << ": " << s.message();
      if (s.ok()) {
        ++granted;
        ASSERT_EQ(ids.size(), static_cast<size_t>(g));
      } else {
        ++refused;
      }
    } else if (o < 7) {
      const double c = share(rng) * 12, m = share(rng) * 250;
      const ServerLease* held = ledger.Find(id);
      const bool fits = held != nullptr && c - held->cpus <= ledger.free_cpus() + 1e-9 &&
                        m - held->memory_gb <= ledger.free_memory_gb() + 1e-9;
      ASSERT_EQ(ledger.Resize(id, c, m).ok(), fits) << "step " << step;
    } else if (o < 8) {
      const bool held = ledger.Find(id) != nullptr;
      ASSERT_EQ(ledger.Release(id), held);
    } else {
      now += 100;
      ledger.ExpireUntil(now);
      for (size_t i = 0; i < ledger.lease_count(); ++i) {
        ASSERT_GT(ledger.lease(i).end_s, now) << "job " << ledger.lease(i).job_id;
      }
    }
    ExpectConsistent(ledger, gpus, cpus, memory);
  }
  // The sequence exercised both answers, or it proved nothing.
  EXPECT_GT(granted, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace troupe
