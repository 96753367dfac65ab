// The CTR model (paramserver/ctr_model.hpp) and its reference trainer
// (paramserver/reference_trainer.hpp).
//
// Contract checked here: ForwardBackward's dense and embedding gradients match central finite
// differences of its loss; embedding gradients come back for the batch's sorted unique keys,
// summed over occurrences, and a batch split into parts with the global normaliser sums to the
// whole batch's gradients; a missing key is refused. InitRow is a function of the key alone;
// ApplyAdagrad is the documented arithmetic. The reference trainer learns the generator's hidden
// model (held-out AUC > 0.70 after 4,096 examples; about 0.74 observed, Bayes 0.86); two runs
// with the same seeds give bit-identical parameters; the step decomposed by hand over an outside
// table (a "tier") reproduces TrainBatch bit for bit. The timing model is linear in the batch.
#include "paramserver/ctr_model.hpp"

#include <absl/container/flat_hash_map.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "actors/ps/ps_options_of.hpp"
#include "paramserver/criteo.hpp"
#include "paramserver/reference_trainer.hpp"
#include "tests/unit/must.hpp"

namespace troupe::paramserver {
namespace {

// The model a run trains when its config leaves the model's fields out.
CtrModelConfig DefaultModel() { return PsOptionsOf(config::ParamServer(), 1).model; }

// The default model's learning rates, a smaller shape.
CtrModelConfig SmallConfig() {
  CtrModelConfig c = DefaultModel();
  c.dim = 4;
  c.hidden = {6, 5};
  return c;
}

// Few categories per field, so keys repeat within a batch.
std::vector<Example> Examples(int count, uint64_t seed, uint64_t keys_per_field) {
  CriteoGeneratorOptions o;
  o.seed = seed;
  o.keys_per_field = keys_per_field;
  return Must(CriteoGenerator::Create(o)).Generate(count);
}

// Rows for the batch's keys, weights of magnitude ~0.5 so every path carries gradient.
RowBatch RandomRows(std::span<const Example> batch, const CtrModelConfig& config) {
  const ValueLayout layout = EmbeddingLayout(config);
  RowBatch rows;
  rows.keys = UniqueKeys(batch);
  SplitMix64 rng(3);
  for (size_t i = 0; i < rows.keys.size(); ++i) {
    for (int k = 0; k < layout.floats(); ++k) {
      rows.values.push_back(k < config.dim ? static_cast<float>(Uniform01(rng) - 0.5) : 0.0f);
    }
  }
  return rows;
}

double Loss(const CtrModel& model, std::span<const Example> batch, const RowBatch& rows) {
  BatchGradients g;
  EXPECT_TRUE(model.ForwardBackward(batch, rows, &g));
  return g.loss;
}

// Central difference of the loss in *x, restoring it.
double Numeric(float* x, const std::function<double()>& loss) {
  const float saved = *x, h = 1e-3f;
  *x = saved + h;
  const double up = loss();
  *x = saved - h;
  const double down = loss();
  *x = saved;
  return (up - down) / (2.0 * h);
}

void ExpectClose(double numeric, double analytic, const char* what, size_t index) {
  EXPECT_NEAR(numeric, analytic, 1e-4 + 0.01 * std::fabs(analytic)) << what << " " << index;
}

TEST(CtrModelTest, DenseGradientsMatchFiniteDifferences) {
  const CtrModelConfig config = SmallConfig();
  const std::vector<Example> batch = Examples(8, 1, 3);
  RowBatch rows = RandomRows(batch, config);
  CtrModel model = Must(CtrModel::Create(config));
  BatchGradients g;
  ASSERT_TRUE(model.ForwardBackward(batch, rows, &g));
  std::vector<float> params(model.dense_parameters().begin(), model.dense_parameters().end());
  const std::vector<float> state(model.dense_state().begin(), model.dense_state().end());
  ASSERT_EQ(g.dense.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const double numeric = Numeric(&params[i], [&] {
      EXPECT_TRUE(model.SetDense(params, state).ok());
      return Loss(model, batch, rows);
    });
    ExpectClose(numeric, g.dense[i], "dense parameter", i);
  }
}

TEST(CtrModelTest, EmbeddingGradientsMatchFiniteDifferences) {
  const CtrModelConfig config = SmallConfig();
  const std::vector<Example> batch = Examples(8, 2, 3);
  RowBatch rows = RandomRows(batch, config);
  const ValueLayout layout = EmbeddingLayout(config);
  const CtrModel model = Must(CtrModel::Create(config));
  BatchGradients g;
  ASSERT_TRUE(model.ForwardBackward(batch, rows, &g));
  ASSERT_EQ(g.embedding.keys, UniqueKeys(batch));
  ASSERT_LT(g.embedding.size(), batch.size() * kSparseFields);  // keys repeat
  ASSERT_EQ(g.embedding.values.size(), g.embedding.size() * config.dim);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int k = 0; k < config.dim; ++k) {
      const double numeric =
          Numeric(&rows.row(i, layout)[k], [&] { return Loss(model, batch, rows); });
      ExpectClose(numeric, g.embedding.values[i * config.dim + k], "embedding", i);
    }
  }
}

