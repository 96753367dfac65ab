// The shard actor: node m's parameter-server shard (ShardCore: HBM-PS, MEM-PS, SSD-PS of the keys
// m owns) and the pipeline's stage 3, its SSD stage.
//
// Protocol (messages/ps_messages.hpp):
//   PsPrepare(s, n)  handled strictly in (step, node) order whatever order they arrive in, each
//                    once the HBM-PS has room for its new keys; answered with PsReady to node n's
//                    trainer when the modelled SSD work is done. A step whose keys cannot fit even
//                    with no older step in flight fails the run (hbm_bytes_per_gpu too small).
//   PsPull(s, n)     answered with PsRows once step s - 1 has been applied (never stale).
//   PsPush(s, n)     once all N nodes' pushes of s are in: the update (ShardCore::Apply), the
//                    step's PsShardReport to the collector, then the deferred pulls of s + 1.
// After the last step it sends PsShardFinal (every parameter it owns) and quits; on an error it
// sends PsFailure and stops answering.
//
// Timing (stage 3): the SSD is one resource. Each prepare's bytes read and written, and each
// update's dump (and compaction), occupy it for bytes / ssd_bytes_per_s from max(now, when it is
// free); a PsReady leaves when its prepare's SSD work ends. The state changes at once; only the
// answers wait.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "actors/ps/ps_options.hpp"
#include "actors/ps/shard_core.hpp"
#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"
#include "messages/ps_messages.hpp"

namespace troupe {

struct ShardState {
  int32_t shard = 0;
  PsOptions options;
  std::shared_ptr<ShardCore> core;
  caf::actor collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;

  std::map<std::pair<int64_t, int32_t>, PsPrepare> prepares;  // waiting, by (step, node)
  int64_t next_step = 0;                                      // the next prepare to handle
  int32_t next_node = 0;
  std::map<int64_t, std::vector<PsPush>> pushes;  // by step, until all N are in
  std::map<int64_t, std::vector<std::pair<caf::actor, PsPull>>> pulls;  // deferred, by step
  int64_t applied = -1;                                                 // last step applied
  double ssd_free_s = 0;
  std::map<int64_t, PsShardReport> reports;  // by step, until applied
  bool failed = false;
  static inline const char* name = "troupe.ps.shard";
};

caf::behavior ShardActor(caf::stateful_actor<ShardState>* self, int32_t shard, PsOptions options,
                         std::shared_ptr<ShardCore> core, caf::actor collector, RunClock clock,
                         Telemetry* telemetry);

}  // namespace troupe
