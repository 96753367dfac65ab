#include "faults/checkpoint_cadence.hpp"

#include <algorithm>
#include <cmath>

#include "faults/failure_model.hpp"

namespace troupe {

double YoungDalyIntervalS(double write_s, double mtbf_s) { return std::sqrt(2 * write_s * mtbf_s); }

double JobFailuresPerS(const RecoveryPlan& plan, int32_t gpus) {
  const int32_t per_server = std::max(1, plan.gpus_per_server);
  const double servers = std::ceil(static_cast<double>(std::max(1, gpus)) / per_server);
  // Without a fabric a switch stands for one server's link (failure_model.hpp).
  const double switches =
      plan.servers_per_rack > 0 ? std::ceil(servers / plan.servers_per_rack) : servers;
  double per_hour = 0;
  for (const config::FailureComponent& c : plan.failures.component()) {
    const bool per_switch =
        c.component() == "switch" && (c.has_per_switch_hour() || c.has_mtbf_h());
    per_hour += FailuresPerHour(c, servers * per_server, servers) * (per_switch ? switches : 1);
  }
  return per_hour / 3600;
}

CheckpointCosts CostsFor(const RecoveryPlan& plan, double gradient_bytes, int32_t gpus) {
  const config::Recovery& r = plan.recovery;
  CheckpointCosts c;
  // Gb/s: bits over 1e9 bits a second.
  c.write_s = gradient_bytes * r.state_factor() * 8 / (r.storage_gbps() * 1e9);
  c.restart_s = r.restart_s() + c.write_s;
  if (r.checkpoint() == config::fixed_interval) c.interval_s = r.checkpoint_interval_s();
  if (r.checkpoint() == config::young_daly) {
    const double per_s = JobFailuresPerS(plan, gpus);
    // At least a second of training between checkpoints: a free checkpoint (C = 0) would
    // otherwise be taken continuously.
    c.interval_s = per_s > 0 ? std::max(1.0, YoungDalyIntervalS(c.write_s, 1 / per_s)) : 0;
  }
  return c;
}

Status CheckRecovery(const config::Faults& faults, const std::string& faults_where) {
  if (!faults.has_recovery()) return Status::Ok();
  const config::Recovery& r = faults.recovery();
  const std::string where = faults_where + ".recovery.";
  if (r.checkpoint() == config::fixed_interval && !r.has_checkpoint_interval_s()) {
    return Status::InvalidInput(where +
                                "checkpoint_interval_s: checkpoint fixed_interval needs it");
  }
  if (r.checkpoint() != config::fixed_interval && r.has_checkpoint_interval_s()) {
    return Status::InvalidInput(where + "checkpoint_interval_s: only checkpoint fixed_interval " +
                                "takes an interval (checkpoint is " +
                                config::CheckpointPolicy_Name(r.checkpoint()) + ")");
  }
  if (r.checkpoint() == config::young_daly) {
    if (!faults.has_failure_model()) {
      return Status::InvalidInput(where +
                                  "checkpoint: young_daly needs a failure_model in faults " +
                                  "(the failure rate its interval is computed from)");
    }
    RecoveryPlan plan;
    plan.failures = ResolveFailureModel(faults.failure_model());
    if (!(JobFailuresPerS(plan, 1) > 0)) {
      return Status::InvalidInput(where + "checkpoint: young_daly needs a failure rate, and " +
                                  "every rate of the failure_model is 0");
    }
  }
  return Status::Ok();
}

}  // namespace troupe
