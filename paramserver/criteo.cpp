#include "paramserver/criteo.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "base/input_file.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"

namespace troupe::paramserver {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The SplitMix64 finaliser: a bijection of 64-bit words.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A bijection of 32-bit words, salted per field: generated ranks look like Criteo's hex ids.
uint32_t Permute32(uint32_t x, int field) {
  x ^= 0x27D4EB2Du * static_cast<uint32_t>(field + 1);
  x *= 0x9E3779B1u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  return x ^ (x >> 13);
}

// Box-Muller from two uniforms, u1 in (0, 1].
double Normal(double u1, double u2) {
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * kPi * u2);
}

template <class Urbg>
double NormalDraw(Urbg& rng) {
  const double u1 = 1 - Uniform01(rng);
  return Normal(u1, Uniform01(rng));
}

// z(key) ~ N(0, 1): a deterministic function of the hidden seed and the key.
double KeyNormal(uint64_t hidden_seed, Key key) {
  const uint64_t a = Mix64(key ^ Mix64(hidden_seed + 0x5851F42D4C957F2Dull));
  const uint64_t b = Mix64(a + 0x14057B7EF767814Full);
  return Normal(static_cast<double>((a >> 11) + 1) * 0x1.0p-53,
                static_cast<double>(b >> 11) * 0x1.0p-53);
}

uint64_t KeyInput(int field, bool missing, uint64_t category32) {
  // Every caller loops over the fields [0, kSparseFields) or derives `field` from a column index
  // it has already bounded: no input sets it.
  assert(field >= 0 && field < kSparseFields);
  return (static_cast<uint64_t>(field + 1) << 33) | (missing ? uint64_t{1} << 32 : 0) | category32;
}

}  // namespace

Key CategoryKey(int field, uint64_t category) {
  const uint64_t folded = (category ^ (category >> 32)) & 0xFFFFFFFFull;
  return Mix64(KeyInput(field, false, folded));
}

Key MissingKey(int field) { return Mix64(KeyInput(field, true, 0)); }

float DenseFeature(float raw) { return std::log1p(std::max(raw, 0.0f)); }

StatusOr<CriteoGenerator> CriteoGenerator::Create(const CriteoGeneratorOptions& options) {
  if (options.keys_per_field < 1 || options.keys_per_field > (uint64_t{1} << 32)) {
    return Status::InvalidInput("Criteo generator: keys_per_field must be in [1, 2^32], got " +
                                std::to_string(options.keys_per_field));
  }
  if (!(options.zipf_skew > 0) || !std::isfinite(options.zipf_skew)) {
    return Status::InvalidInput("Criteo generator: zipf_skew must be a positive number");
  }
  return CriteoGenerator(options);
}

CriteoGenerator::CriteoGenerator(const CriteoGeneratorOptions& options)
    : options_(options), zipf_(options.keys_per_field, options.zipf_skew), rng_(options.seed) {
  SplitMix64 hidden(Mix64(options.hidden_seed ^ 0xA0761D6478BD642Full));
  for (double& a : field_importance_) a = 0.2 + 0.8 * Uniform01(hidden);
  for (int d = 0; d < kDenseFields; ++d) {
    dense_weight_[d] = options.dense_weight_std * NormalDraw(hidden);
    dense_mean_[d] = 0.5 + 2.5 * Uniform01(hidden);
  }
}

Key CriteoGenerator::GeneratedKey(int field, uint64_t rank) {
  // Ranks come from the Zipf sampler, below keys_per_field <= 2^32 (Create checks it), or from
  // tests: no input sets them.
  assert(rank < (uint64_t{1} << 32));
  return CategoryKey(field, Permute32(static_cast<uint32_t>(rank), field));
}

Example CriteoGenerator::Next() {
  Example e;
  for (int d = 0; d < kDenseFields; ++d) {
    if (Uniform01(rng_) < options_.missing_rate) continue;
    const double t = std::max(0.0, dense_mean_[d] + NormalDraw(rng_));
    e.dense[d] = static_cast<float>(std::round(std::expm1(t)));
  }
  for (int f = 0; f < kSparseFields; ++f) {
    e.sparse[f] =
        Uniform01(rng_) < options_.missing_rate ? MissingKey(f) : GeneratedKey(f, zipf_(rng_));
  }
  e.label = Uniform01(rng_) < TrueProbability(e) ? 1.0f : 0.0f;
  return e;
}

