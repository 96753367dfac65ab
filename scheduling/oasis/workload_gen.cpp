#include "scheduling/oasis/workload_gen.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace troupe::scheduling::oasis {
namespace {

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  int Int(Range r) {
    return std::uniform_int_distribution<int>(static_cast<int>(r.lo), static_cast<int>(r.hi))(rng_);
  }
  int Int(int lo, int hi) { return Int(Range{double(lo), double(hi)}); }
  double Real(Range r) {
    return r.hi > r.lo ? std::uniform_real_distribution<double>(r.lo, r.hi)(rng_) : r.lo;
  }
  int Poisson(double mean) { return mean > 0 ? std::poisson_distribution<int>(mean)(rng_) : 0; }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

Job DrawJob(const JobRanges& r, Draw& d) {
  Job j;
  j.epochs = d.Int(r.epochs);
  j.chunks = d.Int(r.chunks);
  j.minibatches_per_chunk = d.Int(r.minibatches);
  j.minibatch_s = d.Real(r.minibatch_s);
  j.gradient = d.Real(r.gradient);
  j.worker = {double(d.Int(r.worker_gpu)), double(d.Int(r.worker_cpu)), d.Real(r.worker_memory),
              d.Real(r.worker_storage), d.Real(r.worker_bandwidth)};
  j.ps = {0, double(d.Int(r.ps_cpu)), d.Real(r.ps_memory), d.Real(r.ps_storage),
          d.Real(r.ps_bandwidth)};
  j.utility.kind = r.utility;
  j.utility.g1 = d.Real(r.g1);
  j.utility.g2 = d.Real(r.g2);
  j.utility.g3 = d.Real(r.g3);
  return j;
}

// Arrival slots, sorted: a fixed count drawn by the diurnal weights, or Poisson per slot.
std::vector<int> Arrivals(const WorkloadSpec& spec, Draw& d) {
  std::vector<int> slots;
  if (spec.jobs > 0) {
    std::vector<double> weights;
    for (int t = 0; t < spec.slots; ++t) weights.push_back(DiurnalRate(spec, t));
    std::discrete_distribution<int> pick(weights.begin(), weights.end());
    for (int i = 0; i < spec.jobs; ++i) slots.push_back(pick(d.rng()));
    std::sort(slots.begin(), slots.end());
    return slots;
  }
  for (int t = 0; t < spec.slots; ++t) {
    for (int n = d.Poisson(DiurnalRate(spec, t)); n > 0; --n) slots.push_back(t);
  }
  return slots;
}

}  // namespace

Cluster MakeCluster(const WorkloadSpec& spec) {
  Cluster c;
  c.workers.assign(std::max(0, spec.worker_servers), Machine{spec.worker_capacity});
  c.ps.assign(std::max(0, spec.ps_machines), Machine{spec.ps_capacity});
  c.slots = spec.slots;
  c.slot_s = spec.slot_s;
  return c;
}

double DiurnalRate(const WorkloadSpec& spec, int t) {
  const int period = std::max(1, spec.diurnal_period);
  const double phase = 2 * std::numbers::pi * (t % period) / period - std::numbers::pi / 2;
  return std::max(0.0, spec.jobs_per_slot * (1 + spec.diurnal_amplitude * std::sin(phase)));
}

std::vector<Job> MakeJobs(const WorkloadSpec& spec, uint64_t seed) {
  Draw d(seed);
  const std::vector<int> arrivals = Arrivals(spec, d);
  std::vector<Job> jobs;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    Job j = DrawJob(spec.ranges, d);
    j.id = static_cast<int64_t>(i);
    j.arrival = arrivals[i];
    jobs.push_back(j);
  }
  return jobs;
}

Instance TinyInstance(uint64_t seed) { return SmallInstance(seed, {}); }

Instance SmallInstance(uint64_t seed, const InstanceSize& size) {
  Draw d(seed);
  Instance in;
  Cluster& c = in.cluster;
  for (int h = d.Int(size.workers_lo, size.workers_hi); h > 0; --h) {
    c.workers.push_back({{double(d.Int(1, 3)), double(d.Int(2, 6)), double(d.Int(8, 24)), 100,
                          double(d.Int(4, 8))}});
  }
  for (int k = d.Int(size.ps_lo, size.ps_hi); k > 0; --k) {
    c.ps.push_back({{0, double(d.Int(2, 6)), double(d.Int(8, 24)), 100, double(d.Int(4, 12))}});
  }
  c.slots = size.slots;
  c.slot_s = 2;
  for (int i = d.Int(size.jobs_lo, size.jobs_hi); i > 0; --i) {
    Job j;
    j.arrival = d.Int(0, size.slots - 1);
    j.epochs = 1;
    j.chunks = d.Int(1, 3);
    j.minibatches_per_chunk = d.Int(1, 3);
    j.minibatch_s = 1;
    j.gradient = d.Int(0, 1) * 0.5;
    const double b = d.Int(1, 3);
    j.worker = {1, 0.5 * d.Int(1, 4), double(d.Int(4, 8)), 10, b};
    j.ps = {0, 0.5 * d.Int(1, 4), double(d.Int(4, 8)), 10, b + d.Int(0, 3)};
    j.utility = {UtilityKind::kSigmoid, d.Real({1, 100}), d.Real({4, 6}), d.Real({1, 15})};
    in.jobs.push_back(j);
  }
  std::stable_sort(in.jobs.begin(), in.jobs.end(),
                   [](const Job& a, const Job& b) { return a.arrival < b.arrival; });
  for (size_t i = 0; i < in.jobs.size(); ++i) in.jobs[i].id = static_cast<int64_t>(i);
  return in;
}

}  // namespace troupe::scheduling::oasis
