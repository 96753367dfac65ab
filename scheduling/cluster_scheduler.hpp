// The round engine of the cluster scheduler, apart from any actor system: it owns the queue, the
// server ledger and the books of every job, and decides each round (docs/architecture.md).
//
// It is driven by events — jobs arrive (Admit), profiles come (ApplyProfiles), a round starts
// (BeginRound, PlanRound), jobs report (FileForRoundEnd, OnProgress), the round's timer fires
// (OnRoundTimer), servers and jobs go down and come back (ServerDown, JobDown, ...) — and answers
// each with its decisions through a SchedulerOutput, in the order they are to be carried out:
// leases to servers, records, timers, actors to spawn or stop. It never reads a clock: whoever
// drives it passes the time in (a round's start, `now_s` of a fault). The same events give the
// same decisions. The scheduler actor (actors/scheduler_actor.hpp) turns its messages into these
// calls and the decisions into messages; tests drive it directly.
//
// A decision may start the next step at once (a report that closes the round calls
// SchedulerOutput::StartRound, whose handler may call BeginRound again): the engine is reentrant
// from its output, as an actor's handlers are from the messages it sends itself.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "messages/job_progress.hpp"
#include "messages/job_spec.hpp"
#include "messages/profiling_messages.hpp"
#include "messages/records.hpp"
#include "messages/run_messages.hpp"
#include "messages/sensitivity.hpp"
#include "scheduling/cluster_ledger.hpp"
#include "scheduling/fabric_round.hpp"
#include "scheduling/mechanism.hpp"
#include "scheduling/policy.hpp"

