// CTR data (paramserver/criteo.hpp), the Zipf sampler (paramserver/zipf.hpp) and AUC
// (paramserver/auc.hpp).
//
// Contract checked here: keys of different fields never collide and a missing category has its
// own key per field; the generator is a function of its seeds, its labels follow its hidden model
// (click rate = mean true probability, Bayes AUC ~0.86) and its rank-0 key is the most frequent.
// Zipf draws match the law (chi-square) at skews 0.9, 1.0, 1.1, 1.3, repeat with the seed and stay
// in range for huge n. Criteo TSV lines parse (empty fields, CRLF, negative integers, upper-case
// hex); malformed lines are named path:line and field, skipped or stopping the read by option.
// AUC: 0.5 on all ties, 1 perfect, 0 reversed, hand-computed cases, brute force on random ties,
// NaN on one class.
#include "paramserver/criteo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "paramserver/auc.hpp"
#include "paramserver/zipf.hpp"
#include "tests/unit/must.hpp"

namespace troupe::paramserver {
namespace {

namespace fs = std::filesystem;

TEST(CriteoTest, KeysNeverCollideAcrossFields) {
  std::set<Key> keys;
  for (int f = 0; f < kSparseFields; ++f) {
    keys.insert(MissingKey(f));
    for (uint64_t c : {0ull, 1ull, 0xFFFFFFFFull, 0x68FD1E64ull}) keys.insert(CategoryKey(f, c));
  }
  EXPECT_EQ(keys.size(), size_t{kSparseFields * 5});
  EXPECT_EQ(CategoryKey(3, 0x1234), CategoryKey(3, 0x1234));
  EXPECT_EQ(CategoryKey(3, 0x1234), CategoryKey(3, 0x0000123400000000ull));  // folded
}

TEST(CriteoTest, GeneratorRefusesOptionsItCannotSample) {
  CriteoGeneratorOptions o;
  o.keys_per_field = 0;
  EXPECT_EQ(CriteoGenerator::Create(o).status().code(), Status::Code::kInvalidInput);
  o.keys_per_field = (uint64_t{1} << 32) + 1;
  EXPECT_FALSE(CriteoGenerator::Create(o).ok());
  o.keys_per_field = 10;
  o.zipf_skew = 0;
  EXPECT_EQ(CriteoGenerator::Create(o).status().message(),
            "Criteo generator: zipf_skew must be a positive number");
}

TEST(CriteoTest, GeneratorIsAFunctionOfItsSeedsAndFollowsItsHiddenModel) {
  CriteoGeneratorOptions o;
  CriteoGenerator a = Must(CriteoGenerator::Create(o)), b = Must(CriteoGenerator::Create(o));
  const std::vector<Example> xs = a.Generate(20000), ys = b.Generate(100);
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(xs[i].sparse, ys[i].sparse);
    EXPECT_EQ(xs[i].dense, ys[i].dense);
    EXPECT_EQ(xs[i].label, ys[i].label);
  }
  o.seed = 2;
  EXPECT_NE(Must(CriteoGenerator::Create(o)).Next().sparse, xs[0].sparse);
  double clicks = 0, expected = 0;
  int rank0 = 0, missing = 0;
  std::vector<float> truth, labels;
  for (const Example& e : xs) {
    clicks += e.label;
    truth.push_back(static_cast<float>(a.TrueProbability(e)));
    expected += truth.back();
    labels.push_back(e.label);
    rank0 += e.sparse[5] == CriteoGenerator::GeneratedKey(5, 0);
    missing += e.sparse[5] == MissingKey(5);
  }
  EXPECT_NEAR(clicks, expected, 4 * std::sqrt(expected));
  EXPECT_GT(Auc(truth, labels), 0.83);  // the Bayes AUC
  // Zipf(1e5, 1.1): P(rank 0) = 0.1347; 2% missing.
  EXPECT_NEAR(rank0 / 20000.0, 0.98 * 0.1347, 0.01);
  EXPECT_NEAR(missing / 20000.0, 0.02, 0.005);
}

// Chi-square of `draws` Zipf samples against the law, bins of expected count < 5 merged.
void ExpectZipfLaw(uint64_t n, double skew, uint64_t seed) {
  const int draws = 200000;
  ZipfSampler sampler(n, skew, seed);
  std::vector<int> counts(n);
  for (int i = 0; i < draws; ++i) {
    const uint64_t k = sampler.Next();
    ASSERT_LT(k, n);
    ++counts[k];
  }
  const std::vector<double> p = sampler.distribution().Probabilities();
  double chi2 = 0, expected = 0, observed = 0;
  int bins = 0;
  for (uint64_t k = 0; k < n; ++k) {
    expected += p[k] * draws;
    observed += counts[k];
    if (expected < 5 && k + 1 < n) continue;
    chi2 += (observed - expected) * (observed - expected) / expected;
    ++bins;
    expected = observed = 0;
  }
  if (bins < 2) return;  // n == 1: nothing to test beyond the range
  const double df = bins - 1;
  EXPECT_LT(chi2, df + 5 * std::sqrt(2 * df)) << "skew " << skew << ", " << bins << " bins";
  EXPECT_NEAR(counts[0] / double(draws), p[0], 5 * std::sqrt(p[0] / draws));
}

TEST(ZipfTest, FrequenciesFollowTheLaw) {
  for (double skew : {0.9, 1.0, 1.1, 1.3}) ExpectZipfLaw(1000, skew, 11);
  ExpectZipfLaw(1, 1.1, 1);
  ExpectZipfLaw(7, 0.9, 2);
}

TEST(ZipfTest, RepeatsWithTheSeedAndHandlesHugeN) {
  ZipfSampler a(1 << 20, 1.2, 5), b(1 << 20, 1.2, 5), c(1 << 20, 1.2, 6);
  int same = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    same += x == c.Next();
  }
  EXPECT_LT(same, 500);
  const uint64_t n = uint64_t{1} << 40;
  ZipfSampler huge(n, 0.9, 7);
  int zeros = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t k = huge.Next();
    ASSERT_LT(k, n);
    zeros += k == 0;
  }
  // P(0) = 1 / H(n, 0.9) = 1 / (zeta(0.9) + n^0.1 / 0.1 + ...) = 0.00664.
  EXPECT_NEAR(zeros / 100000.0, 0.00664, 0.0013);
}

class CriteoTsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("troupe_criteo_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "day.tsv").string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

// A line from fields: label, 13 integers, 26 categories (missing ones filled with "").
std::string Line(const std::string& label, std::vector<std::string> dense,
                 std::vector<std::string> cats) {
  dense.resize(kDenseFields);
  cats.resize(kSparseFields);
  std::string line = label;
  for (const std::string& d : dense) line += "\t" + d;
  for (const std::string& c : cats) line += "\t" + c;
  return line + "\n";
}

TEST_F(CriteoTsvTest, ReadsLinesWithEmptyFields) {
  const std::string good = Line("1", {"5", "", "-1", "1000"}, {"68fd1e64", "", "05DB9164"});
  std::string crlf = Line("0", {}, {});
  crlf.back() = '\r';
  crlf.push_back('\n');
  const std::string path = Write(good + crlf);
  std::vector<Example> out;
  std::string skipped = "stale";
  CriteoReadStats stats;
  const Status read = ReadCriteoTsv(path, OnError::kStop, &out, &stats, &skipped);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(skipped, "");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(stats.lines, 2);
  EXPECT_EQ(out[0].label, 1.0f);
  EXPECT_EQ(out[0].dense[0], 5.0f);
  EXPECT_EQ(out[0].dense[1], 0.0f);
  EXPECT_EQ(out[0].dense[2], -1.0f);
  EXPECT_EQ(out[0].dense[3], 1000.0f);
  EXPECT_EQ(out[0].sparse[0], CategoryKey(0, 0x68fd1e64));
  EXPECT_EQ(out[0].sparse[1], MissingKey(1));
  EXPECT_EQ(out[0].sparse[2], CategoryKey(2, 0x05db9164));
  EXPECT_EQ(out[0].sparse[25], MissingKey(25));
  EXPECT_EQ(out[1].label, 0.0f);
  EXPECT_EQ(out[1].sparse[0], MissingKey(0));
  EXPECT_EQ(DenseFeature(-1), 0.0f);
  EXPECT_FLOAT_EQ(DenseFeature(1000), std::log1p(1000.0f));
}

TEST_F(CriteoTsvTest, MalformedLinesAreNamedAndSkippedOrStop) {
  const std::string good = Line("1", {"3"}, {"abc"});
  std::string short_line = good;
  short_line.erase(short_line.rfind('\t'));
  short_line += "\n";
  const std::string text = good + Line("2", {}, {}) + good + Line("0", {"1.5"}, {}) +
                           Line("0", {}, {"", "xyz"}) + short_line + good;
  const std::string path = Write(text);
  std::vector<Example> out;
  std::string error;
  CriteoReadStats stats;
  const Status stopped = ReadCriteoTsv(path, OnError::kStop, &out, &stats);
  EXPECT_EQ(stopped.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(stopped.message(), path + ":2: field 1 (label): '2' is not a label (0 or 1)");
  out.clear();
  ASSERT_TRUE(ReadCriteoTsv(path, OnError::kSkip, &out, &stats, &error).ok());
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(stats.skipped, 4);
  EXPECT_EQ(stats.lines, 7);
  EXPECT_NE(error.find(path + ":4: field 2 (I1): '1.5' is not an integer"), std::string::npos);
  EXPECT_NE(error.find(path + ":5: field 16 (C2): 'xyz' is not hexadecimal"), std::string::npos);
  EXPECT_NE(error.find(path + ":6: expected 40 tab-separated fields, found 39"), std::string::npos);
  std::string many;
  for (int i = 0; i < 15; ++i) many += "junk\n";
  out.clear();
  ASSERT_TRUE(ReadCriteoTsv(Write(many), OnError::kSkip, &out, &stats, &error).ok());
  EXPECT_EQ(stats.skipped, 15);
  EXPECT_NE(error.find("... and 5 more malformed lines"), std::string::npos) << error;
  const Status absent = ReadCriteoTsv((dir_ / "absent.tsv").string(), OnError::kSkip, &out);
  EXPECT_EQ(absent.code(), Status::Code::kInvalidInput);
  EXPECT_NE(absent.message().find("cannot read"), std::string::npos);
  Example e;
  EXPECT_EQ(ParseCriteoLine("1\t2", &e).message(), "expected 40 tab-separated fields, found 2");
}

TEST_F(CriteoTsvTest, ALineLongerThanOneMebibyteStopsTheReadEvenWhenSkipping) {
  const std::string good = Line("1", {"3"}, {"abc"});
  const std::string path = Write(good + std::string((size_t{1} << 20) + 1, '7') + "\n" + good);
  for (OnError on_error : {OnError::kStop, OnError::kSkip}) {
    std::vector<Example> out;
    const Status read = ReadCriteoTsv(path, on_error, &out);
    EXPECT_EQ(read.code(), Status::Code::kInvalidInput);
    EXPECT_EQ(read.message(),
              path + ":2: line longer than 1048576 bytes (1 MiB); is this a text file?");
  }
  // A line of exactly 1 MiB is read (and, malformed, skipped).
  const std::string at_bound = Write(good + std::string(size_t{1} << 20, '7') + "\n" + good);
  std::vector<Example> out;
  CriteoReadStats stats;
  ASSERT_TRUE(ReadCriteoTsv(at_bound, OnError::kSkip, &out, &stats).ok());
  EXPECT_EQ(stats.skipped, 1);
  EXPECT_EQ(out.size(), 2u);
}

TEST(AucTest, HandCases) {
  const std::vector<float> labels = {0, 0, 1, 1};
  EXPECT_DOUBLE_EQ(Auc(std::vector<float>{0.3f, 0.3f, 0.3f, 0.3f}, labels), 0.5);
  EXPECT_DOUBLE_EQ(Auc(std::vector<float>{0.1f, 0.2f, 0.8f, 0.9f}, labels), 1.0);
  EXPECT_DOUBLE_EQ(Auc(std::vector<float>{0.9f, 0.8f, 0.2f, 0.1f}, labels), 0.0);
  EXPECT_DOUBLE_EQ(Auc(std::vector<float>{0.1f, 0.4f, 0.35f, 0.8f}, labels), 0.75);
  // Positives 0.5, 0.9 against negatives 0.5, 0.2: 0.5 + 1 + 1 + 1 of 4 pairs.
  EXPECT_DOUBLE_EQ(Auc(std::vector<float>{0.5f, 0.5f, 0.2f, 0.9f}, std::vector<float>{1, 0, 0, 1}),
                   0.875);
  EXPECT_TRUE(std::isnan(Auc(std::vector<float>{0.1f, 0.2f}, std::vector<float>{1, 1})));
  EXPECT_NEAR(LogLoss(std::vector<float>{0.5f, 0.5f}, std::vector<float>{0, 1}), std::log(2.0),
              1e-7);
}

TEST(AucTest, MatchesPairCountingOnRandomTies) {
  SplitMix64 rng(9);
  std::vector<float> scores(500), labels(500);
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = static_cast<float>(rng() % 20);
    labels[i] = rng() % 3 == 0 ? 1.0f : 0.0f;
  }
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = 0; j < scores.size(); ++j) {
      if (labels[i] != 1 || labels[j] != 0) continue;
      ++pairs;
      wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
    }
  }
  EXPECT_NEAR(Auc(scores, labels), wins / pairs, 1e-12);
}

}  // namespace
}  // namespace troupe::paramserver
