// SsdStore (paramserver/ssd_store.hpp): round trips, block reads, append-only writes, compaction
// against a std::map model and its bounds over a long run, reopen, corrupt files and manifests,
// a store of another owner (shard, run) refused, and a crash test that SIGKILLs a writer at random
// points and checks nothing acknowledged is lost.
#include "paramserver/ssd_store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "actors/ps/ps_options_of.hpp"
#include "paramserver/shard_core.hpp"
#include "tests/unit/scoped_temp_dir.hpp"

namespace troupe::paramserver {
namespace {

namespace fs = std::filesystem;

constexpr ValueLayout kLayout{4, 4};  // 8 floats: 40 bytes a row on disk

SsdStoreOptions Options(uint64_t file_bytes = 1 << 20, uint64_t threshold = 1ull << 30,
                        bool sync = true) {
  SsdStoreOptions options;
  options.sync = sync;
  options.file_bytes = file_bytes;
  options.layout = kLayout;
  options.compaction_threshold = threshold;
  return options;
}

// Row of key at version: [version, key, version + 2, ..., version + floats - 1].
void AppendRow(RowBatch* batch, Key key, float version) {
  batch->keys.push_back(key);
  for (int j = 0; j < kLayout.floats(); ++j) {
    batch->values.push_back(j == 1 ? static_cast<float>(key) : version + static_cast<float>(j));
  }
}

// The version stored for each key of out, checking every row is one AppendRow wrote.
std::map<Key, float> Versions(const RowBatch& out) {
  std::map<Key, float> versions;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto row = out.row(i, kLayout);
    EXPECT_EQ(row[1], static_cast<float>(out.keys[i]));
    for (int j = 2; j < kLayout.floats(); ++j) EXPECT_EQ(row[j], row[0] + static_cast<float>(j));
    versions[out.keys[i]] = row[0];
  }
  return versions;
}

std::unique_ptr<SsdStore> OpenOk(const std::string& dir, const SsdStoreOptions& options) {
  std::unique_ptr<SsdStore> store;
  const Status status = SsdStore::Open(dir, options, &store);
  EXPECT_TRUE(status.ok()) << status.message();
  return store;
}

std::map<Key, float> ReadAll(SsdStore& store, Key key_space, GetStats* stats = nullptr) {
  std::vector<Key> keys;
  for (Key k = 0; k < key_space; ++k) keys.push_back(k);
  RowBatch out;
  const Status status = store.Get(keys, &out, stats);
  EXPECT_TRUE(status.ok()) << status.message();
  return Versions(out);
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
  io.seekg(static_cast<std::streamoff>(offset));
  const char c = static_cast<char>(io.get() ^ 0x5A);
  io.seekp(static_cast<std::streamoff>(offset));
  io.put(c);
}

TEST(SsdCrc32c, MatchesTheStandardCheckValueAndExtends) {
  EXPECT_EQ(ssd::Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(ssd::Crc32c("6789", 4, ssd::Crc32c("12345", 5)), 0xE3069283u);
  // Long buffers take the three-lane path; it must agree with short pieces chained.
  std::vector<unsigned char> data(100'003);
  std::mt19937 rng(3);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  for (size_t n : {size_t{4096}, size_t{4103}, size_t{65'536}, data.size()}) {
    uint32_t chained = 0;
    for (size_t at = 0; at < n; at += 1000) {
      chained = ssd::Crc32c(data.data() + at, std::min<size_t>(1000, n - at), chained);
    }
    EXPECT_EQ(ssd::Crc32c(data.data(), n), chained) << n;
    EXPECT_EQ(ssd::Crc32c(data.data() + 5, n - 5, ssd::Crc32c(data.data(), 5)), chained) << n;
  }
}

TEST(SsdStore, RoundTripAndMissingKeys) {
  const test::ScopedTempDir dir("ssd_roundtrip");
  auto store = OpenOk(dir.path(), Options());
  RowBatch batch;
  for (Key k = 0; k < 1000; ++k) AppendRow(&batch, k * 7, static_cast<float>(k));
  ASSERT_TRUE(store->Put(batch).ok());
  EXPECT_EQ(store->size(), 1000u);
  EXPECT_TRUE(store->Contains(21));
  EXPECT_FALSE(store->Contains(22));
  RowBatch out;
  GetStats stats;
  const std::vector<Key> keys = {14, 22, 7, 14, 6993};
  ASSERT_TRUE(store->Get(keys, &out, &stats).ok());
  EXPECT_EQ(out.keys, (std::vector<Key>{14, 7, 14, 6993}));
  EXPECT_EQ(Versions(out), (std::map<Key, float>{{7, 1}, {14, 2}, {6993, 999}}));
  EXPECT_EQ(stats.keys_found, 4);
  EXPECT_EQ(stats.keys_missing, 1);
}

TEST(SsdStore, LastOccurrenceInABatchWins) {
  const test::ScopedTempDir dir("ssd_last");
  auto store = OpenOk(dir.path(), Options());
  RowBatch batch;
  AppendRow(&batch, 5, 1);
  AppendRow(&batch, 6, 2);
  AppendRow(&batch, 5, 3);
  ASSERT_TRUE(store->Put(batch).ok());
  EXPECT_EQ(ReadAll(*store, 10), (std::map<Key, float>{{5, 3}, {6, 2}}));
  EXPECT_EQ(store->stored_rows(), 2u);
}

TEST(SsdStore, ReadsOnlyTheBlocksHoldingWantedRows) {
  const uint32_t block_rows = ssd::BlockRows(kLayout.floats(), ssd::kDefaultBlockBytes);
  const uint64_t rows = 10 * block_rows;  // one file of 10 blocks
  const test::ScopedTempDir dir("ssd_blocks");
  auto store = OpenOk(dir.path(), Options(ssd::ParamFileBytes(rows, kLayout.floats())));
  RowBatch batch;
  for (Key k = 0; k < rows; ++k) AppendRow(&batch, k, 0);
  ASSERT_TRUE(store->Put(batch).ok());
  ASSERT_EQ(store->file_count(), 1u);
  const ssd::FileShape shape{1, rows, kLayout.floats(), block_rows};
  RowBatch out;
  GetStats one;
  ASSERT_TRUE(store->Get(std::vector<Key>{42}, &out, &one).ok());
  EXPECT_EQ(one.files_read, 1);
  EXPECT_EQ(one.blocks_read, 1);
  EXPECT_EQ(one.bytes_read, static_cast<int64_t>(shape.BlockBytes(0)));
  EXPECT_LE(one.bytes_read, static_cast<int64_t>(ssd::kDefaultBlockBytes));
  // Blocks 0 (twice), 5 and 6 (adjacent: one read), 9 (the last, shorter one).
  const Key b = block_rows;
  GetStats some;
  ASSERT_TRUE(store->Get(std::vector<Key>{1, 5 * b + 3, 2, 6 * b, rows - 1, 1}, &out, &some).ok());
  EXPECT_EQ(some.files_read, 1);
  EXPECT_EQ(some.blocks_read, 4);
  EXPECT_EQ(some.bytes_read, static_cast<int64_t>(shape.BlockBytes(0) + shape.BlockBytes(5) +
                                                  shape.BlockBytes(6) + shape.BlockBytes(9)));
  EXPECT_EQ(Versions(out).size(), 5u);
  EXPECT_EQ(out.keys, (std::vector<Key>{1, 5 * b + 3, 2, 6 * b, rows - 1, 1}));
}

// Advising the kernel of the reads ahead (for a cold device) changes what is read, not what is
// returned: the same rows, blocks and bytes, across many files.
TEST(SsdStore, AdvisedReadsReturnTheSameRows) {
  const test::ScopedTempDir scoped_dir("ssd_advise");
  const std::string& dir = scoped_dir.path();
  SsdStoreOptions options = Options(ssd::ParamFileBytes(16, kLayout.floats()), 1ull << 30, false);
  {
    auto store = OpenOk(dir, options);
    for (int round = 0; round < 100; ++round) {  // 100 files: more than a Get holds open at once
      RowBatch batch;
      for (Key k = 0; k < 16; ++k) AppendRow(&batch, round * 16 + k, static_cast<float>(round));
      ASSERT_TRUE(store->Put(batch).ok());
    }
  }
  GetStats plain, advised;
  const std::map<Key, float> expected = ReadAll(*OpenOk(dir, options), 1700, &plain);
  options.advise_reads = true;
  EXPECT_EQ(ReadAll(*OpenOk(dir, options), 1700, &advised), expected);
  EXPECT_EQ(expected.size(), 1600u);
  EXPECT_EQ(advised.blocks_read, plain.blocks_read);
  EXPECT_EQ(advised.bytes_read, plain.bytes_read);
  EXPECT_EQ(advised.files_read, 100);
}

TEST(SsdStore, UpdatesAppendNewFilesAndNeverRewriteOldOnes) {
  const test::ScopedTempDir scoped_dir("ssd_append");
  const std::string& dir = scoped_dir.path();
  auto store = OpenOk(dir, Options());
  RowBatch first;
  for (Key k = 0; k < 50; ++k) AppendRow(&first, k, 1);
  ASSERT_TRUE(store->Put(first).ok());
  const std::string old_path = store->FilePath(store->FileSeqs().front());
  const std::string old_bytes = FileBytes(old_path);
  for (int round = 2; round <= 4; ++round) {
    RowBatch update;
    for (Key k = 0; k < 10; ++k) AppendRow(&update, k, static_cast<float>(round));
    ASSERT_TRUE(store->Put(update).ok());
    EXPECT_EQ(store->file_count(), static_cast<size_t>(round));
    EXPECT_EQ(FileBytes(old_path), old_bytes);
  }
  const auto versions = ReadAll(*store, 50);
  EXPECT_EQ(versions.at(3), 4);
  EXPECT_EQ(versions.at(30), 1);
  EXPECT_EQ(store->size(), 50u);
  EXPECT_EQ(store->stored_rows(), 80u);
  EXPECT_DOUBLE_EQ(store->stale_fraction(), 30.0 / 80.0);
}

TEST(SsdStore, CompactionReclaimsSpaceAndMatchesAMapModel) {
  const test::ScopedTempDir scoped_dir("ssd_compact");
  const std::string& dir = scoped_dir.path();
  // Hundreds of Puts and compactions: no fsyncs (the crash test below keeps them).
  const SsdStoreOptions options =
      Options(ssd::ParamFileBytes(16, kLayout.floats()), 16 << 10, /*sync=*/false);
  auto store = OpenOk(dir, options);
  std::map<Key, float> model;
  std::mt19937_64 rng(7);
  int compactions = 0;
  for (int op = 1; op <= 400; ++op) {
    RowBatch batch;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const Key key = rng() % 300;
      AppendRow(&batch, key, static_cast<float>(op));
      model[key] = static_cast<float>(op);
    }
    ASSERT_TRUE(store->Put(batch).ok());
    const uint64_t before = store->disk_bytes();
    bool compacted = false;
    CompactionStats stats;
    ASSERT_TRUE(store->MaybeCompact(&compacted, &stats).ok());
    if (compacted) {
      ++compactions;
      EXPECT_LE(store->disk_bytes(), before);
      EXPECT_EQ(stats.bytes_reclaimed, static_cast<int64_t>(before - store->disk_bytes()));
      EXPECT_LT(store->stale_fraction(), options.stale_fraction);
    }
    if (op % 97 == 0) store = OpenOk(dir, options);  // reopen mid-way
    if (op % 50 == 0) {
      ASSERT_EQ(ReadAll(*store, 300), model) << "after op " << op;
    }
  }
  EXPECT_GT(compactions, 5);
  EXPECT_LE(store->file_count(), store->FileBound());
  ASSERT_TRUE(store->Compact().ok());
  EXPECT_EQ(store->stale_fraction(), 0);
  EXPECT_EQ(ReadAll(*store, 300), model);
  EXPECT_EQ(store->size(), model.size());
  size_t listed = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    listed += entry.path().extension() == ".ssd";
  EXPECT_EQ(listed, store->file_count());
}

// A long run of Puts over a skewed key space: however long it runs, the store stays within its
// bounds (files, stale rows), each compaction merges about what the Puts since the last one
// wrote, and a Get of a fixed number of stored keys reads at most one block per key.
TEST(SsdStore, StaysBoundedOverALongRun) {
  const test::ScopedTempDir scoped_dir("ssd_long");
  const std::string& dir = scoped_dir.path();
  SsdStoreOptions options = Options(ssd::ParamFileBytes(64, kLayout.floats()), 0, false);
  options.block_bytes = 8 * 40 + 4;  // 8 rows a block
  auto store = OpenOk(dir, options);
  std::mt19937_64 rng(11);
  constexpr Key kKeys = 2000;
  int64_t written = 0, compaction_read = 0;
  for (int op = 1; op <= 600; ++op) {
    RowBatch batch;
    for (int i = 0; i < 100; ++i) {
      const uint64_t r = rng() % kKeys;
      AppendRow(&batch, (r * r) % kKeys, static_cast<float>(op));  // some keys far hotter
    }
    ASSERT_TRUE(store->Put(batch).ok());
    written += 100;  // 60,000 rows over 2,000 keys: 30 writes a key
    CompactionStats stats;
    ASSERT_TRUE(store->MaybeCompact(nullptr, &stats).ok());
    compaction_read += stats.bytes_read;
    ASSERT_LE(store->file_count(), store->FileBound()) << "op " << op;
    ASSERT_LT(store->stale_fraction(), options.stale_fraction) << "op " << op;
  }
  // Compaction read about three rows for each row written (the bound: 1 / f + 1), not the store.
  const double row_bytes = 8 + 8 + 4 * kLayout.floats();
  EXPECT_LT(static_cast<double>(compaction_read) / row_bytes, 4.0 * static_cast<double>(written));
  std::vector<Key> wanted;
  for (Key k = 0; k < 200; ++k) wanted.push_back(k * 7 % kKeys);
  RowBatch out;
  GetStats stats;
  ASSERT_TRUE(store->Get(wanted, &out, &stats).ok());
  EXPECT_LE(stats.blocks_read, stats.keys_found);
  EXPECT_LE(stats.bytes_read, stats.keys_found * static_cast<int64_t>(options.block_bytes));
}

TEST(SsdStore, ReopenRecoversEverythingAndDropsUnlistedFiles) {
  const test::ScopedTempDir scoped_dir("ssd_reopen");
  const std::string& dir = scoped_dir.path();
  {
    auto store = OpenOk(dir, Options(ssd::ParamFileBytes(8, kLayout.floats())));
    RowBatch batch;
    for (Key k = 0; k < 40; ++k) AppendRow(&batch, k, static_cast<float>(k));
    ASSERT_TRUE(store->Put(batch).ok());
  }
  const std::string orphan = dir + "/" + ssd::FileName(999);
  std::ofstream(orphan) << "an unacknowledged write";
  auto store = OpenOk(dir, Options(ssd::ParamFileBytes(8, kLayout.floats())));
  EXPECT_EQ(store->size(), 40u);
  EXPECT_EQ(store->file_count(), 5u);
  EXPECT_EQ(ReadAll(*store, 40).at(39), 39);
  EXPECT_FALSE(fs::exists(orphan));
  SsdStoreOptions other = Options();
  other.layout = {8, 8};
  std::unique_ptr<SsdStore> mismatched;
  EXPECT_EQ(SsdStore::Open(dir, other, &mismatched).code(), Status::Code::kInvalidInput);
}

// A store records whose it is (shard and run) when created; a folder holding another shard's or
// another run's store is refused naming the folder, never recovered as this owner's.
TEST(SsdStore, AnotherOwnersStoreIsRefusedNamingItsFolder) {
  const test::ScopedTempDir scoped_dir("ssd_owner");
  const std::string& dir = scoped_dir.path();
  SsdStoreOptions shard0 = Options();
  shard0.owner = ssd::StoreIdentity{7, 0};
  {
    auto store = OpenOk(dir, shard0);
    RowBatch batch;
    for (Key k = 0; k < 20; ++k) AppendRow(&batch, k, 1);
    ASSERT_TRUE(store->Put(batch, 5).ok());
  }
  SsdStoreOptions shard1 = shard0, next_run = shard0;
  shard1.owner = ssd::StoreIdentity{7, 1};
  next_run.owner = ssd::StoreIdentity{8, 0};
  for (const SsdStoreOptions& other : {shard1, next_run}) {
    std::unique_ptr<SsdStore> store;
    const Status status = SsdStore::Open(dir, other, &store);
    EXPECT_EQ(status.code(), Status::Code::kInvalidInput) << status.message();
    EXPECT_EQ(status.message().rfind(dir + ": holds ", 0), 0u) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos);
    EXPECT_EQ(store, nullptr);
  }
  // Refusing changed nothing: the owner recovers it, and so does a reader naming no owner.
  EXPECT_EQ(OpenOk(dir, shard0)->tag(), 5u);
  EXPECT_EQ(OpenOk(dir, Options())->size(), 20u);
}

// The same through the parameter server's shard: shard 1 of the run does not recover shard 0's
// folder (as a restarted shard would, had someone copied it over), nor a store of another run.
TEST(SsdStore, ShardRefusesAnotherShardsOrRunsStore) {
  const test::ScopedTempDir scoped_dir("ssd_shard_owner");
  const std::string& dir = scoped_dir.path();
  PsOptions options = PsOptionsOf(config::ParamServer(), 1);  // the config's defaults
  options.ssd_run_id = 41;
  std::unique_ptr<ShardCore> core;
  ASSERT_TRUE(ShardCore::Open(options, 0, dir, &core).ok());
  core.reset();
  Status status = ShardCore::Open(options, 1, dir, &core);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(status.message().find(dir + ": holds shard 0's SSD-PS, not shard 1's"),
            std::string::npos)
      << status.message();
  options.ssd_run_id = 42;
  EXPECT_EQ(ShardCore::Open(options, 0, dir, &core).code(), Status::Code::kInvalidInput);
  options.ssd_run_id = 41;
  EXPECT_TRUE(ShardCore::Open(options, 0, dir, &core).ok());
}

// A store with one 20-row file whose path is returned.
std::string OneFileStore(const std::string& dir) {
  auto store = OpenOk(dir, Options());
  RowBatch batch;
  for (Key k = 0; k < 20; ++k) AppendRow(&batch, k, 1);
  EXPECT_TRUE(store->Put(batch).ok());
  return store->FilePath(store->FileSeqs().front());
}

TEST(SsdStore, CorruptFileIsReportedWithItsNameNeverRead) {
  const test::ScopedTempDir scoped_dir("ssd_corrupt_file");
  const std::string& dir = scoped_dir.path();
  const std::string path = OneFileStore(dir);
  auto store = OpenOk(dir, Options());
  FlipByte(path, ssd::ParamFileBytes(20, kLayout.floats()) - 3);  // a value byte
  RowBatch out;
  const Status get = store->Get(std::vector<Key>{4}, &out, nullptr);
  EXPECT_EQ(get.code(), Status::Code::kCorrupt);
  EXPECT_NE(get.message().find(path), std::string::npos) << get.message();
  EXPECT_EQ(out.size(), 0u);
  FlipByte(path, ssd::kFileHeaderBytes + 8);  // a key byte: caught when the store opens
  std::unique_ptr<SsdStore> reopened;
  const Status open = SsdStore::Open(dir, Options(), &reopened);
  EXPECT_EQ(open.code(), Status::Code::kCorrupt);
  EXPECT_NE(open.message().find(path), std::string::npos) << open.message();
  fs::resize_file(path, 100);  // truncated
  EXPECT_EQ(SsdStore::Open(dir, Options(), &reopened).code(), Status::Code::kCorrupt);
}

TEST(SsdStore, CorruptManifestIsReportedWithItsName) {
  const test::ScopedTempDir scoped_dir("ssd_corrupt_manifest");
  const std::string& dir = scoped_dir.path();
  OneFileStore(dir);
  const std::string manifest = dir + "/" + ssd::kManifestName;
  const std::string good = FileBytes(manifest);
  for (uint64_t offset : {uint64_t{0}, uint64_t{20}, good.size() - 1}) {
    std::ofstream(manifest, std::ios::binary) << good;
    FlipByte(manifest, offset);
    std::unique_ptr<SsdStore> store;
    const Status status = SsdStore::Open(dir, Options(), &store);
    EXPECT_EQ(status.code(), Status::Code::kCorrupt) << offset;
    EXPECT_NE(status.message().find(manifest), std::string::npos) << status.message();
    EXPECT_EQ(store, nullptr);
  }
  std::ofstream(manifest, std::ios::binary) << good.substr(0, 30);  // truncated
  std::unique_ptr<SsdStore> store;
  EXPECT_EQ(SsdStore::Open(dir, Options(), &store).code(), Status::Code::kCorrupt);
}

// The crash test's writer: Put number i of iteration iter, every row at one fresh version.
constexpr Key kCrashKeys = 1500;
RowBatch CrashPut(int iter, uint32_t i) {
  std::mt19937_64 rng(static_cast<uint64_t>(iter) * 1000003 + i);
  RowBatch batch;
  const float version = static_cast<float>(iter * 100000 + static_cast<int>(i) + 1);
  const int n = 1 + static_cast<int>(rng() % 48);
  for (int k = 0; k < n; ++k) AppendRow(&batch, rng() % kCrashKeys, version);
  return batch;
}

// Child: Put after Put (compacting when due), writing each acknowledged Put's number to fd.
[[noreturn]] void CrashChild(const std::string& dir, const SsdStoreOptions& options, int iter,
                             int fd) {
  std::unique_ptr<SsdStore> store;
  if (!SsdStore::Open(dir, options, &store).ok()) ::_exit(3);
  for (uint32_t i = 0; i < 90000; ++i) {
    if (!store->Put(CrashPut(iter, i)).ok()) ::_exit(4);
    if (::write(fd, &i, sizeof(i)) != sizeof(i)) ::_exit(5);
    if (!store->MaybeCompact().ok()) ::_exit(6);
  }
  ::_exit(0);
}

// Kills the child at a random point; returns how many Puts it acknowledged.
uint32_t RunAndKill(const std::string& dir, const SsdStoreOptions& options, int iter,
                    std::mt19937_64& rng) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    CrashChild(dir, options, iter, fds[1]);
  }
  ::close(fds[1]);
  const uint32_t wait_acks = static_cast<uint32_t>(rng() % 16);
  const auto extra_us = static_cast<useconds_t>(rng() % 3000);
  uint32_t acks = 0, index = 0;
  while (acks < wait_acks && ::read(fds[0], &index, sizeof(index)) == sizeof(index)) ++acks;
  ::usleep(extra_us);  // the random crash point is the behaviour under test, not an ordering
  ::kill(pid, SIGKILL);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  while (::read(fds[0], &index, sizeof(index)) == sizeof(index)) {
    EXPECT_EQ(index, acks);
    ++acks;
  }
  ::close(fds[0]);
  EXPECT_TRUE(WIFSIGNALED(wstatus)) << "writer exited with " << WEXITSTATUS(wstatus);
  return acks;
}

TEST(SsdStore, CrashAtRandomPointsLosesNothingAcknowledged) {
  const test::ScopedTempDir scoped_dir("ssd_crash");
  const std::string& dir = scoped_dir.path();
  const SsdStoreOptions options = Options(ssd::ParamFileBytes(32, kLayout.floats()), 24 << 10);
  std::mt19937_64 rng(20261129);
  std::map<Key, float> model;  // each key's latest durable version
  uint32_t total_acks = 0;
  int in_flight_seen = 0;
  for (int iter = 0; iter < 20; ++iter) {
    const uint32_t acks = RunAndKill(dir, options, iter, rng);
    total_acks += acks;
    for (uint32_t i = 0; i < acks; ++i) {
      const RowBatch put = CrashPut(iter, i);
      for (size_t r = 0; r < put.size(); ++r) model[put.keys[r]] = put.row(r, kLayout)[0];
    }
    // Put number `acks` may have been durable but unacknowledged: all of it or none may show.
    const RowBatch pending = CrashPut(iter, acks);
    const std::set<Key> pending_keys(pending.keys.begin(), pending.keys.end());
    const float pending_version = pending.row(0, kLayout)[0];
    auto store = OpenOk(dir, options);
    ASSERT_NE(store, nullptr);
    const std::map<Key, float> stored = ReadAll(*store, kCrashKeys);
    size_t took = 0;
    for (const auto& [key, version] : stored) {
      const auto it = model.find(key);
      if (it != model.end() && it->second == version) continue;
      EXPECT_TRUE(pending_keys.contains(key) && version == pending_version)
          << "iteration " << iter << ": key " << key << " at version " << version;
      ++took;
    }
    for (const auto& [key, version] : model) {
      EXPECT_TRUE(stored.contains(key)) << "iteration " << iter << ": lost key " << key;
    }
    ASSERT_TRUE(took == 0 || took == pending_keys.size()) << "a torn Put in iteration " << iter;
    if (took > 0) {
      ++in_flight_seen;
      for (Key key : pending_keys) model[key] = pending_version;
    }
  }
  EXPECT_GT(total_acks, 60u);
  std::printf("crash test: %u acknowledged Puts, %d unacknowledged ones found durable\n",
              total_acks, in_flight_seen);
}

}  // namespace
}  // namespace troupe::paramserver
