#include "runner/cluster/report_writer.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <system_error>
#include <utility>

#include "base/status_macros.hpp"
#include "runner/run_directory.hpp"
#include "runner/summary_json.hpp"

namespace troupe {
namespace {

// std::to_chars ignores the locale, unlike printf, so a German locale cannot turn "1.5" into
// "1,5" and break the CSV or the byte-for-byte comparison of two runs. The longest double in fixed
// notation has 309 integer digits.
constexpr size_t kFixedChars = 400;
// `value` with `decimals` decimals, written into `buf`; "nan" where it does not fit.
std::string_view FixedInto(char (&buf)[kFixedChars], double value, int decimals) {
  auto [end, ec] = std::to_chars(buf, buf + kFixedChars, value + 0.0,  // + 0.0: no "-0.000"
                                 std::chars_format::fixed, decimals);
  if (ec != std::errc()) return "nan";
  return std::string_view(buf, static_cast<size_t>(end - buf));
}

std::string Fixed(double value, int decimals) {
  char buf[kFixedChars];
  return std::string(FixedInto(buf, value, decimals));
}

std::string Seconds(double value) { return Fixed(value, 3); }

}  // namespace

namespace {

// A CSV row built field by field in place: a million-job run's jobs.csv has 17 million fields,
// and a temporary string for each (std::to_string, then +) cost the run half a second at its end.
class Row {
 public:
  explicit Row(std::string* out) : out_(out) {}
  Row& Int(int64_t value) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
    return Field(buf, end);
  }
  Row& Fixed(double value, int decimals) {
    char buf[kFixedChars];
    const std::string_view text = FixedInto(buf, value, decimals);
    return Field(text.data(), text.data() + text.size());
  }
  Row& Seconds(double value) { return Fixed(value, 3); }
  Row& Text(const std::string& text) {
    Separate();
    AppendCsvField(text, out_);
    return *this;
  }
  void End() { *out_ += '\n'; }

 private:
  void Separate() {
    if (!first_) *out_ += ',';
    first_ = false;
  }
  Row& Field(const char* begin, const char* end) {
    Separate();
    out_->append(begin, static_cast<size_t>(end - begin));
    return *this;
  }

  std::string* out_;
  bool first_ = true;
};

// `network`: the job's fabric record with a fabric (null: none, or the job never crossed it).
// `recovery`: the job's recovery costs with faults.recovery (null: no such columns).
void AppendJobRow(const JobRecord& j, bool with_network, const JobNetworkRecord* network,
                  const JobRecovery* recovery, std::string* out) {
  Row row(out);
  row.Int(j.job_id)
      .Text(j.model)
      .Int(j.gpus)
      .Int(j.iterations)
      .Seconds(j.arrival_s)
      .Seconds(j.start_s)
      .Seconds(j.end_s)
      .Seconds(j.jct_s)
      .Seconds(j.ideal_duration_s)
      .Int(j.rounds_run)
      .Seconds(j.gpu_seconds)
      .Int(j.measured ? 1 : 0)
      .Int(j.profiling_points)
      .Seconds(j.profiling_s)
      .Seconds(j.wasted_gpu_s)
      .Int(j.restarts)
      .Text(j.failure);
  if (with_network) {
    row.Seconds(network ? network->comm_s : 0).Seconds(network ? network->contention_s : 0);
  }
  if (recovery) {
    row.Int(recovery->checkpoints)
        .Seconds(recovery->checkpoint_s)
        .Seconds(recovery->restart_s)
        .Seconds(recovery->lost_s)
        .Int(recovery->interruptions)
        .Seconds(HeldS(j, *recovery))
        .Fixed(EffectiveRatio(j, *recovery), 4);
  }
  row.End();
}

void AppendRoundRow(const RoundRecord& r, std::string* out) {
  Row(out)
      .Int(r.round)
      .Seconds(r.start_s)
      .Seconds(r.end_s)
      .Int(r.gpus_allocated)
      .Fixed(r.cpus_allocated, 3)
      .Fixed(r.memory_gb_allocated, 3)
      .Int(r.jobs_running)
      .Int(r.jobs_queued)
      .Int(r.jobs_finished)
      .End();
}

// The records in job id order (equal ids as recorded). The ids are sorted beside the records'
// places, side by side: comparing through pointers to the records themselves met a cold record
// at nearly every compare.
std::vector<const JobRecord*> ById(const std::vector<JobRecord>& jobs) {
  std::vector<std::pair<int64_t, size_t>> keys(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) keys[i] = {jobs[i].job_id, i};
  std::sort(keys.begin(), keys.end());
  std::vector<const JobRecord*> sorted(jobs.size());
  for (size_t i = 0; i < keys.size(); ++i) sorted[i] = &jobs[keys[i].second];
  return sorted;
}

// Stages a CSV of `rows` rows (header first) a few hundred KB at a time: a million-job run's
// jobs.csv (~130 MB) is never built whole beside its records.
template <class AppendRow>
Status StageCsv(const std::string& out_dir, const std::string& name, const char* header,
                size_t rows, AppendRow append_row) {
  constexpr size_t kChunkBytes = 1 << 18;
  size_t next_row = 0;
  bool header_done = false;
  return StageFile(out_dir, name, [&](std::string* chunk) {
    if (!header_done) *chunk = std::string(header) + "\n";
    header_done = true;
    while (next_row < rows && chunk->size() < kChunkBytes) append_row(next_row++, chunk);
    return next_row < rows;
  });
}

}  // namespace

