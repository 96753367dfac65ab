// A cluster emulated around the round engine (scheduling/cluster_scheduler.hpp) for its tests:
// RecordingOutput keeps every decision, and EmulatedCluster plays the workload, the servers and
// the jobs as the actors would — arrivals handed over at a round's start, each granted job
// running its round at one iteration per iter_time_s and reporting after the round's timer.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduling/cluster_scheduler.hpp"
#include "scheduling/lease_credit.hpp"

namespace troupe::scheduling::testing {

// Every decision, as a line of text in the order made (the determinism tests compare them), and
// the ones a test reads, as data.
class RecordingOutput final : public SchedulerOutput {
 public:
  struct Lost {
    int64_t job_id, round;
    int32_t server;
  };

  void SpawnJob(const JobRecord& r) override {
    Log("spawn " + std::to_string(r.job_id));
    spawned.push_back(r.job_id);
  }
  void LeaseRound(int32_t server, ServerRound&& round) override {
    std::string line = "lease s" + std::to_string(server) + " r" + std::to_string(round.round);
    for (const Grant& g : round.grants) {
      line += " g" + std::to_string(g.job_id) + ":" + std::to_string(g.gpus) + "/" +
              std::to_string(g.rounds_stood);
    }
    for (const StandingPart& p : round.standing) line += " s" + std::to_string(p.job_id);
    Log(line);
    leases.emplace_back(server, std::move(round));
  }
  void LoseLease(int64_t job_id, int64_t round, double, int32_t server) override {
    Log("lost " + std::to_string(job_id));
    lost.push_back({job_id, round, server});
  }
  void LoseLeaseAfterStanding(int64_t job_id, int64_t round, double, int32_t server,
                              int32_t rounds_stood, bool stood) override {
    Log("lost " + std::to_string(job_id) + " after " + std::to_string(rounds_stood) +
        (stood ? " stood" : ""));
    lost.push_back({job_id, round, server});
  }
  void QueryProgress(int64_t job_id, int64_t, double) override {
    Log("query " + std::to_string(job_id));
    queried.push_back(job_id);
  }
  void JobEnded(const JobRecord& r, bool stop_actor) override {
    Log("ended " + std::to_string(r.job_id) + " at " + std::to_string(r.end_s) + " " + r.failure +
        (stop_actor ? " stop" : ""));
    ended.push_back(r);
  }
  void RecordJob(const JobRecord& r) override {
    Log("record " + std::to_string(r.job_id));
    unfinished.push_back(r);
  }
  void RecordRound(const RoundRecord& r) override {
    Log("round " + std::to_string(r.round) + " gpus " + std::to_string(r.gpus_allocated));
    rounds.push_back(r);
  }
  void RecordLeases(LeaseBatch&& batch) override { lease_logs.push_back(std::move(batch)); }
  void RecordLinks(LinkBatch&& batch) override { link_logs.push_back(std::move(batch)); }
  void RecordJobNetwork(JobNetworkBatch&& batch) override { job_network = std::move(batch); }
  void WakeAt(double at_s) override {
    Log("wake " + std::to_string(at_s));
    wake_at = at_s;
  }
  void PlanAtInstantEnd(double start_s) override {
    Log("plan later " + std::to_string(start_s));
    deferred_plan = start_s;
  }
  void EndRoundAt(int64_t round, double at_s) override {
    Log("timer " + std::to_string(round));
    round_end = std::make_pair(round, at_s);
  }
  void GraceAfter(int64_t round, double delay_s) override {
    Log("grace " + std::to_string(round));
    grace = std::make_pair(round, delay_s);
  }
  void StartRound(double start_s) override { start_at = start_s; }
  void EndRun(RunEnd&& end, const std::vector<int64_t>& with_actors) override {
    Log("end " + end.reason);
    run_end = std::move(end);
    actors_at_end = with_actors;
  }

