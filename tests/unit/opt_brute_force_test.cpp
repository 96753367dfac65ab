// OptMechanism (scheduling/opt.hpp) against enumeration on tiny instances: two or three 1-2-GPU
// jobs on one or two 4-GPU servers, 2 x 2 sensitivity grids, 200 seeded rounds.
//
// Contract checked here: LP 1's objective is at least the best integral assignment of grid
// points on the super-machine that keeps (2)-(5) (the LP relaxes it), and at least what OPT
// leases, which is at least the proportional total; no server is overcommitted. For scale, the
// test prints what OPT's leases gain over proportional against the best assignment of grid points
// (or proportional points) on the real servers; OPT's top-up may go off the grid and beat it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "scheduling/opt.hpp"
#include "scheduling/proportional.hpp"

namespace troupe::scheduling {
namespace {

std::shared_ptr<const SensitivityMatrix> MakeMatrix(std::vector<double> cpus,
                                                    std::vector<double> memory,
                                                    std::vector<double> values) {
  return std::make_shared<const SensitivityMatrix>(
      SensitivityMatrix{std::move(cpus), std::move(memory), std::move(values)});
}

double Speed(const SchedJob& job, const JobPlacement& p) {
  return job.sensitivity->At(p.cpus() / p.gpus(), p.memory_gb() / p.gpus());
}

std::vector<const SchedJob*> Queue(const std::vector<SchedJob>& jobs) {
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  return queue;
}

void ExpectNoOvercommit(const ClusterLedger& ledger, const std::vector<JobPlacement>& placements) {
  std::vector<ServerShape> used(ledger.server_count());
  for (const JobPlacement& p : placements) {
    for (const PlacementPart& part : p.parts) {
      used[part.server].cpus += part.cpus;
      used[part.server].memory_gb += part.memory_gb;
    }
  }
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    EXPECT_LE(used[s].cpus, ledger.shape(s).cpus + 1e-9);
    EXPECT_LE(used[s].memory_gb, ledger.shape(s).memory_gb + 1e-9);
    EXPECT_NEAR(ledger.free(s).cpus, ledger.shape(s).cpus - used[s].cpus, 1e-9);
  }
}

// One way to run a job: its total CPUs and memory, and its speed there.
struct Choice {
  double cpus = 0;
  double memory_gb = 0;
  double value = 0;
};

// The best total speed choosing one option per job, each job's on its bin (a server, or 0 for
// the super-machine) within the bin's capacity, by enumeration; -1 when nothing fits.
double BestAssignment(const std::vector<std::vector<Choice>>& options, const std::vector<int>& bin,
                      const std::vector<ServerShape>& capacity) {
  double best = -1;
  std::vector<ServerShape> used(capacity.size());
  const std::function<void(size_t, double)> walk = [&](size_t j, double value) {
    if (j == options.size()) {
      best = std::max(best, value);
      return;
    }
    ServerShape& u = used[bin[j]];
    for (const Choice& c : options[j]) {
      u.cpus += c.cpus;
      u.memory_gb += c.memory_gb;
      if (u.cpus <= capacity[bin[j]].cpus + 1e-9 &&
          u.memory_gb <= capacity[bin[j]].memory_gb + 1e-9) {
        walk(j + 1, value + c.value);
      }
      u.cpus -= c.cpus;
      u.memory_gb -= c.memory_gb;
    }
  };
  walk(0, 0);
  return best;
}

// The grid points at or above the fair value, as totals for the job's GPUs.
std::vector<Choice> FairGridPoints(const SchedJob& job, double fair) {
  std::vector<Choice> out;
  const SensitivityMatrix& w = *job.sensitivity;
  for (size_t c = 0; c < w.cpu_grid.size(); ++c) {
    for (size_t m = 0; m < w.memory_grid.size(); ++m) {
      if (w.at_index(c, m) < fair - 1e-9) continue;
      out.push_back({w.cpu_grid[c] * job.gpus, w.memory_grid[m] * job.gpus, w.at_index(c, m)});
    }
  }
  return out;
}

TEST(OptBruteForceTest, TheBoundIsAtLeastTheBestIntegralAssignmentAndTheLeases) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(0.2, 2.5);
  int compared = 0;
  double leased = 0, best_leasable = 0;
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE(round);
    const std::vector<ServerShape> servers(1 + rng() % 2, ServerShape{4, 12, 200});
    std::vector<SchedJob> jobs;
    const int count = 2 + static_cast<int>(rng() % 2);
    for (int j = 0; j < count; ++j) {
      SchedJob job;
      job.id = j;
      job.arrival_s = j;
      job.gpus = 1 + static_cast<int32_t>(rng() % 2);
      job.sensitivity = MakeMatrix({1, 2 + static_cast<double>(rng() % 5)}, {20, 60},
                                   {value(rng), value(rng), value(rng), value(rng)});
      jobs.push_back(job);
    }
    ClusterLedger ledger(servers), proportional_ledger(servers);
    OptMechanism opt;
    const std::vector<JobPlacement> placements = opt.PlaceRound(Queue(jobs), ledger);
    const std::vector<JobPlacement> proportional =
        ProportionalMechanism().PlaceRound(Queue(jobs), proportional_ledger);
    ExpectNoOvercommit(ledger, placements);
    std::vector<std::vector<Choice>> grid, leasable;
    std::vector<int> on_super, on_server;
    double fair_total = 0;
    for (const JobPlacement& p : proportional) {
      ASSERT_EQ(p.parts.size(), 1u);  // no job spreads at these sizes
      const double fair = Speed(jobs[p.job_id], p);
      fair_total += fair;
      grid.push_back(FairGridPoints(jobs[p.job_id], fair));
      leasable.push_back(grid.back());
      leasable.back().push_back({p.cpus(), p.memory_gb(), fair});
      on_super.push_back(0);
      on_server.push_back(p.parts[0].server);
    }
    const ServerShape super{0, 12.0 * servers.size(), 200.0 * servers.size()};
    const double best = BestAssignment(grid, on_super, {super});
    const double best_real = BestAssignment(leasable, on_server, servers);
    ASSERT_FALSE(opt.last_fell_back());
    EXPECT_GE(opt.last_objective(), best - 1e-7);
    EXPECT_GE(opt.last_objective(), opt.last_placed_objective() - 1e-7);
    EXPECT_GE(opt.last_placed_objective(), fair_total - 1e-7);
    if (best >= 0) ++compared;  // else no integral grid point keeps (5); LP 1 may mix
    leased += opt.last_placed_objective() - fair_total;
    best_leasable += best_real - fair_total;
  }
  std::printf("  200 tiny rounds: gain over proportional: leased %.2f, best grid assignment %.2f\n",
              leased, best_leasable);
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace troupe::scheduling
