// The shard actor: node m's parameter-server shard (ShardCore: HBM-PS, MEM-PS, SSD-PS of the keys
// m owns) and the pipeline's stage 3, its SSD stage.
//
// Protocol (messages/ps_messages.hpp):
//   PsPrepare(s, n)  handled strictly in (step, node) order whatever order they arrive in, each
//                    once the HBM-PS has room for its new keys; answered with PsReady to node n's
//                    trainer when the modelled SSD work is done. A step whose keys cannot fit even
//                    with no older step in flight fails the run (hbm_bytes_per_gpu too small).
//   PsPull(s, n)     answered with PsRows once step s - 1 has been applied (never stale) and its
//                    writes succeeded: answering is what acknowledges the pushes of step s - 1.
//   PsPush(s, n)     once all N nodes' pushes of s are in: the update (ShardCore::Apply), the
//                    step's PsShardReport to the collector, then the deferred pulls of s + 1.
// After the last step it sends PsShardFinal (every parameter it owns) and quits; on an error it
// sends PsFailure and stops answering.
//
// Faults (docs/paramserver.md, "Faults"). A restarted shard starts at setup.recovered_step: it
// ignores prepares and pushes of steps up to it (re-sent copies of acknowledged work) and handles
// the rest as usual. When an SSD-PS write fails (setup.faults' disk windows set the core's write
// fault switch before each operation) the shard is blocked: it keeps queueing messages but
// neither prepares, applies nor answers pulls, and retries (PsRetryWrites) after 1 ms, doubling up
// to 100 ms; once a retry succeeds it resumes, and after kDiskGiveUpS of failures it fails the
// run naming the node and file. Slow windows divide the SSD rate.
//
// Timing (stage 3): the SSD is one resource. Each prepare's bytes read and written, and each
// update's dump (and compaction), occupy it for bytes / (ssd_bytes_per_s * slow factor) from
// max(now, when it is free); a PsReady leaves when its prepare's SSD work ends. The state changes
// at once; only the answers wait.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "actors/ps/ps_faults.hpp"
#include "messages/ps_messages.hpp"
#include "paramserver/ps_options.hpp"
#include "paramserver/shard_core.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

// Seconds of virtual time a shard keeps retrying failed SSD-PS writes before it fails the run.
inline constexpr double kDiskGiveUpS = 5;

struct ShardSetup {
  int32_t shard = 0;
  PsOptions options;
  std::shared_ptr<ShardCore> core;
  caf::actor collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  PsNodeFaults faults;
  int32_t incarnation = 0;
  int64_t recovered_step = -1;  // a restarted shard: every step up to it is applied
  double ssd_free_s = 0;        // a restarted shard: its SSD is busy recovering until then
};

struct ShardState {
  ShardSetup setup;
  std::map<std::pair<int64_t, int32_t>, PsPrepare> prepares;  // waiting, by (step, node)
  int64_t next_step = 0;                                      // the next prepare to handle
  int32_t next_node = 0;
  std::map<int64_t, std::map<int32_t, PsPush>> pushes;  // by step and node, until all N are in
  std::map<int64_t, std::vector<std::pair<caf::actor, PsPull>>> pulls;  // deferred, by step
  int64_t applied = -1;                                                 // last step applied
  double ssd_free_s = 0;
  std::map<int64_t, PsShardReport> reports;  // by step, until applied
  std::set<int64_t> replayed;                // steps with re-sent pushes
  bool failed = false;
  bool blocked = false;    // SSD-PS writes are failing
  bool finishing = false;  // the last step is applied; the final flush waits for the disk
  bool done = false;       // PsShardFinal sent
  double blocked_since_s = 0;
  static inline const char* name = "troupe.ps.shard";
};

caf::behavior ShardActor(caf::stateful_actor<ShardState>* self, ShardSetup setup);

}  // namespace troupe
