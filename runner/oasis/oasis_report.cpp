// The run directory of an OASiS run (runner/oasis/oasis_run.hpp): summary.json, jobs.csv,
// slots.csv, and the summary printed by `troupe run`.

#include <cstdio>

#include "base/status_macros.hpp"
#include "runner/oasis/oasis_run.hpp"
#include "runner/run_directory.hpp"
#include "runner/summary_json.hpp"

namespace troupe {
namespace {

namespace so = scheduling::oasis;

std::string Num(double v, int digits = 6) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
  return buffer;
}

}  // namespace

std::string OasisJobsCsv(const std::vector<OasisJobRow>& jobs) {
  std::string csv =
      "id,arrival,admitted,reason,planned_end,actual_end,finish_s,utility,worker_slots,trained,"
      "pieces\n";
  for (const OasisJobRow& r : jobs) {
    csv += std::to_string(r.id) + "," + std::to_string(r.arrival) + "," + (r.admitted ? "1" : "0") +
           "," + CsvField(r.reason) + "," + std::to_string(r.planned_end) + "," +
           std::to_string(r.end_slot) + "," + Num(r.finish_s, 12) + "," + Num(r.utility, 12) + "," +
           std::to_string(r.worker_slots) + "," + Num(r.trained, 12) + "," +
           std::to_string(r.pieces) + "\n";
  }
  return csv;
}

std::string OasisSlotsCsv(const std::vector<OasisSlotRow>& slots) {
  std::string csv = "slot,active,workers,ps";
  for (const char* kind : {"worker_use_", "ps_use_", "worker_price_", "ps_price_"}) {
    for (int r = 0; r < so::kResources; ++r) {
      csv.append(",").append(kind).append(so::ResourceName(static_cast<so::Resource>(r)));
    }
  }
  csv += "\n";
  for (const OasisSlotRow& s : slots) {
    csv += std::to_string(s.slot) + "," + std::to_string(s.active) + "," +
           std::to_string(s.workers) + "," + std::to_string(s.ps);
    for (const auto* v : {&s.worker_use, &s.ps_use, &s.worker_price, &s.ps_price}) {
      for (double x : *v) csv.append(",").append(Num(x, 9));
    }
    csv += "\n";
  }
  return csv;
}

Status WriteOasisRunDirectory(const std::string& out_dir, const OasisRunResult& result) {
  RETURN_IF_ERROR(CheckRunDirectory(out_dir));
  // What is staged already (config.textproto, runner/run_record.hpp) goes in with the rest.
  ASSIGN_OR_RETURN(std::string json, PrintSummaryJson(result.summary));
  return CommitRunDirectory(out_dir, {{"summary.json", std::move(json)},
                                      {"jobs.csv", OasisJobsCsv(result.records.jobs)},
                                      {"slots.csv", OasisSlotsCsv(result.records.slots)}});
}

std::string FormatOasisSummary(const summaries::OasisRunSummary& s) {
  // Counts the message holds as doubles (summary.proto), printed as the whole numbers they are.
  auto count = [](double n) { return std::to_string(static_cast<uint64_t>(n)); };
  std::string t;
  t += "run          " + s.config() + " (" + s.mode() + ", seed " + std::to_string(s.seed()) +
       ", policy " + s.policy() + ")\n";
  t += "cluster      " + std::to_string(s.worker_servers()) + " worker servers + " +
       std::to_string(s.ps_machines()) + " PS machines, " + std::to_string(s.slots()) + " slots\n";
  t += "jobs         " + std::to_string(s.jobs()) + ": " + std::to_string(s.admitted()) +
       " admitted, " + std::to_string(s.rejected()) + " rejected, " + std::to_string(s.finished()) +
       " finished, " + std::to_string(s.late()) + " after their planned end\n";
  t += "utility      " + Num(s.total_utility(), 8) + " total; mean GPU use " +
       Num(100 * s.mean_gpu_use(), 3) + "%\n";
  t += "network      PS links " + Num(s.ps_link_slowdown(), 6) + "x slower, " +
       Num(s.link_delay_s(), 6) + " s delay: " + std::to_string(s.behind()) +
       " jobs fell behind their plan, losing " + Num(s.lost_utility(), 8) +
       " of the utility the model scores them\n";
  if (s.simulator_finished() >= 0) {
    t += "simulator    " + Num(s.simulator_utility(), 8) + " total utility, " +
         std::to_string(s.simulator_finished()) + " finished (same policy and jobs, no network)\n";
  }
  t += "emulation    " + count(s.chunk_pieces()) + " chunk exchanges, " + count(s.messages()) +
       " messages, " + count(s.events()) + " timed events, " + Num(s.wall_s(), 3) + " s wall\n";
  t += "violations   " + std::to_string(s.violations_size()) + "\n";
  return t;
}

}  // namespace troupe
