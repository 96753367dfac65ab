// Checks an allocation that troupe did not compute (an external scheduler's answer,
// docs/external-scheduler.md) before any of it is leased: troupe never overcommits a server,
// whoever planned the round. Pure: no I/O, no actors.
#pragma once

#include <vector>

#include "base/status.hpp"
#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

// Takes `proposed` on `ledger` when all of it is sound, and returns Ok; otherwise returns
// InvalidInput naming the first fault ("placement 3 (job 17) part 0: ...") and leaves the ledger
// as it was. Sound means: every placement is of a job in `offered`, no job twice; each part is on
// a server of the ledger, at most one part per server for a job, at least one GPU and finite,
// non-negative CPUs and memory; a job's parts hold exactly its GPUs (gang: all or none); and the
// parts together fit what each server has free (with the ledger's own rounding slack).
Status TakeAllocation(const std::vector<const SchedJob*>& offered,
                      const std::vector<JobPlacement>& proposed, ClusterLedger& ledger);

}  // namespace troupe::scheduling
