// FaultPlan: the faults of one run as concrete, timed events — from the config's `faults` block,
// the command line's --fault flags, the seeded random schedule, a failure model's draws, a
// failure trace's rows and the stragglers' slow episodes (docs/faults.md, docs/failures.md).
//
// Contract: BuildFaultPlan is a pure function of the config, the seed, the run's shape and the
// trace files it names; the same inputs give the same events in the same order (sorted by time,
// then by declaration: declared, random, drawn, replayed, stragglers), and the `link` stragglers'
// stretches of rack uplinks apart (link_stretches), which the fabric applies. Nothing here knows
// CAF: the fault injector actor and the parameter-server run consume the plan. Bad input (an
// unknown kind, a target that names no actor of the run, a probability outside [0, 1]) is an
// InvalidInput naming the fault ("faults.fault[2].target: ..."), or, in a failure trace, its file
// and line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"

namespace troupe {

enum class FaultKind { kCrash, kPartition, kSlow, kDrop, kDelay, kDuplicate, kDisk };

// The kinds of actors faults name. kAny matches every actor.
enum class EndpointKind { kAny, kServer, kJob, kScheduler, kWorkload, kPs, kNode };

// A set of actors: every actor of `kind` with index in [first, last] (last -1: no upper bound),
// or, for kNode, the `troupe node` process listening at `node`.
struct ActorSet {
  EndpointKind kind = EndpointKind::kAny;
  int64_t first = 0;
  int64_t last = -1;
  std::string node;

  bool Contains(EndpointKind k, int64_t index) const;
  // The indices [first, last] among `count` actors of the set's kind (last -1: up to count - 1).
  std::vector<int64_t> IndicesAmong(int64_t count) const;
  std::string ToString() const;
};

// The messages from actors of kind `from` to actors of kind `to` (kAny: any).
struct LinkSpec {
  EndpointKind from = EndpointKind::kAny;
  EndpointKind to = EndpointKind::kAny;

  bool Matches(EndpointKind sender, EndpointKind receiver) const;
  std::string ToString() const;
};

struct FaultEvent {
  FaultKind kind = FaultKind::kCrash;
  ActorSet target;  // crash, slow, disk; partition: one side
  ActorSet peer;    // partition: the other side (kAny: every actor not in target)
  LinkSpec link;    // drop, delay, duplicate
  double at_s = 0;
  double duration_s = 0;  // crash: restart after it (0: never); others: how long (0: to the end)
  double factor = 1;
  double probability = 0;
  double delay_s = 0;
  bool disk_full = false;
  std::string cause;  // a failure model's draw: "failure:gpu"; empty otherwise

  // The end of the fault's effect (infinity when it lasts to the end of the run).
  double EndS() const;
  // One line for logs and tables: "crash server:3 @7200s restart +600s".
  std::string Describe() const;
};

// A config field's error, "WHERE: WHY" (the readers of faults/' config blocks share it).
Status InvalidField(const std::string& where, const std::string& why);

// What the run has, so that random faults pick real targets and declared ones are checked.
struct FaultUniverse {
  int64_t servers = 0;
  int64_t jobs = 0;  // 0: unknown (a generator without num_jobs): job faults pick ids < 100
  int64_t ps_nodes = 0;
  // A trace's job ids, ascending; empty: the ids are 0 .. jobs - 1 (a generator's). `job:N`
  // names the job whose id is N.
  std::vector<int64_t> job_ids;
  // For failure models: each server's GPUs (empty: 8 each) and rack (empty: no fabric, so a
  // switch failure takes out one server).
  std::vector<int32_t> gpus_of_server = {};
  std::vector<int32_t> rack_of_server = {};
};

// A rack's uplink (both directions) at `factor` of its capacity over [from_s, to_s): a `link`
// straggler (faults/straggler_model.hpp), which the fabric applies.
struct LinkStretch {
  int32_t rack = 0;
  double from_s = 0;
  double to_s = 0;
  double factor = 1;
};

struct FaultPlan {
  std::vector<FaultEvent> events;           // sorted by at_s, stable
  std::vector<LinkStretch> link_stretches;  // by rack, then from_s; none overlapping its rack's
  double report_grace_s = 10;
  double heartbeat_s = 1;

  bool empty() const { return events.empty(); }
  bool HasLinkFaults() const;
  // The servers, among `servers`, that a crash without a restart kills: lost for good.
  std::vector<int64_t> ServersLostForGood(int64_t servers) const;
};

const char* FaultKindName(FaultKind kind);
const char* EndpointKindName(EndpointKind kind);

// Parses one --fault flag, KIND:TARGET@AT[+DURATION][,OPTION...] with options x=FACTOR, p=PROB,
// delay=SECONDS, peer=SET, full; e.g. "crash:server:3@7200+600", "drop:job->scheduler@0,p=0.1",
// "partition:server:0-3@3600+1800,peer=scheduler", "disk:ps:1@40,full".
Status ParseFaultFlag(std::string_view flag, config::Fault* out);

// Parses "server:3", "server:0-7", "server:*", "job:17", "scheduler", "workload", "ps:1",
// "node:HOST:PORT", "*".
Status ParseActorSet(std::string_view text, ActorSet* out);
// Parses "server->job", "job->scheduler", "*->server", "*".
Status ParseLink(std::string_view text, LinkSpec* out);

// Checks the faults block on its own (no run shape needed); `where` prefixes messages.
Status CheckFaults(const config::Faults& faults, const std::string& where);

Status BuildFaultPlan(const config::Faults& faults, uint64_t run_seed,
                      const FaultUniverse& universe, FaultPlan* out);

}  // namespace troupe
