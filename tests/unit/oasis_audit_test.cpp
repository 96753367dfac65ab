// What the OASiS-model policies actually allocate, checked independently of the simulator, and
// Dorm's determinism.
//
// Contract checked here: every allocation a policy returns (before the simulator could drop it)
// is for an active job, keeps (3) at most N_i workers, (6) PS bandwidth covers worker bandwidth,
// (7) no more PS than workers, and, summed over the slot's jobs, fits every machine's capacity
// per resource (computed here from the machines, not with the simulator's own accounting); and
// Dorm's per-slot MILP is bounded by a node count, not a clock, so a repeated Dorm run, even one
// racing busy threads, gives the same targets, completions and utility.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "scheduling/oasis/baselines.hpp"
#include "scheduling/oasis/dorm.hpp"
#include "scheduling/oasis/workload_gen.hpp"

namespace troupe::scheduling::oasis {
namespace {

// Forwards to a policy and audits every allocation it returns; what breaks is kept in problems().
class AuditedPolicy : public OnlinePolicy {
 public:
  AuditedPolicy(const Cluster& cluster, OnlinePolicy& inner) : cluster_(cluster), inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  Admission Arrive(int index, const std::vector<JobProgress>& jobs) override {
    return inner_.Arrive(index, jobs);
  }
  void Finished(int index, int t) override { inner_.Finished(index, t); }
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override {
    SlotAllocation out = inner_.Slot(t, jobs);
    std::vector<ResourceVector> worker(cluster_.workers.size()), ps(cluster_.ps.size());
    for (const JobSlot& js : out) {
      const JobProgress& p = jobs[js.job];
      const std::string where = "slot " + std::to_string(t) + " job " + std::to_string(js.job);
      const int y = js.plan.WorkerCount(), z = js.plan.PsCount();
      if (!p.active() || js.plan.slot != t) problems_.push_back(where + ": not active in t");
      if (y > p.job.chunks) problems_.push_back(where + ": (3) more workers than chunks");
      if (z * p.job.ps_bandwidth() + 1e-9 < y * p.job.worker_bandwidth()) {
        problems_.push_back(where + ": (6) PS bandwidth below the workers'");
      }
      if (z > y) problems_.push_back(where + ": (7) more PS than workers");
      Add(js.plan.workers, p.job.worker, &worker, where);
      Add(js.plan.ps, p.job.ps, &ps, where);
      ++allocations_;
    }
    Within(worker, cluster_.workers, t, "worker server");
    Within(ps, cluster_.ps, t, "PS machine");
    return out;
  }
  int allocations() const { return allocations_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void Add(const std::vector<Placement>& placements, const ResourceVector& demand,
           std::vector<ResourceVector>* used, const std::string& where) {
    for (const Placement& p : placements) {
      if (p.machine < 0 || p.machine >= static_cast<int>(used->size()) || p.count <= 0) {
        problems_.push_back(where + ": bad placement");
        continue;
      }
      for (int r = 0; r < kResources; ++r) (*used)[p.machine][r] += p.count * demand[r];
    }
  }
  void Within(const std::vector<ResourceVector>& used, const std::vector<Machine>& machines, int t,
              const std::string& kind) {
    for (size_t m = 0; m < machines.size(); ++m) {
      for (int r = 0; r < kResources; ++r) {
        if (used[m][r] <= machines[m].capacity[r] + 1e-9) continue;
        problems_.push_back("slot " + std::to_string(t) + ": " + kind + " " + std::to_string(m) +
                            " over capacity in resource " + std::to_string(r));
      }
    }
  }

  const Cluster& cluster_;
  OnlinePolicy& inner_;
  int allocations_ = 0;
  std::vector<std::string> problems_;
};

WorkloadSpec SmallSpec() {
  WorkloadSpec spec;
  spec.slots = 72;
  spec.worker_servers = 8;
  spec.ps_machines = 8;
  spec.jobs_per_slot = 0.6;
  return spec;
}

TEST(OasisAuditTest, EveryAllocationAPolicyReturnsFitsTheMachines) {
  const WorkloadSpec spec = SmallSpec();
  const Cluster cluster = MakeCluster(spec);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<Job> jobs = MakeJobs(spec, seed);
    const PriceParams prices = EstimatePrices(cluster, MakeJobs(spec, seed + 1000003));
    for (const char* name : {"oasis", "fifo", "drf", "rrh", "dorm"}) {
      auto inner = MakePolicy(name, cluster, prices);
      AuditedPolicy audited(cluster, *inner);
      const SimResult r = Simulate(cluster, jobs, audited);
      EXPECT_TRUE(audited.problems().empty()) << name << ": " << audited.problems().front();
      EXPECT_TRUE(r.violations.empty()) << name << ": " << r.violations.front();
      EXPECT_GT(audited.allocations(), 0) << name;
      EXPECT_GT(r.finished, 0) << name;
    }
  }
}

// A broken policy: every active job gets all N_i workers on worker server 0, ignoring capacity.
class Crowding : public OnlinePolicy {
 public:
  std::string_view name() const override { return "crowding"; }
  Admission Arrive(int, const std::vector<JobProgress>&) override {
    Admission a;
    a.admitted = true;
    return a;
  }
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override {
    SlotAllocation out;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!jobs[i].active()) continue;
      const int y = jobs[i].job.chunks;
      out.push_back(
          JobSlot{static_cast<int>(i), SlotPlan{t, {Placement{0, y}}, {Placement{0, y}}}});
    }
    return out;
  }
};