  // Job ids granted this round, in the order the servers heard.
  std::vector<int64_t> Granted() const {
    std::vector<int64_t> ids;
    for (const auto& [server, round] : leases) {
      for (const Grant& g : round.grants) ids.push_back(g.job_id);
    }
    return ids;
  }

  std::vector<std::string> log;
  std::vector<std::pair<int32_t, ServerRound>> leases;  // the round's (emptied as it starts)
  std::vector<int64_t> spawned, queried, actors_at_end;
  std::vector<Lost> lost;
  std::vector<JobRecord> ended, unfinished;
  std::vector<RoundRecord> rounds;
  std::vector<LeaseBatch> lease_logs;
  std::vector<LinkBatch> link_logs;
  JobNetworkBatch job_network;
  std::optional<double> wake_at, start_at;
  std::optional<double> deferred_plan;  // PlanAtInstantEnd's
  std::optional<std::pair<int64_t, double>> round_end, grace;
  std::optional<RunEnd> run_end;

 private:
  void Log(std::string line) { log.push_back(std::move(line)); }
};

// Servers of `gpus` GPUs, 3 CPUs and 62.5 GB a GPU (the default experiment's).
inline std::vector<ServerShape> Servers(int count, int32_t gpus) {
  return std::vector<ServerShape>(count, ServerShape{gpus, 3.0 * gpus, 62.5 * gpus, 0});
}

class EmulatedCluster {
 public:
  // A job as its actor keeps it: iterations left and the rate its last report offered.
  struct JobAccount {
    int64_t left = 0;
    double iter_time_s = 1;
    int32_t gpus = 1;
    int64_t offer = -1;
    double network_s = 0;  // this round's grant's (with a fabric)
  };

  EmulatedCluster(ClusterSchedulerOptions options, std::vector<ServerShape> servers,
                  bool keeps_failures = false)
      : options_(options),
        engine_(options, ClusterSetup{std::move(servers), false, keeps_failures, false}, &out) {}

  void Submit(int64_t id, int32_t gpus, int64_t iterations, double arrival_s,
              double iter_time_s = 1, JobTraffic traffic = {}) {
    Arrival a;
    a.spec.job_id = id;
    a.spec.model = "model";
    a.spec.gpus = gpus;
    a.spec.iterations = iterations;
    a.spec.arrival_s = arrival_s;
    a.iter_time_s = iter_time_s;
    a.traffic = traffic;
    pending_.push_back(std::move(a));
    std::stable_sort(pending_.begin(), pending_.end(), [](const Arrival& x, const Arrival& y) {
      return x.spec.arrival_s < y.spec.arrival_s;
    });
    jobs[id] = JobAccount{iterations, iter_time_s, gpus, -1};
  }

  // Starts the round at start_s: the jobs arrived by then are handed over, and it is planned.
  void StartAt(double start_s) {
    out.leases.clear();
    out.round_end.reset();
    out.start_at.reset();
    out.wake_at.reset();
    out.deferred_plan.reset();
    lost_this_round_.clear();
    if (engine_.BeginRound(start_s) != ClusterScheduler::RoundStart::kPullArrivals) return;
    std::vector<Arrival> batch;
    while (!pending_.empty() && pending_.front().spec.arrival_s <= start_s) {
      batch.push_back(std::move(pending_.front()));
      pending_.erase(pending_.begin());
    }
    engine_.Admit(batch, pending_.empty() ? -1 : pending_.front().spec.arrival_s);
    engine_.PlanRound(start_s);
    round_open_ = out.round_end.has_value();
  }

