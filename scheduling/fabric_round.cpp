#include "scheduling/fabric_round.hpp"

#include <absl/container/node_hash_map.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "fabric/phased.hpp"

namespace troupe::scheduling {

// A job's flows on the fabric, kept from round to round while its parts stay where they are.
struct JobFlows {
  std::vector<fabric::JobPart> parts;  // by server
  fabric::CollectiveTraffic traffic;
  std::vector<fabric::FlowId> flows;
  std::vector<std::vector<int32_t>> routes;  // each flow's links
  int32_t gpus = 0;                          // over all its parts
  double weight = 1;                         // each of its flows' in the sharing
  double solo_rate = 0;                      // its slowest flow's rate were it alone
  double latency_s = 0;                      // the slowest hop's one-way latency
  double overlap = 0;                        // the hidden share of its communication
  int64_t seen_plan = -1;                    // the last Plan that placed it
  int64_t previous_plan = -1;                // the Plan before that one that placed it
  double compute_s = -1;           // per iteration at this round's share (the engine's estimate)
  double previous_compute_s = -1;  // at the last round's
  double offset_s = -1;            // its time-shift under interleave, kept while its parts stay
  JobNetworkRound figures;         // as of that Plan
};

struct FabricRoundState {
  explicit FabricRoundState(const FabricModel& model)
      : capacities(model.topology.Capacities()),
        sharing(capacities),
        link_bytes(model.topology.links(), 0) {}
  std::vector<double> capacities;  // bytes per second, by link
  fabric::FlowSharing sharing;
  absl::flat_hash_map<int64_t, JobTraffic> traffic;  // tracked jobs
  // Jobs with flows open; node-based: st.placed points into it while it grows.
  absl::node_hash_map<int64_t, JobFlows> active;
  int64_t plan = -1;
  bool flows_changed = false;                            // since the last Plan
  bool capacities_changed = false;                       // by AtTime, since the last Plan
  std::vector<JobFlows*> placed;                         // by placement: the job's flows, or null
  std::vector<JobNetworkRound> figures;                  // by placement
  std::vector<double> link_bytes;                        // this round's, by link
  absl::flat_hash_map<int64_t, JobNetworkRecord> spent;  // every job that crossed, so far
};

namespace {

// The parts of a placement in server order, as a ring over them runs.
std::vector<fabric::JobPart> PartsOf(const JobPlacement& placement) {
  std::vector<fabric::JobPart> parts;
  parts.reserve(placement.parts.size());
  for (const PlacementPart& p : placement.parts) parts.push_back({p.server, p.gpus});
  std::sort(parts.begin(), parts.end(),
            [](const fabric::JobPart& a, const fabric::JobPart& b) { return a.server < b.server; });
  return parts;
}

bool SameParts(const std::vector<fabric::JobPart>& a, const std::vector<fabric::JobPart>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const fabric::JobPart& x, const fabric::JobPart& y) {
                      return x.server == y.server && x.gpus == y.gpus;
                    });
}

// The slowest of the job's flows were it alone: max-min among its own flows gives the flows of
// the link with the least capacity per flow of the job exactly that, and no flow less.
double SoloRate(const std::vector<double>& capacities,
                const std::vector<std::vector<int32_t>>& routes) {
  std::vector<std::pair<int32_t, int32_t>> crossings;  // (link, the job's flows on it)
  for (const std::vector<int32_t>& route : routes) {
    for (int32_t link : route) {
      auto it = std::find_if(crossings.begin(), crossings.end(),
                             [link](const auto& c) { return c.first == link; });
      if (it == crossings.end()) {
        crossings.push_back({link, 1});
      } else {
        ++it->second;
      }
    }
  }
  double rate = std::numeric_limits<double>::infinity();
  for (const auto& [link, flows] : crossings) {
    rate = std::min(rate, capacities[static_cast<size_t>(link)] / flows);
  }
  return rate;
}

// The job's flows on `parts`: their routes, bytes, latency and its rate alone at `capacities`.
void RouteParts(const FabricModel& model, const std::vector<double>& capacities, JobFlows& job,
                std::vector<fabric::JobPart>&& parts, const JobTraffic& traffic) {
  job.routes.clear();
  job.parts = std::move(parts);
  job.gpus = 0;
  for (const fabric::JobPart& part : job.parts) job.gpus += part.gpus;
  job.traffic = fabric::AllReduceTraffic(job.parts, traffic.gradient_bytes, model.collective);
  job.latency_s = 0;
  for (const auto& [from, to] : job.traffic.flows) {
    std::vector<int32_t> route;
    model.topology.Route(from, to, &route);
    job.latency_s = std::max(job.latency_s, model.topology.LatencyS(from, to));
    job.routes.push_back(std::move(route));
  }
  job.solo_rate = SoloRate(capacities, job.routes);
  job.overlap = model.comm_overlap >= 0 ? model.comm_overlap : traffic.comm_overlap;
}

