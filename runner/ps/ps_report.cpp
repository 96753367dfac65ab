#include "runner/ps/ps_report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

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

summaries::PsRunSummary PsSummaryProto(const PsSummary& s) {
  summaries::PsRunSummary m;
  m.set_config_name(s.config_name);
  m.set_mode(s.mode);
  m.set_data(s.data);
  m.set_seed(s.seed);
  m.set_nodes(s.nodes);
  m.set_gpus_per_node(s.gpus_per_node);
  m.set_batch_size(s.batch_size);
  m.set_batches(s.batches);
  m.set_examples(s.examples);
  m.set_emulated_s(s.emulated_s);
  m.set_wall_s(s.wall_s);
  m.set_examples_per_s(s.examples_per_s);
  m.set_examples_per_s_wall(s.examples_per_s_wall);
  m.set_auc(s.auc);  // NaN (no held-out examples) is left out of the JSON
  m.set_first_loss(s.first_loss);
  m.set_final_loss(s.final_loss);
  m.set_steady_from(s.steady_from);
  m.set_read_s(s.read_s);
  m.set_partition_s(s.partition_s);
  m.set_ssd_s(s.ssd_s);
  m.set_train_s(s.train_s);
  m.set_slowest_stage(s.slowest_stage);
  m.set_slowest_stage_s(s.slowest_stage_s);
  m.set_batch_time_s(s.batch_time_s);
  m.set_stage_sum_s(s.stage_sum_s);
  m.set_hbm_hit_rate(s.hbm_hit_rate);
  m.set_mem_hit_rate(s.mem_hit_rate);
  m.set_mem_hit_rate_first_100(s.mem_hit_rate_first_100);
  m.set_cache_hit_rate(s.cache_hit_rate);
  m.set_cache_hit_rate_first_100(s.cache_hit_rate_first_100);
  m.set_ssd_hit_rate(s.ssd_hit_rate);
  m.set_ssd_rows_read(s.counts.ssd_rows_read);
  m.set_rows_created(s.counts.rows_created);
  m.set_disk_bytes(s.disk_bytes);
  m.set_net_bytes(s.net_bytes);
  m.set_ssd_bytes_read(s.counts.ssd_bytes_read);
  m.set_ssd_bytes_written(s.counts.ssd_bytes_written);
  m.set_compaction_bytes(s.counts.compaction_bytes);
  m.set_bytes_moved(s.bytes_moved);
  m.set_parameters(s.parameters);
  m.set_ssd_keys(s.ssd_keys);
  m.set_mem_rows(s.mem_rows);
  m.set_mem_capacity_rows(s.mem_capacity_rows);
  m.set_ssd_disk_bytes(s.ssd_disk_bytes);
  m.set_ssd_files(s.ssd_files);
  m.set_compactions(s.compactions);
  m.set_replicas_identical(s.replicas_identical);
  m.set_messages(s.messages);
  m.set_events(s.events);
  m.set_faults_injected(s.faults_injected);
  m.set_crashes(s.crashes);
  m.set_restarts(s.restarts);
  m.set_disk_write_failures(s.disk_write_failures);
  m.set_disk_recoveries(s.disk_recoveries);
  m.set_steps_replayed(s.steps_replayed);
  m.set_updates_lost(s.updates_lost);
  return m;
}

StatusOr<std::string> PsSummaryJson(const PsSummary& s) {
  summaries::PsRunSummary m = PsSummaryProto(s);
  return PrintSummaryJson(&m);
}

std::string PsFaultsCsv(const std::vector<PsFaultRecord>& faults) {
  std::string out = std::string(kPsFaultsCsvHeader) + "\n";
  for (const PsFaultRecord& r : faults) {
    std::string detail = "\"";  // quoted: details hold commas
    for (const char c : r.detail) detail += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += G(r.at_s) + "," + I(r.node) + "," + CsvField(r.fault) + "," + CsvField(r.event) + "," +
           I(r.step) + "," + I(r.count) + "," + detail + "\"\n";
  }
  return out;
}

Status WritePsRunDirectory(const std::string& out_dir, const PsSummary& summary,
                           const std::vector<PsBatchRecord>& batches,
                           const std::vector<PsFaultRecord>* faults) {
  // The run's SSD-PS files are already in the staging folder; they move with it.
  StatusOr<std::string> json = PsSummaryJson(summary);
  if (!json.ok()) return json.status();
  std::vector<NamedFile> files = {{"summary.json", *std::move(json)},
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
  // Each tier's own rate, of what the tier above it missed; then memory's combined one.
  t += "hit rates    HBM-PS " + pct(s.hbm_hit_rate) + " of keys, MEM-PS " + pct(s.mem_hit_rate) +
       " of HBM-PS misses, SSD-PS " + pct(s.ssd_hit_rate) + " of MEM-PS misses (" +
       I(s.counts.ssd_rows_read) + " rows read, " + I(s.counts.rows_created) +
       " created); from memory " + pct(s.cache_hit_rate) + " (first 100 batches " +
       pct(s.cache_hit_rate_first_100) + ")\n";
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
