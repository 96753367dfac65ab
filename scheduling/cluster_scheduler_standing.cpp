// Standing leases: a job keeps its lease from one round to the next without a grant or a report
// when its last report offered to (JobProgress.standing_iterations) and the round gives it the
// same share: parts of the same sizes on GPUs of the same speed for it, wherever they are (its
// progress reads nothing else). The scheduler credits each round stood at the offered rate, as
// the job's own report would have, and takes those reports in the order the jobs would have sent
// them; a report after which the job goes on under a constant key (FIFO) it takes as the lease
// stands: nothing that report changes is read before the round closes (a run with standing
// leases has no faults), and a round's lease reads the job's entry anyway.
#include <algorithm>
#include <climits>

#include "scheduling/cluster_scheduler_internal.hpp"
#include "scheduling/lease_credit.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

PartShape ShapeOf(const EngineState& st, const TrackedJob& job,
                  const scheduling::PlacementPart& part) {
  return PartShape{part.gpus, part.cpus, part.memory_gb,
                   job.view.TypeSpeed(st.ledger->shape(part.server).gpu_type)};
}

// The parts as the job's progress sees them, sorted.
void ShapesOf(const EngineState& st, const TrackedJob& job, const scheduling::PlacementParts& parts,
              PartShapes* shapes) {
  shapes->clear();
  for (const scheduling::PlacementPart& part : parts) shapes->push_back(ShapeOf(st, job, part));
  std::sort(shapes->begin(), shapes->end());
}

// Whether two sets of parts give the job the same share (where they are does not matter).
bool SameShapes(EngineState& st, const TrackedJob& job, const scheduling::PlacementParts& a,
                const scheduling::PlacementParts& b) {
  if (a.size() != b.size()) return false;
  if (a.size() == 1) {  // most jobs: the job's GPU speeds are read only across GPU types
    const scheduling::PlacementPart& x = a[0];
    const scheduling::PlacementPart& y = b[0];
    return x.gpus == y.gpus && x.cpus == y.cpus && x.memory_gb == y.memory_gb &&
           (st.ledger->shape(x.server).gpu_type == st.ledger->shape(y.server).gpu_type ||
            ShapeOf(st, job, x) == ShapeOf(st, job, y));
  }
  ShapesOf(st, job, a, &st.held_shapes);
  ShapesOf(st, job, b, &st.placed_shapes);
  return st.held_shapes == st.placed_shapes;
}

// Where a job's report falls among the round's. The servers take their RoundLeases in server
// order and grant in the round's order; a job runs, and reports, in the order its first grant
// reached it: by its lowest server, then by its place in the round.
uint64_t ReportKey(const scheduling::JobPlacement& placement, size_t index) {
  int32_t lowest = INT32_MAX;
  for (const scheduling::PlacementPart& part : placement.parts) {
    lowest = std::min(lowest, part.server);
  }
  return (static_cast<uint64_t>(lowest) << 32) | static_cast<uint64_t>(index);
}

uint64_t ReportKeyOf(const TrackedJob* job) {
  return job == nullptr ? LeaseHeld::kNever : job->lease.report_key;
}

// The report of a round the job's lease stood: what RunLease commits at the offered rate.
JobProgress StandingReport(EngineState& st, const TrackedJob& job, const LeaseHeld& held) {
  const int64_t left = job.view.iterations_left;
  JobProgress p;
  p.job_id = job.view.id;
  p.round = st.round;
  p.lease_start_s = st.current.start_s;
  p.ran = true;
  if (held.parts.size() == 1) {  // most jobs
    p.gpus = held.parts[0].gpus;
    p.cpus = held.parts[0].cpus;
    p.memory_gb = held.parts[0].memory_gb;
  } else {
    ShapesOf(st, job, held.parts, &st.held_shapes);  // summed in their sorted order
    for (const PartShape& part : st.held_shapes) {
      p.gpus += part.gpus;
      p.cpus += part.cpus;
      p.memory_gb += part.memory_gb;
    }
  }
  const StoodCredit credit = CreditStood(left, held.offered_iterations, 1);
  p.iterations_done = credit.iterations_done;
  p.iterations_left = credit.iterations_left;
  p.finished = credit.finished;
  p.standing_iterations = held.offered_iterations;
  p.for_round_end = true;
  return p;
}

// Takes the report of a round the job's lease stood: its offer stands for the next round too.
void TakeStandingRound(EngineState& st, TrackedJob& job) {
  job.lease.offer_round = static_cast<int32_t>(st.round);
  TakeProgress(st, job, StandingReport(st, job, job.lease));
}