std::string JobsCsv(const std::vector<JobRecord>& jobs) {
  std::string out(kJobsCsvHeader);
  out += '\n';
  for (const JobRecord* j : ById(jobs)) AppendJobRow(*j, false, nullptr, nullptr, &out);
  return out;
}

std::string RoundsCsv(const std::vector<RoundRecord>& rounds) {
  std::string out(kRoundsCsvHeader);
  out += '\n';
  for (const RoundRecord& r : rounds) AppendRoundRow(r, &out);
  return out;
}

std::string LeasesCsv(const std::vector<LeaseRecord>& leases) {
  std::string out(kLeasesCsvHeader);
  out += '\n';
  for (const LeaseRecord& l : leases) {
    std::string gpu_ids;
    for (int32_t g : l.gpu_ids) {
      if (!gpu_ids.empty()) gpu_ids += ';';
      gpu_ids += std::to_string(g);
    }
    out += std::to_string(l.round) + "," + std::to_string(l.job_id) + "," +
           std::to_string(l.server) + "," + gpu_ids + "," + Fixed(l.cpus, 3) + "," +
           Fixed(l.memory_gb, 3) + "\n";
  }
  return out;
}

std::string FaultsCsv(const std::vector<FaultRecord>& faults) {
  std::string out(kFaultsCsvHeader);
  out += '\n';
  for (const FaultRecord& f : faults) {
    out += Seconds(f.at_s) + "," + CsvField(f.fault) + "," + CsvField(f.effect) + "," +
           Seconds(f.recovered_s) + "\n";
  }
  return out;
}

Status WriteRunDirectory(const std::string& out_dir, const summaries::ClusterRunSummary& summary,
                         const std::vector<JobRecord>& jobs, const std::vector<RoundRecord>& rounds,
                         const std::vector<LeaseRecord>* leases,
                         const std::vector<FaultRecord>* faults, const FabricOutput* fabric,
                         const std::vector<JobRecoveryRecord>* recovery) {
  RETURN_IF_ERROR(CheckRunDirectory(out_dir));
  // What is staged already (config.textproto, runner/run_record.hpp) goes in with the rest.
  ASSIGN_OR_RETURN(std::string json, PrintSummaryJson(summary));
  const std::vector<const JobRecord*> by_id = ById(jobs);
  const bool with_network = fabric != nullptr;
  absl::flat_hash_map<int64_t, const JobNetworkRecord*> network;
  if (with_network) {
    for (const JobNetworkRecord& n : *fabric->jobs) network[n.job_id] = &n;
  }
  absl::flat_hash_map<int64_t, const JobRecovery*> costs;
  if (recovery) {
    for (const JobRecoveryRecord& r : *recovery) costs[r.job_id] = &r.costs;
  }
  const JobRecovery no_costs;
  const std::string jobs_header = std::string(kJobsCsvHeader) +
                                  (with_network ? kJobsCsvNetworkColumns : "") +
                                  (recovery ? kJobsCsvRecoveryColumns : "");
  RETURN_IF_ERROR(StageCsv(
      out_dir, "jobs.csv", jobs_header.c_str(), by_id.size(), [&](size_t i, std::string* out) {
        const auto it = network.find(by_id[i]->job_id);
        const JobRecovery* job_costs = nullptr;
        if (recovery) {
          const auto c = costs.find(by_id[i]->job_id);
          job_costs = c == costs.end() ? &no_costs : c->second;
        }
        AppendJobRow(*by_id[i], with_network, it == network.end() ? nullptr : it->second, job_costs,
                     out);
      }));
  RETURN_IF_ERROR(
      StageCsv(out_dir, "rounds.csv", kRoundsCsvHeader, rounds.size(),
               [&rounds](size_t i, std::string* out) { AppendRoundRow(rounds[i], out); }));
  if (fabric) {
    const std::vector<LinkRecord>& links = *fabric->links;
    RETURN_IF_ERROR(
        StageCsv(out_dir, "links.csv", kLinksCsvHeader, links.size(),
                 [&](size_t i, std::string* out) { AppendLinkRow(*fabric, links[i], out); }));
  }
  std::vector<NamedFile> files = {{"summary.json", std::move(json)}};
  if (leases) files.push_back({"leases.csv", LeasesCsv(*leases)});
  if (faults) files.push_back({"faults.csv", FaultsCsv(*faults)});

  return CommitRunDirectory(out_dir, files);
}

