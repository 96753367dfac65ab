#include "runner/ps/ps_report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/status_macros.hpp"
#include "runner/run_directory.hpp"
#include "runner/summary_json.hpp"

namespace troupe {
namespace {

std::string G(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

std::string I(int64_t x) { return std::to_string(x); }

std::string Fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, x);
  return buf;
}

}  // namespace

std::string PsBatchesCsv(const std::vector<PsBatchRecord>& batches) {
  std::string out(kPsBatchesCsvHeader);
  out += '\n';
  for (const PsBatchRecord& b : batches) {
    const std::string fields[] = {I(b.batch),
                                  G(b.loss),
                                  G(b.batch_time_s),
                                  G(b.end_s),
                                  G(b.read_s),
                                  G(b.partition_s),
                                  G(b.ssd_s),
                                  G(b.train_s),
                                  G(b.pull_s),
                                  G(b.gpu_s),
                                  G(b.push_s),
                                  G(b.allreduce_s),
                                  I(b.counts.keys),
                                  I(b.counts.hbm_hits),
                                  I(b.counts.mem_keys),
                                  I(b.counts.mem_hits),
                                  G(b.counts.mem_hit_rate()),
                                  G(b.counts.memory_hit_rate()),
                                  I(b.counts.ssd_rows_read),
                                  I(b.counts.rows_created),
                                  I(b.disk_bytes),
                                  I(b.net_bytes),
                                  I(b.counts.ssd_bytes_read),
                                  I(b.counts.ssd_bytes_written),
                                  I(b.counts.compaction_bytes),
                                  I(b.bytes_moved),
                                  I(b.mem_rows),
                                  I(b.ssd_keys)};
    for (size_t i = 0; i < std::size(fields); ++i) out += (i ? "," : "") + fields[i];
    out += "\n";
  }
  return out;
}

std::string PsFaultsCsv(const std::vector<PsFaultRecord>& faults) {
  std::string out(kPsFaultsCsvHeader);
  out += '\n';
  for (const PsFaultRecord& r : faults) {
    std::string detail = "\"";  // quoted: details hold commas
    for (const char c : r.detail) detail += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += G(r.at_s) + "," + I(r.node) + "," + CsvField(r.fault) + "," + CsvField(r.event) + "," +
           I(r.step) + "," + I(r.count) + "," + detail + "\"\n";
  }
  return out;
}

Status WritePsRunDirectory(const std::string& out_dir, const summaries::PsRunSummary& summary,
                           const std::vector<PsBatchRecord>& batches,
                           const std::vector<PsFaultRecord>* faults) {
  // The run's SSD-PS files are already in the staging folder; they move with it.
  ASSIGN_OR_RETURN(std::string json, PrintSummaryJson(summary));
  std::vector<NamedFile> files = {{"summary.json", std::move(json)},
                                  {"batches.csv", PsBatchesCsv(batches)}};
  if (faults != nullptr) files.push_back({"faults.csv", PsFaultsCsv(*faults)});
  return CommitRunDirectory(out_dir, files);
}

std::string FormatPsSummaryTable(const summaries::PsRunSummary& s) {
  auto pct = [](double x) { return Fixed(100 * x, 1) + "%"; };
  auto ms = [](double x) { return Fixed(1e3 * x, 3) + " ms"; };
  auto mb = [](double bytes) { return Fixed(bytes / 1e6, 1) + " MB"; };
  // Counts the message holds as doubles (summary.proto), printed as the whole numbers they are.
  auto count = [](double n) { return I(static_cast<int64_t>(n)); };
  std::string t;
  t += "run          " + s.config_name() + " (" + s.mode() + ", seed " + std::to_string(s.seed()) +
       ", " + s.data() + ")\n";
  t += "cluster      " + I(s.nodes()) + " nodes x " + I(s.gpus_per_node()) + " GPUs, " +
       I(s.batch_size()) + " examples per node batch, " + I(s.batches()) + " steps\n";
  t += "examples/s   " + Fixed(s.examples_per_s(), 0) + " emulated, " +
       Fixed(s.examples_per_s_wall(), 0) + " wall (" + count(s.examples()) + " examples, " +
       Fixed(s.emulated_s(), 4) + " s emulated, " + Fixed(s.wall_s(), 2) + " s wall)\n";
  t += "AUC          " + Fixed(s.auc(), 4) + " held out; loss " + Fixed(s.first_loss(), 4) +
       " first batch, " + Fixed(s.final_loss(), 4) + " last tenth\n";
  // Each tier's own rate, of what the tier above it missed; then memory's combined one.
  t += "hit rates    HBM-PS " + pct(s.hbm_hit_rate()) + " of keys, MEM-PS " +
       pct(s.mem_hit_rate()) + " of HBM-PS misses, SSD-PS " + pct(s.ssd_hit_rate()) +
       " of MEM-PS misses (" + count(s.ssd_rows_read()) + " rows read, " + count(s.rows_created()) +
       " created); from memory " + pct(s.cache_hit_rate()) + " (first 100 batches " +
       pct(s.cache_hit_rate_first_100()) + ")\n";
  t += "tiers        " + count(s.parameters()) + " parameters: " + count(s.ssd_keys()) +
       " on SSD-PS (" + pct(s.parameters() > 0 ? s.ssd_keys() / s.parameters() : 0) + "), " +
       count(s.mem_rows()) + " in MEM-PS (capacity " + count(s.mem_capacity_rows()) + ")\n";
  t += "bytes moved  " + mb(s.bytes_moved()) + ": disk " + mb(s.disk_bytes()) + ", network " +
       mb(s.net_bytes()) + ", SSD read " + mb(s.ssd_bytes_read()) + ", written " +
       mb(s.ssd_bytes_written()) + ", compaction " + mb(s.compaction_bytes()) + "\n";
  t += "stages       read " + ms(s.read_s()) + "  partition " + ms(s.partition_s()) + "  ssd " +
       ms(s.ssd_s()) + "  train " + ms(s.train_s()) + " (per batch, slowest node)\n";
  t += "batch time   " + ms(s.batch_time_s()) + " vs slowest stage (" + s.slowest_stage() + ") " +
       ms(s.slowest_stage_s()) + ", sum of stages " + ms(s.stage_sum_s()) + "\n";
  t += "events       " + count(s.events()) + ", messages " + count(s.messages()) +
       (s.replicas_identical() ? "; dense replicas identical\n" : "; DENSE REPLICAS DIFFER\n");
  return t;
}

}  // namespace troupe
