#include "actors/oasis/oasis_scheduler_actor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "actors/oasis/oasis_actors.hpp"
#include "actors/oasis/oasis_nic.hpp"
#include "runtime/counted_send.hpp"
#include "scheduling/oasis/baselines.hpp"

namespace troupe {
namespace {

namespace so = scheduling::oasis;
using OasisSelf = caf::stateful_actor<OasisSchedulerState>;
constexpr double kLeaseSlack = 1e-6;  // as the workers': later than this is late

void Violation(OasisSelf* self, int t, int job, const std::string& what) {
  self->state.records.violations.push_back("slot " + std::to_string(t) + " job " +
                                           std::to_string(job) + ": " + what);
}

// Offers slot t's arrivals to the policy; spawns a job actor per admitted job.
void Arrivals(OasisSelf* self, int t) {
  OasisSchedulerState& st = self->state;
  while (st.next_arrival < st.jobs.size() && st.jobs[st.next_arrival].arrival <= t) {
    const int i = static_cast<int>(st.next_arrival++);
    OasisJobRow& row = st.records.jobs[i];
    if (st.jobs[i].arrival < t) {
      row.reason = "arrives outside [0, T) or out of order";
      continue;
    }
    st.progress[i].arrived = true;
    const so::Admission a = st.policy->Arrive(i, st.progress);
    st.progress[i].admitted = a.admitted;
    row.admitted = a.admitted;
    row.reason = a.admitted ? "" : (a.reason.empty() ? "rejected" : a.reason);
    row.planned_end = a.planned_end;
    if (!a.admitted) continue;
    st.job_actors[i] = self->home_system().spawn(
        OasisJobActor, st.jobs[i], int64_t{i}, caf::actor{self}, st.nics,
        std::shared_ptr<const OasisFabric>(st.fabric), st.clock, st.telemetry);
  }
}

// OASiS's prices of slot t, mean over the machines of each kind.
void Prices(const so::OnlinePolicy& policy, const so::Cluster& cluster, int t, OasisSlotRow* row) {
  const auto* oasis = dynamic_cast<const so::OasisPolicy*>(&policy);
  if (oasis == nullptr) return;
  const so::PriceBook& book = oasis->scheduler().prices();
  for (int r = 0; r < so::kResources; ++r) {
    const auto res = static_cast<so::Resource>(r);
    for (size_t h = 0; h < cluster.workers.size(); ++h) {
      row->worker_price[r] +=
          book.worker_price(t, static_cast<int>(h), res) / cluster.workers.size();
    }
    for (size_t k = 0; k < cluster.ps.size(); ++k) {
      row->ps_price[r] += book.ps_price(t, static_cast<int>(k), res) / cluster.ps.size();
    }
  }
}

OasisLease MakeLease(int64_t job, const so::SlotPlan& plan, double slot_s, double begin_s) {
  OasisLease lease{job, plan.slot, plan.slot * slot_s, (plan.slot + 1) * slot_s, {}, {}, begin_s};
  for (const so::Placement& p : plan.workers)
    lease.worker_machines.insert(lease.worker_machines.end(), p.count, p.machine);
  for (const so::Placement& p : plan.ps)
    lease.ps_machines.insert(lease.ps_machines.end(), p.count, p.machine);
  return lease;
}

void Finish(OasisSelf* self) {
  OasisSchedulerState& st = self->state;
  if (const auto* oasis = dynamic_cast<const so::OasisPolicy*>(st.policy.get())) {
    st.records.released_worker_slots = oasis->released_worker_slots();
  }
  for (const caf::actor& job : st.job_actors) {
    if (job) self->send_exit(job, caf::exit_reason::user_shutdown);
  }
  for (const caf::actor& nic : st.nics) self->send_exit(nic, caf::exit_reason::user_shutdown);
  if (st.fabric) {
    for (const caf::actor& d : st.fabric->domains) {
      self->send_exit(d, caf::exit_reason::user_shutdown);
    }
  }
  st.handover->set_value(std::move(st.records));
  st.telemetry->done.store(true);
  self->quit();
}

void RunSlot(OasisSelf* self, int t) {
  OasisSchedulerState& st = self->state;
  if (t >= st.cluster.slots) {
    Finish(self);
    return;
  }
  st.telemetry->rounds.store(t, std::memory_order_relaxed);
  st.telemetry->virtual_s.store(t * st.cluster.slot_s, std::memory_order_relaxed);
  Arrivals(self, t);
  OasisSlotRow row;
  row.slot = t;
  for (const so::JobProgress& p : st.progress) row.active += p.active();
  so::SlotUsage usage(st.cluster);
  std::vector<bool> seen(st.jobs.size(), false);
  // Workers begin when the slot starts, or when the last parameters of the slot before came back
  // if that was later (beyond rounding): virtual times carried in messages, the same in either
  // mode.
  const double start_s = t * st.cluster.slot_s;
  const double begin_s =
      st.busy_until_s - start_s > kLeaseSlack * std::max(1.0, start_s) ? st.busy_until_s : start_s;
  for (const so::JobSlot& js : st.policy->Slot(t, st.progress)) {
    const bool known = js.job >= 0 && js.job < static_cast<int>(st.jobs.size());
    std::string e = !known || !st.progress[js.job].active() ? "job not active"
                    : seen[js.job]                          ? "job allocated twice"
                                   : usage.Add(st.jobs[js.job], t, js.plan);
    if (!e.empty()) {
      Violation(self, t, js.job, "allocation dropped: " + e);
      continue;
    }
    seen[js.job] = true;
    const int workers = js.plan.WorkerCount();
    row.workers += workers;
    row.ps += js.plan.PsCount();
    st.progress[js.job].done += workers;
    st.records.jobs[js.job].worker_slots += workers;
    ++st.pending;
    Tell(self, st.telemetry, st.job_actors[js.job],
         MakeLease(js.job, js.plan, st.cluster.slot_s, begin_s));
  }
  row.worker_use = usage.WorkerUse();
  row.ps_use = usage.PsUse();
  Prices(*st.policy, st.cluster, t, &row);
  st.records.slots.push_back(row);
  TellAt(self, st.telemetry, st.clock, caf::actor{self}, (t + 1) * st.cluster.slot_s,
         OasisTick{t + 1});
}

// The job's worker-slots reached W_i but mini-batches are left (its NICs were slower than the
// model assumes): it is behind its plan, and its remaining work counts again in worker-slots.
void Behind(OasisSelf* self, const OasisSlotReport& r) {
  OasisSchedulerState& st = self->state;
  OasisJobRow& row = st.records.jobs[r.job];
  so::JobProgress& p = st.progress[r.job];
  const double total = p.job.Minibatches();
  const double left = std::max(0.0, total - r.trained);
  if (!row.behind) {
    row.behind = true;
    row.model_end = r.slot;
    row.model_utility = p.job.utility.Value(r.slot - p.job.arrival);
    char why[200];
    std::snprintf(why, sizeof why,
                  "behind its plan: %.0f of %.0f mini-batches left at the end of slot %d, when the "
                  "model has it finished (PS transfers slower than it assumes)",
                  left, total, r.slot);
    row.reason = why;
  }
  const double per_worker_slot = st.cluster.slot_s / p.job.StepSeconds();
  p.work = p.done + std::max(1, static_cast<int>(std::ceil(left / per_worker_slot)));
}

void Report(OasisSelf* self, const OasisSlotReport& r) {
  OasisSchedulerState& st = self->state;
  OasisJobRow& row = st.records.jobs[r.job];
  so::JobProgress& p = st.progress[r.job];
  row.trained = r.trained;
  row.pieces = r.pieces;
  st.busy_until_s = std::max(st.busy_until_s, r.finish_s);
  const bool model_done = p.done >= p.work;
  if (model_done && !r.finished) Behind(self, r);
  if (!model_done && r.finished && !row.behind) {
    Violation(self, r.slot, static_cast<int>(r.job),
              "emulated job finished before its worker-slots reached W");
  }
  if (r.finished && p.completion < 0) {
    p.completion = r.slot;
    row.end_slot = r.slot;
    row.finish_s = r.finish_s;
    row.utility = p.job.utility.Value(r.slot - p.job.arrival);
    if (!row.behind) {
      row.model_end = r.slot;
      row.model_utility = row.utility;
    }
    st.telemetry->jobs_finished.fetch_add(1, std::memory_order_relaxed);
    st.policy->Finished(static_cast<int>(r.job), r.slot);
  }
  if (--st.pending == 0 && st.waiting_tick >= 0) {
    const int t = st.waiting_tick;
    st.waiting_tick = -1;
    RunSlot(self, t);
  }
}

}  // namespace

caf::behavior OasisSchedulerActor(OasisSelf* self, so::Cluster cluster, std::vector<so::Job> jobs,
                                  std::shared_ptr<so::OnlinePolicy> policy,
                                  std::shared_ptr<std::promise<OasisRecords>> handover,
                                  OasisLinks links, RunClock clock, Telemetry* telemetry) {
  OasisSchedulerState& st = self->state;
  st.cluster = std::move(cluster);
  st.jobs = std::move(jobs);
  st.policy = std::move(policy);
  st.handover = std::move(handover);
  st.clock = clock;
  st.telemetry = telemetry;
  st.progress.resize(st.jobs.size());
  st.records.jobs.resize(st.jobs.size());
  st.job_actors.resize(st.jobs.size());
  if (links.fabric) {
    st.fabric = std::make_shared<OasisFabric>(
        *links.fabric, static_cast<int32_t>(st.cluster.workers.size()), links.delay_s);
    SpawnOasisFabric(self->home_system(), st.fabric, clock, telemetry);
  } else {
    for (const so::Machine& m : st.cluster.ps) {
      const double gbps =
          m.capacity[static_cast<int>(so::Resource::kBandwidth)] / links.ps_slowdown;
      st.nics.push_back(
          self->home_system().spawn(OasisNicActor, gbps, links.delay_s, clock, telemetry));
    }
  }
  for (size_t i = 0; i < st.jobs.size(); ++i) {
    st.progress[i].job = st.jobs[i];
    st.progress[i].work = st.jobs[i].WorkerSlots(st.cluster.slot_s);
    st.records.jobs[i].id = st.jobs[i].id;
    st.records.jobs[i].arrival = st.jobs[i].arrival;
  }
  Tell(self, telemetry, caf::actor{self}, OasisTick{0});
  return {
      [=](const OasisTick& tick) {
        if (self->state.pending > 0) {
          self->state.waiting_tick = tick.slot;
          return;
        }
        RunSlot(self, tick.slot);
      },
      [=](const OasisSlotReport& r) { Report(self, r); },
  };
}

}  // namespace troupe