  // The jobs hear their grants, the round's timer fires, and every job the engine awaits
  // reports (in job order).
  void CloseRound() {
    ASSERT_TRUE(out.round_end.has_value());
    round_open_ = false;
    const auto [round, end_s] = *out.round_end;
    std::map<int64_t, int32_t> gpus_granted;
    for (const auto& [server, leases] : out.leases) {
      for (const Grant& g : leases.grants) {
        JobAccount& job = jobs[g.job_id];
        if (gpus_granted[g.job_id] == 0 && g.rounds_stood > 0 && job.offer >= 0) {
          job.left -= std::min(job.left, job.offer * g.rounds_stood);
        }
        gpus_granted[g.job_id] += g.gpus;
        job.network_s = g.network_s;
      }
    }
    engine_.OnRoundTimer();
    for (auto& [id, job] : jobs) {
      if (!engine_.Awaited(id) || down_.contains(id)) continue;
      engine_.OnProgress(ReportOf(id, job, round, end_s, gpus_granted[id]));
    }
  }

  // Runs rounds until the run ends (or `rounds` rounds were started): from 0, or from where the
  // engine last said the next round starts.
  void Run(int rounds = 1000) {
    if (round_open_) CloseRound();  // a round StartAt began
    if (!out.start_at && !out.wake_at) out.start_at = 0;
    for (int i = 0; i < rounds && !out.run_end; ++i) {
      const std::optional<double> next = out.start_at ? out.start_at : out.wake_at;
      if (!next) break;
      StartAt(*next);
      if (out.round_end && !out.run_end) CloseRound();
    }
  }

  // The round's lease of the job lost a server: its report says it did not run.
  void LoseLeaseOf(int64_t job_id) { lost_this_round_.insert(job_id); }
  // The job's actor is down: it reports nothing until respawned.
  void SetDown(int64_t job_id, bool down) {
    if (down) {
      down_.insert(job_id);
    } else {
      down_.erase(job_id);
    }
  }

  ClusterScheduler& engine() { return engine_; }

  RecordingOutput out;
  std::map<int64_t, JobAccount> jobs;

 private:
  JobProgress ReportOf(int64_t id, JobAccount& job, int64_t round, double end_s, int32_t gpus) {
    JobProgress p;
    p.job_id = id;
    p.round = round;
    p.lease_start_s = end_s - options_.round_s;
    p.iterations_left = job.left;
    job.offer = -1;
    if (gpus < job.gpus || lost_this_round_.contains(id)) return p;  // a gang runs whole or not
    p.ran = true;
    p.gpus = gpus;
    // As a job counts them (a standing lease keeps the network_s of its last grant).
    const int64_t rate = IterationsIn(options_.round_s, job.iter_time_s, 1, job.network_s);
    p.iterations_done = std::min(rate, job.left);
    job.left -= p.iterations_done;
    p.iterations_left = job.left;
    p.finished = job.left == 0;
    p.standing_iterations = rate;
    job.offer = rate;
    return p;
  }

  ClusterSchedulerOptions options_;
  std::vector<Arrival> pending_;
  std::set<int64_t> lost_this_round_, down_;
  bool round_open_ = false;  // StartAt planned a round CloseRound has not closed
  ClusterScheduler engine_;
};

// FIFO with proportional shares and 300 s rounds: the engine's plainest run.
// GPUs granted on each server by the leases heard from index `from` on.
inline std::map<int32_t, int32_t> GpusByServer(const RecordingOutput& out, size_t from = 0) {
  std::map<int32_t, int32_t> gpus;
  for (size_t i = from; i < out.leases.size(); ++i) {
    for (const Grant& g : out.leases[i].second.grants) gpus[out.leases[i].first] += g.gpus;
  }
  return gpus;
}

inline ClusterSchedulerOptions Fifo() {
  ClusterSchedulerOptions o;
  o.policy = "fifo";
  o.mechanism = "proportional";
  o.round_s = 300;
  return o;
}

// The record of a job that ended (finished or failed), or null.
inline const JobRecord* EndedRecord(const RecordingOutput& out, int64_t job_id) {
  for (const JobRecord& r : out.ended) {
    if (r.job_id == job_id) return &r;
  }
  return nullptr;
}

}  // namespace troupe::scheduling::testing
