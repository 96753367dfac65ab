// The CTR model the parameter server trains: each example's 26 categorical keys look up embedding
// rows (sum-pooled per field: one key a field in Criteo), concatenated with the 13 dense features
// (DenseFeature: log(1 + x)) into an MLP (ReLU hidden layers, one logit), trained on logistic
// loss. docs/ctr_model.md describes it and how gradients reach the parameter-server tiers.
//
// A training step decomposes so that any tier layout reproduces it:
//   (1) gather: the rows of the batch's UniqueKeys (sorted) as a RowBatch, from wherever they
//       live; a key nobody holds yet starts as InitRow(key) (a function of the key alone);
//   (2) ForwardBackward: loss, predictions, the dense gradients and the embedding gradients, one
//       row of `dim` floats per unique key, sorted by key, each the sum over the key's occurrences
//       in (example, field) order;
//   (3) apply: each key's owner runs ApplyAdagrad(row, grad, lr_embedding, eps, dim); the trainer
//       runs ApplyDense. Every float operation has a fixed order, so the same inputs give
//       bit-identical parameters.
// Not thread-safe: one CtrModel per thread. Errors: CtrModel::Create refuses a config with no
// embedding floats or an empty hidden layer (InvalidInput); SetDense and ApplyDense refuse vectors
// of the wrong size, changing nothing. Nothing throws; the asserts left guard sizes the callers
// build from the same layout, which no input can reach.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "paramserver/criteo.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

enum class DenseOptimizer { kAdagrad, kSgd };

// The fields a run's config states (its paramserver block: dim, hidden, lr_dense, lr_embedding)
// have their defaults in config/config.proto alone and are zero here until PsOptionsOf
// (actors/ps/ps_options_of.hpp) sets them, as PsOptions' are: a caller that wants the model a run
// trains by default takes PsOptionsOf(config::ParamServer(), seed).model. The rest are the
// library's own.
struct CtrModelConfig {
  int dim = 0;              // embedding floats per key
  std::vector<int> hidden;  // widths of the ReLU layers (none: a logistic regression)
  float lr_dense = 0;       // Adagrad (or SGD) step of the MLP
  float lr_embedding = 0;   // Adagrad step of the embedding rows
  float eps = 1e-7f;        // Adagrad's denominator guard
  DenseOptimizer dense_optimizer = DenseOptimizer::kAdagrad;
  uint64_t seed = 1;  // the MLP's initial weights
};

// Embedding row initialisation scale: InitRow's weights are uniform in [-scale, scale).
inline constexpr float kInitEmbeddingScale = 0.05f;

// The row layout of the embedding table for this config: dim weights, dim Adagrad accumulators.
ValueLayout EmbeddingLayout(const CtrModelConfig& config);
// The layout of a gradient row: dim floats, no optimizer state.
ValueLayout GradientLayout(const CtrModelConfig& config);

// A new key's row: layout.dim weights from a hash of the key, then zeros (optimizer state).
// row.size() == layout.floats().
void InitRow(Key key, const ValueLayout& layout, std::span<float> row);
std::vector<float> InitRow(Key key, const ValueLayout& layout);

// One Adagrad step, the same arithmetic everywhere: for i < dim,
//   acc = row[dim + i] + g*g;  row[dim + i] = acc;  row[i] -= lr * g / (sqrt(acc) + eps).
// row holds >= 2*dim floats (weights, accumulators), grad >= dim.
void ApplyAdagrad(std::span<float> row, std::span<const float> grad, float lr, float eps, int dim);

// The sorted, distinct keys of a batch.
std::vector<Key> UniqueKeys(std::span<const Example> batch);

struct BatchGradients {
  double loss = 0;                 // sum of the examples' log losses / normaliser
  std::vector<float> predictions;  // click probability of each example
  std::vector<float> dense;        // d loss / d parameter, in dense_parameters() order
  RowBatch embedding;              // UniqueKeys(batch), GradientLayout rows
};

class CtrModel {
 public:
  // InvalidInput if Check(config) fails.
  static StatusOr<CtrModel> Create(const CtrModelConfig& config);
  // dim >= 1 and every hidden width >= 1. Cheap: builds nothing.
  static Status Check(const CtrModelConfig& config);

  const CtrModelConfig& config() const { return config_; }
  int input_width() const { return widths_.front(); }

  // The MLP's parameters, flattened layer by layer (weights [in][out] row-major, then biases), and
  // the dense optimizer's state (Adagrad accumulators; zeros under SGD).
  std::span<const float> dense_parameters() const { return params_; }
  std::span<const float> dense_state() const { return state_; }
  // Replaces both (e.g. a replica catching up); sizes must match (else InvalidInput, no change).
  [[nodiscard]] Status SetDense(std::span<const float> parameters, std::span<const float> state);

  // Step (2). `rows` holds (at least) every key of the batch, sorted, each row's first dim floats
  // its weights (any row width >= dim: optimizer state, if present, is ignored). Gradients are of
  // the summed loss divided by `normaliser` (0: batch.size(); a worker computing its share of a
  // global batch passes the global size). Returns false if a key is missing or rows are malformed.
  bool ForwardBackward(std::span<const Example> batch, const RowBatch& rows, BatchGradients* out,
                       int64_t normaliser = 0) const;

  // Step (3) for the dense parameters. InvalidInput (no change) unless gradients.dense holds one
  // float per dense parameter.
  [[nodiscard]] Status ApplyDense(const BatchGradients& gradients);

  // Click probabilities of the batch with `rows` as in ForwardBackward; false if a key is missing.
  bool Predict(std::span<const Example> batch, const RowBatch& rows,
               std::vector<float>* probabilities) const;

  // Timing model of one step on a device (the arithmetic is still done on the CPU), formulas in
  // docs/ctr_model.md: FLOPs of forward, backward and the dense update (~6 x the MLP's
  // multiply-adds per example), and bytes of embedding gather/scatter-add, activations, the unique
  // keys' gradient rows and the dense parameters' traffic.
  double StepFlops(int64_t batch) const;
  double StepBytes(int64_t batch, int64_t unique_keys) const;
  // Roofline: max(flops / flops_per_s, bytes / bytes_per_s).
  double StepSeconds(int64_t batch, int64_t unique_keys, double flops_per_s,
                     double bytes_per_s) const;

 private:
  explicit CtrModel(const CtrModelConfig& config);

  struct Workspace;
  bool Slots(std::span<const Example> batch, const RowBatch& rows, std::vector<Key>* keys,
             std::vector<int32_t>* slot_rows, std::vector<int32_t>* slot_keys) const;
  void BuildInput(const Example& e, const RowBatch& rows, size_t stride, const int32_t* slot_rows,
                  float* input) const;
  float Forward(Workspace* ws) const;
  void Backward(float dlogit, Workspace* ws, float* dparams) const;

  CtrModelConfig config_;
  std::vector<int> widths_;       // input, hidden..., 1
  std::vector<size_t> w_offset_;  // per layer: weights in params_
  std::vector<size_t> b_offset_;  // per layer: biases in params_
  std::vector<float> params_, state_;
};

}  // namespace troupe::paramserver