namespace troupe::scheduling {

// Each model's speed on every GPU type of the run, by type index (SchedJob::type_speed).
using TypeSpeedsByModel =
    absl::flat_hash_map<std::string, std::shared_ptr<const std::vector<double>>>;

struct ClusterSchedulerOptions {
  // Registered names (policy_registry.hpp, mechanism_registry.hpp); the run checked them. These
  // and round_s are the config's scheduler block, whose defaults config/config.proto holds.
  std::string policy;
  std::string mechanism;
  MechanismOptions mechanism_options;
  double round_s = 0;
  OrderOptions order;              // starvation guard, FTF's direction: OrderJobs
  int64_t measure_first_job = -1;  // -1: every job is measured
  int64_t measure_last_job = -1;
  double deadline_s = 0;      // 0: none
  bool lease_log = false;     // record every lease part (SchedulerOutput::RecordLeases)
  double report_grace_s = 0;  // 0: wait for every report (a run without faults)
  bool recover = false;       // a restarted scheduler: rebuild state first (Rebuild)
  // A job whose report offers to keep its lease (JobProgress.standing_iterations) and whom the
  // next round gives the same share keeps it: no grant, no report (messages/cluster_messages.hpp).
  bool standing_leases = false;
  // GPU types (docs/heterogeneity.md): each server's type index (empty: all 0), and each model's
  // speed on every type (null: 1 everywhere, a cluster that names no type).
  std::vector<int32_t> server_gpu_types;
  std::shared_ptr<const TypeSpeedsByModel> type_speeds;
  // The network between the servers (docs/network.md); null: none, no job waits for traffic.
  std::shared_ptr<const FabricModel> fabric;
  // fabric.placement consolidate (scheduling/rack_placement.hpp): every mechanism's spread
  // follows the fabric's racks, and a job that cannot have one rack (one server, when it fits
  // one) waits up to consolidation_wait_s before it spreads. Needs `fabric`.
  bool consolidate_racks = false;
  double consolidation_wait_s = 0;
  // faults.recovery: jobs report what checkpoints and restarts cost them (JobProgress.recovery);
  // the engine adds it up per job and records it at the run's end (RecordJobRecovery).
  bool recovery = false;
  // faults.recovery.spare_servers: the last spare_servers servers are held out of placement; a
  // job that loses a server mid-round takes a spare at once (ServerDown), and the failed server
  // joins the pool in the spare's place (cluster_scheduler_spares.cpp).
  int32_t spare_servers = 0;
  // faults.recovery.on_server_loss continue_smaller: its min_size_fraction (0: wait_same_size). A
  // job that loses servers mid-round without a spare goes on at once on the GPUs it kept, if they
  // are at least this share of its GPUs (cluster_scheduler_elastic.cpp).
  double continue_smaller_fraction = 0;
};

// What surrounds the engine, as far as it changes what it says.
struct ClusterSetup {
  std::vector<ServerShape> servers;  // gpu_type as ClusterSchedulerOptions.server_gpu_types says
  bool profiler = false;             // arrivals are profiled (Admit returns what to measure)
  bool keeps_failures = false;       // SchedulerOutput::JobEnded tells the workload of failures
  // Every server that holds a part hears of every round, not only those granted something.
  bool every_server_hears = false;
};

// A job that arrived, with the model facts the engine plans with (an ArrivedJob without its
// actor: `has_actor` says whether it came with one).
struct Arrival {
  JobSpec spec;
  bool has_actor = false;
  double iter_time_s = 0;
  double ideal_cpus_per_gpu = 0;
  double ideal_memory_gb_per_gpu = 0;
  double speedup_at_ideal = 1;
  SensitivityMatrix sensitivity;
  JobTraffic traffic;  // its gradient exchange, with a fabric
};

// One job's grant on one server: the terms of its lease there (a LeaseOrder without the job's
// actor; messages/job_progress.hpp).
using Grant = LeaseTerms;

// A server's share of one round (a RoundLeases without actors).
struct ServerRound {
  int64_t round = 0;
  double start_s = 0;
  double end_s = 0;
  std::vector<Grant> grants;
  std::vector<StandingPart> standing;
};

// The state a job resumes from, as its checkpoint keeps it (JobCheckpoint without its weights).
struct ResumePoint {
  int64_t job_id = 0;
  int64_t iterations_left = -1;  // -1: as the engine has it
  double at_s = 0;
  bool finished = false;
  double first_start_s = -1;
  int64_t rounds_run = 0;
  double gpu_seconds = 0;
  double wasted_gpu_s = 0;
  int32_t restarts = 0;
  JobRecovery recovery;  // faults.recovery: the job's costs so far
};

// The engine's decisions, called in the order they are to be carried out.
class SchedulerOutput {
 public:
  virtual ~SchedulerOutput() = default;
  // A job placed for the first time has no actor yet: it gets one before any grant reaches it.
  virtual void SpawnJob(const JobRecord& record) = 0;
  // Tells `server` its share of the round.
  virtual void LeaseRound(int32_t server, ServerRound&& round) = 0;
  // The job's lease of `round` lost `server`: it reports at once.
  virtual void LoseLease(int64_t job_id, int64_t round, double lease_start_s, int32_t server) = 0;
  // The same with standing leases under faults, when the job's last lease stood rounds_stood
  // rounds since its last grant, and into this one if `stood` (LeaseLost.rounds_stood, stood).
  virtual void LoseLeaseAfterStanding(int64_t job_id, int64_t round, double lease_start_s,
                                      int32_t server, int32_t rounds_stood, bool stood) = 0;
  // The job's report of `round` is missing: it is asked again.
  virtual void QueryProgress(int64_t job_id, int64_t round, double lease_start_s) = 0;
  // The job finished (record.end_s set) or failed (record.failure set); its actor, if
  // `stop_actor`, is to stop.
  virtual void JobEnded(const JobRecord& record, bool stop_actor) = 0;
  // Records of a job that has not ended (at the run's end), of a closed round, of its leases.
  virtual void RecordJob(const JobRecord& record) = 0;
  virtual void RecordRound(const RoundRecord& round) = 0;
  virtual void RecordLeases(LeaseBatch&& leases) = 0;
  // With a fabric: the links that carried traffic in a closed round (links.csv), if any did.
  virtual void RecordLinks(LinkBatch&& links) = 0;
  // With a fabric, at the run's end: what every job that crossed it spent there.
  virtual void RecordJobNetwork(JobNetworkBatch&& jobs) = 0;
  // With ClusterSchedulerOptions.recovery, at the run's end: every job's recovery costs.
  virtual void RecordJobRecovery(JobRecoveryBatch&& /*jobs*/) {}
  // Timers: BeginRound(at_s) then; OnRoundTimer at the round's end; OnGrace after delay_s.
  virtual void WakeAt(double at_s) = 0;
  // PlanRound(start_s) again once everything due at this instant has been delivered: a server
  // is due back at the round's start, and its return (ServerUp) is among those messages.
  virtual void PlanAtInstantEnd(double start_s) = 0;
  virtual void EndRoundAt(int64_t round, double at_s) = 0;
  virtual void GraceAfter(int64_t round, double delay_s) = 0;
  // The round closed: the next starts at start_s (BeginRound).
  virtual void StartRound(double start_s) = 0;
  // The run is over; the jobs listed still have actors.
  virtual void EndRun(RunEnd&& end, const std::vector<int64_t>& jobs_with_actors) = 0;
  // For a progress display: a round is being planned (it can take minutes), then leased.
  virtual void Planning(bool /*planning*/) {}
  virtual void RoundLeased(double /*start_s*/) {}
};

struct EngineState;

class ClusterScheduler {
 public:
  ClusterScheduler(const ClusterSchedulerOptions& options, ClusterSetup setup,
                   SchedulerOutput* output);
  ~ClusterScheduler();
  ClusterScheduler(const ClusterScheduler&) = delete;
  ClusterScheduler& operator=(const ClusterScheduler&) = delete;

