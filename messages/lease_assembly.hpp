// LeaseAssembly: how a job puts its lease together from the servers' answers. The scheduler's
// RoundLeases reach every server of a job's lease; each answers the job with one LeaseGrant (a
// part, granted or refused). A gang job runs on all of its GPUs or not at all, so the lease runs
// only once every part has been heard, none was refused, and the granted GPUs are all the job's.
//
// Both kinds of job use it: the emulated job actor (actors/job_actor.cpp) and the agent job
// machine (agent/agent_job_machine.cpp). Plain code, no actor: the rules below are
// unit-tested on their own (tests/unit/lease_assembly_test.cpp).
//
// - A grant for a later lease (a later start) starts that lease over; one for an earlier lease
//   is stale and ignored.
// - A second grant from a server already heard (a duplicate fault) counts once.
// - Once the lease is marked ended (reported, lost), further grants of it are ignored.
// - The lease runs at the slowest granting server's speed (a `slow` fault: a straggler).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "messages/cluster_messages.hpp"

namespace troupe {

class LeaseAssembly {
 public:
  enum class Outcome { kAdded, kStale, kDuplicate, kEnded };

  // Takes one server's answer (the rvalue form takes its GPU ids without a copy).
  Outcome Add(const LeaseGrant& grant);
  Outcome Add(LeaseGrant&& grant);

  // Every part has been heard (granted or refused).
  bool complete() const { return static_cast<int32_t>(servers_seen_.size()) >= parts_expected_; }
  // Complete, none refused, and the granted GPUs are the job's `job_gpus`.
  bool Runnable(int32_t job_gpus) const;

  int64_t round() const { return round_; }
  double start_s() const { return start_s_; }
  double end_s() const { return end_s_; }
  double speed() const { return speed_; }
  // Exposed communication seconds per iteration over the fabric (LeaseGrant.network_s).
  double network_s() const { return network_s_; }
  bool refused() const { return refused_; }
  bool ended() const { return ended_; }
  // Who ordered the lease (the first grant's scheduler): a job reports there.
  const scheduler_actor& scheduler() const { return scheduler_; }
  const std::vector<LeasePart>& parts() const { return parts_; }
  // The granted GPUs, CPUs and memory summed over the parts.
  int32_t gpus() const;
  double cpus() const;
  double memory_gb() const;

  // Starts the lease at start_s over with nothing heard yet (a lease a job learns of from a query
  // or a loss before any grant came). Add calls it for a grant of a later lease.
  void StartOver(int64_t round, double start_s, double end_s, int32_t parts,
                 scheduler_actor scheduler);
  // The lease stood into the round that starts at start_s (LeaseLost.rounds_stood): the same
  // parts, every one heard, running from start_s to end_s and not ended.
  void Restand(int64_t round, double start_s, double end_s, std::vector<LeasePart> parts);
  // Where the lease's report goes from now on (a restarted scheduler asked for it).
  void set_scheduler(scheduler_actor scheduler) { scheduler_ = std::move(scheduler); }

  // The parts, moved out (the lease is over and its report carries them).
  std::vector<LeasePart> TakeParts() { return std::move(parts_); }
  // No further grant of this lease is taken.
  void MarkEnded() { ended_ = true; }

 private:
  template <class Grant>
  Outcome AddGrant(Grant&& grant);

  int64_t round_ = -1;
  double start_s_ = -1;
  double end_s_ = 0;
  int32_t parts_expected_ = 1;
  std::vector<int32_t> servers_seen_;
  std::vector<LeasePart> parts_;
  bool refused_ = false;
  bool ended_ = false;
  double speed_ = 1;
  double network_s_ = 0;
  scheduler_actor scheduler_;
};

}  // namespace troupe
