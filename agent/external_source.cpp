#include "agent/external_source.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "base/seconds.hpp"
#include "base/status_macros.hpp"

namespace troupe::agent_wire {
namespace {

// Refusals logged one by one; past this many only the count at the end says how many.
constexpr int64_t kRefusalsLogged = 10;

void FillJob(const scheduling::SchedJob& j, external::Job* out) {
  out->set_id(j.id);
  out->set_arrival_s(j.arrival_s);
  out->set_gpus(j.gpus);
  out->set_iter_time_s(j.iter_time_s);
  out->set_iterations_total(j.iterations_total);
  out->set_iterations_left(j.iterations_left);
  out->set_attained_gpu_s(j.attained_gpu_s);
  out->set_last_served_s(j.last_served_s);
  out->set_starving(j.starving);
  out->set_ideal_cpus_per_gpu(j.ideal_cpus_per_gpu);
  out->set_ideal_memory_gb_per_gpu(j.ideal_memory_gb_per_gpu);
  out->set_speedup_at_ideal(j.speedup_at_ideal);
  out->set_expected_speedup(j.expected_speedup);
}

void FillSensitivity(const scheduling::SchedJob& j, external::JobSensitivity* out) {
  out->set_job_id(j.id);
  if (j.type_speed) out->mutable_type_speed()->Add(j.type_speed->begin(), j.type_speed->end());
  external::Sensitivity* s = out->mutable_matrix();
  if (!j.sensitivity) return;
  s->mutable_cpu_grid()->Add(j.sensitivity->cpu_grid.begin(), j.sensitivity->cpu_grid.end());
  s->mutable_memory_grid()->Add(j.sensitivity->memory_grid.begin(),
                                j.sensitivity->memory_grid.end());
  s->mutable_values()->Add(j.sensitivity->values.begin(), j.sensitivity->values.end());
}

std::vector<scheduling::JobPlacement> PlacementsOf(const external::Allocation& allocation) {
  std::vector<scheduling::JobPlacement> placements;
  placements.reserve(allocation.placements_size());
  for (const external::Placement& p : allocation.placements()) {
    scheduling::JobPlacement placement{p.job_id(), {}};
    for (const external::Part& part : p.parts()) {
      placement.parts.push_back({part.server(), part.gpus(), part.cpus(), part.memory_gb()});
    }
    placements.push_back(std::move(placement));
  }
  return placements;
}

}  // namespace

external::Envelope ExternalSource::RoundStateOf(
    const scheduling::RoundContext& round, const std::vector<const scheduling::SchedJob*>& offered,
    const scheduling::ClusterLedger& ledger) {
  external::Envelope envelope;
  external::RoundState* state = envelope.mutable_round_state();
  state->set_ask(ask_);
  state->set_round(round.round);
  state->set_now_s(round.now_s);
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    const scheduling::ServerShape& free = ledger.free(s);
    state->add_free_gpus(free.gpus);
    state->add_free_cpus(free.cpus);
    state->add_free_memory_gb(free.memory_gb);
  }
  absl::flat_hash_map<int64_t, std::shared_ptr<const SensitivityMatrix>> sent;
  sent.reserve(offered.size());
  state->mutable_jobs()->Reserve(static_cast<int>(offered.size()));
  for (const scheduling::SchedJob* job : offered) {
    auto before = sent_.find(job->id);
    const bool known = before != sent_.end() && before->second == job->sensitivity;
    FillJob(*job, state->add_jobs());
    if (!known) FillSensitivity(*job, state->add_sensitivities());
    sent.emplace(job->id, job->sensitivity);
  }
  sent_ = std::move(sent);
  return envelope;
}

Status ExternalSource::AwaitAllocation(std::vector<scheduling::JobPlacement>* proposed) {
  const double deadline = SteadyWallSeconds() + answer_timeout_s_;
  for (;;) {
    external::Envelope in;
    RETURN_IF_ERROR(link_->Receive(std::max(0.0, deadline - SteadyWallSeconds()), &in));
    if (!in.has_allocation()) {
      return Status::InvalidInput("expected an allocation, got another frame (body number " +
                                  std::to_string(in.body_case()) + ")");
    }
    const int64_t ask = in.allocation().ask();
    if (ask == ask_) {
      *proposed = PlacementsOf(in.allocation());
      return Status::Ok();
    }
    if (ask > ask_) {
      return Status::InvalidInput("an allocation for ask " + std::to_string(ask) +
                                  ", which was not asked yet (this is ask " + std::to_string(ask_) +
                                  ")");
    }
    // The answer to an earlier ask, too late: that round was placed by the fallback already.
  }
}

Status ExternalSource::Propose(const scheduling::RoundContext& round,
                               const std::vector<const scheduling::SchedJob*>& offered,
                               const scheduling::ClusterLedger& ledger,
                               std::vector<scheduling::JobPlacement>* proposed) {
  ++ask_;
  ++counters_.asks;
  if (!link_->connected()) return Status::IoError("the external scheduler is not connected");
  const double start = SteadyWallSeconds();
  Status status = link_->Send(RoundStateOf(round, offered, ledger));
  if (status.ok()) status = AwaitAllocation(proposed);
  counters_.wait_s += SteadyWallSeconds() - start;
  return status;
}

void ExternalSource::Verdict(const Status& verdict, std::string_view fallback) {
  if (verdict.ok()) {
    ++counters_.accepted;
    return;
  }
  if (++counters_.refused == 1) counters_.first_refusal = verdict.message();
  if (counters_.refused <= kRefusalsLogged) {
    spdlog::warn("external scheduler: ask {} refused, placed by {}: {}", ask_, fallback,
                 verdict.message());
  }
  if (!link_->connected()) return;
  external::Envelope refusal;
  refusal.mutable_refusal()->set_ask(ask_);
  refusal.mutable_refusal()->set_reason(verdict.message());
  refusal.mutable_refusal()->set_fallback(std::string(fallback));
  (void)link_->Send(refusal);
}

std::string ExternalSource::Report() const {
  const ExternalCounters& c = counters_;
  char wait[64];
  std::snprintf(wait, sizeof(wait), "%.1f", c.asks > 0 ? 1e6 * c.wait_s / c.asks : 0.0);
  std::string line = "external scheduler: " + std::to_string(c.asks) + " asks, " +
                     std::to_string(c.accepted) + " accepted, " + std::to_string(c.refused) +
                     " refused; " + wait + " us per ask waiting for the answer";
  if (c.refused > 0) line += "; first refusal: " + c.first_refusal;
  return line;
}

}  // namespace troupe::agent_wire