// `turns` came in the round's order (report keys ascending within each lowest server): a
// stable counting sort by lowest server orders them by report key, in time linear in the turns.
// (A placement without parts, lowest server INT32_MAX, sorts last.)
void SortByReportKey(const std::vector<EngineState::StandingTurn>& turns, size_t servers,
                     std::vector<EngineState::StandingTurn>* sorted) {
  const auto bucket = [servers](const EngineState::StandingTurn& turn) {
    return std::min<size_t>(turn.report_key >> 32, servers);
  };
  std::vector<size_t> first(servers + 2, 0);
  for (const EngineState::StandingTurn& turn : turns) ++first[bucket(turn) + 1];
  for (size_t s = 1; s < first.size(); ++s) first[s] += first[s - 1];
  sorted->resize(turns.size());
  for (const EngineState::StandingTurn& turn : turns) (*sorted)[first[bucket(turn)]++] = turn;
}

}  // namespace

LeaseFate LeaseStands(EngineState& st, TrackedJob& job, const scheduling::JobPlacement& placement,
                      size_t index, bool network_changed, int32_t* rounds_stood) {
  *rounds_stood = 0;
  if (!st.options.standing_leases) return LeaseFate::kGranted;
  LeaseHeld& held = job.lease;
  held.report_key = ReportKey(placement, index);
  const bool stands = !network_changed && held.offered_iterations >= 0 &&
                      held.offer_round == st.round - 1 &&
                      held.lease_s == st.current.end_s - st.current.start_s &&
                      SameShapes(st, job, held.parts, placement.parts);
  if (!stands) {
    *rounds_stood = held.rounds_stood;
    held.rounds_stood = 0;
    held.parts = placement.parts;
    return LeaseFate::kGranted;
  }
  ++held.rounds_stood;
  // Where its parts are now (it may have moved); SameShapes said the counts agree.
  if (held.parts.size() == 1) {
    held.parts[0] = placement.parts[0];  // most jobs: one part, no vector's assignment
  } else if (held.parts != placement.parts) {
    held.parts = placement.parts;
  }
  const StoodCredit credit = CreditStood(job.view.iterations_left, held.offered_iterations, 1);
  if (st.policy->constant_key && !credit.finished) {
    // Most rounds of most jobs: the report would add nothing but the run (it lists no parts and
    // wastes nothing), so it is not built.
    held.offer_round = static_cast<int32_t>(st.round);
    int32_t gpus = 0;
    for (const scheduling::PlacementPart& part : held.parts) gpus += part.gpus;
    TakeRunGoingOn(st, job, gpus, credit.iterations_left);
    return LeaseFate::kStandsTaken;
  }
  st.round_standing.push_back({held.report_key, &job});
  return LeaseFate::kStands;
}

void NoteStandingOffer(EngineState& st, TrackedJob& job, const JobProgress& p) {
  if (!st.options.standing_leases || !job.lease.held()) return;
  LeaseHeld& held = job.lease;
  held.offered_iterations = p.ran && !p.finished ? p.standing_iterations : -1;
  held.offer_round = static_cast<int32_t>(p.round);
  held.lease_s = st.current.end_s - st.current.start_s;
}

void TakeRoundReports(EngineState& st) {
  std::vector<JobProgress> reports;
  reports.swap(st.filed_reports);
  SortByReportKey(st.round_standing, st.setup.servers.size(), &st.standing_closing);
  st.round_standing.clear();  // the next round's fill it
  size_t next = 0;
  const auto take_standing_before = [&](uint64_t key) {
    while (!st.ended && next < st.standing_closing.size() &&
           st.standing_closing[next].report_key < key) {
      // Twice as far ahead as elsewhere: a standing report is short, its entry's lines many.
      if (next + 2 * kPrefetchAhead < st.standing_closing.size()) {
        PrefetchForStandingReport(st.standing_closing[next + 2 * kPrefetchAhead].job);
      }
      TakeStandingRound(st, *st.standing_closing[next++].job);
    }
  };
  for (const JobProgress& p : reports) {
    auto it = st.jobs.find(p.job_id);  // looked up once for its place and its report
    TrackedJob* job = it == st.jobs.end() ? nullptr : &it->second;
    take_standing_before(ReportKeyOf(job));
    if (st.ended) break;
    // Jobs leave `jobs` only once the round closed (no report awaited): `job` is still theirs
    // unless that happened, and then OnProgress looks again (and drops it as stray).
    if (st.awaiting_reports == 0) {
      OnProgress(st, p);
    } else {
      OnProgressOf(st, job, p);
    }
  }
  take_standing_before(UINT64_MAX);
  st.standing_closing.clear();
  reports.clear();
  if (st.filed_reports.empty()) st.filed_reports.swap(reports);  // its storage
}

}  // namespace troupe::scheduling::engine_detail
