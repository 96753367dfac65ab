// The live feed: what a run being watched (`troupe run --serve`) tells its viewer as it goes.
//
// Actors add to it as they record (the metrics recorder: rounds, jobs, faults and, on a fabric,
// links; each server: what it holds this round), from any thread: one mutex guards the recorder's
// part, and each server writes its own slot of relaxed atomics (the hottest path: every server,
// every round). The run's driver takes a snapshot of it a few times a wall second and hands it to
// a LiveSink (the web view, live/). A run that is not watched has no feed (Telemetry::live is null)
// and pays nothing but a null test per record. The feed only reads records; it never decides
// anything, so results do not change.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "messages/records.hpp"
#include "messages/tier_counts.hpp"

namespace troupe {

// One server as the view draws it: capacity and what its leases of the latest round hold.
struct LiveServer {
  std::string name;
  int32_t gpus = 0;
  double cpus = 0, memory_gb = 0;
  int32_t gpus_used = 0;
  double cpus_used = 0, memory_gb_used = 0;
};

// Totals of one round, kept as the run's timeline (at most kMaxTimeline points, thinned evenly).
struct LiveRoundPoint {
  double start_s = 0;
  int32_t gpus = 0;
  double cpus = 0, memory_gb = 0;
  int32_t running = 0, queued = 0;
};

// A parameter-server run: its steps, the time each stage took, and what each tier served.
struct LivePs {
  int64_t steps_total = 0;  // paramserver.batches
  int64_t steps_done = 0;   // steps every node has finished
  double loss = 0;          // the latest finished step's loss
  // Modelled seconds, summed over nodes (shards) and steps: read (stage 1), partition (2), the
  // shard's SSD-PS work (3) and the trainer's pull, GPU, push and all-reduce (4); with how many
  // reports each sums.
  double read_s = 0, partition_s = 0, ssd_s = 0, pull_s = 0, gpu_s = 0, push_s = 0, allreduce_s = 0;
  int64_t reader_reports = 0, partitioner_reports = 0, shard_reports = 0, trainer_reports = 0;
  TierCounts tiers;  // every shard's every step
};

// A run on a fabric: its links, and those that carried traffic in the latest round.
struct LiveLink {
  std::string name;  // "server3.up", "rack1.down" (fabric/topology.hpp)
  double capacity_bytes_per_s = 0;
};
struct LiveLinkLoad {
  std::string name;
  double utilisation = 0;  // bytes carried over capacity x the round's length, as links.csv
  int32_t flows = 0;
};
struct LiveFabric {
  int64_t links = 0;  // in the fabric
  int64_t busy = 0;   // that carried traffic in the latest round
  // The busiest of those, at most LiveFeed::kHotLinks, busiest first (ties: topology order).
  std::vector<LiveLinkLoad> hot;
};

// One run of a sweep (`troupe sweep --serve`), in the sweep's order.
struct LiveSweepRun {
  std::string name;               // its folder's name, e.g. "mechanism-tune_seed-1"
  std::string state = "waiting";  // waiting | running | done | failed
  double wall_s = 0;              // how long it ran (so far)
  std::vector<std::pair<std::string, double>> figures;  // the sweep table's columns, once done
};

struct LiveSnapshot {
  std::string kind;      // "cluster", "parameter server" or "sweep"
  std::string name;      // the config's name
  double wall_s = 0;     // since the run started
  double virtual_s = 0;  // start of the latest round
  bool done = false;     // the run has ended: these are its final numbers
  int64_t rounds = 0;
  int64_t jobs_arrived = 0;  // jobs the scheduler had admitted by the latest round's start
  int32_t jobs_queued = 0, jobs_running = 0;  // in the latest round
  int64_t jobs_finished = 0, jobs_failed = 0;
  int64_t measured_finished = 0;
  int32_t gpus_total = 0;
  double cpus_total = 0, memory_gb_total = 0;
  LiveRoundPoint latest;                 // the latest round's allocation
  std::vector<LiveRoundPoint> timeline;  // allocation over virtual time
  std::vector<LiveServer> servers;
  // The JCT CDF of every job finished so far: up to kCdfPoints (jct_s, fraction of jobs at or
  // below) pairs at evenly spaced ranks, shortest and longest included.
  std::vector<std::pair<double, double>> jct_cdf;
  std::vector<FaultRecord> faults;  // as they fired (recovery times filled in later)
  bool has_ps = false;              // a parameter-server run: `ps` below, none of the cluster's
  LivePs ps;
  bool has_fabric = false;  // a run on a fabric: `fabric` below
  LiveFabric fabric;
  std::vector<LiveSweepRun> sweep;  // kind "sweep": its runs, none of the above
};

class LiveFeed {
 public:
  static constexpr size_t kMaxTimeline = 512;
  static constexpr int kCdfPoints = 101;
  static constexpr size_t kHotLinks = 12;

  LiveFeed(std::string kind, std::string name, std::vector<LiveServer> servers);

  // From the metrics recorder.
  void OnRound(const RoundRecord& round);
  void OnJob(const JobRecord& job);
  void OnFault(const FaultRecord& fault);
  // A run on a fabric (SetFabric first, before any record): the links that carried traffic in a
  // round (one batch a round, before its round record; a round without traffic has none).
  void SetFabric(std::vector<LiveLink> links);
  void OnLinks(const std::vector<LinkRecord>& links);
  // From server `index`: what its leases of round `round` hold.
  void OnServerRound(int32_t index, int64_t round, int32_t gpus, double cpus, double memory_gb);

  // A parameter-server run (MakePs first), from its collector: stage 1 or 2 of a node's step;
  // stage 3 of a shard's step, with where its keys were found; stage 4 of a node's step.
  void MakePs(int64_t steps_total, int32_t nodes);
  void OnPsStage(int32_t stage, double busy_s);
  void OnPsShard(double busy_s, const TierCounts& counts);
  void OnPsTrainer(int64_t step, int32_t node, double loss, double pull_s, double gpu_s,
                   double push_s, double allreduce_s);

  // A copy of everything so far (wall_s and done are the caller's to fill in).
  LiveSnapshot Snapshot() const;

 private:
  struct ServerSlot {
    std::atomic<int64_t> round{-1};  // the round the holdings below belong to
    std::atomic<int32_t> gpus{0};
    std::atomic<double> cpus{0}, memory_gb{0};
  };
  void Thin();
  void FillFabric(LiveSnapshot* s) const;

  mutable std::mutex mu_;
  LiveSnapshot state_;
  std::unique_ptr<ServerSlot[]> slots_;
  mutable std::vector<double> jcts_sorted_;  // JCTs seen by the latest snapshot, sorted
  mutable std::vector<double> jcts_new_;     // and those since
  std::vector<int64_t> ps_steps_;            // per node: steps finished
  std::vector<LiveLink> links_;              // a run on a fabric: its links, by index
  std::vector<LinkRecord> round_links_;      // the latest batch of link records
  int64_t ended_since_round_ = 0;            // jobs recorded since the latest round record
  size_t timeline_stride_ = 1;               // keep one round in this many
};

// The CDF of `sorted` (ascending) in at most `points` points, as LiveSnapshot::jct_cdf.
std::vector<std::pair<double, double>> CdfOfSorted(const std::vector<double>& sorted, int points);

// Who receives the snapshots: the web view. Called on the run's driving thread.
class LiveSink {
 public:
  virtual ~LiveSink() = default;
  virtual void Publish(LiveSnapshot snapshot) = 0;
};

}  // namespace troupe
