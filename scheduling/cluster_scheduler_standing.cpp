// Standing leases: a job keeps its lease from one round to the next without a grant or a report
// when its last report offered to (JobProgress.standing_iterations) and the round gives it the
// same share: parts of the same sizes on GPUs of the same speed for it, wherever they are (its
// progress reads nothing else). The scheduler credits each round stood at the offered rate, as
// the job's own report would have, and takes those reports in the order the jobs would have sent
// them; a report after which the job goes on under a constant key (FIFO) it takes as the lease
// stands: nothing that report changes is read before the round closes, and a round's lease reads
// the job's entry anyway.
// Under faults (options.report_grace_s > 0) a failure may cut a lease mid-round, so every
// standing report waits for the round's close: a standing lease cut is dropped from the round's
// and the job is told the rounds it stood before (LoseLeaseOn); the granted leases' reports come
// after the timer, and the standing ones are taken among them. Under faults.recovery a round's
// credit is what its checkpoints and restarts leave of it, from the job's cadence
// (CreditStoodRound), as the job's own account credits it.
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

// Failures may cut a lease mid-round: the run has faults.
bool LeasesMayBeCut(const EngineState& st) { return st.options.report_grace_s > 0; }

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
  auto books = st.options.recovery ? st.standing_books.find(job.view.id) : st.standing_books.end();
  if (books != st.standing_books.end()) {
    EngineState::StandingBooks& b = books->second;
    const StoodRound round =
        CreditStoodRound(b.costs, &b.cadence, left, b.iteration_s, held.lease_s);
    p.iterations_done = round.iterations_done;
    p.iterations_left = round.iterations_left;
    p.finished = round.finished;
    p.recovery = round.costs;
  } else {
    const StoodCredit credit = CreditStood(left, held.offered_iterations, 1);
    p.iterations_done = credit.iterations_done;
    p.iterations_left = credit.iterations_left;
    p.finished = credit.finished;
  }
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
    // Until the round's end (or its next lease) it remembers the rounds this grant tells: a
    // failure that keeps every grant of it from the job tells them instead (LoseLeaseOn).
    *rounds_stood = std::max(0, held.rounds_stood);
    held.rounds_stood = -*rounds_stood;
    held.parts = placement.parts;
    return LeaseFate::kGranted;
  }
  held.rounds_stood = std::max(0, held.rounds_stood) + 1;
  // Where its parts are now (it may have moved); SameShapes said the counts agree.
  if (held.parts.size() == 1) {
    held.parts[0] = placement.parts[0];  // most jobs: one part, no vector's assignment
  } else if (held.parts != placement.parts) {
    held.parts = placement.parts;
  }
  const StoodCredit credit = CreditStood(job.view.iterations_left, held.offered_iterations, 1);
  if (st.policy->constant_key && !credit.finished && !LeasesMayBeCut(st)) {
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
  // A lease relet mid-round (a spare, or smaller) was shorter than a round: no offer for one.
  const bool whole_round = p.lease_start_s == st.current.start_s;
  held.offered_iterations = p.ran && !p.finished && whole_round ? p.standing_iterations : -1;
  held.offer_round = static_cast<int32_t>(p.round);
  held.lease_s = st.current.end_s - st.current.start_s;
  if (st.options.recovery && held.offered_iterations >= 0) {
    const StandingCadence& c = p.standing_cadence;
    if (c.iteration_s <= 0) {
      held.offered_iterations = -1;  // nothing to credit a round from
      return;
    }
    st.standing_books[p.job_id] = EngineState::StandingBooks{
        .costs = CheckpointCosts{.interval_s = c.interval_s, .write_s = c.write_s},
        .cadence = c.cadence,
        .iteration_s = c.iteration_s};
  }
}