std::vector<Example> CriteoGenerator::Generate(int64_t count) {
  std::vector<Example> out;
  out.reserve(static_cast<size_t>(std::max<int64_t>(count, 0)));
  for (int64_t i = 0; i < count; ++i) out.push_back(Next());
  return out;
}

double CriteoGenerator::TrueProbability(const Example& e) const {
  const double s = options_.key_weight_std;
  double logit = options_.bias;
  for (int f = 0; f < kSparseFields; ++f) {
    logit += field_importance_[f] * s * KeyNormal(options_.hidden_seed, e.sparse[f]);
  }
  for (int d = 0; d < kDenseFields; ++d) {
    logit += dense_weight_[d] * (DenseFeature(e.dense[d]) - dense_mean_[d]);
  }
  logit += options_.interaction * s * KeyNormal(options_.hidden_seed, e.sparse[0]) *
           KeyNormal(options_.hidden_seed, e.sparse[1]);
  return 1 / (1 + std::exp(-logit));
}

namespace {

std::string FieldName(int index) {  // 0-based column
  if (index == 0) return "label";
  std::string name(1, index <= kDenseFields ? 'I' : 'C');  // (not "I" + ...: GCC 12 -Wrestrict)
  name += std::to_string(index <= kDenseFields ? index : index - kDenseFields);
  return name;
}

Status Fail(int index, std::string_view text, const char* what) {
  return Status::InvalidInput("field " + std::to_string(index + 1) + " (" + FieldName(index) +
                              "): " + Quoted(text) + " " + what);
}

Status ParseField(int index, std::string_view text, Example* out) {
  const char* end = text.data() + text.size();
  if (index == 0) {
    if (text != "0" && text != "1") return Fail(index, text, "is not a label (0 or 1)");
    out->label = text == "1" ? 1.0f : 0.0f;
  } else if (index <= kDenseFields) {
    int64_t value = 0;
    if (!text.empty()) {
      auto [p, ec] = std::from_chars(text.data(), end, value);
      if (ec != std::errc() || p != end) return Fail(index, text, "is not an integer");
    }
    out->dense[index - 1] = static_cast<float>(value);
  } else {
    const int field = index - 1 - kDenseFields;
    uint64_t category = 0;
    if (text.empty()) {
      out->sparse[field] = MissingKey(field);
      return Status::Ok();
    }
    auto [p, ec] = std::from_chars(text.data(), end, category, 16);
    if (ec != std::errc() || p != end) return Fail(index, text, "is not hexadecimal (64 bits)");
    out->sparse[field] = CategoryKey(field, category);
  }
  return Status::Ok();
}

}  // namespace

Status ParseCriteoLine(std::string_view line, Example* out) {
  constexpr int kFields = 1 + kDenseFields + kSparseFields;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Example e;
  int index = 0;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    const std::string_view text =
        line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
    if (index < kFields) {
      RETURN_IF_ERROR(ParseField(index, text, &e));
    }
    ++index;
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (index != kFields) {
    return Status::InvalidInput("expected " + std::to_string(kFields) +
                                " tab-separated fields, found " + std::to_string(index));
  }
  *out = e;
  return Status::Ok();
}

Status ReadCriteoTsv(const std::string& path, OnError on_error, std::vector<Example>* out,
                     CriteoReadStats* stats, std::string* skipped, std::string_view field) {
  constexpr int64_t kReported = 10;
  CriteoReadStats local;
  CriteoReadStats& st = stats ? *stats : local;
  st = {};
  std::string report;
  InputFile file;
  RETURN_IF_ERROR(OpenInputFile(path, field, &file));
  LineReader lines(file.get(), path);
  std::string_view line;
  Example e;
  while (lines.Next(&line)) {
    ++st.lines;
    const Status parsed = ParseCriteoLine(line, &e);
    if (parsed.ok()) {
      out->push_back(e);
      ++st.examples;
      continue;
    }
    const std::string message = path + ":" + std::to_string(st.lines) + ": " + parsed.message();
    if (on_error == OnError::kStop) return Status::InvalidInput(message);
    if (++st.skipped <= kReported) report += (st.skipped > 1 ? "\n" : "") + message;
  }
  RETURN_IF_ERROR(lines.status());
  if (st.skipped > kReported) {
    report += "\n... and " + std::to_string(st.skipped - kReported) + " more malformed lines";
  }
  if (skipped != nullptr) *skipped = std::move(report);
  return Status::Ok();
}

}  // namespace troupe::paramserver
