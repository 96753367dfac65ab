#include "runner/ps/ps_report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "runner/run_directory.hpp"

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

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string PsBatchesCsv(const std::vector<PsBatchRecord>& batches) {
  std::string out = std::string(kPsBatchesCsvHeader) + "\n";
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

std::string PsSummaryJson(const PsSummary& s) {
  const std::pair<const char*, std::string> fields[] = {
      {"config_name", Quote(s.config_name)},
      {"mode", Quote(s.mode)},
      {"data", Quote(s.data)},
      {"seed", std::to_string(s.seed)},
      {"nodes", I(s.nodes)},
      {"gpus_per_node", I(s.gpus_per_node)},
      {"batch_size", I(s.batch_size)},
      {"batches", I(s.batches)},
      {"examples", I(s.examples)},
      {"emulated_s", G(s.emulated_s)},
      {"wall_s", G(s.wall_s)},
      {"examples_per_s", G(s.examples_per_s)},
      {"examples_per_s_wall", G(s.examples_per_s_wall)},
      {"auc", G(s.auc)},
      {"first_loss", G(s.first_loss)},
      {"final_loss", G(s.final_loss)},
      {"steady_from", I(s.steady_from)},
      {"read_s", G(s.read_s)},
      {"partition_s", G(s.partition_s)},
      {"ssd_s", G(s.ssd_s)},
      {"train_s", G(s.train_s)},
      {"slowest_stage", Quote(s.slowest_stage)},
      {"slowest_stage_s", G(s.slowest_stage_s)},
      {"batch_time_s", G(s.batch_time_s)},
      {"stage_sum_s", G(s.stage_sum_s)},
      {"hbm_hit_rate", G(s.hbm_hit_rate)},
      {"mem_hit_rate", G(s.mem_hit_rate)},
      {"mem_hit_rate_first_100", G(s.mem_hit_rate_first_100)},
      {"cache_hit_rate", G(s.cache_hit_rate)},
      {"cache_hit_rate_first_100", G(s.cache_hit_rate_first_100)},
      {"ssd_rows_read", I(s.counts.ssd_rows_read)},
      {"rows_created", I(s.counts.rows_created)},
      {"disk_bytes", I(s.disk_bytes)},
      {"net_bytes", I(s.net_bytes)},
      {"ssd_bytes_read", I(s.counts.ssd_bytes_read)},
      {"ssd_bytes_written", I(s.counts.ssd_bytes_written)},
      {"compaction_bytes", I(s.counts.compaction_bytes)},
      {"bytes_moved", I(s.bytes_moved)},
      {"parameters", I(s.parameters)},
      {"ssd_keys", I(s.ssd_keys)},
      {"mem_rows", I(s.mem_rows)},
      {"mem_capacity_rows", I(s.mem_capacity_rows)},
      {"ssd_disk_bytes", I(s.ssd_disk_bytes)},
      {"ssd_files", I(s.ssd_files)},
      {"compactions", I(s.compactions)},
      {"replicas_identical", s.replicas_identical ? "true" : "false"},
      {"messages", std::to_string(s.messages)},
      {"events", std::to_string(s.events)},
      {"faults_injected", I(s.faults_injected)},
      {"crashes", I(s.crashes)},
      {"restarts", I(s.restarts)},
      {"disk_write_failures", I(s.disk_write_failures)},
      {"disk_recoveries", I(s.disk_recoveries)},
      {"steps_replayed", I(s.steps_replayed)},
      {"updates_lost", I(s.updates_lost)}};
  std::string out = "{\n";
  for (size_t i = 0; i < std::size(fields); ++i) {
    out += std::string("  \"") + fields[i].first + "\": " + fields[i].second;
    out += i + 1 < std::size(fields) ? ",\n" : "\n";
  }
  return out + "}\n";
}

std::string PsStagingDir(const std::string& out_dir) { return StagingDirectory(out_dir); }

Status CheckPsOutDir(const std::string& out_dir) { return CheckRunDirectory(out_dir); }

std::string PsFaultsCsv(const std::vector<PsFaultRecord>& faults) {
  std::string out = std::string(kPsFaultsCsvHeader) + "\n";
  for (const PsFaultRecord& r : faults) {
    std::string detail = "\"";  // quoted: details hold commas
    for (const char c : r.detail) detail += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += G(r.at_s) + "," + I(r.node) + "," + r.fault + "," + r.event + "," + I(r.step) + "," +
           I(r.count) + "," + detail + "\"\n";
  }
  return out;
}

Status WritePsRunDirectory(const std::string& out_dir, const PsSummary& summary,
                           const std::vector<PsBatchRecord>& batches,
                           const std::vector<PsFaultRecord>* faults) {
  // The run's SSD-PS files are already in the staging folder; they move with it.
  std::vector<NamedFile> files = {{"summary.json", PsSummaryJson(summary)},
                                  {"batches.csv", PsBatchesCsv(batches)}};
  if (faults != nullptr) files.push_back({"faults.csv", PsFaultsCsv(*faults)});
  return CommitRunDirectory(out_dir, files);
}

std::string FormatPsSummaryTable(const PsSummary& s) {
  auto pct = [](double x) { return Fixed(100 * x, 1) + "%"; };
  auto ms = [](double x) { return Fixed(1e3 * x, 3) + " ms"; };
  auto mb = [](int64_t x) { return Fixed(static_cast<double>(x) / 1e6, 1) + " MB"; };
  std::string t;
  t += "run          " + s.config_name + " (" + s.mode + ", seed " + std::to_string(s.seed) + ", " +
       s.data + ")\n";
  t += "cluster      " + I(s.nodes) + " nodes x " + I(s.gpus_per_node) + " GPUs, " +
       I(s.batch_size) + " examples per node batch, " + I(s.batches) + " steps\n";
  t += "examples/s   " + Fixed(s.examples_per_s, 0) + " emulated, " +
       Fixed(s.examples_per_s_wall, 0) + " wall (" + I(s.examples) + " examples, " +
       Fixed(s.emulated_s, 4) + " s emulated, " + Fixed(s.wall_s, 2) + " s wall)\n";
  t += "AUC          " + Fixed(s.auc, 4) + " held out; loss " + Fixed(s.first_loss, 4) +
       " first batch, " + Fixed(s.final_loss, 4) + " last tenth\n";
  t += "hit rates    HBM-PS " + pct(s.hbm_hit_rate) + ", MEM-PS " + pct(s.mem_hit_rate) +
       " of the rest: from memory " + pct(s.cache_hit_rate) + " (first 100 batches " +
       pct(s.cache_hit_rate_first_100) + "); SSD-PS " + I(s.counts.ssd_rows_read) + " rows read, " +
       I(s.counts.rows_created) + " created\n";
  t += "tiers        " + I(s.parameters) + " parameters: " + I(s.ssd_keys) + " on SSD-PS (" +
       pct(s.parameters > 0 ? static_cast<double>(s.ssd_keys) / s.parameters : 0) + "), " +
       I(s.mem_rows) + " in MEM-PS (capacity " + I(s.mem_capacity_rows) + ")\n";
  t += "bytes moved  " + mb(s.bytes_moved) + ": disk " + mb(s.disk_bytes) + ", network " +
       mb(s.net_bytes) + ", SSD read " + mb(s.counts.ssd_bytes_read) + ", written " +
       mb(s.counts.ssd_bytes_written) + ", compaction " + mb(s.counts.compaction_bytes) + "\n";
  t += "stages       read " + ms(s.read_s) + "  partition " + ms(s.partition_s) + "  ssd " +
       ms(s.ssd_s) + "  train " + ms(s.train_s) + " (per batch, slowest node)\n";
  t += "batch time   " + ms(s.batch_time_s) + " vs slowest stage (" + s.slowest_stage + ") " +
       ms(s.slowest_stage_s) + ", sum of stages " + ms(s.stage_sum_s) + "\n";
  t += "events       " + std::to_string(s.events) + ", messages " + std::to_string(s.messages) +
       (s.replicas_identical ? "; dense replicas identical\n" : "; DENSE REPLICAS DIFFER\n");
  return t;
}

}  // namespace troupe
