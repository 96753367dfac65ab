// Every troupe message type, listed once (TROUPE_MESSAGE_TYPES), and its registration with a CAF
// actor system config under one name per type ("troupe.<Type>"), so the same names exist on every
// node of a multi-process run. A type registered only on the sender arrives as an empty message:
// call RegisterMessageTypes on every node before the system starts. A new message type is added to
// the list below (after its header is included by message_types.cpp and the round-trip test),
// and nowhere else.
#pragma once

namespace caf {
class actor_system_config;
}

// X(Type) for every message type that may cross processes.
// clang-format off
#define TROUPE_MESSAGE_TYPES(X) \
  X(JobSpec) X(ServerSpec) X(LeaseOrder) X(RoundLeases) X(LeaseGrant) X(LeaseRefusal) \
  X(ProgressQuery) X(LeaseLost) X(JobCheckpoint) X(FaultNotice) X(ServerNotice) X(ServerUp) \
  X(SlowDown) X(CrashJob) X(JobsCrashed) X(RespawnJob) X(JobRespawned) X(JobFailed) X(RecoverRequest) \
  X(RecoveredJobs) X(CheckpointQuery) X(CheckpointList) X(FaultRecord) X(LeaseResize) \
  X(LeaseRelease) X(ServerFree) X(JobProgress) X(ArrivalsRequest) X(ArrivedJob) X(ArrivalBatch) \
  X(JobRecord) X(RoundRecord) X(LeaseRecord) X(LeaseBatch) X(LinkRecord) X(LinkBatch) X(JobNetworkRecord) X(JobNetworkBatch) X(LeasePart) X(RunEnd) \
  X(JobRecoveryRecord) X(JobRecoveryBatch) X(ServerDownRecord) X(ServerBackRecord) \
  X(SensitivityMatrix) X(ProfileAsk) X(ProfileRequest) X(JobProfile) X(ProfileBatch) \
  X(PsExamples) X(PsPrepare) X(PsReady) X(PsPull) X(PsRows) X(PsPush) X(PsExchange) X(PsCredit) \
  X(PsStepDone) X(PsPeers) X(PsStart) X(PsStageReport) X(PsShardReport) X(PsTrainerReport) \
  X(PsShardFinal) X(PsTrainerFinal) X(PsFailure) X(PsShardRestarted) X(PsRetryWrites) \
  X(PsFaultTimer) X(PsFaultRecord) X(PsShardSpawn) X(PsShardSpawned) X(PsFeedSpawn) \
  X(PsFeedSpawned) X(OasisTick) X(OasisLease) X(OasisWork) X(OasisGradient) \
  X(OasisParams) X(OasisWorkerDone) X(OasisSlotReport) X(AllReduceGroup) X(AllReduceStart) \
  X(AllReducePart) X(AllReduceSum) X(AllReduceResult) X(PartWork) X(PartStarted) X(PartDone) \
  X(NcclGangJoin) X(NcclGangId) \
  X(GangWeights) X(StandingPart) X(FlowStart) X(FlowDone) X(FlowStop)
// clang-format on

namespace troupe {

void RegisterMessageTypes(caf::actor_system_config& cfg);

}  // namespace troupe
