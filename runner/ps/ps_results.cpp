#include "runner/ps/ps_results.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "paramserver/auc.hpp"

namespace troupe {
namespace {

namespace ps = paramserver;

// Stage 4's busy time: pull, GPU, then the push and the all-reduce side by side.
double TrainBusy(const PsTrainerReport& r) {
  return r.pull_s + r.gpu_s + std::max(r.push_s, r.allreduce_s);
}

void AddStages(const PsRecords& records, std::vector<PsBatchRecord>* batches) {
  for (const PsStageReport& r : records.stages) {
    PsBatchRecord& b = (*batches)[r.step];
    if (r.stage == 1) {
      b.read_s = std::max(b.read_s, r.busy_s);
      b.disk_bytes += r.bytes;
    } else {
      b.partition_s = std::max(b.partition_s, r.busy_s);
      b.net_bytes += r.bytes;
    }
  }
  for (const PsShardReport& r : records.shards) {
    PsBatchRecord& b = (*batches)[r.step];
    b.ssd_s = std::max(b.ssd_s, r.busy_s);
    b.counts += r.counts;
    b.mem_rows += r.mem_rows;
    b.ssd_keys += r.ssd_keys;
  }
  for (const PsTrainerReport& r : records.trainers) {
    PsBatchRecord& b = (*batches)[r.step];
    if (r.node == 0) b.loss = r.loss;
    b.end_s = std::max(b.end_s, r.end_s);
    b.train_s = std::max(b.train_s, TrainBusy(r));
    b.pull_s = std::max(b.pull_s, r.pull_s);
    b.gpu_s = std::max(b.gpu_s, r.gpu_s);
    b.push_s = std::max(b.push_s, r.push_s);
    b.allreduce_s = std::max(b.allreduce_s, r.allreduce_s);
    b.net_bytes += r.net_bytes;
  }
}

std::vector<PsBatchRecord> BuildBatches(const PsOptions& o, const PsRecords& records) {
  std::vector<PsBatchRecord> batches(static_cast<size_t>(o.batches));
  for (size_t s = 0; s < batches.size(); ++s) batches[s].batch = static_cast<int64_t>(s);
  AddStages(records, &batches);
  double previous = 0;
  for (PsBatchRecord& b : batches) {
    b.batch_time_s = b.end_s - previous;
    previous = b.end_s;
    b.bytes_moved = b.disk_bytes + b.net_bytes + b.counts.ssd_bytes_read +
                    b.counts.ssd_bytes_written + b.counts.compaction_bytes;
  }
  return batches;
}

ps::CtrParameters Assemble(PsRecords& records, bool* identical) {
  ps::CtrParameters p;
  std::sort(records.trainer_finals.begin(), records.trainer_finals.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  p.dense = records.trainer_finals.front().dense;
  p.dense_state = records.trainer_finals.front().dense_state;
  *identical = std::all_of(records.trainer_finals.begin(), records.trainer_finals.end(),
                           [&](const PsTrainerFinal& f) {
                             return f.dense == p.dense && f.dense_state == p.dense_state;
                           });
  std::vector<std::pair<uint64_t, const float*>> rows;
  size_t width = 0;
  for (const PsShardFinal& f : records.shard_finals) {
    if (!f.keys.empty()) width = f.values.size() / f.keys.size();
    for (size_t i = 0; i < f.keys.size(); ++i) {
      rows.emplace_back(f.keys[i], f.values.data() + i * (f.values.size() / f.keys.size()));
    }
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& [key, row] : rows) {
    p.embeddings.keys.push_back(key);
    p.embeddings.values.insert(p.embeddings.values.end(), row, row + width);
  }
  return p;
}

// The mean of f over batches [from, to).
template <class F>
double Mean(const std::vector<PsBatchRecord>& b, size_t from, size_t to, F f) {
  double sum = 0;
  for (size_t i = from; i < to; ++i) sum += f(b[i]);
  return to > from ? sum / static_cast<double>(to - from) : 0;
}

// Per stage, the slowest node's mean busy time over the steady batches.
void StageMeans(const PsRecords& records, const PsOptions& o, int64_t from,
                summaries::PsRunSummary* s) {
  const auto n = static_cast<size_t>(o.nodes);
  std::vector<std::vector<double>> sum(4, std::vector<double>(n, 0));
  for (const PsStageReport& r : records.stages) {
    if (r.step >= from) sum[r.stage - 1][r.node] += r.busy_s;
  }
  for (const PsShardReport& r : records.shards) {
    if (r.step >= from) sum[2][r.shard] += r.busy_s;
  }
  for (const PsTrainerReport& r : records.trainers) {
    if (r.step >= from) sum[3][r.node] += TrainBusy(r);
  }
  const double steps = static_cast<double>(o.batches - from);
  double means[4];
  const char* names[4] = {"read", "partition", "ssd", "train"};
  double stage_sum_s = 0, slowest_stage_s = 0;
  for (int k = 0; k < 4; ++k) {
    means[k] = *std::max_element(sum[k].begin(), sum[k].end()) / steps;
    stage_sum_s += means[k];
    if (means[k] > slowest_stage_s || k == 0) {
      slowest_stage_s = means[k];
      s->set_slowest_stage(names[k]);
    }
  }
  s->set_read_s(means[0]);
  s->set_partition_s(means[1]);
  s->set_ssd_s(means[2]);
  s->set_train_s(means[3]);
  s->set_stage_sum_s(stage_sum_s);
  s->set_slowest_stage_s(slowest_stage_s);
}

void Totals(const std::vector<PsBatchRecord>& batches, summaries::PsRunSummary* s) {
  TierCounts counts, counts_first_100;  // over every batch; over batches 0-99
  int64_t disk_bytes = 0, net_bytes = 0, bytes_moved = 0;
  for (const PsBatchRecord& b : batches) {
    counts += b.counts;
    if (b.batch < 100) counts_first_100 += b.counts;
    disk_bytes += b.disk_bytes;
    net_bytes += b.net_bytes;
    bytes_moved += b.bytes_moved;
  }
  s->set_hbm_hit_rate(counts.hbm_hit_rate());
  s->set_mem_hit_rate(counts.mem_hit_rate());
  s->set_mem_hit_rate_first_100(counts_first_100.mem_hit_rate());
  s->set_cache_hit_rate(counts.memory_hit_rate());
  s->set_cache_hit_rate_first_100(counts_first_100.memory_hit_rate());
  s->set_ssd_hit_rate(counts.ssd_hit_rate());
  s->set_ssd_rows_read(static_cast<double>(counts.ssd_rows_read));
  s->set_rows_created(static_cast<double>(counts.rows_created));
  s->set_ssd_bytes_read(static_cast<double>(counts.ssd_bytes_read));
  s->set_ssd_bytes_written(static_cast<double>(counts.ssd_bytes_written));
  s->set_compaction_bytes(static_cast<double>(counts.compaction_bytes));
  s->set_disk_bytes(static_cast<double>(disk_bytes));
  s->set_net_bytes(static_cast<double>(net_bytes));
  s->set_bytes_moved(static_cast<double>(bytes_moved));
  s->set_ssd_keys(static_cast<double>(batches.back().ssd_keys));
  s->set_mem_rows(static_cast<double>(batches.back().mem_rows));
}

void ShardTotals(const PsRecords& records, summaries::PsRunSummary* s) {
  int64_t mem_capacity_rows = 0, ssd_disk_bytes = 0, ssd_files = 0, compactions = 0;
  for (const PsShardFinal& f : records.shard_finals) {
    mem_capacity_rows += f.mem_capacity_rows;
    ssd_disk_bytes += f.ssd_disk_bytes;
    ssd_files += f.ssd_files;
    compactions += f.compactions;
  }
  s->set_mem_capacity_rows(static_cast<double>(mem_capacity_rows));
  s->set_ssd_disk_bytes(static_cast<double>(ssd_disk_bytes));
  s->set_ssd_files(static_cast<int32_t>(ssd_files));
  s->set_compactions(static_cast<int32_t>(compactions));
}

// Fills the summary but for the fault counts, the parameters and the AUC; keeps wall_s, messages
// and events.
void Summarize(const PsPlan& plan, const PsRecords& records,
               const std::vector<PsBatchRecord>& batches, summaries::PsRunSummary* s) {
  const PsOptions& o = plan.options;
  s->set_config_name(plan.config_name);
  s->set_mode(plan.mode);
  s->set_data(plan.data);
  s->set_seed(plan.seed);
  s->set_nodes(o.nodes);
  s->set_gpus_per_node(o.gpus_per_node);
  s->set_batch_size(o.batch_size);
  s->set_batches(static_cast<int32_t>(o.batches));
  const double examples = static_cast<double>(o.batches * o.nodes * o.batch_size);
  const double emulated_s = batches.back().end_s;
  s->set_examples(examples);
  s->set_emulated_s(emulated_s);
  s->set_examples_per_s(emulated_s > 0 ? examples / emulated_s : 0);
  s->set_examples_per_s_wall(s->wall_s() > 0 ? examples / s->wall_s() : 0);
  s->set_first_loss(batches.front().loss);
  const size_t tail = std::max<size_t>(1, batches.size() / 10);
  s->set_final_loss(Mean(batches, batches.size() - tail, batches.size(),
                         [](const PsBatchRecord& b) { return b.loss; }));
  const int64_t steady_from = std::min<int64_t>(o.prefetch, o.batches / 2);
  s->set_steady_from(static_cast<int32_t>(steady_from));
  StageMeans(records, o, steady_from, s);
  const double before = steady_from > 0 ? batches[steady_from - 1].end_s : 0;
  s->set_batch_time_s((emulated_s - before) / static_cast<double>(o.batches - steady_from));
  Totals(batches, s);
  ShardTotals(records, s);
}

}  // namespace

double EvaluatePsAuc(const ps::CtrModelConfig& model, const ps::CtrParameters& parameters,
                     std::span<const ps::Example> examples) {
  constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();
  if (examples.empty()) return kUndefined;
  StatusOr<ps::CtrModel> replica = ps::CtrModel::Create(model);
  if (!replica.ok() || !replica->SetDense(parameters.dense, parameters.dense_state).ok()) {
    return kUndefined;
  }
  const ps::ValueLayout layout = ps::EmbeddingLayout(model);
  const auto& keys = parameters.embeddings.keys;
  constexpr size_t kChunk = 4096;
  std::vector<float> scores, part, labels;
  for (size_t start = 0; start < examples.size(); start += kChunk) {
    const auto chunk = examples.subspan(start, std::min(kChunk, examples.size() - start));
    ps::RowBatch rows;
    rows.keys = ps::UniqueKeys(chunk);
    rows.values.resize(rows.keys.size() * layout.floats());
    for (size_t i = 0; i < rows.keys.size(); ++i) {
      const auto it = std::lower_bound(keys.begin(), keys.end(), rows.keys[i]);
      if (it == keys.end() || *it != rows.keys[i]) {
        ps::InitRow(rows.keys[i], layout, rows.row(i, layout));
        continue;
      }
      const auto known = parameters.embeddings.row(static_cast<size_t>(it - keys.begin()), layout);
      std::copy(known.begin(), known.end(), rows.row(i, layout).begin());
    }
    replica->Predict(chunk, rows, &part);
    scores.insert(scores.end(), part.begin(), part.end());
  }
  for (const ps::Example& e : examples) labels.push_back(e.label);
  return ps::Auc(scores, labels);
}

namespace {

// The fault records in time order (ties: node, then arrival), and their counts.
void CollectFaults(PsRecords& records, PsRunResult* result) {
  std::vector<PsFaultRecord>& faults = records.faults;
  std::stable_sort(faults.begin(), faults.end(),
                   [](const PsFaultRecord& a, const PsFaultRecord& b) {
                     return a.at_s != b.at_s ? a.at_s < b.at_s : a.node < b.node;
                   });
  int64_t injected = 0, crashes = 0, restarts = 0, write_failures = 0, recoveries = 0;
  int64_t replayed = 0, lost = 0;
  for (const PsFaultRecord& r : faults) {
    injected += r.event == "crashed" || r.event == "began";
    crashes += r.event == "crashed";
    restarts += r.event == "restarted";
    write_failures += r.event == "write_failed";
    recoveries += r.event == "writes_recovered";
    replayed += r.event == "replayed";
    lost += r.event == "updates_lost" ? r.count : 0;
  }
  summaries::PsRunSummary& s = result->summary;
  s.set_faults_injected(static_cast<int32_t>(injected));
  s.set_crashes(static_cast<int32_t>(crashes));
  s.set_restarts(static_cast<int32_t>(restarts));
  s.set_disk_write_failures(static_cast<int32_t>(write_failures));
  s.set_disk_recoveries(static_cast<int32_t>(recoveries));
  s.set_steps_replayed(static_cast<int32_t>(replayed));
  s.set_updates_lost(static_cast<int32_t>(lost));
  result->faults = std::move(faults);
}

}  // namespace

void BuildPsResult(const PsPlan& plan, PsRecords records, PsRunResult* result) {
  CollectFaults(records, result);
  result->batches = BuildBatches(plan.options, records);
  bool identical = false;
  result->parameters = Assemble(records, &identical);
  result->summary.set_replicas_identical(identical);
  Summarize(plan, records, result->batches, &result->summary);
  result->summary.set_parameters(static_cast<double>(result->parameters.embeddings.keys.size()));
  result->summary.set_auc(EvaluatePsAuc(plan.options.model, result->parameters, plan.holdout));
}

}  // namespace troupe
