#include "runner/oasis/oasis_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "scheduling/oasis/baselines.hpp"
#include "scheduling/oasis/offline_optimum.hpp"

namespace troupe::scheduling::oasis {
namespace {

const char* const kBaselines[] = {"fifo", "drf", "rrh", "dorm"};
const char* const kPolicies[] = {"oasis", "fifo", "drf", "rrh", "dorm"};
constexpr uint64_t kHistorySeed = 1000003;

std::string Fixed(double v, int digits = 1) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Table 1: total utility per policy and seed, and OASiS's margin over each baseline.
void PolicyTable(const ReproduceOptions& o, std::ostringstream& out) {
  std::map<std::string, std::vector<PolicyRun>> runs;
  for (uint64_t seed : o.seeds) {
    for (const char* p : kPolicies) {
      runs[p].push_back(RunPolicy(o.spec, seed, p));
      const PolicyRun& r = runs[p].back();
      out << "csv,policy," << r.policy << "," << seed << "," << Fixed(r.utility, 3) << "," << r.jobs
          << "," << r.admitted << "," << r.finished << "," << Fixed(r.gpu_use, 3) << ","
          << r.violations << "\n";
    }
  }
  out << "\n| policy |";
  for (uint64_t seed : o.seeds) out << " seed " << seed << " |";
  out << " mean | admitted | finished | GPU use | oasis / policy |\n|---|";
  for (size_t i = 0; i <= o.seeds.size() + 4; ++i) out << "---|";
  out << "\n";
  std::vector<double> oasis_u;
  for (const PolicyRun& r : runs["oasis"]) oasis_u.push_back(r.utility);
  for (const char* p : kPolicies) {
    std::vector<double> u, admitted, finished, gpu, jobs;
    out << "| " << p << " |";
    for (const PolicyRun& r : runs[p]) {
      out << " " << Fixed(r.utility) << " |";
      u.push_back(r.utility);
      admitted.push_back(r.admitted);
      finished.push_back(r.finished);
      gpu.push_back(r.gpu_use);
      jobs.push_back(r.jobs);
    }
    out << " " << Fixed(Mean(u)) << " | " << Fixed(Mean(admitted)) << " / " << Fixed(Mean(jobs))
        << " | " << Fixed(Mean(finished)) << " | " << Fixed(100 * Mean(gpu), 0) << "% | "
        << Fixed(Mean(oasis_u) / Mean(u), 2) << "x |\n";
  }
}

// Table 2: OASiS with L and U scaled.
void MisestimationTable(const ReproduceOptions& o, std::ostringstream& out) {
  std::vector<std::pair<double, double>> cases{{1, 1}};
  for (double f : o.factors) {
    cases.insert(cases.end(), {{f, 1}, {1 / f, 1}, {1, f}, {1, 1 / f}, {f, f}, {1 / f, 1 / f}});
  }
  out << "\n| L x | U x | oasis | vs unscaled | admitted |\n|---|---|---|---|---|\n";
  double reference = 0;
  for (const auto& [low, high] : cases) {
    std::vector<double> u, admitted;
    for (uint64_t seed : o.seeds) {
      const PolicyRun r = RunPolicy(o.spec, seed, "oasis", low, high);
      u.push_back(r.utility);
      admitted.push_back(r.admitted);
    }
    if (low == 1 && high == 1) reference = Mean(u);
    out << "| " << low << " | " << high << " | " << Fixed(Mean(u)) << " | "
        << Fixed(100 * Mean(u) / reference, 1) << "% | " << Fixed(Mean(admitted)) << " |\n";
  }
}

// Table 3: OASiS (and the baselines) against the offline optimum on `count` instances of `size`.
void TinyTable(const char* name, int count, uint64_t first_seed, const InstanceSize& size,
               std::ostringstream& out) {
  if (count <= 0) return;
  std::vector<double> ratios, alphas;
  double opt = 0, oasis = 0;
  std::vector<double> base(4, 0.0);
  int proved = 0;
  for (int i = 0; i < count; ++i) {
    const TinyRun r = RunTiny(first_seed + i, size);
    out << "csv," << name << "," << r.seed << "," << r.jobs << "," << r.proved << ","
        << Fixed(r.optimum, 4) << "," << Fixed(r.oasis, 4);
    for (double b : r.baseline) out << "," << Fixed(b, 4);
    out << "\n";
    proved += r.proved;
    opt += r.optimum;
    oasis += r.oasis;
    for (size_t b = 0; b < base.size(); ++b) base[b] += r.baseline[b];
    if (r.optimum > 0) ratios.push_back(r.oasis / r.optimum);
    alphas.push_back(r.alpha);
  }
  std::sort(ratios.begin(), ratios.end());
  if (ratios.empty()) ratios.push_back(0);
  const double max_alpha = *std::max_element(alphas.begin(), alphas.end());
  out << "\n"
      << name
      << " instances:\n\n| instances | proved optimal | OPT total | OASiS total | OASiS / OPT "
         "(sum) | per instance min / median | bound 1/(2 alpha) |\n|---|---|---|---|---|---|---|\n";
  out << "| " << count << " | " << proved << " | " << Fixed(opt, 2) << " | " << Fixed(oasis, 2)
      << " | " << Fixed(oasis / opt, 3) << " | " << Fixed(ratios.front(), 3) << " / "
      << Fixed(ratios[ratios.size() / 2], 3) << " | " << Fixed(1 / (2 * max_alpha), 4)
      << " (alpha <= " << Fixed(max_alpha, 1) << ") |\n";
  out << "\nbaselines / OPT on the same instances:";
  for (size_t b = 0; b < base.size(); ++b) {
    out << " " << kBaselines[b] << " " << Fixed(base[b] / opt, 3) << ";";
  }
  out << "\n";
}

}  // namespace

PolicyRun RunPolicy(const WorkloadSpec& spec, uint64_t seed, const std::string& policy,
                    double low_factor, double high_factor) {
  const Cluster cluster = MakeCluster(spec);
  const std::vector<Job> jobs = MakeJobs(spec, seed);
  const PriceParams params =
      EstimatePrices(cluster, MakeJobs(spec, seed + kHistorySeed)).Scaled(low_factor, high_factor);
  auto p = MakePolicy(policy, cluster, params);
  if (!p) return PolicyRun{policy, seed};
  const SimResult sim = Simulate(cluster, jobs, *p);
  PolicyRun r;
  r.policy = policy;
  r.seed = seed;
  r.low_factor = low_factor;
  r.high_factor = high_factor;
  r.utility = sim.total_utility;
  r.jobs = static_cast<int>(jobs.size());
  r.admitted = sim.admitted;
  r.finished = sim.finished;
  for (const SlotRecord& s : sim.slots) r.gpu_use += s.worker_use[0] / sim.slots.size();
  r.violations = static_cast<int>(sim.violations.size());
  return r;
}

TinyRun RunTiny(uint64_t seed, const InstanceSize& size, int node_limit) {
  const Instance in = SmallInstance(seed, size);
  TinyRun r;
  r.seed = seed;
  r.jobs = static_cast<int>(in.jobs.size());
  const OfflineResult opt =
      SolveOffline(in.cluster, in.jobs, {.time_limit_s = 0, .node_limit = node_limit});
  r.proved = opt.solved;
  r.optimum = opt.utility;
  const PriceParams params = EstimatePrices(in.cluster, in.jobs);
  r.alpha = params.Alpha();
  for (const char* p : {"oasis", "fifo", "drf", "rrh", "dorm"}) {
    auto policy = MakePolicy(p, in.cluster, params);
    const double u = Simulate(in.cluster, in.jobs, *policy).total_utility;
    if (std::string(p) == "oasis") {
      r.oasis = u;
    } else {
      r.baseline.push_back(u);
    }
  }
  return r;
}

std::string ReproduceReport(const ReproduceOptions& options) {
  std::ostringstream out;
  PolicyTable(options, out);
  MisestimationTable(options, out);
  TinyTable("tiny", options.tiny_instances, 7000, {}, out);
  const InstanceSize medium{.jobs_lo = 20,
                            .jobs_hi = 20,
                            .workers_lo = 4,
                            .workers_hi = 4,
                            .ps_lo = 4,
                            .ps_hi = 4,
                            .slots = 12};
  TinyTable("medium", options.medium_instances, 8000, medium, out);
  return out.str();
}

}  // namespace troupe::scheduling::oasis
