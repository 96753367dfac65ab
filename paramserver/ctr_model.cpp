#include "paramserver/ctr_model.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "base/status_macros.hpp"
#include "paramserver/zipf.hpp"

namespace troupe::paramserver {

ValueLayout EmbeddingLayout(const CtrModelConfig& config) { return {config.dim, config.dim}; }
ValueLayout GradientLayout(const CtrModelConfig& config) { return {config.dim, 0}; }

void InitRow(Key key, const ValueLayout& layout, std::span<float> row) {
  // Callers cut `row` from a batch of the same layout (RowBatch::row): no input sets its size.
  assert(row.size() == static_cast<size_t>(layout.floats()));
  SplitMix64 rng(key ^ 0xD1B54A32D192ED03ull);
  rng();  // decorrelate neighbouring keys' first draws
  for (int32_t i = 0; i < layout.dim; ++i) {
    row[i] = kInitEmbeddingScale * static_cast<float>(2 * Uniform01(rng) - 1);
  }
  std::fill(row.begin() + layout.dim, row.end(), 0.0f);
}

std::vector<float> InitRow(Key key, const ValueLayout& layout) {
  std::vector<float> row(static_cast<size_t>(layout.floats()));
  InitRow(key, layout, row);
  return row;
}

namespace {

// Adagrad over n floats: the one place its arithmetic is written (embedding rows and the MLP).
void AdagradUpdate(float* w, float* acc, const float* grad, size_t n, float lr, float eps) {
  for (size_t i = 0; i < n; ++i) {
    const float g = grad[i];
    acc[i] += g * g;
    w[i] -= lr * g / (std::sqrt(acc[i]) + eps);
  }
}

}  // namespace

void ApplyAdagrad(std::span<float> row, std::span<const float> grad, float lr, float eps, int dim) {
  // Rows and gradients are cut from batches of the config's layouts (EmbeddingLayout,
  // GradientLayout) by the caller: no input sets their sizes.
  assert(row.size() >= 2 * static_cast<size_t>(dim) && grad.size() >= static_cast<size_t>(dim));
  AdagradUpdate(row.data(), row.data() + dim, grad.data(), static_cast<size_t>(dim), lr, eps);
}

std::vector<Key> UniqueKeys(std::span<const Example> batch) {
  std::vector<Key> keys;
  keys.reserve(batch.size() * kSparseFields);
  for (const Example& e : batch) keys.insert(keys.end(), e.sparse.begin(), e.sparse.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Per-example buffers: acts[l] is layer l's input (acts[0] the model's input, acts.back() the
// logit); delta[l] is d loss / d acts[l].
struct CtrModel::Workspace {
  std::vector<std::vector<float>> acts, delta;
  explicit Workspace(const std::vector<int>& widths) {
    for (int w : widths) {
      acts.emplace_back(static_cast<size_t>(w));
      delta.emplace_back(static_cast<size_t>(w));
    }
  }
};

Status CtrModel::Check(const CtrModelConfig& config) {
  if (config.dim < 1) return Status::InvalidInput("CTR model: dim must be >= 1");
  for (int h : config.hidden) {
    if (h < 1) return Status::InvalidInput("CTR model: every hidden layer needs a width >= 1");
  }
  return Status::Ok();
}

StatusOr<CtrModel> CtrModel::Create(const CtrModelConfig& config) {
  RETURN_IF_ERROR(Check(config));
  return CtrModel(config);
}

CtrModel::CtrModel(const CtrModelConfig& config) : config_(config) {
  widths_.push_back(kSparseFields * config.dim + kDenseFields);
  for (int h : config.hidden) widths_.push_back(h);
  widths_.push_back(1);
  SplitMix64 rng(config.seed ^ 0x8BB84B93962EACC9ull);
  for (size_t l = 0; l + 1 < widths_.size(); ++l) {
    const int in = widths_[l], out = widths_[l + 1];
    const double bound = std::sqrt(6.0 / in);  // He-uniform
    w_offset_.push_back(params_.size());
    for (int i = 0; i < in * out; ++i) {
      params_.push_back(static_cast<float>((2 * Uniform01(rng) - 1) * bound));
    }
    b_offset_.push_back(params_.size());
    params_.insert(params_.end(), static_cast<size_t>(out), 0.0f);
  }
  state_.assign(params_.size(), 0.0f);
}

Status CtrModel::SetDense(std::span<const float> parameters, std::span<const float> state) {
  if (parameters.size() != params_.size() || state.size() != state_.size()) {
    return Status::InvalidInput("CTR model: " + std::to_string(parameters.size()) +
                                " dense parameters and " + std::to_string(state.size()) +
                                " state floats given, the model has " +
                                std::to_string(params_.size()));
  }
  params_.assign(parameters.begin(), parameters.end());
  state_.assign(state.begin(), state.end());
  return Status::Ok();
}

bool CtrModel::Slots(std::span<const Example> batch, const RowBatch& rows, std::vector<Key>* keys,
                     std::vector<int32_t>* slot_rows, std::vector<int32_t>* slot_keys) const {
  *keys = UniqueKeys(batch);
  if (keys->empty()) return true;
  const size_t n = rows.keys.size();
  if (n == 0 || rows.values.size() % n != 0 || rows.values.size() / n < size_t(config_.dim)) {
    return false;
  }
  std::vector<int32_t> key_row(keys->size());
  size_t r = 0;
  for (size_t u = 0; u < keys->size(); ++u) {  // merge: both sorted
    while (r < n && rows.keys[r] < (*keys)[u]) ++r;
    if (r == n || rows.keys[r] != (*keys)[u]) return false;
    key_row[u] = static_cast<int32_t>(r);
  }
  slot_rows->resize(batch.size() * kSparseFields);
  slot_keys->resize(batch.size() * kSparseFields);
  for (size_t i = 0; i < batch.size(); ++i) {
    for (int f = 0; f < kSparseFields; ++f) {
      const auto it = std::lower_bound(keys->begin(), keys->end(), batch[i].sparse[f]);
      const auto u = static_cast<int32_t>(it - keys->begin());
      (*slot_keys)[i * kSparseFields + f] = u;
      (*slot_rows)[i * kSparseFields + f] = key_row[u];
    }
  }
  return true;
}

void CtrModel::BuildInput(const Example& e, const RowBatch& rows, size_t stride,
                          const int32_t* slot_rows, float* input) const {
  const int dim = config_.dim;
  for (int f = 0; f < kSparseFields; ++f) {  // sum pooling of one key per field: the row
    const float* row = rows.values.data() + static_cast<size_t>(slot_rows[f]) * stride;
    std::copy(row, row + dim, input + f * dim);
  }
  for (int d = 0; d < kDenseFields; ++d) input[kSparseFields * dim + d] = DenseFeature(e.dense[d]);
}

float CtrModel::Forward(Workspace* ws) const {
  const size_t layers = widths_.size() - 1;
  for (size_t l = 0; l < layers; ++l) {
    const int in = widths_[l], out = widths_[l + 1];
    const float* x = ws->acts[l].data();
    const float* w = params_.data() + w_offset_[l];
    float* y = ws->acts[l + 1].data();
    std::copy(params_.begin() + b_offset_[l], params_.begin() + b_offset_[l] + out, y);
    for (int i = 0; i < in; ++i) {
      const float xi = x[i];
      if (xi == 0) continue;
      const float* wi = w + static_cast<size_t>(i) * out;
      for (int j = 0; j < out; ++j) y[j] += xi * wi[j];
    }
    if (l + 1 < layers) {
      for (int j = 0; j < out; ++j) y[j] = std::max(y[j], 0.0f);
    }
  }
  return ws->acts.back()[0];
}

void CtrModel::Backward(float dlogit, Workspace* ws, float* dparams) const {
  const size_t layers = widths_.size() - 1;
  ws->delta.back()[0] = dlogit;
  for (size_t l = layers; l-- > 0;) {
    const int in = widths_[l], out = widths_[l + 1];
    const float* x = ws->acts[l].data();
    const float* dy = ws->delta[l + 1].data();
    const float* w = params_.data() + w_offset_[l];
    float* dw = dparams + w_offset_[l];
    float* db = dparams + b_offset_[l];
    for (int j = 0; j < out; ++j) db[j] += dy[j];
    // Only the embedding part of the model's input needs a gradient.
    const int din_width = l == 0 ? kSparseFields * config_.dim : in;
    float* dx = ws->delta[l].data();
    for (int i = 0; i < in; ++i) {
      const float xi = x[i];
      const float* wi = w + static_cast<size_t>(i) * out;
      float* dwi = dw + static_cast<size_t>(i) * out;
      if (xi != 0) {
        for (int j = 0; j < out; ++j) dwi[j] += xi * dy[j];
      }
      if (i >= din_width) continue;
      if (l > 0 && xi <= 0) {  // ReLU: no gradient through an inactive unit
        dx[i] = 0;
        continue;
      }
      float s = 0;
      for (int j = 0; j < out; ++j) s += wi[j] * dy[j];
      dx[i] = s;
    }
  }
}

namespace {

float Sigmoid(float z) {
  if (z >= 0) return 1 / (1 + std::exp(-z));
  const float e = std::exp(z);
  return e / (1 + e);
}

// log(1 + exp(z)) - y z, stably.
double LogisticLoss(float z, float y) {
  const double zd = z;
  return std::max(zd, 0.0) - zd * y + std::log1p(std::exp(-std::fabs(zd)));
}

}  // namespace

bool CtrModel::ForwardBackward(std::span<const Example> batch, const RowBatch& rows,
                               BatchGradients* out, int64_t normaliser) const {
  std::vector<int32_t> slot_rows, slot_keys;
  if (!Slots(batch, rows, &out->embedding.keys, &slot_rows, &slot_keys)) return false;
  const int dim = config_.dim;
  const size_t stride = rows.keys.empty() ? 0 : rows.values.size() / rows.keys.size();
  const auto n = static_cast<float>(normaliser > 0 ? normaliser : int64_t(batch.size()));
  out->embedding.values.assign(out->embedding.keys.size() * dim, 0.0f);
  out->dense.assign(params_.size(), 0.0f);
  out->predictions.resize(batch.size());
  Workspace ws(widths_);
  double loss = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    BuildInput(batch[i], rows, stride, &slot_rows[i * kSparseFields], ws.acts[0].data());
    const float z = Forward(&ws);
    const float p = Sigmoid(z);
    out->predictions[i] = p;
    loss += LogisticLoss(z, batch[i].label);
    Backward((p - batch[i].label) / n, &ws, out->dense.data());
    for (int f = 0; f < kSparseFields; ++f) {
      float* g = out->embedding.values.data() +
                 static_cast<size_t>(slot_keys[i * kSparseFields + f]) * dim;
      const float* d = ws.delta[0].data() + f * dim;
      for (int k = 0; k < dim; ++k) g[k] += d[k];
    }
  }
  out->loss = batch.empty() ? 0 : loss / n;
  return true;
}

Status CtrModel::ApplyDense(const BatchGradients& gradients) {
  if (gradients.dense.size() != params_.size()) {
    return Status::InvalidInput("CTR model: " + std::to_string(gradients.dense.size()) +
                                " dense gradients for " + std::to_string(params_.size()) +
                                " parameters");
  }
  const float lr = config_.lr_dense;
  if (config_.dense_optimizer == DenseOptimizer::kSgd) {
    for (size_t i = 0; i < params_.size(); ++i) params_[i] -= lr * gradients.dense[i];
    return Status::Ok();
  }
  AdagradUpdate(params_.data(), state_.data(), gradients.dense.data(), params_.size(), lr,
                config_.eps);
  return Status::Ok();
}

bool CtrModel::Predict(std::span<const Example> batch, const RowBatch& rows,
                       std::vector<float>* probabilities) const {
  std::vector<Key> keys;
  std::vector<int32_t> slot_rows, slot_keys;
  if (!Slots(batch, rows, &keys, &slot_rows, &slot_keys)) return false;
  const size_t stride = rows.keys.empty() ? 0 : rows.values.size() / rows.keys.size();
  probabilities->resize(batch.size());
  Workspace ws(widths_);
  for (size_t i = 0; i < batch.size(); ++i) {
    BuildInput(batch[i], rows, stride, &slot_rows[i * kSparseFields], ws.acts[0].data());
    (*probabilities)[i] = Sigmoid(Forward(&ws));
  }
  return true;
}

double CtrModel::StepFlops(int64_t batch) const {
  double mults = 0, outs = 0;  // multiply-adds of the MLP, outputs of its layers
  for (size_t l = 0; l + 1 < widths_.size(); ++l) {
    mults += double(widths_[l]) * widths_[l + 1];
    outs += widths_[l + 1];
  }
  const double pooled = double(kSparseFields) * config_.dim;
  // Forward 2M, backward 4M (weights and inputs), bias/ReLU/delta 3 per output, pooling and
  // scatter-add 2 per embedding float, ~10 for sigmoid and loss; then 5 per parameter to update.
  const double per_example = 6 * mults + 3 * outs + 2 * pooled + 10;
  return double(batch) * per_example + 5 * double(params_.size());
}

double CtrModel::StepBytes(int64_t batch, int64_t unique_keys) const {
  double activations = 0;
  for (int w : widths_) activations += w;
  const double pooled = double(kSparseFields) * config_.dim;
  // Per example: gather (read), scatter-add (read + write) of the embedding floats, the dense
  // inputs, every activation written forward and read backward. Per step: the unique keys'
  // gradient rows, and the parameters read twice, their gradient written once, and the update
  // (read parameter, state, gradient; write parameter, state).
  const double floats = double(batch) * (3 * pooled + kDenseFields + 2 * activations) +
                        double(unique_keys) * config_.dim + 8 * double(params_.size());
  return floats * sizeof(float);
}

double CtrModel::StepSeconds(int64_t batch, int64_t unique_keys, double flops_per_s,
                             double bytes_per_s) const {
  return std::max(StepFlops(batch) / flops_per_s, StepBytes(batch, unique_keys) / bytes_per_s);
}

}  // namespace troupe::paramserver
