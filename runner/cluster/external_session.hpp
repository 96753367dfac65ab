// The external scheduler of a cluster run (RunConfig.external_scheduler,
// docs/external-scheduler.md): before the run's first round troupe listens, waits for the
// scheduler process to register, and hands the "external" mechanism its source of proposals.
#pragma once

#include <memory>

#include "agent/external_link.hpp"
#include "agent/external_source.hpp"
#include "base/status.hpp"
#include "config/config.pb.h"
#include "runner/cluster/run_setup.hpp"

namespace troupe {

class ExternalSession {
 public:
  // Listens, writes the port file and waits (connect_timeout_s) for a registered scheduler, then
  // sets plan->scheduler.mechanism_options to ask it. IoError when none registered in time.
  static Status Start(const config::ExternalScheduler& cfg, RunPlan* plan,
                      std::unique_ptr<ExternalSession>* out);
  // Logs how the rounds went and says Goodbye to the scheduler.
  ~ExternalSession();

 private:
  std::shared_ptr<agent_wire::ExternalLink> link_;
  std::shared_ptr<agent_wire::ExternalSource> source_;
};

}  // namespace troupe