std::string FormatSummaryTable(const summaries::ClusterRunSummary& s) {
  auto hours = [](double seconds) { return Fixed(seconds / 3600, 2); };
  auto percent = [](double fraction) { return Fixed(fraction * 100, 1) + "%"; };
  // Counts the message holds as doubles (summary.proto), printed as the whole numbers they are.
  auto count = [](double n) { return std::to_string(static_cast<uint64_t>(n)); };
  std::string t;
  t += "run          " + s.config_name() + " (" + s.mode() + ", seed " + std::to_string(s.seed()) +
       ")\n";
  t += "scheduler    " + s.policy() + " + " + s.mechanism() + "; ended: " + s.end_reason() + "\n";
  t += "JCT (h)      mean " + hours(s.jct_mean_s()) + "  median " + hours(s.jct_median_s()) +
       "  p95 " + hours(s.jct_p95_s()) + "  p99 " + hours(s.jct_p99_s()) + "\n";
  t += "makespan     " + hours(s.makespan_s()) + " h\n";
  t += "utilisation  GPU " + percent(s.gpu_utilisation()) + "  CPU " +
       percent(s.cpu_utilisation()) + "  memory " + percent(s.memory_utilisation()) + "\n";
  t += "jobs         " + std::to_string(s.jobs_total()) + " total, " +
       std::to_string(s.jobs_finished()) + " finished, " + std::to_string(s.jobs_measured()) +
       " measured (" + std::to_string(s.jobs_measured_finished()) + " finished)\n";
  t += "rounds       " + std::to_string(s.rounds()) + "\n";
  if (s.faults_injected() > 0) {
    t += "faults       " + std::to_string(s.faults_injected()) + " injected, " +
         std::to_string(s.jobs_failed()) + " jobs failed, " + Fixed(s.wasted_gpu_hours(), 2) +
         " GPU-h wasted; messages dropped " + count(s.messages_dropped()) + ", duplicated " +
         count(s.messages_duplicated()) + ", delayed " + count(s.messages_delayed()) + "\n";
  }
  if (s.has_failures()) {
    const summaries::FailureSummary& f = s.failures();
    std::string causes;
    for (int i = 0; i < f.by_cause_size() && i < 4; ++i) {
      causes += (i > 0 ? ", " : "") + f.by_cause(i).cause() + " " +
                std::to_string(f.by_cause(i).servers_down());
    }
    if (f.by_cause_size() > 4) causes += ", ...";
    t += "failures     " + std::to_string(f.servers_down()) + " servers down (" + causes + "), " +
         std::to_string(f.jobs_hit()) + " job interruptions, " + Fixed(f.repair_gpu_hours(), 1) +
         " GPU-h under repair\n";
  }
  if (s.has_recovery()) {
    const summaries::RecoverySummary& r = s.recovery();
    t += "recovery     effective training " + percent(r.effective_training_ratio()) +
         " (worst job " + percent(r.effective_training_ratio_min()) + ") of " +
         Fixed(r.held_gpu_hours(), 1) + " GPU-h held; lost work " +
         Fixed(r.lost_work_gpu_hours(), 1) + ", restarts " + Fixed(r.restart_gpu_hours(), 1) +
         ", checkpoints " + Fixed(r.checkpoint_gpu_hours(), 1) + " GPU-h; " +
         std::to_string(r.interruptions()) + " interruptions, " + std::to_string(r.checkpoints()) +
         " checkpoints\n";
  }
  if (s.has_network()) {
    const summaries::NetworkSummary& n = s.network();
    t += "network      " + std::to_string(n.jobs_crossing()) + " measured jobs crossed it; " +
         Fixed(n.comm_hours(), 1) + " h communicating, " + Fixed(n.contention_hours(), 1) +
         " h of it contention; slowdown mean " + Fixed(n.contention_slowdown_mean(), 3) + " p99 " +
         Fixed(n.contention_slowdown_p99(), 3) + "\n";
  }
  t += "events       " + count(s.events()) + ", messages " + count(s.messages()) + "\n";
  t += "wall         " + Fixed(s.wall_s(), 3) + " s, " + Fixed(s.events_per_s(), 0) +
       " events/s, " + Fixed(s.messages_per_s(), 0) + " messages/s\n";
  return t;
}

}  // namespace troupe
