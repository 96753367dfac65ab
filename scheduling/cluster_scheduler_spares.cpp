// Spare servers (faults.recovery.spare_servers, docs/faults.md "Recovery"): a pool of servers
// held out of placement. A job whose lease loses a server mid-round takes a spare of the same
// shape at once: its parts are granted anew from the failure to the round's end, on the servers
// it kept and the spare, and it restarts there from its checkpoint instead of waiting for the
// next round. The spare becomes a regular server; the failed one takes its place in the pool and
// serves as a spare once repaired, so the pool always counts spare_servers servers.
#include <algorithm>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

bool SameShape(const ServerShape& a, const ServerShape& b) {
  return a.gpus == b.gpus && a.cpus == b.cpus && a.memory_gb == b.memory_gb &&
         a.gpu_type == b.gpu_type;
}

// The lowest-numbered spare that is up and has the failed server's shape (-1: none).
int32_t FindSpare(const EngineState& st, int32_t failed) {
  const ServerShape& want = st.ledger->shape(failed);
  for (size_t s = 0; s < st.spare.size(); ++s) {
    const int32_t server = static_cast<int32_t>(s);
    if (st.spare[s] && st.server_up[s] && SameShape(st.ledger->shape(server), want)) return server;
  }
  return -1;
}

// The job's exposed communication per iteration in this round's plan (0 without a fabric).
double NetworkSecondsOf(const EngineState& st, const JobPlacement& placement) {
  if (st.network == nullptr) return 0;
  for (size_t i = 0; i < st.round_placements.size() && i < st.network->size(); ++i) {
    if (&st.round_placements[i] == &placement) return (*st.network)[i].network_s;
  }
  return 0;
}

}  // namespace

void MarkSpares(EngineState& st) {
  const size_t servers = st.server_up.size();
  st.spare.assign(servers, false);
  const size_t n = std::min(servers, static_cast<size_t>(std::max(0, st.options.spare_servers)));
  std::fill(st.spare.end() - static_cast<std::ptrdiff_t>(n), st.spare.end(), true);
}

bool ReletOnSpare(EngineState& st, JobPlacement& placement, int32_t failed, double now_s) {
  if (st.options.spare_servers <= 0 || now_s < 0 || st.round < 0 || st.round_timer_fired ||
      now_s >= st.current.end_s) {
    return false;
  }
  if (!st.jobs.contains(placement.job_id)) return false;
  // The failed server's other jobs at this instant moved to a spare already: this one follows.
  auto it = st.replaced.find(failed);
  int32_t spare = it != st.replaced.end() && it->second.at_s == now_s ? it->second.spare : -1;
  if (spare < 0) {
    spare = FindSpare(st, failed);
    if (spare < 0) return false;
    st.spare[spare] = false;
    st.spare[failed] = true;
    st.replaced[failed] = EngineState::Replacement{.at_s = now_s, .spare = spare};
  }
  for (PlacementPart& part : placement.parts) {
    if (part.server == failed) part.server = spare;
  }
  EngineState::Relet& relet = st.relets[placement.job_id];
  relet.start_s = now_s;
  relet.at_s = now_s;
  GrantRelet(st, placement, now_s);
  return true;
}

void GrantRelet(EngineState& st, const JobPlacement& placement, double now_s) {
  const TrackedJob& job = st.jobs.find(placement.job_id)->second;
  const double network_s = NetworkSecondsOf(st, placement);
  const int32_t parts = static_cast<int32_t>(placement.parts.size());
  for (const PlacementPart& part : placement.parts) {
    ServerRound round;
    round.round = st.round;
    round.start_s = now_s;
    round.end_s = st.current.end_s;
    round.grants.push_back(
        Grant{.job_id = placement.job_id,
              .gpus = part.gpus,
              .parts = parts,
              .cpus = part.cpus,
              .memory_gb = part.memory_gb,
              .type_speed = job.view.TypeSpeed(st.ledger->shape(part.server).gpu_type),
              .network_s = network_s,
              .rounds_stood = 0});
    st.out->LeaseRound(part.server, std::move(round));
  }
}

double LeaseStartOf(const EngineState& st, int64_t job_id) {
  auto it = st.relets.find(job_id);
  return it == st.relets.end() ? st.current.start_s : it->second.start_s;
}

bool ReletAt(const EngineState& st, int64_t job_id, double now_s) {
  auto it = st.relets.find(job_id);
  return it != st.relets.end() && it->second.at_s == now_s;
}

bool TakeReportBeforeRelet(EngineState& st, TrackedJob& job, const JobProgress& p) {
  auto it = st.relets.find(p.job_id);
  if (it == st.relets.end() || p.lease_start_s >= it->second.start_s) return false;
  EngineState::Relet& relet = it->second;
  const bool copy =
      std::find(relet.taken.begin(), relet.taken.end(), p.lease_start_s) != relet.taken.end();
  // A copy, or a report that comes after the relet's own: nothing more to take.
  if (copy || job.reported_round == p.round) return true;
  relet.taken.push_back(p.lease_start_s);
  ++st.awaiting_reports;  // the relet's report is still to come
  TakeProgress(st, job, p);
  job.reported_round = -1;
  return true;
}

double HeldInRound(const EngineState& st, const JobProgress& p) {
  auto it = st.relets.find(p.job_id);
  if (it == st.relets.end() || p.lease_start_s < it->second.start_s) return st.options.round_s;
  return st.current.end_s - it->second.start_s;
}

}  // namespace troupe::scheduling::engine_detail