// Routes the job's flows for `parts`, closing those it had elsewhere; WeighFlows opens them.
void RouteFlows(FabricRoundState& st, const FabricModel& model, JobFlows& job,
                std::vector<fabric::JobPart>&& parts, const JobTraffic& traffic) {
  for (fabric::FlowId f : job.flows) st.sharing.Remove(f);
  job.flows.clear();
  RouteParts(model, st.capacities, job, std::move(parts), traffic);
  job.offset_s = -1;  // a new placement is shifted anew
  st.flows_changed = true;
}

// The job's bursts as the phased model sends them, each alone: its exposed bytes at its rate
// alone, on every link its flows cross (demand: that rate times its flows there).
fabric::CycleJob CycleOf(const JobFlows& job, double compute_s) {
  fabric::CycleJob cycle;
  cycle.compute_s = compute_s;
  const double exposed = 1 - job.overlap;
  cycle.burst_s = exposed * job.traffic.bytes_per_flow / job.solo_rate +
                  exposed * job.traffic.steps * job.latency_s;
  for (const std::vector<int32_t>& route : job.routes) {
    for (int32_t link : route) {
      auto it = std::find_if(cycle.link_demand.begin(), cycle.link_demand.end(),
                             [link](const auto& d) { return d.first == link; });
      if (it == cycle.link_demand.end()) {
        cycle.link_demand.push_back({link, job.solo_rate});
      } else {
        it->second += job.solo_rate;
      }
    }
  }
  cycle.shift_s = job.offset_s;
  return cycle;
}

// interleave: every placed job without a time-shift gets one that suits the jobs beside it
// (fabric::AssignShifts); true when one changed.
bool ShiftJobs(FabricRoundState& st) {
  std::vector<fabric::CycleJob> cycles;
  std::vector<JobFlows*> jobs;
  for (JobFlows* job : st.placed) {
    if (job == nullptr) continue;
    cycles.push_back(CycleOf(*job, job->compute_s));
    jobs.push_back(job);
  }
  fabric::AssignShifts(st.capacities, &cycles);
  bool changed = false;
  for (size_t k = 0; k < jobs.size(); ++k) {
    changed = changed || jobs[k]->offset_s != cycles[k].shift_s;
    jobs[k]->offset_s = cycles[k].shift_s;
  }
  return changed;
}

// Opens the job's routed flows at its weight, or re-opens them where its weight changed (its
// compute at this round's share did): the sharing re-shares the components they touch.
void WeighFlows(FabricRoundState& st, const FabricModel& model, JobFlows& job) {
  double weight = 1;
  if (model.priority == LinkPriority::kGpuIntensity) {
    const double solo_comm_s = fabric::AllReduceSeconds(job.traffic, job.solo_rate, job.latency_s);
    weight = PriorityWeight(job.gpus, job.compute_s, solo_comm_s, model.max_priority_ratio);
  }
  if (!job.flows.empty() && weight == job.weight) return;
  for (fabric::FlowId f : job.flows) st.sharing.Remove(f);
  job.flows.clear();
  job.weight = weight;
  for (const std::vector<int32_t>& route : job.routes) {
    job.flows.push_back(st.sharing.Add(route, weight));
  }
  st.flows_changed = true;
}

// Opens the flows of the round's jobs that span servers where they differ from the last round's
// (their parts, or their weight), and closes those of the jobs no longer placed; notes each
// placement's flows in st.placed and its compute at the round's share.
void UpdateFlows(FabricRoundState& st, const FabricModel& model,
                 const std::vector<JobPlacement>& placements,
                 const FabricRound::ComputeSeconds& compute_s) {
  st.placed.assign(placements.size(), nullptr);
  for (size_t i = 0; i < placements.size(); ++i) {
    const JobPlacement& p = placements[i];
    if (p.parts.size() < 2) continue;  // inside one server: no link crossed
    const auto traffic = st.traffic.find(p.job_id);
    if (traffic == st.traffic.end() || traffic->second.gradient_bytes <= 0) continue;
    JobFlows& job = st.active[p.job_id];
    std::vector<fabric::JobPart> parts = PartsOf(p);
    if (job.flows.empty() || !SameParts(job.parts, parts)) {
      RouteFlows(st, model, job, std::move(parts), traffic->second);
    }
    job.previous_compute_s = job.compute_s;
    job.compute_s = compute_s(i);
    WeighFlows(st, model, job);
    job.previous_plan = job.seen_plan;
    job.seen_plan = st.plan;
    st.placed[i] = &job;
  }
  for (auto it = st.active.begin(); it != st.active.end();) {
    if (it->second.seen_plan == st.plan) {
      ++it;
      continue;
    }
    for (fabric::FlowId f : it->second.flows) st.sharing.Remove(f);
    st.flows_changed = true;
    st.active.erase(it++);
  }
}

