// Partitioner (paramserver/partitioner.hpp): deduplication and owner partitioning of a batch's
// keys, and the inverse mappings.
//
// Contract checked here: DedupKeys keeps first-occurrence order and keys[i] == unique[index[i]];
// ExpandRows undoes it on rows; SumDuplicateRows sums the rows of repeated keys; PartitionByNode
// and PartitionByGpu put every key in its owner's part (NodeOf, GpuOf), in input order, with
// positions pointing back at it, every position exactly once; SplitRows then ScatterRows
// rebuilds the batch. Randomised over seeded batches against brute-force recounts.
#include "paramserver/partitioner.hpp"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

namespace troupe::paramserver {
namespace {

std::vector<Key> RandomKeys(std::mt19937_64& rng, size_t n, Key range) {
  std::uniform_int_distribution<Key> pick(0, range - 1);
  std::vector<Key> keys(n);
  for (Key& k : keys) k = pick(rng);
  return keys;
}

// Row i of `keys`: floats values derived from the key and i.
RowBatch RowsFor(const std::vector<Key>& keys, int32_t floats) {
  RowBatch batch;
  batch.keys = keys;
  for (size_t i = 0; i < keys.size(); ++i) {
    for (int32_t f = 0; f < floats; ++f)
      batch.values.push_back(static_cast<float>(keys[i] * 10 + f));
  }
  return batch;
}

TEST(PartitionerTest, DedupKeepsFirstOccurrenceOrder) {
  const std::vector<Key> keys = {7, 3, 7, 7, 9, 3, 1};
  const Dedup d = DedupKeys(keys);
  EXPECT_EQ(d.unique, (std::vector<Key>{7, 3, 9, 1}));
  EXPECT_EQ(d.index, (std::vector<uint32_t>{0, 1, 0, 0, 2, 1, 3}));
}

TEST(PartitionerTest, DedupOfEmptyBatchIsEmpty) {
  const Dedup d = DedupKeys({});
  EXPECT_TRUE(d.unique.empty());
  EXPECT_TRUE(d.index.empty());
}

TEST(PartitionerTest, DedupRandomBatchesMatchRecount) {
  std::mt19937_64 rng(42);
  Deduper deduper;  // reused across batches, as the pipeline does
  Dedup d;
  for (int round = 0; round < 50; ++round) {
    const std::vector<Key> keys = RandomKeys(rng, 1 + rng() % 2000, 1 + rng() % 500);
    deduper.Into(keys, &d);
    ASSERT_EQ(d.index.size(), keys.size());
    std::unordered_map<Key, size_t> first;
    for (size_t i = 0; i < keys.size(); ++i) first.try_emplace(keys[i], first.size());
    ASSERT_EQ(d.unique.size(), first.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(d.unique[d.index[i]], keys[i]);
      EXPECT_EQ(d.index[i], first[keys[i]]);
    }
  }
}

TEST(PartitionerTest, ExpandRowsScattersUniqueRowsToEveryOccurrence) {
  const std::vector<Key> keys = {5, 6, 5, 8, 6};
  const Dedup d = DedupKeys(keys);
  const RowBatch unique = RowsFor(d.unique, 3);
  RowBatch expanded;
  ExpandRows(unique, d, 3, &expanded);
  const RowBatch want = RowsFor(keys, 3);
  EXPECT_EQ(expanded.keys, want.keys);
  EXPECT_EQ(expanded.values, want.values);
}

TEST(PartitionerTest, SumDuplicateRowsAddsGradientsOfRepeatedKeys) {
  const std::vector<Key> keys = {4, 2, 4};
  const std::vector<float> grads = {1, 2, 10, 20, 100, 200};
  RowBatch summed;
  ASSERT_TRUE(SumDuplicateRows(grads, DedupKeys(keys), 2, &summed).ok());
  EXPECT_EQ(summed.keys, (std::vector<Key>{4, 2}));
  EXPECT_EQ(summed.values, (std::vector<float>{101, 202, 10, 20}));
  EXPECT_EQ(SumDuplicateRows(std::vector<float>(5), DedupKeys(keys), 2, &summed).code(),
            Status::Code::kInvalidInput);
}

// Every key in its owner's part, in input order, each position exactly once.
template <typename OwnerFn>
void ExpectPartitionOf(const std::vector<Key>& keys, const Partition& part, size_t parts,
                       OwnerFn owner) {
  ASSERT_EQ(part.parts(), parts);
  std::vector<int> seen(keys.size(), 0);
  for (size_t p = 0; p < parts; ++p) {
    ASSERT_EQ(part.keys[p].size(), part.positions[p].size());
    for (size_t j = 0; j < part.keys[p].size(); ++j) {
      const uint32_t pos = part.positions[p][j];
      ASSERT_LT(pos, keys.size());
      EXPECT_EQ(part.keys[p][j], keys[pos]);
      EXPECT_EQ(static_cast<size_t>(owner(keys[pos])), p);
      if (j > 0) {
        EXPECT_LT(part.positions[p][j - 1], pos);
      }
      ++seen[pos];
    }
  }
  for (int s : seen) EXPECT_EQ(s, 1);
}

TEST(PartitionerTest, PartitionByNodeAndGpuFollowTheOwnerPolicy) {
  const std::vector<Key> keys = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const Partition nodes = *PartitionByNode(keys, 3);
  EXPECT_EQ(nodes.keys[0], (std::vector<Key>{0, 3, 6, 9}));
  EXPECT_EQ(nodes.keys[2], (std::vector<Key>{2, 5, 8, 11}));
  const Partition gpus = *PartitionByGpu(keys, 3, 2);  // GPU = (k / 3) % 2
  EXPECT_EQ(gpus.keys[0], (std::vector<Key>{0, 1, 2, 6, 7, 8}));
  EXPECT_EQ(gpus.positions[1], (std::vector<uint32_t>{3, 4, 5, 9, 10, 11}));
  EXPECT_EQ(PartitionByNode(keys, 0).status().code(), Status::Code::kInvalidInput);
  EXPECT_EQ(PartitionByGpu(keys, 1, 0).status().message(),
            "PartitionByGpu: nodes and gpus_per_node must be >= 1");
}

TEST(PartitionerTest, RandomPartitionsAreExactAndInvertible) {
  std::mt19937_64 rng(7);
  Partition part;  // reused: stale parts from bigger rounds must not leak
  for (int round = 0; round < 40; ++round) {
    const auto nodes = static_cast<int32_t>(1 + rng() % 5);
    const auto gpus = static_cast<int32_t>(1 + rng() % 8);
    const std::vector<Key> keys = RandomKeys(rng, rng() % 3000, 1'000'000);
    ASSERT_TRUE(PartitionByNodeInto(keys, nodes, &part).ok());
    ExpectPartitionOf(keys, part, nodes, [&](Key k) { return NodeOf(k, nodes); });
    ASSERT_TRUE(PartitionByGpuInto(keys, nodes, gpus, &part).ok());
    ExpectPartitionOf(keys, part, gpus, [&](Key k) { return GpuOf(k, nodes, gpus); });

    const RowBatch batch = RowsFor(keys, 4);
    std::vector<RowBatch> parts;
    for (size_t p = 0; p < part.parts(); ++p) parts.push_back(SplitRows(batch, part, p, 4));
    RowBatch rebuilt;
    ASSERT_TRUE(ScatterRows(parts, part, 4, &rebuilt).ok());
    EXPECT_EQ(rebuilt.keys, batch.keys);
    EXPECT_EQ(rebuilt.values, batch.values);
  }
}

TEST(PartitionerTest, ScatterRowsRejectsMismatchedParts) {
  const std::vector<Key> keys = {1, 2, 3};
  const Partition part = *PartitionByNode(keys, 2);
  RowBatch out;
  EXPECT_EQ(ScatterRows(std::vector<RowBatch>(1), part, 2, &out).message(),
            "ScatterRows: one batch per part is required");
  EXPECT_EQ(ScatterRows(std::vector<RowBatch>(2), part, 2, &out).message(),
            "ScatterRows: a part's rows do not match its keys");
}

}  // namespace
}  // namespace troupe::paramserver
