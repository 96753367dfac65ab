// Turning a parameter-server run's records (collector_actor.hpp) into its result (ps_run.hpp):
// one PsBatchRecord per step, the summary (summary.json's message), the final parameters and their
// held-out AUC. Plain functions of their inputs: the same records give the same result.
#pragma once

#include "actors/ps/collector_actor.hpp"
#include "runner/ps/ps_run.hpp"

namespace troupe {

// Fills result->batches, result->parameters and result->summary (keeping the wall_s, messages
// and events already there). Precondition: records of a run that did not fail.
void BuildPsResult(const PsPlan& plan, PsRecords records, PsRunResult* result);

}  // namespace troupe
