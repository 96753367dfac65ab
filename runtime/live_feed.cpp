#include "runtime/live_feed.hpp"

#include <utility>

namespace troupe {

LiveFeed::LiveFeed(std::string kind, std::string name, std::vector<LiveServer> servers) {
  state_.kind = std::move(kind);
  state_.name = std::move(name);
  for (const LiveServer& s : servers) {
    state_.gpus_total += s.gpus;
    state_.cpus_total += s.cpus;
    state_.memory_gb_total += s.memory_gb;
  }
  state_.servers = std::move(servers);
  server_round_.assign(state_.servers.size(), -1);
}

void LiveFeed::OnRound(const RoundRecord& round) {
  std::lock_guard lock(mu_);
  LiveSnapshot& s = state_;
  s.rounds = round.round + 1;
  s.virtual_s = round.start_s;
  s.jobs_queued = round.jobs_queued;
  s.jobs_running = round.jobs_running;
  // Jobs the scheduler knew at the round's start: those it placed or queued, and those that had
  // ended before it (the round's own endings are recorded before its round record).
  const int64_t ended = s.jobs_finished + s.jobs_failed;
  s.jobs_arrived = round.jobs_queued + round.jobs_running + ended - ended_since_round_;
  ended_since_round_ = 0;
  s.latest = LiveRoundPoint{round.start_s,        round.gpus_allocated,
                            round.cpus_allocated, round.memory_gb_allocated,
                            round.jobs_running,   round.jobs_queued};
  if (round.round % static_cast<int64_t>(timeline_stride_) == 0) {
    s.timeline.push_back(s.latest);
    if (s.timeline.size() >= kMaxTimeline) Thin();
  }
  // Servers that received no lease this round hold nothing in it (a server may already hold
  // the next round's leases: its record is newer).
  for (size_t i = 0; i < s.servers.size(); ++i) {
    if (server_round_[i] >= round.round) continue;
    s.servers[i].gpus_used = 0;
    s.servers[i].cpus_used = s.servers[i].memory_gb_used = 0;
  }
}

// Keeps every other point and doubles the stride: the timeline spans the whole run in bounded
// space.
void LiveFeed::Thin() {
  std::vector<LiveRoundPoint>& t = state_.timeline;
  size_t kept = 0;
  for (size_t i = 0; i < t.size(); i += 2) t[kept++] = t[i];
  t.resize(kept);
  timeline_stride_ *= 2;
}

void LiveFeed::OnJob(const JobRecord& job) {
  std::lock_guard lock(mu_);
  if (!job.failure.empty()) {
    ++state_.jobs_failed;
  } else if (job.end_s >= 0) {
    ++state_.jobs_finished;
    if (job.measured) ++state_.measured_finished;
    state_.jcts_s.push_back(job.jct_s);
  } else {
    return;  // unfinished, recorded as the run ends
  }
  ++ended_since_round_;
}

void LiveFeed::OnFault(const FaultRecord& fault) {
  std::lock_guard lock(mu_);
  state_.faults.push_back(fault);
}

void LiveFeed::OnServerRound(int32_t index, int64_t round, int32_t gpus, double cpus,
                             double memory_gb) {
  std::lock_guard lock(mu_);
  if (index < 0 || static_cast<size_t>(index) >= state_.servers.size()) return;
  LiveServer& s = state_.servers[index];
  s.gpus_used = gpus;
  s.cpus_used = cpus;
  s.memory_gb_used = memory_gb;
  server_round_[index] = round;
}

LiveSnapshot LiveFeed::Snapshot() const {
  std::lock_guard lock(mu_);
  return state_;
}

}  // namespace troupe
