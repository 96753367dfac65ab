// The single-process reference the distributed parameter-server tiers must match: one in-memory
// table of embedding rows (weights then Adagrad accumulators, EmbeddingLayout) and one CtrModel,
// trained batch by batch with exactly the decomposed step of ctr_model.hpp:
//   (1) Gather(UniqueKeys(batch)) — a missing key is created as InitRow(key);
//   (2) CtrModel::ForwardBackward;
//   (3) ApplyAdagrad on each unique key's row (sorted order), then CtrModel::ApplyDense.
// Same config and examples, bit-identical Parameters(). Prediction reads a key the table lacks as
// InitRow(key) without inserting it, as the tiers must. ReferenceTrainer::Create refuses a config
// CtrModel::Create refuses (InvalidInput); nothing throws.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <span>
#include <vector>

#include "base/status_or.hpp"
#include "paramserver/criteo.hpp"
#include "paramserver/ctr_model.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

struct CtrParameters {
  std::vector<float> dense, dense_state;  // CtrModel::dense_parameters() / dense_state()
  RowBatch embeddings;                    // every key, sorted; EmbeddingLayout rows
};

// The largest absolute difference between two snapshots' floats; +infinity if their key sets or
// sizes differ (a key one created and the other did not is a difference, not a tolerance).
double MaxAbsDifference(const CtrParameters& a, const CtrParameters& b);

class ReferenceTrainer {
 public:
  static StatusOr<ReferenceTrainer> Create(const CtrModelConfig& config);

  // One step on `batch`; returns its mean log loss (before the update).
  double TrainBatch(std::span<const Example> batch);
  // One step as `nodes` data-parallel workers take it — the parameter server's arithmetic: the
  // batch cut into `nodes` consecutive shares of batch.size() / nodes; each share's gradients (of
  // its summed loss over the whole batch's size) computed from the same parameters; the shares'
  // dense gradients and each key's embedding gradients added from zero in node order; then step
  // (3). The distributed pipeline does exactly these float operations, so its parameters equal
  // this reference's bit for bit at any node count. Returns the step's loss (the shares' summed
  // in node order). Precondition: nodes >= 1 divides batch.size().
  double TrainBatchAsNodes(std::span<const Example> batch, int nodes);
  // Consecutive batches of batch_size (the last may be shorter); returns the mean of the batches'
  // losses weighted by their sizes.
  double Train(std::span<const Example> examples, int batch_size);

  // Step (1): the rows of `keys` (sorted, distinct), creating the missing ones.
  RowBatch Gather(std::span<const Key> keys);
  // The same without creating: a missing key reads as InitRow(key).
  RowBatch Peek(std::span<const Key> keys) const;

  std::vector<float> Predict(std::span<const Example> examples) const;
  // AUC of Predict on held-out examples (NaN if they hold a single class).
  double Evaluate(std::span<const Example> held_out) const;

  CtrParameters Parameters() const;
  const CtrModel& model() const { return model_; }
  const ValueLayout& layout() const { return layout_; }
  size_t keys() const { return index_.size(); }
  // The last TrainBatch's gradients (step (2)'s output), for step-by-step comparisons.
  const BatchGradients& last_gradients() const { return gradients_; }

 private:
  explicit ReferenceTrainer(CtrModel model);
  std::span<float> Row(size_t index);

  CtrModel model_;
  ValueLayout layout_;
  absl::flat_hash_map<Key, size_t> index_;  // key -> row number in rows_
  std::vector<float> rows_;                 // layout_.floats() per key, in creation order
  BatchGradients gradients_;
};

}  // namespace troupe::paramserver
