// The run directory of an OASiS run (actors/oasis/oasis_run.hpp): summary.json, jobs.csv,
// slots.csv, and the summary printed by `troupe run`.

#include <cstdio>
#include <filesystem>

#include "runner/oasis/oasis_run.hpp"
#include "runner/run_directory.hpp"

namespace troupe {
namespace {

namespace so = scheduling::oasis;

std::string Num(double v, int digits = 6) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
  return buffer;
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' ? ' ' : c);
  }
  return out + "\"";
}

// A CSV field: quoted when it holds a comma or a quote.
std::string Field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string OasisSummaryJson(const OasisSummary& s) {
  std::string j = "{\n";
  auto add = [&](const std::string& key, const std::string& value) {
    j += "  \"" + key + "\": " + value + ",\n";
  };
  add("config", Quoted(s.config_name));
  add("mode", Quoted(s.mode));
  add("policy", Quoted(s.policy));
  add("seed", std::to_string(s.seed));
  add("slots", std::to_string(s.slots));
  add("worker_servers", std::to_string(s.worker_servers));
  add("ps_machines", std::to_string(s.ps_machines));
  add("jobs", std::to_string(s.jobs));
  add("admitted", std::to_string(s.admitted));
  add("rejected", std::to_string(s.rejected));
  add("finished", std::to_string(s.finished));
  add("late", std::to_string(s.late));
  add("total_utility", Num(s.total_utility, 12));
  add("low_factor", Num(s.low_factor));
  add("mean_gpu_use", Num(s.mean_gpu_use));
  add("released_worker_slots", std::to_string(s.released_worker_slots));
  add("chunk_pieces", std::to_string(s.pieces));
  add("messages", std::to_string(s.messages));
  add("events", std::to_string(s.events));
  add("wall_s", Num(s.wall_s));
  std::string v = "[";
  for (size_t i = 0; i < s.violations.size(); ++i) {
    v.append(i ? ", " : "").append(Quoted(s.violations[i]));
  }
  j += "  \"violations\": " + v + "]\n}\n";
  return j;
}

std::string OasisJobsCsv(const std::vector<OasisJobRow>& jobs) {
  std::string csv =
      "id,arrival,admitted,reason,planned_end,actual_end,finish_s,utility,worker_slots,trained,"
      "pieces\n";
  for (const OasisJobRow& r : jobs) {
    csv += std::to_string(r.id) + "," + std::to_string(r.arrival) + "," + (r.admitted ? "1" : "0") +
           "," + Field(r.reason) + "," + std::to_string(r.planned_end) + "," +
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
  if (Status s = CheckRunDirectory(out_dir); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::remove_all(StagingDirectory(out_dir), ec);  // a crashed run's leftover
  return CommitRunDirectory(out_dir, {{"summary.json", OasisSummaryJson(result.summary)},
                                      {"jobs.csv", OasisJobsCsv(result.records.jobs)},
                                      {"slots.csv", OasisSlotsCsv(result.records.slots)}});
}

std::string FormatOasisSummary(const OasisSummary& s) {
  std::string t;
  t += "run          " + s.config_name + " (" + s.mode + ", seed " + std::to_string(s.seed) +
       ", policy " + s.policy + ")\n";
  t += "cluster      " + std::to_string(s.worker_servers) + " worker servers + " +
       std::to_string(s.ps_machines) + " PS machines, " + std::to_string(s.slots) + " slots\n";
  t += "jobs         " + std::to_string(s.jobs) + ": " + std::to_string(s.admitted) +
       " admitted, " + std::to_string(s.rejected) + " rejected, " + std::to_string(s.finished) +
       " finished, " + std::to_string(s.late) + " after their planned end\n";
  t += "utility      " + Num(s.total_utility, 8) + " total; mean GPU use " +
       Num(100 * s.mean_gpu_use, 3) + "%\n";
  t += "emulation    " + std::to_string(s.pieces) + " chunk exchanges, " +
       std::to_string(s.messages) + " messages, " + std::to_string(s.events) + " timed events, " +
       Num(s.wall_s, 3) + " s wall\n";
  t += "violations   " + std::to_string(s.violations.size()) + "\n";
  return t;
}

}  // namespace troupe