// The communication an iteration waits for: the share comm_overlap of it hides behind compute,
// but no more than the compute lasts (an iteration never moves its bytes faster than its links).
double ExposedSeconds(const JobFlows& job, double rate) {
  const double comm = fabric::AllReduceSeconds(job.traffic, rate, job.latency_s);
  return std::max((1 - job.overlap) * comm, comm - job.compute_s);
}

// Fluid: each job communicates at its slowest flow's max-min rate.
void FluidFigures(FabricRoundState& st) {
  for (size_t i = 0; i < st.placed.size(); ++i) {
    const JobFlows* job = st.placed[i];
    if (job == nullptr) continue;
    double slowest = std::numeric_limits<double>::infinity();
    for (fabric::FlowId f : job->flows) slowest = std::min(slowest, st.sharing.Rate(f));
    st.figures[i].network_s = ExposedSeconds(*job, slowest);
  }
}

// Phased: the round's bursts simulated against each other from the round's start; again only
// when a flow or a job's compute changed since the last round.
void PhasedFigures(FabricRoundState& st, const FabricModel& model, double round_s) {
  std::vector<fabric::PhasedJob> jobs;
  std::vector<size_t> index;
  bool changed = st.flows_changed;
  if (model.interleave_candidates > 0) changed = ShiftJobs(st) || changed;
  for (size_t i = 0; i < st.placed.size(); ++i) {
    JobFlows* job = st.placed[i];
    if (job == nullptr) continue;
    fabric::PhasedJob pj;
    pj.compute_s = job->compute_s;
    if (model.interleave_candidates > 0) pj.offset_s = job->offset_s;
    changed = changed || job->compute_s != job->previous_compute_s;
    pj.latency_s = (1 - job->overlap) * job->traffic.steps * job->latency_s;
    pj.bytes_per_flow = (1 - job->overlap) * job->traffic.bytes_per_flow;
    pj.flow_links = job->routes;
    pj.weight = job->weight;
    jobs.push_back(std::move(pj));
    index.push_back(i);
  }
  if (!changed) {
    for (size_t i : index) st.figures[i].network_s = st.placed[i]->figures.network_s;
    return;
  }
  const std::vector<double> comm =
      fabric::SimulatePhased(st.capacities, jobs, {.horizon_s = round_s});
  for (size_t k = 0; k < index.size(); ++k) {
    // As in ExposedSeconds: what compute cannot hide is waited for even alone.
    const JobFlows& job = *st.placed[index[k]];
    const double alone = fabric::AllReduceSeconds(job.traffic, job.solo_rate, job.latency_s);
    st.figures[index[k]].network_s = std::max(comm[k], alone - job.compute_s);
  }
}

}  // namespace

double PriorityWeight(int32_t gpus, double compute_s, double solo_comm_s, double max_ratio) {
  const double intensity = gpus * compute_s / solo_comm_s;
  if (!(intensity > 1)) return 1;  // also where it is not a number
  return std::min(intensity, std::max(max_ratio, 1.0));
}

FabricRound::FabricRound(std::shared_ptr<const FabricModel> model)
    : model_(std::move(model)), st_(std::make_unique<FabricRoundState>(*model_)) {}

FabricRound::~FabricRound() = default;

void FabricRound::Track(int64_t job_id, const JobTraffic& traffic) {
  st_->traffic[job_id] = traffic;
}

void FabricRound::Forget(int64_t job_id) { st_->traffic.erase(job_id); }

void FabricRound::AtTime(double start_s) {
  FabricRoundState& st = *st_;
  const fabric::LinkSlowdowns& slowdowns = model_->slowdowns;
  bool changed = false;
  for (int32_t link : slowdowns.links()) {
    const double capacity = slowdowns.CapacityAt(model_->topology, link, start_s);
    double& now = st.capacities[static_cast<size_t>(link)];
    if (capacity == now) continue;
    now = capacity;
    st.sharing.SetCapacity(link, capacity);
    changed = true;
  }
  if (!changed) return;
  st.capacities_changed = true;
  for (auto& entry : st.active) {
    entry.second.solo_rate = SoloRate(st.capacities, entry.second.routes);
  }
}

