#include "messages/message_types.hpp"

#include <caf/actor_system_config.hpp>

#include "messages/cluster_messages.hpp"
#include "messages/fault_messages.hpp"
#include "messages/oasis_messages.hpp"
#include "messages/profiling_messages.hpp"
#include "messages/ps_messages.hpp"
#include "messages/records.hpp"
#include "messages/run_messages.hpp"

namespace troupe {

void RegisterMessageTypes(caf::actor_system_config& cfg) {
  cfg.add_message_type<JobSpec>("troupe.JobSpec");
  cfg.add_message_type<ServerSpec>("troupe.ServerSpec");
  cfg.add_message_type<LeaseOrder>("troupe.LeaseOrder");
  cfg.add_message_type<RoundLeases>("troupe.RoundLeases");
  cfg.add_message_type<LeaseGrant>("troupe.LeaseGrant");
  cfg.add_message_type<LeaseRefusal>("troupe.LeaseRefusal");
  cfg.add_message_type<ProgressQuery>("troupe.ProgressQuery");
  cfg.add_message_type<LeaseLost>("troupe.LeaseLost");
  cfg.add_message_type<JobCheckpoint>("troupe.JobCheckpoint");
  cfg.add_message_type<FaultNotice>("troupe.FaultNotice");
  cfg.add_message_type<ServerNotice>("troupe.ServerNotice");
  cfg.add_message_type<ServerUp>("troupe.ServerUp");
  cfg.add_message_type<SlowDown>("troupe.SlowDown");
  cfg.add_message_type<CrashJob>("troupe.CrashJob");
  cfg.add_message_type<RespawnJob>("troupe.RespawnJob");
  cfg.add_message_type<JobRespawned>("troupe.JobRespawned");
  cfg.add_message_type<JobFailed>("troupe.JobFailed");
  cfg.add_message_type<RecoverRequest>("troupe.RecoverRequest");
  cfg.add_message_type<RecoveredJobs>("troupe.RecoveredJobs");
  cfg.add_message_type<CheckpointQuery>("troupe.CheckpointQuery");
  cfg.add_message_type<CheckpointList>("troupe.CheckpointList");
  cfg.add_message_type<FaultRecord>("troupe.FaultRecord");
  cfg.add_message_type<LeaseResize>("troupe.LeaseResize");
  cfg.add_message_type<LeaseRelease>("troupe.LeaseRelease");
  cfg.add_message_type<ServerFree>("troupe.ServerFree");
  cfg.add_message_type<JobProgress>("troupe.JobProgress");
  cfg.add_message_type<ArrivalsRequest>("troupe.ArrivalsRequest");
  cfg.add_message_type<ArrivedJob>("troupe.ArrivedJob");
  cfg.add_message_type<ArrivalBatch>("troupe.ArrivalBatch");
  cfg.add_message_type<JobRecord>("troupe.JobRecord");
  cfg.add_message_type<RoundRecord>("troupe.RoundRecord");
  cfg.add_message_type<LeaseRecord>("troupe.LeaseRecord");
  cfg.add_message_type<LeaseBatch>("troupe.LeaseBatch");
  cfg.add_message_type<LeasePart>("troupe.LeasePart");
  cfg.add_message_type<RunEnd>("troupe.RunEnd");
  cfg.add_message_type<SensitivityMatrix>("troupe.SensitivityMatrix");
  cfg.add_message_type<ProfileAsk>("troupe.ProfileAsk");
  cfg.add_message_type<ProfileRequest>("troupe.ProfileRequest");
  cfg.add_message_type<JobProfile>("troupe.JobProfile");
  cfg.add_message_type<ProfileBatch>("troupe.ProfileBatch");
  cfg.add_message_type<PsExamples>("troupe.PsExamples");
  cfg.add_message_type<PsPrepare>("troupe.PsPrepare");
  cfg.add_message_type<PsReady>("troupe.PsReady");
  cfg.add_message_type<PsPull>("troupe.PsPull");
  cfg.add_message_type<PsRows>("troupe.PsRows");
  cfg.add_message_type<PsPush>("troupe.PsPush");
  cfg.add_message_type<PsExchange>("troupe.PsExchange");
  cfg.add_message_type<PsCredit>("troupe.PsCredit");
  cfg.add_message_type<PsStepDone>("troupe.PsStepDone");
  cfg.add_message_type<PsPeers>("troupe.PsPeers");
  cfg.add_message_type<PsStart>("troupe.PsStart");
  cfg.add_message_type<PsStageReport>("troupe.PsStageReport");
  cfg.add_message_type<PsShardReport>("troupe.PsShardReport");
  cfg.add_message_type<PsTrainerReport>("troupe.PsTrainerReport");
  cfg.add_message_type<PsShardFinal>("troupe.PsShardFinal");
  cfg.add_message_type<PsTrainerFinal>("troupe.PsTrainerFinal");
  cfg.add_message_type<PsFailure>("troupe.PsFailure");
  cfg.add_message_type<PsShardRestarted>("troupe.PsShardRestarted");
  cfg.add_message_type<PsRetryWrites>("troupe.PsRetryWrites");
  cfg.add_message_type<PsFaultTimer>("troupe.PsFaultTimer");
  cfg.add_message_type<PsFaultRecord>("troupe.PsFaultRecord");
  cfg.add_message_type<PsFaultTimer>("troupe.PsFaultTimer");
  cfg.add_message_type<PsFaultRecord>("troupe.PsFaultRecord");
  cfg.add_message_type<OasisTick>("troupe.OasisTick");
  cfg.add_message_type<OasisLease>("troupe.OasisLease");
  cfg.add_message_type<OasisWork>("troupe.OasisWork");
  cfg.add_message_type<OasisGradient>("troupe.OasisGradient");
  cfg.add_message_type<OasisParams>("troupe.OasisParams");
  cfg.add_message_type<OasisWorkerDone>("troupe.OasisWorkerDone");
  cfg.add_message_type<OasisSlotReport>("troupe.OasisSlotReport");
}

}  // namespace troupe