TEST(OasisAuditTest, TheAuditCatchesAPolicyThatOverfillsAMachine) {
  const WorkloadSpec spec = SmallSpec();
  const Cluster cluster = MakeCluster(spec);
  const std::vector<Job> jobs = MakeJobs(spec, 1);
  Crowding crowding;
  AuditedPolicy audited(cluster, crowding);
  Simulate(cluster, jobs, audited);
  ASSERT_FALSE(audited.problems().empty());
  EXPECT_NE(audited.problems().front().find("worker server 0 over capacity"), std::string::npos)
      << audited.problems().front();
}

// Two threads spinning while `run` runs: a slower, loaded machine.
template <typename F>
auto UnderLoad(F run) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < 2; ++i) {
    busy.emplace_back([&stop] {
      volatile double x = 1;
      while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
    });
  }
  auto result = run();
  stop = true;
  for (std::thread& t : busy) t.join();
  return result;
}

TEST(OasisAuditTest, ABoundedDormSearchGivesTheSameTargetsEveryTime) {
  WorkloadSpec spec;  // 50 + 50 machines
  const PoolTotals totals = Totals(MakeCluster(spec));
  const std::vector<Job> jobs = MakeJobs(spec, 1);
  std::vector<const Job*> given;
  std::vector<int> caps;
  for (int i = 0; i < 40; ++i) {
    given.push_back(&jobs[i]);
    caps.push_back(jobs[i].chunks);
  }
  const DormOptions bounded{.fairness = 2, .node_limit = 100};
  const DormTargets first = SolveDormSlot(totals, given, caps, bounded);
  ASSERT_TRUE(first.solved) << first.status;
  EXPECT_EQ(first.status, "feasible");  // the bound, not optimality, ended the search
  EXPECT_GE(first.nodes, bounded.node_limit);
  for (int repeat = 0; repeat < 3; ++repeat) {
    const DormTargets again =
        UnderLoad([&] { return SolveDormSlot(totals, given, caps, bounded); });
    EXPECT_EQ(again.workers, first.workers);
    EXPECT_EQ(again.ps, first.ps);
    EXPECT_EQ(again.nodes, first.nodes);
  }
  const DormTargets full = SolveDormSlot(totals, given, caps);
  ASSERT_EQ(full.status, "optimal");
  EXPECT_GE(full.utilisation + 1e-12, first.utilisation);
}

TEST(OasisAuditTest, ADormRunIsIdenticalWhenRepeatedUnderLoad) {
  const WorkloadSpec spec = SmallSpec();
  const Cluster cluster = MakeCluster(spec);
  const std::vector<Job> jobs = MakeJobs(spec, 9);
  auto run = [&] {
    DormPolicy dorm(cluster);
    return Simulate(cluster, jobs, dorm);
  };
  const SimResult a = run();
  const SimResult b = UnderLoad(run);
  ASSERT_GT(a.finished, 5);
  EXPECT_EQ(a.total_utility, b.total_utility);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].completion, b.jobs[i].completion) << "job " << i;
    EXPECT_EQ(a.jobs[i].worker_slots, b.jobs[i].worker_slots) << "job " << i;
  }
  ASSERT_EQ(a.slots.size(), b.slots.size());
  for (size_t t = 0; t < a.slots.size(); ++t) {
    EXPECT_EQ(a.slots[t].workers, b.slots[t].workers) << "slot " << t;
    EXPECT_EQ(a.slots[t].ps, b.slots[t].ps) << "slot " << t;
  }
}

}  // namespace
}  // namespace troupe::scheduling::oasis