TEST(CtrModelTest, PartsWithTheGlobalNormaliserSumToTheWholeBatch) {
  const CtrModelConfig config = SmallConfig();
  const std::vector<Example> batch = Examples(16, 3, 5);
  const RowBatch rows = RandomRows(batch, config);
  const CtrModel model = Must(CtrModel::Create(config));
  BatchGradients whole, a, b;
  ASSERT_TRUE(model.ForwardBackward(batch, rows, &whole));
  const std::span<const Example> all(batch);
  ASSERT_TRUE(model.ForwardBackward(all.first(6), rows, &a, 16));  // rows may hold extra keys
  ASSERT_TRUE(model.ForwardBackward(all.subspan(6), rows, &b, 16));
  EXPECT_NEAR(a.loss + b.loss, whole.loss, 1e-6);
  for (size_t i = 0; i < whole.dense.size(); ++i) {
    EXPECT_NEAR(a.dense[i] + b.dense[i], whole.dense[i], 1e-6) << i;
  }
  const ValueLayout gl = GradientLayout(config);
  for (size_t i = 0; i < whole.embedding.size(); ++i) {
    for (int k = 0; k < config.dim; ++k) {
      float sum = 0;
      for (const BatchGradients* part : {&a, &b}) {
        const auto& keys = part->embedding.keys;
        const auto it = std::lower_bound(keys.begin(), keys.end(), whole.embedding.keys[i]);
        if (it != keys.end() && *it == whole.embedding.keys[i]) {
          sum += part->embedding.row(it - keys.begin(), gl)[k];
        }
      }
      EXPECT_NEAR(sum, whole.embedding.row(i, gl)[k], 1e-6);
    }
  }
}

TEST(CtrModelTest, RefusesRowsThatLackAKey) {
  const CtrModelConfig config = SmallConfig();
  const std::vector<Example> batch = Examples(4, 4, 5);
  RowBatch rows = RandomRows(batch, config);
  rows.keys.erase(rows.keys.begin() + 1);
  rows.values.resize(rows.keys.size() * EmbeddingLayout(config).floats());
  const CtrModel model = Must(CtrModel::Create(config));
  BatchGradients g;
  std::vector<float> p;
  EXPECT_FALSE(model.ForwardBackward(batch, rows, &g));
  EXPECT_FALSE(model.Predict(batch, rows, &p));
  // Rows of dim floats only (no optimizer state) are accepted.
  RowBatch bare;
  bare.keys = UniqueKeys(batch);
  for (Key k : bare.keys) {
    const std::vector<float> row = InitRow(k, EmbeddingLayout(config));
    bare.values.insert(bare.values.end(), row.begin(), row.begin() + config.dim);
  }
  EXPECT_TRUE(model.ForwardBackward(batch, bare, &g));
}

TEST(CtrModelTest, RefusesBadConfigsAndVectorsOfTheWrongSize) {
  CtrModelConfig config = SmallConfig();
  config.dim = 0;
  EXPECT_EQ(CtrModel::Create(config).status().message(), "CTR model: dim must be >= 1");
  config = SmallConfig();
  config.hidden = {4, 0};
  EXPECT_EQ(CtrModel::Check(config).code(), Status::Code::kInvalidInput);
  EXPECT_FALSE(ReferenceTrainer::Create(config).ok());
  CtrModel model = Must(CtrModel::Create(SmallConfig()));
  const std::vector<float> before(model.dense_parameters().begin(), model.dense_parameters().end());
  const std::vector<float> two(2, 1.0f);
  EXPECT_EQ(model.SetDense(two, two).code(), Status::Code::kInvalidInput);
  BatchGradients g;
  g.dense = two;
  EXPECT_EQ(model.ApplyDense(g).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(std::vector<float>(model.dense_parameters().begin(), model.dense_parameters().end()),
            before);
}

TEST(CtrModelTest, InitRowIsAFunctionOfTheKeyAndAdagradIsTheDocumentedStep) {
  const ValueLayout layout{4, 4};
  EXPECT_EQ(InitRow(42, layout), InitRow(42, layout));
  EXPECT_NE(InitRow(42, layout), InitRow(43, layout));
  const std::vector<float> r = InitRow(42, layout);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(std::fabs(r[i]), kInitEmbeddingScale);
    EXPECT_EQ(r[4 + i], 0.0f);
  }
  std::vector<float> row = {1, 2, 3, 4, 0, 1, 0, 0};
  const std::vector<float> grad = {0.5f, -1, 0, 2};
  ApplyAdagrad(row, grad, 0.1f, 1e-7f, 4);
  EXPECT_FLOAT_EQ(row[4], 0.25f);
  EXPECT_FLOAT_EQ(row[5], 2);
  EXPECT_FLOAT_EQ(row[0], 1 - 0.1f * 0.5f / (0.5f + 1e-7f));
  EXPECT_FLOAT_EQ(row[1], 2 + 0.1f / (std::sqrt(2.0f) + 1e-7f));
  EXPECT_EQ(row[2], 3);
  EXPECT_FLOAT_EQ(row[3], 4 - 0.1f);
}