namespace {

// The standing reports still due, taken up to (not including) report key `key`.
void TakeStandingBefore(EngineState& st, uint64_t key) {
  std::vector<EngineState::StandingTurn>& closing = st.standing_closing;
  while (!st.ended && st.standing_next < closing.size() &&
         closing[st.standing_next].report_key < key) {
    // Twice as far ahead as elsewhere: a standing report is short, its entry's lines many.
    if (st.standing_next + 2 * kPrefetchAhead < closing.size()) {
      PrefetchForStandingReport(closing[st.standing_next + 2 * kPrefetchAhead].job);
    }
    TakeStandingRound(st, *closing[st.standing_next++].job);
  }
}

// Under faults: reports of granted leases are still to come after the round's timer.
bool GrantedReportsDue(const EngineState& st) {
  const size_t standing_due = st.standing_closing.size() - st.standing_next;
  return LeasesMayBeCut(st) && st.awaiting_reports > static_cast<int32_t>(standing_due);
}

// The closing round's standing reports are all taken.
void EndStandingTurns(EngineState& st) {
  st.standing_closing.clear();
  st.standing_next = 0;
}

// Drops the job's standing turn of the round in flight, not taken yet, if it has one.
bool DropStandingTurn(EngineState& st, const TrackedJob& job) {
  const auto of_job = [&job](const EngineState::StandingTurn& t) { return t.job == &job; };
  auto it = std::find_if(st.round_standing.begin(), st.round_standing.end(), of_job);
  if (it != st.round_standing.end()) {
    st.round_standing.erase(it);
    return true;
  }
  auto pending = st.standing_closing.begin() + static_cast<std::ptrdiff_t>(st.standing_next);
  it = std::find_if(pending, st.standing_closing.end(), of_job);
  if (it == st.standing_closing.end()) return false;
  st.standing_closing.erase(it);
  return true;
}

}  // namespace

void TakeAmongStanding(EngineState& st, TrackedJob* job, const JobProgress& p) {
  if (job != nullptr && p.round == st.round) TakeStandingBefore(st, job->lease.report_key);
  if (st.ended) return;
  OnProgressOf(st, job, p);
  if (!GrantedReportsDue(st)) {
    TakeStandingBefore(st, UINT64_MAX);
    EndStandingTurns(st);
  }
}

void LoseLeaseOn(EngineState& st, int64_t job_id, int32_t server) {
  const double start_s = LeaseStartOf(st, job_id);
  auto it = st.jobs.find(job_id);
  if (st.options.standing_leases && it != st.jobs.end()) {
    TrackedJob& job = it->second;
    LeaseHeld& held = job.lease;
    // Stood into this round (its report of the last round offered; not taken yet this round).
    if (held.rounds_stood > 0 && held.offer_round == st.round - 1 && DropStandingTurn(st, job)) {
      const int32_t stood_before = held.rounds_stood - 1;
      held.rounds_stood = 0;  // the job credits them now, not at its next grant
      held.offered_iterations = -1;
      st.out->LoseLeaseAfterStanding(job_id, st.round, start_s, server, stood_before, true);
      return;
    }
    if (held.rounds_stood < 0) {  // granted this round, telling the job of rounds stood
      const int32_t told = -held.rounds_stood;
      held.rounds_stood = 0;
      st.out->LoseLeaseAfterStanding(job_id, st.round, start_s, server, told, false);
      return;
    }
  }
  st.out->LoseLease(job_id, st.round, start_s, server);
}

void TakeRoundReports(EngineState& st) {
  std::vector<JobProgress> reports;
  reports.swap(st.filed_reports);
  SortByReportKey(st.round_standing, st.setup.servers.size(), &st.standing_closing);
  st.round_standing.clear();  // the next round's fill it
  st.standing_next = 0;
  for (const JobProgress& p : reports) {
    auto it = st.jobs.find(p.job_id);  // looked up once for its place and its report
    TrackedJob* job = it == st.jobs.end() ? nullptr : &it->second;
    TakeStandingBefore(st, ReportKeyOf(job));
    if (st.ended) break;
    // Jobs leave `jobs` only once the round closed (no report awaited): `job` is still theirs
    // unless that happened, and then it is looked up again (and dropped as stray).
    if (st.awaiting_reports == 0) {
      it = st.jobs.find(p.job_id);
      job = it == st.jobs.end() ? nullptr : &it->second;
    }
    OnProgressOf(st, job, p);
  }
  if (!GrantedReportsDue(st)) {  // else the rest among them (TakeAmongStanding)
    TakeStandingBefore(st, UINT64_MAX);
    EndStandingTurns(st);
  }
  reports.clear();
  if (st.filed_reports.empty()) st.filed_reports.swap(reports);  // its storage
}

}  // namespace troupe::scheduling::engine_detail
