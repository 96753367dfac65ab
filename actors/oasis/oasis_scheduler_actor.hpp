// The scheduler of an OASiS run (messages/oasis_messages.hpp, docs/oasis.md). It runs one online
// policy (scheduling/oasis/baselines.hpp: OASiS, FIFO, DRF, RRH or Dorm) slot by slot on the
// virtual clock: at t * slot_s it offers the jobs arriving in slot t to the policy (a rejected
// job is recorded with the policy's reason; an admitted one gets a job actor), asks it for the
// slot's allocation, checks it exactly as the slot simulator does (CheckSlot: capacities (4),
// (5), constraints (3), (6), (7); a failing allocation is dropped and recorded), and leases each
// job its workers and PS (OasisLease). Slot t + 1 starts once every job leased in t has reported.
// A finished job is told to the policy (OASiS drops the rest of its plan: its future leases) and
// scored f_i(t - a_i); unfinished by T it scores 0. Workers exchange with PS through one NIC actor
// per PS machine (oasis_nic.hpp, spawned here), or, with a fabric, across the link domains of
// oasis_fabric.hpp (spawned here). When nothing interferes the emulated finish is the
// model's (worker-slots reaching W_i). When the NICs are slow (OasisLinks) a job can still have
// mini-batches left when its worker-slots reach W_i: it is recorded as behind its plan (its
// reason says how much was left, and what the model would have scored), and its remaining work
// is counted again in worker-slots, so a policy that allocates by remaining work (FIFO, DRF, RRH,
// Dorm) keeps leasing it while OASiS, whose plan is fixed at admission, does not. An emulated job
// finishing before its worker-slots reach W_i is recorded as a violation.
//
// At the end of slot T - 1 it hands the records to the driver, stops the job actors (which take
// their linked workers and PS with them) and sets telemetry->done.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "actors/oasis/oasis_fabric.hpp"
#include "fabric/topology.hpp"
#include "messages/oasis_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"
#include "scheduling/oasis/slot_simulator.hpp"

namespace troupe {

struct OasisJobRow {
  int64_t id = 0;
  int32_t arrival = 0;
  bool admitted = false;
  std::string reason;
  int32_t planned_end = -1;
  int32_t end_slot = -1;  // the slot it finished in; -1 if unfinished by T
  double finish_s = -1;   // when its last parameters arrived
  double utility = 0;
  int32_t worker_slots = 0;  // leased
  double trained = 0;        // mini-batches trained (of E N M)
  int64_t pieces = 0;        // chunk pieces exchanged (gradient + parameter messages each)
  bool behind = false;       // its worker-slots reached W_i with mini-batches left
  int32_t model_end = -1;    // the slot the model has it finish in (-1: not reached)
  double model_utility = 0;  // what the model scores it: f_i(model_end - a_i)
};

// The emulated network of the PS machines (oasis.ps_link_slowdown, oasis.link_delay_s), or the
// fabric's links when the config has a fabric block (oasis_fabric.hpp; then no PS NIC actor).
struct OasisLinks {
  double ps_slowdown = 1;  // every PS machine's NIC carries its bandwidth capacity / this
  double delay_s = 0;      // added to every transfer
  std::shared_ptr<const fabric::Topology> fabric;  // over worker servers, then PS machines
};

struct OasisSlotRow {
  int32_t slot = 0;
  int32_t active = 0;
  int32_t workers = 0;
  int32_t ps = 0;
  scheduling::oasis::ResourceVector worker_use{}, ps_use{};
  scheduling::oasis::ResourceVector worker_price{}, ps_price{};  // OASiS: mean over machines
};

struct OasisRecords {
  std::vector<OasisJobRow> jobs;
  std::vector<OasisSlotRow> slots;
  std::vector<std::string> violations;
  int32_t released_worker_slots = 0;  // OASiS: planned after a job finished
};

struct OasisSchedulerState {
  scheduling::oasis::Cluster cluster;
  std::vector<scheduling::oasis::Job> jobs;  // sorted by arrival
  std::shared_ptr<scheduling::oasis::OnlinePolicy> policy;
  std::vector<scheduling::oasis::JobProgress> progress;
  std::vector<caf::actor> job_actors;
  std::vector<caf::actor> nics;         // one per PS machine (none with a fabric)
  std::shared_ptr<OasisFabric> fabric;  // its link domains, with a fabric
  OasisRecords records;
  size_t next_arrival = 0;
  int32_t pending = 0;        // leases of the current slot not reported yet
  int32_t waiting_tick = -1;  // a tick that came before the reports
  double busy_until_s = 0;    // when the last reported parameters came back
  std::shared_ptr<std::promise<OasisRecords>> handover;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.oasis.scheduler";
};

// Starts itself at virtual time 0.
caf::behavior OasisSchedulerActor(caf::stateful_actor<OasisSchedulerState>* self,
                                  scheduling::oasis::Cluster cluster,
                                  std::vector<scheduling::oasis::Job> jobs,
                                  std::shared_ptr<scheduling::oasis::OnlinePolicy> policy,
                                  std::shared_ptr<std::promise<OasisRecords>> handover,
                                  OasisLinks links, RunClock clock, Telemetry* telemetry);

}  // namespace troupe