TEST(CtrModelTest, TimingModelIsLinearInTheBatch) {
  const CtrModel model = Must(CtrModel::Create(DefaultModel()));
  const double f0 = model.StepFlops(0), f1 = model.StepFlops(1), f2 = model.StepFlops(1000);
  EXPECT_GT(f0, 0);
  EXPECT_NEAR(f2 - f0, 1000 * (f1 - f0), 1e-6 * f2);
  // 221 -> 64 -> 32 -> 1: 16,224 multiply-adds, about 6x that per example.
  EXPECT_NEAR(f1 - f0, 6 * 16224, 2000);
  EXPECT_GT(model.StepBytes(1000, 5000), model.StepBytes(1000, 100));
  const double s = model.StepSeconds(1000, 5000, 1e12, 1e9);
  EXPECT_DOUBLE_EQ(s, std::max(f2 / 1e12, model.StepBytes(1000, 5000) / 1e9));
}

TEST(CtrReferenceTrainerTest, LearnsTheHiddenModel) {
  CriteoGeneratorOptions o;
  const std::vector<Example> train = Must(CriteoGenerator::Create(o)).Generate(4096);
  o.seed = 2;
  const std::vector<Example> held_out = Must(CriteoGenerator::Create(o)).Generate(4096);
  ReferenceTrainer trainer = Must(ReferenceTrainer::Create(DefaultModel()));
  const double before = trainer.Evaluate(held_out);
  const double first_loss = trainer.Train(std::span(train).first(1024), 128);
  const double last_loss = trainer.Train(std::span(train).subspan(1024), 128);
  const double after = trainer.Evaluate(held_out);
  std::printf("held-out AUC %.4f -> %.4f after %zu examples; loss %.4f -> %.4f; %zu keys\n", before,
              after, train.size(), first_loss, last_loss, trainer.keys());
  EXPECT_GT(after, 0.70);
  EXPECT_GT(after, before + 0.1);
  EXPECT_LT(last_loss, first_loss);
}

TEST(CtrReferenceTrainerTest, SameSeedsGiveBitIdenticalParameters) {
  CriteoGeneratorOptions o;
  o.keys_per_field = 1000;
  const std::vector<Example> train = Must(CriteoGenerator::Create(o)).Generate(1024);
  CtrModelConfig config = DefaultModel();
  ReferenceTrainer a = Must(ReferenceTrainer::Create(config));
  ReferenceTrainer b = Must(ReferenceTrainer::Create(config));
  a.Train(train, 64);
  b.Train(train, 64);
  const CtrParameters pa = a.Parameters(), pb = b.Parameters();
  EXPECT_EQ(MaxAbsDifference(pa, pb), 0.0);
  EXPECT_EQ(pa.dense, pb.dense);  // bit for bit (no NaN: == would fail)
  EXPECT_EQ(pa.embeddings.values, pb.embeddings.values);
  config.seed = 2;
  ReferenceTrainer c = Must(ReferenceTrainer::Create(config));
  c.Train(train, 64);
  EXPECT_GT(MaxAbsDifference(pa, c.Parameters()), 0.0);
}

// A "tier" doing steps (1)-(3) over its own table reproduces TrainBatch bit for bit.
TEST(CtrReferenceTrainerTest, DecomposedStepOverAnOutsideTableMatches) {
  const CtrModelConfig config = SmallConfig();
  const std::vector<Example> train = Examples(256, 5, 50);
  ReferenceTrainer reference = Must(ReferenceTrainer::Create(config));
  CtrModel model = Must(CtrModel::Create(config));
  const ValueLayout layout = EmbeddingLayout(config), gl = GradientLayout(config);
  absl::flat_hash_map<Key, std::vector<float>> table;
  for (size_t start = 0; start < train.size(); start += 32) {
    const auto batch = std::span(train).subspan(start, 32);
    reference.TrainBatch(batch);
    RowBatch rows;
    rows.keys = UniqueKeys(batch);
    for (Key k : rows.keys) {
      auto [it, created] = table.try_emplace(k);
      if (created) it->second = InitRow(k, layout);
      rows.values.insert(rows.values.end(), it->second.begin(), it->second.end());
    }
    BatchGradients g;
    ASSERT_TRUE(model.ForwardBackward(batch, rows, &g));
    for (size_t i = 0; i < g.embedding.size(); ++i) {
      ApplyAdagrad(table[g.embedding.keys[i]], g.embedding.row(i, gl), config.lr_embedding,
                   config.eps, config.dim);
    }
    ASSERT_TRUE(model.ApplyDense(g).ok());
  }
  const CtrParameters p = reference.Parameters();
  ASSERT_EQ(p.embeddings.size(), table.size());
  for (size_t i = 0; i < p.embeddings.size(); ++i) {
    const std::span<const float> row = p.embeddings.row(i, layout);
    EXPECT_TRUE(std::equal(row.begin(), row.end(), table[p.embeddings.keys[i]].begin()));
  }
  EXPECT_TRUE(std::equal(p.dense.begin(), p.dense.end(), model.dense_parameters().begin()));
}

}  // namespace
}  // namespace troupe::paramserver
