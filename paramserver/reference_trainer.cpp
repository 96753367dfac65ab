#include "paramserver/reference_trainer.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

#include "base/status_macros.hpp"
#include "paramserver/auc.hpp"

namespace troupe::paramserver {

double MaxAbsDifference(const CtrParameters& a, const CtrParameters& b) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (a.dense.size() != b.dense.size() || a.dense_state.size() != b.dense_state.size() ||
      a.embeddings.keys != b.embeddings.keys ||
      a.embeddings.values.size() != b.embeddings.values.size()) {
    return kInf;
  }
  double worst = 0;
  auto compare = [&](const std::vector<float>& x, const std::vector<float>& y) {
    for (size_t i = 0; i < x.size(); ++i) {
      const double d = std::fabs(double(x[i]) - double(y[i]));
      worst = std::isnan(d) ? kInf : std::max(worst, d);
    }
  };
  compare(a.dense, b.dense);
  compare(a.dense_state, b.dense_state);
  compare(a.embeddings.values, b.embeddings.values);
  return worst;
}

StatusOr<ReferenceTrainer> ReferenceTrainer::Create(const CtrModelConfig& config) {
  ASSIGN_OR_RETURN(CtrModel model, CtrModel::Create(config));
  return ReferenceTrainer(std::move(model));
}

ReferenceTrainer::ReferenceTrainer(CtrModel model)
    : model_(std::move(model)), layout_(EmbeddingLayout(model_.config())) {}

std::span<float> ReferenceTrainer::Row(size_t index) {
  return {rows_.data() + index * layout_.floats(), static_cast<size_t>(layout_.floats())};
}

RowBatch ReferenceTrainer::Gather(std::span<const Key> keys) {
  RowBatch batch;
  batch.keys.assign(keys.begin(), keys.end());
  batch.values.resize(keys.size() * layout_.floats());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, created] = index_.try_emplace(keys[i], index_.size());
    if (created) {
      rows_.resize(rows_.size() + layout_.floats());
      InitRow(keys[i], layout_, Row(it->second));
    }
    const std::span<float> row = Row(it->second);
    std::copy(row.begin(), row.end(), batch.row(i, layout_).begin());
  }
  return batch;
}

RowBatch ReferenceTrainer::Peek(std::span<const Key> keys) const {
  RowBatch batch;
  batch.keys.assign(keys.begin(), keys.end());
  batch.values.resize(keys.size() * layout_.floats());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = index_.find(keys[i]);
    if (it == index_.end()) {
      InitRow(keys[i], layout_, batch.row(i, layout_));
      continue;
    }
    const float* row = rows_.data() + it->second * layout_.floats();
    std::copy(row, row + layout_.floats(), batch.row(i, layout_).begin());
  }
  return batch;
}

double ReferenceTrainer::TrainBatch(std::span<const Example> batch) {
  const RowBatch rows = Gather(UniqueKeys(batch));   // (1)
  model_.ForwardBackward(batch, rows, &gradients_);  // (2): every key is there
  const CtrModelConfig& config = model_.config();    // (3)
  const ValueLayout grad_layout = GradientLayout(config);
  for (size_t i = 0; i < gradients_.embedding.size(); ++i) {
    ApplyAdagrad(Row(index_.at(gradients_.embedding.keys[i])),
                 gradients_.embedding.row(i, grad_layout), config.lr_embedding, config.eps,
                 config.dim);
  }
  // The model computed these gradients itself: they have its size.
  const Status applied = model_.ApplyDense(gradients_);
  assert(applied.ok());
  (void)applied;
  return gradients_.loss;
}

double ReferenceTrainer::TrainBatchAsNodes(std::span<const Example> batch, int nodes) {
  assert(nodes >= 1 && batch.size() % static_cast<size_t>(nodes) == 0);
  const CtrModelConfig& config = model_.config();
  const ValueLayout grad_layout = GradientLayout(config);
  const auto dim = static_cast<size_t>(config.dim);
  const size_t share = batch.size() / static_cast<size_t>(nodes);
  BatchGradients total;
  total.dense.assign(model_.dense_parameters().size(), 0.0f);
  absl::flat_hash_map<Key, std::vector<float>> sums;
  for (int n = 0; n < nodes; ++n) {  // every share sees the parameters before the step
    const std::span<const Example> part = batch.subspan(static_cast<size_t>(n) * share, share);
    const RowBatch rows = Gather(UniqueKeys(part));
    model_.ForwardBackward(part, rows, &gradients_, static_cast<int64_t>(batch.size()));
    total.loss += gradients_.loss;
    for (size_t i = 0; i < total.dense.size(); ++i) total.dense[i] += gradients_.dense[i];
    for (size_t i = 0; i < gradients_.embedding.size(); ++i) {
      std::vector<float>& sum = sums[gradients_.embedding.keys[i]];
      sum.resize(dim, 0.0f);
      const std::span<const float> g = gradients_.embedding.row(i, grad_layout);
      for (size_t k = 0; k < dim; ++k) sum[k] += g[k];
    }
  }
  for (auto& [key, sum] : sums) {
    ApplyAdagrad(Row(index_.at(key)), sum, config.lr_embedding, config.eps, config.dim);
  }
  const Status applied = model_.ApplyDense(total);
  assert(applied.ok());
  (void)applied;
  return total.loss;
}

double ReferenceTrainer::Train(std::span<const Example> examples, int batch_size) {
  double weighted = 0;
  for (size_t start = 0; start < examples.size(); start += batch_size) {
    const size_t n = std::min(examples.size() - start, static_cast<size_t>(batch_size));
    weighted += TrainBatch(examples.subspan(start, n)) * double(n);
  }
  return examples.empty() ? 0 : weighted / double(examples.size());
}

std::vector<float> ReferenceTrainer::Predict(std::span<const Example> examples) const {
  constexpr size_t kChunk = 4096;
  std::vector<float> all, part;
  all.reserve(examples.size());
  for (size_t start = 0; start < examples.size(); start += kChunk) {
    const auto chunk = examples.subspan(start, std::min(kChunk, examples.size() - start));
    model_.Predict(chunk, Peek(UniqueKeys(chunk)), &part);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

double ReferenceTrainer::Evaluate(std::span<const Example> held_out) const {
  const std::vector<float> scores = Predict(held_out);
  std::vector<float> labels(held_out.size());
  for (size_t i = 0; i < held_out.size(); ++i) labels[i] = held_out[i].label;
  return Auc(scores, labels);
}

CtrParameters ReferenceTrainer::Parameters() const {
  CtrParameters p;
  p.dense.assign(model_.dense_parameters().begin(), model_.dense_parameters().end());
  p.dense_state.assign(model_.dense_state().begin(), model_.dense_state().end());
  p.embeddings.keys.reserve(index_.size());
  for (const auto& [key, index] : index_) p.embeddings.keys.push_back(key);
  std::sort(p.embeddings.keys.begin(), p.embeddings.keys.end());
  p.embeddings = Peek(p.embeddings.keys);
  return p;
}

}  // namespace troupe::paramserver
