#include "runtime/live_feed.hpp"

#include <algorithm>
#include <utility>

namespace troupe {

LiveFeed::LiveFeed(std::string kind, std::string name, std::vector<LiveServer> servers)
    : slots_(std::make_unique<ServerSlot[]>(servers.size())) {
  state_.kind = std::move(kind);
  state_.name = std::move(name);
  for (const LiveServer& s : servers) {
    state_.gpus_total += s.gpus;
    state_.cpus_total += s.cpus;
    state_.memory_gb_total += s.memory_gb;
  }
  state_.servers = std::move(servers);
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
    jcts_new_.push_back(job.jct_s);
  } else {
    return;  // unfinished, recorded as the run ends
  }
  ++ended_since_round_;
}

void LiveFeed::OnFault(const FaultRecord& fault) {
  std::lock_guard lock(mu_);
  state_.faults.push_back(fault);
}

void LiveFeed::SetFabric(std::vector<LiveLink> links) {
  std::lock_guard lock(mu_);
  state_.has_fabric = true;
  state_.fabric.links = static_cast<int64_t>(links.size());
  links_ = std::move(links);
}

void LiveFeed::OnLinks(const std::vector<LinkRecord>& links) {
  std::lock_guard lock(mu_);
  round_links_.assign(links.begin(), links.end());  // reuses the buffer: no allocation a round
}

// The latest round's busiest links; none when its round carried no traffic (its batch is older).
void LiveFeed::FillFabric(LiveSnapshot* s) const {
  if (!s->has_fabric || round_links_.empty() || round_links_.front().round < s->rounds - 1) return;
  std::vector<LiveLinkLoad>& hot = s->fabric.hot;
  for (const LinkRecord& r : round_links_) {
    if (r.link < 0 || static_cast<size_t>(r.link) >= links_.size()) continue;
    const LiveLink& link = links_[static_cast<size_t>(r.link)];
    const double seconds = r.end_s - r.start_s;
    const double capacity = link.capacity_bytes_per_s * seconds;
    hot.push_back(LiveLinkLoad{link.name, capacity > 0 ? r.bytes / capacity : 0, r.flows});
  }
  s->fabric.busy = static_cast<int64_t>(hot.size());
  // Stable: links of equal utilisation keep the topology's order (the batch's).
  std::stable_sort(hot.begin(), hot.end(), [](const LiveLinkLoad& a, const LiveLinkLoad& b) {
    return a.utilisation > b.utilisation;
  });
  if (hot.size() > kHotLinks) hot.resize(kHotLinks);
}

void LiveFeed::OnServerRound(int32_t index, int64_t round, int32_t gpus, double cpus,
                             double memory_gb) {
  if (index < 0 || static_cast<size_t>(index) >= state_.servers.size()) return;
  ServerSlot& slot = slots_[index];
  slot.gpus.store(gpus, std::memory_order_relaxed);
  slot.cpus.store(cpus, std::memory_order_relaxed);
  slot.memory_gb.store(memory_gb, std::memory_order_relaxed);
  slot.round.store(round, std::memory_order_release);
}

void LiveFeed::MakePs(int64_t steps_total, int32_t nodes) {
  std::lock_guard lock(mu_);
  state_.has_ps = true;
  state_.ps.steps_total = steps_total;
  ps_steps_.assign(static_cast<size_t>(std::max(nodes, 0)), 0);
}

void LiveFeed::OnPsStage(int32_t stage, double busy_s) {
  std::lock_guard lock(mu_);
  LivePs& ps = state_.ps;
  if (stage == 1) {
    ps.read_s += busy_s;
    ++ps.reader_reports;
  } else if (stage == 2) {
    ps.partition_s += busy_s;
    ++ps.partitioner_reports;
  }
}

void LiveFeed::OnPsShard(double busy_s, const TierCounts& counts) {
  std::lock_guard lock(mu_);
  state_.ps.ssd_s += busy_s;
  ++state_.ps.shard_reports;
  state_.ps.tiers += counts;
}

void LiveFeed::OnPsTrainer(int64_t step, int32_t node, double loss, double pull_s, double gpu_s,
                           double push_s, double allreduce_s) {
  std::lock_guard lock(mu_);
  LivePs& ps = state_.ps;
  ps.pull_s += pull_s;
  ps.gpu_s += gpu_s;
  ps.push_s += push_s;
  ps.allreduce_s += allreduce_s;
  ++ps.trainer_reports;
  ps.loss = loss;
  if (node >= 0 && static_cast<size_t>(node) < ps_steps_.size()) {
    ps_steps_[node] = std::max(ps_steps_[node], step + 1);
    ps.steps_done = *std::min_element(ps_steps_.begin(), ps_steps_.end());
  }
}

LiveSnapshot LiveFeed::Snapshot() const {
  std::lock_guard lock(mu_);
  // New JCTs are sorted and merged in: linear in the jobs so far, not n log n per snapshot.
  const size_t old_size = jcts_sorted_.size();
  std::sort(jcts_new_.begin(), jcts_new_.end());
  jcts_sorted_.insert(jcts_sorted_.end(), jcts_new_.begin(), jcts_new_.end());
  std::inplace_merge(jcts_sorted_.begin(), jcts_sorted_.begin() + old_size, jcts_sorted_.end());
  jcts_new_.clear();
  LiveSnapshot s = state_;
  s.jct_cdf = CdfOfSorted(jcts_sorted_, kCdfPoints);
  FillFabric(&s);
  // Servers that received no lease in the latest round hold nothing in it (one may already hold
  // the next round's leases: its holdings are newer, and shown).
  for (size_t i = 0; i < s.servers.size(); ++i) {
    const ServerSlot& slot = slots_[i];
    if (slot.round.load(std::memory_order_acquire) < s.rounds - 1) continue;
    s.servers[i].gpus_used = slot.gpus.load(std::memory_order_relaxed);
    s.servers[i].cpus_used = slot.cpus.load(std::memory_order_relaxed);
    s.servers[i].memory_gb_used = slot.memory_gb.load(std::memory_order_relaxed);
  }
  return s;
}

std::vector<std::pair<double, double>> CdfOfSorted(const std::vector<double>& sorted, int points) {
  std::vector<std::pair<double, double>> cdf;
  const size_t n = sorted.size();
  if (n == 0 || points < 2) return cdf;
  const size_t shown = std::min(n, static_cast<size_t>(points));
  for (size_t k = 0; k < shown; ++k) {
    // Evenly spaced ranks from the first job to the last.
    const size_t rank = shown == 1 ? n - 1 : k * (n - 1) / (shown - 1);
    cdf.emplace_back(sorted[rank], static_cast<double>(rank + 1) / static_cast<double>(n));
  }
  return cdf;
}

}  // namespace troupe
