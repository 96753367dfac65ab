// CTR examples in Criteo's shape (13 integer features, 26 categorical ones): a seeded generator
// with Zipf-distributed categories and labels from a hidden logistic model, and a reader for
// Criteo's TSV files.
//
// Keys: category c of categorical field f (0-25) is the key CategoryKey(f, c), an injective
// function of (f, c) for c < 2^32 (a bijective 64-bit mix of f, c and a "missing" bit), so two
// fields never share a key and neither do two categories of one field; an empty field is the
// field's own MissingKey(f). Criteo's categories are 8 hex digits (32 bits); longer ones are folded
// to 32 bits (they may then collide within their field, never across fields).
//
// Dense features are kept raw (Criteo's counts, 0 where empty); the model reads each as
// DenseFeature(x) = log(1 + max(x, 0)).
//
// The generator (docs/ctr_model.md): each field's category is a Zipf(keys_per_field, zipf_skew)
// rank mapped to a 32-bit category by a fixed bijection; the label is Bernoulli(sigmoid(logit))
// with logit = bias + sum_f a_f * s * z(key_f) + sum_d v_d * (DenseFeature(x_d) - mu_d)
// + interaction * s * z(key_0) * z(key_1), where z(key) ~ N(0, 1), the field importances a_f,
// weights v_d and means mu_d are deterministic functions of hidden_seed. With the defaults the
// Bayes AUC (scoring by the true probability) is about 0.86 and the click rate about 0.29.
//
// Errors: CriteoGenerator::Create refuses options the Zipf sampler cannot serve; the reader returns
// InvalidInput naming the file, line and field. Nothing throws.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "paramserver/types.hpp"
#include "paramserver/zipf.hpp"

namespace troupe::paramserver {

inline constexpr int kDenseFields = 13;
inline constexpr int kSparseFields = 26;

struct Example {
  float label = 0;  // 0 or 1
  std::array<float, kDenseFields> dense{};
  std::array<Key, kSparseFields> sparse{};
};

// Keys of categorical field `field` in [0, kSparseFields).
Key CategoryKey(int field, uint64_t category);
Key MissingKey(int field);

float DenseFeature(float raw);

struct CriteoGeneratorOptions {
  uint64_t seed = 1;                 // the example stream
  double zipf_skew = 1.1;            // 0.9-1.3 in the literature
  uint64_t keys_per_field = 100000;  // categories per field, <= 2^32
  uint64_t hidden_seed = 7;          // the hidden model: same seed, same distribution
  double missing_rate = 0.02;        // each field (dense or categorical) is empty with this chance
  double key_weight_std = 0.45;      // s above
  double dense_weight_std = 0.35;    // v_d ~ N(0, dense_weight_std)
  double interaction = 0.5;
  double bias = -1.3;
};

class CriteoGenerator {
 public:
  // InvalidInput unless keys_per_field is in [1, 2^32] and zipf_skew is a positive number.
  static StatusOr<CriteoGenerator> Create(const CriteoGeneratorOptions& options);

  Example Next();
  std::vector<Example> Generate(int64_t count);

  // The hidden model's click probability of an example (of any source: a key it has no weight
  // for simply carries a z from its hash).
  double TrueProbability(const Example& example) const;

  // The key the generator emits for Zipf rank `rank` (0 = most frequent) of `field`.
  static Key GeneratedKey(int field, uint64_t rank);

  const CriteoGeneratorOptions& options() const { return options_; }

 private:
  explicit CriteoGenerator(const CriteoGeneratorOptions& options);

  CriteoGeneratorOptions options_;
  ZipfDistribution zipf_;
  SplitMix64 rng_;
  std::array<double, kSparseFields> field_importance_{};
  std::array<double, kDenseFields> dense_weight_{}, dense_mean_{};
};

enum class OnError { kSkip, kStop };

struct CriteoReadStats {
  int64_t lines = 0;     // lines read (the stopping line included)
  int64_t examples = 0;  // examples appended
  int64_t skipped = 0;   // malformed lines skipped
};

// One line of Criteo's TSV: label (0 or 1) \t 13 integers \t 26 hex categories, 40 fields; any
// field but the label may be empty; a trailing '\r' is ignored. On failure returns InvalidInput
// saying which field and why ("field 16 (C2): 'xz' is not hexadecimal"); *out is unchanged.
Status ParseCriteoLine(std::string_view line, Example* out);

// Appends the examples of the file at `path` to *out. A malformed line is reported as
// "path:line: why". kStop: returns InvalidInput with that message at the first one (the examples
// before it stay appended). kSkip: skips it and returns OK; *skipped (if given) then holds the
// messages of the first 10 skipped lines, one a line, and a count of the rest ("" if none).
// Whatever the option, InvalidInput: a file that cannot be read ("path: cannot read: <why>"), one
// that is not a regular file (a FIFO, /dev/zero: "<field>: 'path' is a FIFO, ..."), a line
// longer than 1 MiB ("path:line: line longer than ...", base/input_file.hpp).
Status ReadCriteoTsv(const std::string& path, OnError on_error, std::vector<Example>* out,
                     CriteoReadStats* stats = nullptr, std::string* skipped = nullptr,
                     std::string_view field = "Criteo file");

}  // namespace troupe::paramserver