const std::vector<JobNetworkRound>& FabricRound::Plan(const std::vector<JobPlacement>& placements,
                                                      const ComputeSeconds& compute_s,
                                                      double round_s) {
  FabricRoundState& st = *st_;
  ++st.plan;
  st.flows_changed = std::exchange(st.capacities_changed, false);
  UpdateFlows(st, *model_, placements, compute_s);
  st.figures.assign(placements.size(), JobNetworkRound{});
  st.sharing.Update();
  if (model_->traffic == TrafficModel::kPhased) {
    PhasedFigures(st, *model_, round_s);
  } else {
    FluidFigures(st);
  }
  for (size_t i = 0; i < placements.size(); ++i) {
    JobFlows* job = st.placed[i];
    if (job == nullptr) continue;
    JobNetworkRound& f = st.figures[i];
    f.solo_s = ExposedSeconds(*job, job->solo_rate);
    // No share beats being alone; and a simulated burst within rounding of the solo one is it
    // (else a job alone would show a contention of 1e-12 s).
    if (f.network_s <= f.solo_s * (1 + 1e-9)) f.network_s = f.solo_s;
    f.changed = job->figures.network_s != f.network_s || job->previous_plan != st.plan - 1;
    job->figures = f;
  }
  return st.figures;
}

void FabricRound::Credit(int64_t job_id, int64_t iterations) {
  FabricRoundState& st = *st_;
  const auto it = st.active.find(job_id);
  if (iterations <= 0 || it == st.active.end() || it->second.seen_plan != st.plan) return;
  const JobFlows& job = it->second;
  const double n = static_cast<double>(iterations);
  for (const std::vector<int32_t>& route : job.routes) {
    for (int32_t link : route) st.link_bytes[link] += n * job.traffic.bytes_per_flow;
  }
  JobNetworkRecord& spent = st.spent[job_id];
  spent.job_id = job_id;
  spent.comm_s += n * job.figures.network_s;
  spent.contention_s += n * (job.figures.network_s - job.figures.solo_s);
}

const std::vector<double>& FabricRound::capacities() const { return st_->capacities; }

fabric::CycleJob FabricRound::CycleOn(int64_t job_id, const PlacementParts& parts,
                                      double compute_s) const {
  const auto traffic = st_->traffic.find(job_id);
  if (parts.size() < 2 || traffic == st_->traffic.end() || traffic->second.gradient_bytes <= 0) {
    return fabric::CycleJob{};
  }
  JobPlacement placement{.job_id = job_id, .parts = parts};
  std::vector<fabric::JobPart> on = PartsOf(placement);
  const auto active = st_->active.find(job_id);
  if (active != st_->active.end() && !active->second.flows.empty() &&
      SameParts(active->second.parts, on)) {
    return CycleOf(active->second, compute_s);
  }
  JobFlows job;
  RouteParts(*model_, st_->capacities, job, std::move(on), traffic->second);
  return CycleOf(job, compute_s);
}

std::vector<JobNetworkRecord> FabricRound::SpentByJob() const {
  std::vector<JobNetworkRecord> jobs;
  jobs.reserve(st_->spent.size());
  for (const auto& [id, spent] : st_->spent) jobs.push_back(spent);
  std::sort(jobs.begin(), jobs.end(), [](const JobNetworkRecord& a, const JobNetworkRecord& b) {
    return a.job_id < b.job_id;
  });
  return jobs;
}

void FabricRound::CloseRound(int64_t round, double start_s, double end_s,
                             std::vector<LinkRecord>* out) {
  FabricRoundState& st = *st_;
  for (size_t l = 0; l < st.link_bytes.size(); ++l) {
    const int32_t link = static_cast<int32_t>(l);
    const int32_t flows = st.sharing.LinkFlows(link);
    if (flows == 0 && st.link_bytes[l] == 0) continue;
    out->push_back(LinkRecord{.round = round,
                              .link = link,
                              .start_s = start_s,
                              .end_s = end_s,
                              .bytes = st.link_bytes[l],
                              .flows = flows,
                              .rate_bytes_per_s = st.sharing.LinkLoad(link)});
    st.link_bytes[l] = 0;
  }
}

}  // namespace troupe::scheduling