  // Rounds. BeginRound ends the run at the deadline, plans at once when no arrival is due by
  // start_s, and otherwise returns kPullArrivals: Admit them, ApplyProfiles if asked, PlanRound.
  enum class RoundStart { kEnded, kPlanned, kPullArrivals };
  RoundStart BeginRound(double start_s);
  // Tracks arrived jobs (next_arrival_s: the next one's time, -1: none); returns what the
  // profiler must measure of them (nothing without one).
  std::vector<ProfileAsk> Admit(std::vector<Arrival>& arrivals, double next_arrival_s);
  void ApplyProfiles(ProfileBatch& batch);
  // Plans and leases the round starting at start_s (or sleeps until the next arrival, or ends).
  // A start not after the last one planned plans nothing (a late answer's second copy). While a
  // down server is due back at start_s it defers once (SchedulerOutput::PlanAtInstantEnd): a
  // repair at a round's start joins that round whatever order the instant's messages come in.
  void PlanRound(double start_s);
  // A report sent for the round's end (JobProgress.for_round_end) before the round's timer is
  // filed until then: true when it was filed, false when it is to be taken now (OnProgress).
  bool FileForRoundEnd(JobProgress& progress);
  // A job's report: taken once, for the round in flight (else dropped as stray).
  void OnProgress(const JobProgress& progress);
  // The round's timer fired: the round closes once every leased job reported.
  void OnRoundTimer();
  // The grace timer of `round`: the reports still missing are asked for again.
  void OnGrace(int64_t round);
  // Ends the run now with `reason` (a peer that never answers, say).
  void EndRun(const std::string& reason);

  // Faults (docs/faults.md). `now_s` is the caller's clock.
  // With spare servers, a job that lost `server` at now_s is relet at once on a spare for the
  // rest of the round (now_s -1: not known, no relet).
  void ServerDown(int32_t server, double now_s = -1);
  // What a failure of `server` at now_s interrupts: the jobs whose leases of this round run on it
  // (those ServerDown cuts), each with all of its GPUs (a gang job stops whole). A failure at the
  // instant the round starts or ends interrupts nothing: its leases have not begun, or are over.
  struct LeasesOnServer {
    struct Job {
      int64_t id = 0;
      int32_t gpus = 0;
    };
    int32_t server_gpus = 0;
    std::vector<Job> jobs;
  };
  LeasesOnServer RunningOn(int32_t server, double now_s) const;
  // A server's announced restart (-1: never) and its restart.
  void ServerNotice(int32_t server, double restart_at_s);
  void ServerUp(int32_t server);
  // A job's actor died for `cause` (used unless a fault said why).
  void JobDown(int64_t job_id, double now_s, const std::string& cause);
  // A crash fault killed, or will kill, the job; it restarts at restart_at_s (-1: never).
  void FaultNotice(int64_t job_id, double restart_at_s, const std::string& fault);
  // A job's actor was respawned from its checkpoint: kResumed, the job runs on with the new actor;
  // kFinished, it had finished (the new actor is not needed); kRejected, the job is not down.
  enum class Respawn { kRejected, kFinished, kResumed };
  Respawn JobRespawned(int64_t job_id, const ResumePoint& from);

  // A restarted scheduler: the workload's jobs, those failed and recorded before, the
  // checkpoints, and the jobs that died for good while it was down. Returns what to profile.
  std::vector<ProfileAsk> Rebuild(std::vector<Arrival>& jobs, double next_arrival_s,
                                  const std::vector<int64_t>& failed,
                                  const std::vector<ResumePoint>& checkpoints,
                                  const std::vector<int64_t>& dead_for_good);
  // Resumes at the first round boundary not before now_s (returned): every lease of the old
  // scheduler has ended by then.
  double Resume(double now_s);

  bool ended() const;
  int64_t round() const;  // the round in flight or last planned (-1: none yet)
  int64_t queued() const;
  // The job is tracked, has not ended, and is leased this round without having reported.
  bool Awaited(int64_t job_id) const;

 private:
  std::unique_ptr<EngineState> st_;
};

}  // namespace troupe::scheduling
