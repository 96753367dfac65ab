#include "faults/fault_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/rng.hpp"
#include "base/status_macros.hpp"
#include "config/config_ranges.hpp"
#include "faults/checkpoint_cadence.hpp"
#include "faults/failure_model.hpp"
#include "faults/failure_trace.hpp"
#include "faults/straggler_model.hpp"

namespace troupe {
namespace {

FaultKind FromConfig(config::FaultKind kind) {
  switch (kind) {
    case config::crash:
      return FaultKind::kCrash;
    case config::partition:
      return FaultKind::kPartition;
    case config::slow:
      return FaultKind::kSlow;
    case config::drop:
      return FaultKind::kDrop;
    case config::delay:
      return FaultKind::kDelay;
    case config::duplicate:
      return FaultKind::kDuplicate;
    case config::disk:
      return FaultKind::kDisk;
  }
  return FaultKind::kCrash;
}

bool IsLinkFault(FaultKind kind) {
  return kind == FaultKind::kDrop || kind == FaultKind::kDelay || kind == FaultKind::kDuplicate;
}

// The kinds of actor each fault kind may hit.
Status CheckTargetKind(FaultKind kind, const ActorSet& target, const std::string& where) {
  const EndpointKind k = target.kind;
  switch (kind) {
    case FaultKind::kCrash:
      if (k == EndpointKind::kAny || k == EndpointKind::kWorkload) {
        return InvalidField(where, "a crash hits a server, job, scheduler, ps or node");
      }
      break;
    case FaultKind::kSlow:
      if (k != EndpointKind::kServer && k != EndpointKind::kPs) {
        return InvalidField(where, "slow hits a server (throughput) or a ps node (disk)");
      }
      break;
    case FaultKind::kDisk:
      if (k != EndpointKind::kPs) return InvalidField(where, "disk faults hit a ps node");
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status ToEvent(const config::Fault& f, const std::string& where, FaultEvent* e) {
  if (!f.has_kind()) return InvalidField(where + ".kind", "missing");
  e->kind = FromConfig(f.kind());
  e->at_s = f.at_s();
  e->duration_s = f.duration_s();
  e->factor = f.factor();
  e->probability = f.probability();
  e->delay_s = f.delay_s();
  e->disk_full = f.disk_full();
  if (!(e->at_s >= 0)) return InvalidField(where + ".at_s", "must be >= 0");
  if (!(e->duration_s >= 0)) return InvalidField(where + ".duration_s", "must be >= 0");
  if (!(e->factor > 0)) return InvalidField(where + ".factor", "must be > 0");
  if (!(e->probability >= 0 && e->probability <= 1)) {
    return InvalidField(where + ".probability", "must lie in [0, 1]");
  }
  if (!(e->delay_s >= 0)) return InvalidField(where + ".delay_s", "must be >= 0");
  if (IsLinkFault(e->kind)) {
    if (Status s = ParseLink(f.has_target() ? f.target() : "*", &e->link); !s.ok()) {
      return InvalidField(where + ".target", s.message());
    }
    if (e->kind == FaultKind::kDelay && e->delay_s <= 0) {
      return InvalidField(where + ".delay_s", "a delay fault needs delay_s > 0");
    }
    if (e->kind != FaultKind::kDelay && e->probability <= 0) {
      return InvalidField(where + ".probability", "needs probability > 0");
    }
    return Status::Ok();
  }
  if (!f.has_target()) return InvalidField(where + ".target", "missing");
  if (Status s = ParseActorSet(f.target(), &e->target); !s.ok()) {
    return InvalidField(where + ".target", s.message());
  }
  if (e->kind == FaultKind::kPartition) {
    if (Status s = ParseActorSet(f.peer(), &e->peer); !s.ok()) {
      return InvalidField(where + ".peer", s.message());
    }
    if (e->duration_s <= 0) return InvalidField(where + ".duration_s", "a partition needs an end");
  }
  return CheckTargetKind(e->kind, e->target, where + ".target");
}

Status CheckAgainstUniverse(const FaultEvent& e, const FaultUniverse& u, const std::string& where) {
  const ActorSet& t = e.target;
  auto out_of_range = [&](int64_t count, const char* what) {
    return InvalidField(where + ".target", fmt::format("{} has no {} {} (the run has {})",
                                                       t.ToString(), what, t.first, count));
  };
  if (t.kind == EndpointKind::kServer && t.first >= u.servers)
    return out_of_range(u.servers, "server");
  if (t.kind == EndpointKind::kPs && t.first >= u.ps_nodes)
    return out_of_range(u.ps_nodes, "ps node");
  if (t.kind == EndpointKind::kJob && !u.job_ids.empty()) {
    auto id = std::lower_bound(u.job_ids.begin(), u.job_ids.end(), t.first);
    if (id == u.job_ids.end() || (t.last >= 0 && *id > t.last)) {
      return InvalidField(where + ".target",
                          fmt::format("{} names no job of the workload (its job ids run {}..{})",
                                      t.ToString(), u.job_ids.front(), u.job_ids.back()));
    }
    return Status::Ok();
  }
  if (t.kind == EndpointKind::kJob && u.jobs > 0 && t.first >= u.jobs)
    return out_of_range(u.jobs, "job");
  return Status::Ok();
}

double DrawDuration(Rng& rng, double mean) { return mean > 0 ? rng.Exponential(1.0 / mean) : 0; }

int64_t DrawIndex(Rng& rng, int64_t count) {
  return static_cast<int64_t>(rng.Uniform01() * static_cast<double>(count));
}

// One random fault; the draws happen in a fixed order whatever the kind, so that adding a kind
// to `kinds` changes only what is drawn from the kind on.
FaultEvent DrawFault(Rng& rng, const config::RandomFaults& r, const std::vector<FaultKind>& kinds,
                     const FaultUniverse& u) {
  FaultEvent e;
  e.kind = kinds[DrawIndex(rng, static_cast<int64_t>(kinds.size()))];
  e.at_s = std::round(rng.Uniform(r.start_s(), r.end_s()));
  e.duration_s = std::max(1.0, std::round(DrawDuration(rng, r.mean_duration_s())));
  const double pick = rng.Uniform01();
  const int64_t server = DrawIndex(rng, std::max<int64_t>(u.servers, 1));
  const int64_t job_index = DrawIndex(rng, u.jobs > 0 ? u.jobs : 100);
  const int64_t job = u.job_ids.empty() ? job_index : u.job_ids[static_cast<size_t>(job_index)];
  const int64_t ps = DrawIndex(rng, std::max<int64_t>(u.ps_nodes, 1));
  const double link_pick = rng.Uniform01();
  // Drawn only when asked for, so that the schedules of existing seeds do not change.
  const double permanence = r.permanent_probability() > 0 ? rng.Uniform01() : 1;
  const bool ps_run = u.ps_nodes > 0;
  auto one = [](EndpointKind kind, int64_t index) { return ActorSet{kind, index, index, ""}; };
  switch (e.kind) {
    case FaultKind::kCrash:
      if (ps_run)
        e.target = one(EndpointKind::kPs, ps);
      else if (pick < 0.45)
        e.target = one(EndpointKind::kServer, server);
      else if (pick < 0.9)
        e.target = one(EndpointKind::kJob, job);
      else
        e.target = ActorSet{EndpointKind::kScheduler, 0, -1, ""};
      // A scheduler must restart (nothing else could end the run); a server or a job need not.
      if (e.target.kind != EndpointKind::kScheduler && !ps_run &&
          permanence < r.permanent_probability()) {
        e.duration_s = 0;
      }
      break;
    case FaultKind::kSlow:
      e.target = ps_run ? one(EndpointKind::kPs, ps) : one(EndpointKind::kServer, server);
      e.factor = r.slow_factor();
      break;
    case FaultKind::kDisk:
      e.target = one(EndpointKind::kPs, ps);
      e.disk_full = pick < 0.5;
      break;
    case FaultKind::kPartition:
      e.target = one(EndpointKind::kServer, server);
      e.peer = ActorSet{EndpointKind::kScheduler, 0, -1, ""};
      break;
    default: {
      static const LinkSpec kLinks[] = {
          {EndpointKind::kScheduler, EndpointKind::kServer},
          {EndpointKind::kServer, EndpointKind::kJob},
          {EndpointKind::kJob, EndpointKind::kScheduler},
      };
      e.link = kLinks[std::min<int64_t>(2, static_cast<int64_t>(link_pick * 3))];
      e.probability = r.probability();
      e.delay_s = r.mean_delay_s();
    }
  }
  return e;
}

std::vector<FaultKind> RandomKinds(const config::RandomFaults& r, const FaultUniverse& u) {
  std::vector<FaultKind> kinds;
  for (int k : r.kinds()) kinds.push_back(FromConfig(static_cast<config::FaultKind>(k)));
  if (kinds.empty()) {
    if (u.ps_nodes > 0) return {FaultKind::kCrash, FaultKind::kSlow, FaultKind::kDisk};
    return {FaultKind::kCrash, FaultKind::kSlow, FaultKind::kDrop};
  }
  return kinds;
}

}  // namespace

std::string FaultEvent::Describe() const {
  std::string s = fmt::format("{} {}", FaultKindName(kind),
                              IsLinkFault(kind) ? link.ToString() : target.ToString());
  if (kind == FaultKind::kPartition) s += fmt::format(" | {}", peer.ToString());
  s += fmt::format(" @{:g}s", at_s);
  if (duration_s > 0)
    s += fmt::format(" {}+{:g}s", kind == FaultKind::kCrash ? "restart " : "", duration_s);
  if (kind == FaultKind::kSlow) s += fmt::format(" x{:g}", factor);
  if (kind == FaultKind::kDrop || kind == FaultKind::kDuplicate)
    s += fmt::format(" p={:g}", probability);
  if (kind == FaultKind::kDelay) s += fmt::format(" mean {:g}s", delay_s);
  if (kind == FaultKind::kDisk) s += disk_full ? " full" : " write errors";
  if (!cause.empty()) s += fmt::format(" ({})", cause);
  return s;
}

bool FaultPlan::HasLinkFaults() const {
  return std::any_of(events.begin(), events.end(), [](const FaultEvent& e) {
    return IsLinkFault(e.kind) || e.kind == FaultKind::kPartition;
  });
}

std::vector<int64_t> FaultPlan::ServersLostForGood(int64_t servers) const {
  std::vector<int64_t> lost;
  for (const FaultEvent& e : events) {
    if (e.kind != FaultKind::kCrash || e.duration_s > 0 || e.target.kind != EndpointKind::kServer)
      continue;
    for (int64_t s : e.target.IndicesAmong(servers)) lost.push_back(s);
  }
  std::sort(lost.begin(), lost.end());
  lost.erase(std::unique(lost.begin(), lost.end()), lost.end());
  return lost;
}

Status CheckFaults(const config::Faults& faults, const std::string& where) {
  // The ranges config.proto declares (a slow factor in [0.001, 1], times, probabilities), for a
  // block that did not come through ValidateConfig.
  RETURN_IF_ERROR(CheckFieldRanges(faults, where));
  for (int i = 0; i < faults.fault_size(); ++i) {
    FaultEvent e;
    RETURN_IF_ERROR(ToEvent(faults.fault(i), fmt::format("{}.fault[{}]", where, i), &e));
  }
  const config::RandomFaults& r = faults.random();
  if (r.count() < 0) return InvalidField(where + ".random.count", "must be >= 0");
  if (!(r.end_s() > r.start_s()) && r.count() > 0) {
    return InvalidField(where + ".random.end_s", "must be after start_s");
  }
  if (!(r.probability() >= 0 && r.probability() <= 1)) {
    return InvalidField(where + ".random.probability", "must lie in [0, 1]");
  }
  if (!(r.slow_factor() > 0)) return InvalidField(where + ".random.slow_factor", "must be > 0");
  if (!(r.permanent_probability() >= 0 && r.permanent_probability() <= 1)) {
    return InvalidField(where + ".random.permanent_probability", "must lie in [0, 1]");
  }
  if (faults.has_failure_model()) {
    RETURN_IF_ERROR(CheckFailureModel(faults.failure_model(), where + ".failure_model"));
  }
  if (faults.has_stragglers()) {
    RETURN_IF_ERROR(CheckStragglers(faults.stragglers(), where + ".stragglers"));
  }
  RETURN_IF_ERROR(CheckRecovery(faults, where));
  if (!(faults.report_grace_s() > 0)) return InvalidField(where + ".report_grace_s", "must be > 0");
  // troupe node processes beat every 0.05 s; a shorter run-side interval would time them out.
  if (!(faults.heartbeat_s() >= 0.05))
    return InvalidField(where + ".heartbeat_s", "must be >= 0.05");
  return Status::Ok();
}

Status BuildFaultPlan(const config::Faults& faults, uint64_t run_seed,
                      const FaultUniverse& universe, FaultPlan* out) {
  *out = FaultPlan{};
  RETURN_IF_ERROR(CheckFaults(faults, "faults"));
  out->report_grace_s = faults.report_grace_s();
  out->heartbeat_s = faults.heartbeat_s();
  for (int i = 0; i < faults.fault_size(); ++i) {
    FaultEvent e;
    const std::string where = fmt::format("faults.fault[{}]", i);
    (void)ToEvent(faults.fault(i), where, &e);  // checked above
    RETURN_IF_ERROR(CheckAgainstUniverse(e, universe, where));
    out->events.push_back(std::move(e));
  }
  const config::RandomFaults& r = faults.random();
  if (r.count() > 0) {
    // A stream of its own, so that faults never disturb the workload's draws.
    Rng rng((r.seed() != 0 ? r.seed() : run_seed) ^ 0x6661756c7473ull);
    const std::vector<FaultKind> kinds = RandomKinds(r, universe);
    for (int i = 0; i < r.count(); ++i) out->events.push_back(DrawFault(rng, r, kinds, universe));
  }
  if (faults.has_failure_model()) {
    RETURN_IF_ERROR(DrawFailures(faults.failure_model(), run_seed, universe, &out->events));
  }
  // The replayed failures join the drawn ones: the plan holds both.
  if (!faults.failure_trace().empty()) {
    if (Status s = ReadFailureTrace(faults.failure_trace(), universe, &out->events); !s.ok()) {
      return Status::InvalidInput("faults.failure_trace: " + s.message());
    }
  }
  // Slow episodes become slow faults, after every other kind: stragglers never move them.
  if (faults.has_stragglers()) {
    RETURN_IF_ERROR(PlanStragglers(faults.stragglers(), run_seed, universe, &out->events,
                                   &out->link_stretches));
  }
  std::stable_sort(out->events.begin(), out->events.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.at_s < b.at_s; });
  return Status::Ok();
}

Status InvalidField(const std::string& where, const std::string& why) {
  return Status::InvalidInput(where + ": " + why);
}

}  // namespace troupe
