// The job side of an OASiS run (messages/oasis_messages.hpp, docs/oasis.md): a job actor per
// admitted job, and the worker and parameter-server actors it leases each slot.
//
// Job: on OasisLease for slot t with y workers and z PS it spawns (once, linked) as many worker
// and PS actors as the largest lease so far, splits its remaining mini-batches R evenly over the
// y workers, min(S, R / y) each with S = slot length / (tau_i + 2 e_i / b_i) (one worker-slot's
// worth; the workload is a fluid, as constraint (2) of the model counts it), hands each worker its
// range and the slot's PS, and when every worker is done reports the slot to the scheduler. It is
// finished when its ranges cover E_i N_i M_i mini-batches (relative tolerance 1e-9, as CheckPlan).
// Worker: trains its range chunk piece by chunk piece (a piece is the part of one data chunk's M_i
// mini-batches inside the range); for each piece it sends one aggregated OasisGradient share to
// each of the slot's z PS (the parameters are sharded over them: m e_i / z Gb at b_i / z Gbps
// each, so a PS's workers need y b_i / z <= B_i, the model's constraint (6)) through the NIC of
// the PS's machine (oasis_nic.hpp; with a fabric, across the links of its route, oasis_fabric.hpp),
// and waits for every OasisParams share before the next piece. A
// piece whose parameters come back after the lease's end is lost, and the worker stops: it reports
// what it trained and what of its range is left. PS: answers every gradient at once with the
// parameters, sent back through the same NIC. Job: ranges cut short go back to the job's pool, so
// the job is not finished when the model's worker-slots say it is; the scheduler then records it as
// behind its plan.
//
// Contract: every send goes through Tell/TellAt; all timing is virtual seconds on the RunClock;
// deterministic in emulated mode.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <vector>

#include "actors/oasis/oasis_fabric.hpp"
#include "messages/oasis_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"
#include "scheduling/oasis/model.hpp"

namespace troupe {

struct OasisWorkerState {
  scheduling::oasis::Job job;
  int32_t index = 0;
  caf::actor owner;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  OasisWork work;
  double position = 0;   // next mini-batch of the range not trained yet
  double piece_end = 0;  // where the piece in flight ends
  int32_t awaiting = 0;  // parameter shares of the piece not back yet
  double back_s = 0;     // when the last of them came back
  double now_s = 0;      // the worker's own time: when its last parameters came back
  int64_t pieces = 0;
  int64_t transfers = 0;  // numbers its transfers' bookings on the fabric
  static inline const char* name = "troupe.oasis.worker";
};

caf::behavior OasisWorkerActor(caf::stateful_actor<OasisWorkerState>* self,
                               scheduling::oasis::Job job, int32_t index, caf::actor owner,
                               RunClock clock, Telemetry* telemetry);

struct OasisPsState {
  double received_gb = 0;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.oasis.ps";
};

caf::behavior OasisPsActor(caf::stateful_actor<OasisPsState>* self, RunClock clock,
                           Telemetry* telemetry);

struct OasisJobState {
  scheduling::oasis::Job job;
  int64_t index = 0;
  caf::actor scheduler;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  double total = 0;     // E_i N_i M_i
  double position = 0;  // mini-batches handed out
  std::vector<caf::actor> workers, ps;
  std::vector<caf::actor> nics;  // one per PS machine of the cluster (none with a fabric)
  std::shared_ptr<const OasisFabric> fabric;  // null without one
  int32_t slot = -1;
  int32_t pending = 0;  // workers of the slot not done yet
  double slot_minibatches = 0;
  double slot_untrained = 0;  // of the slot's ranges, cut short by the lease's end
  double last_end_s = 0;
  int64_t pieces = 0;
  bool finished = false;
  static inline const char* name = "troupe.oasis.job";
};

caf::behavior OasisJobActor(caf::stateful_actor<OasisJobState>* self, scheduling::oasis::Job job,
                            int64_t index, caf::actor scheduler, std::vector<caf::actor> nics,
                            std::shared_ptr<const OasisFabric> fabric, RunClock clock,
                            Telemetry* telemetry);

}  // namespace troupe
