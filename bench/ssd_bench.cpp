// troupe_ssd_bench: SSD-PS (paramserver/ssd_store.hpp) against RocksDB on the same machine, the
// same keys and the same values. Not a Google Benchmark binary: one run, one table.
//
// Workload: --keys keys (default 1 M) with 64-float rows (256 B: 32 embedding floats and their
// 32 Adagrad accumulators). Every key is loaded once (shuffled, untimed for the comparison), then
// for each batch size: batched Puts of Zipf(--skew, default 0.99) keys, the same batches to
// SsdStore (Put + MaybeCompact) durable (SsdStoreOptions::sync: a Put returns once fdatasynced)
// and reopened with sync=false (no fdatasync: survives a killed process, not a power loss), to
// RocksDB with WriteOptions sync=true (WAL fdatasynced) and sync=false (its default); like is
// compared with like: durable against sync=true, no-sync against sync=false. Then batched Gets
// of other Zipf keys (SsdStore::Get against RocksDB's batched MultiGet), each system for
// --get-seconds. Ranks are scrambled into keys by an odd multiplier, so hot keys are not
// neighbours in either store. keys/s counts requested keys, duplicates included, for both.
// Before the Gets the rows both return for one batch are compared byte for byte.
//
// RocksDB 7.8 (Debian librocksdb-dev) is tuned for point lookups: 10-bit Bloom filters, no
// compression (random floats do not compress; SsdStore does not compress either), its default
// block cache, and a bulk load by SST ingestion (one sorted file, as after a full compaction). Both
// use the OS page cache; neither is told to bypass it. Bytes read per key: SsdStore's GetStats
// (the ~4 KiB blocks holding wanted rows) and RocksDB's PerfContext::block_read_byte (blocks read
// from files, block-cache misses only), over one extra untimed batch.
//
// Cold SSD (--cold 1): before every timed Get batch, each store's files are synced and dropped
// from the page cache (posix_fadvise DONTNEED; untimed), and RocksDB runs without a block cache,
// so both read from the device; SsdStore keeps only its index in memory, RocksDB its index and
// filter blocks (table readers). SsdStore then advises its reads ahead (advise_reads), RocksDB
// runs its default MultiGet.
//
// Usage: troupe_ssd_bench [--keys N] [--skew S] [--batches 4096,16384,65536]
//                         [--file-bytes B] [--put-keys N] [--get-seconds S] [--dir D] [--cold 1]
//                         [--journal-files N]   (0: every Put commits by a new manifest, three
//                                                syncs, as SsdStore did before its journal)
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "paramserver/ssd_store.hpp"
#include "paramserver/zipf.hpp"

namespace troupe::paramserver {
namespace {

constexpr ValueLayout kLayout{32, 32};

struct Args {
  uint64_t keys = 1'000'000;
  double skew = 0.99;
  std::vector<size_t> batches = {4096, 16384, 65536};
  uint64_t file_bytes = 1ull << 20;
  uint64_t put_keys = 262'144;  // per batch size and system
  double get_seconds = 2;       // per batch size and system
  bool cold = false;            // drop the page cache before each Get batch
  uint32_t journal_files = SsdStoreOptions{}.journal_files;  // 0: every Put commits by manifest
  std::string dir;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Key KeyOf(uint64_t rank) { return (rank + 1) * 0x9E3779B97F4A7C15ull; }

// The row of key at version: deterministic, so both stores get identical bytes.
void AppendRow(RowBatch* batch, Key key, uint64_t version) {
  batch->keys.push_back(key);
  uint64_t x = key ^ (version * 0xBF58476D1CE4E5B9ull);
  for (int j = 0; j < kLayout.floats(); ++j) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    batch->values.push_back(static_cast<float>(x >> 40) * 0x1.0p-24f);
  }
}

std::string RocksKey(Key key) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(key >> (56 - 8 * i));
  return s;
}

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.message().c_str());
  std::exit(1);
}
void Check(const rocksdb::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

std::vector<RowBatch> ZipfBatches(const Args& args, size_t batch, size_t count, uint64_t seed,
                                  uint64_t first_version) {
  ZipfSampler zipf(args.keys, args.skew, seed);
  std::vector<RowBatch> out(count);
  for (size_t b = 0; b < count; ++b) {
    for (size_t i = 0; i < batch; ++i) AppendRow(&out[b], KeyOf(zipf.Next()), first_version + b);
  }
  return out;
}

struct Db {
  std::unique_ptr<SsdStore> ssd;
  std::unique_ptr<rocksdb::DB> rocks;
};

// Point-lookup tuning: Bloom filters, no compression; the rest RocksDB's defaults.
bool g_cold = false;  // --cold: RocksDB without a block cache

rocksdb::Options RocksOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.no_block_cache = g_cold;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

// Closes SsdStore (if open) and opens it again, durable (sync) or not.
void OpenSsd(const Args& args, bool sync, Db& db) {
  db.ssd.reset();
  SsdStoreOptions options;
  options.file_bytes = args.file_bytes;
  options.layout = kLayout;
  options.compaction_threshold = args.keys * kLayout.bytes() * 3 / 2;
  options.advise_reads = args.cold;  // from the device: let it serve a batch's reads concurrently
  options.sync = sync;
  options.journal_files = args.journal_files;
  Check(SsdStore::Open(args.dir + "/ssd", options, &db.ssd), "SsdStore::Open");
}

Db OpenBoth(const Args& args) {
  Db db;
  OpenSsd(args, true, db);
  rocksdb::DB* raw = nullptr;
  Check(rocksdb::DB::Open(RocksOptions(), args.dir + "/rocksdb", &raw), "rocksdb::DB::Open");
  db.rocks.reset(raw);
  return db;
}

void RocksPut(rocksdb::DB& db, const RowBatch& batch, bool sync) {
  rocksdb::WriteBatch wb;
  const size_t row_bytes = kLayout.bytes();
  for (size_t i = 0; i < batch.size(); ++i) {
    wb.Put(RocksKey(batch.keys[i]),
           rocksdb::Slice(reinterpret_cast<const char*>(batch.row(i, kLayout).data()), row_bytes));
  }
  rocksdb::WriteOptions wo;
  wo.sync = sync;
  Check(db.Write(wo, &wb), "rocksdb Write");
}

// Batched MultiGet of batch's keys; returns the bytes of all values (concatenated).
std::string RocksGet(rocksdb::DB& db, const std::vector<Key>& keys) {
  std::vector<std::string> owned(keys.size());
  std::vector<rocksdb::Slice> slices(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) slices[i] = owned[i] = RocksKey(keys[i]);
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  db.MultiGet(rocksdb::ReadOptions(), db.DefaultColumnFamily(), keys.size(), slices.data(),
              values.data(), statuses.data());
  std::string all;
  all.reserve(keys.size() * kLayout.bytes());
  for (size_t i = 0; i < keys.size(); ++i) {
    Check(statuses[i], "rocksdb MultiGet");
    all.append(values[i].data(), values[i].size());
  }
  return all;
}

// Every key at version 0: SsdStore by Puts of 64 Ki shuffled keys, RocksDB by one sorted SST
// file ingested (a bulk load: the same bytes as Puts then a full compaction, minus the wait).
void Load(const Args& args, Db& db) {
  std::vector<Key> keys(args.keys);
  for (uint64_t r = 0; r < args.keys; ++r) keys[r] = KeyOf(r);
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(1));
  double t = Now();
  for (size_t begin = 0; begin < keys.size(); begin += 65536) {
    RowBatch batch;
    for (size_t i = begin; i < std::min(keys.size(), begin + 65536); ++i) {
      AppendRow(&batch, keys[i], 0);
    }
    Check(db.ssd->Put(batch), "SsdStore::Put");
  }
  const double ssd_s = Now() - t;
  t = Now();
  std::sort(keys.begin(), keys.end());
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), RocksOptions());
  const std::string sst = args.dir + "/load.sst";
  Check(writer.Open(sst), "SstFileWriter::Open");
  for (Key key : keys) {
    RowBatch row;
    AppendRow(&row, key, 0);
    const rocksdb::Slice value(reinterpret_cast<const char*>(row.values.data()), kLayout.bytes());
    Check(writer.Put(RocksKey(key), value), "SstFileWriter::Put");
  }
  Check(writer.Finish(), "SstFileWriter::Finish");
  Check(db.rocks->IngestExternalFile({sst}, rocksdb::IngestExternalFileOptions()), "Ingest");
  std::printf(
      "load %llu keys: SsdStore %.2f s by Put (%zu files, %.0f MB), RocksDB %.2f s by "
      "SST ingestion\n",
      static_cast<unsigned long long>(args.keys), ssd_s, db.ssd->file_count(),
      db.ssd->disk_bytes() / 1e6, Now() - t);
}

struct PutResult {
  double ssd = 0, ssd_nosync = 0, rocks = 0, rocks_sync = 0;  // keys/s
  double distinct = 0;                                        // distinct keys per requested key
};

// Seconds SsdStore takes to Put (and MaybeCompact) every batch.
double SsdPuts(const std::vector<RowBatch>& batches, SsdStore& store) {
  const double t = Now();
  for (const RowBatch& b : batches) {
    Check(store.Put(b), "SsdStore::Put");
    Check(store.MaybeCompact(), "SsdStore::MaybeCompact");
  }
  return Now() - t;
}

PutResult PutPhase(const Args& args, Db& db, size_t batch, uint64_t* version) {
  const size_t count = std::max<size_t>(2, args.put_keys / batch);
  const auto batches = ZipfBatches(args, batch, count, 100 + batch, *version);
  *version += count;
  PutResult r;
  const double keys = static_cast<double>(count * batch);
  r.ssd = keys / SsdPuts(batches, *db.ssd);
  OpenSsd(args, false, db);  // reopened untimed
  r.ssd_nosync = keys / SsdPuts(batches, *db.ssd);
  OpenSsd(args, true, db);
  double t = Now();
  for (const RowBatch& b : batches) RocksPut(*db.rocks, b, false);
  r.rocks = keys / (Now() - t);
  t = Now();
  for (const RowBatch& b : batches) RocksPut(*db.rocks, b, true);
  r.rocks_sync = keys / (Now() - t);
  size_t distinct = 0;
  for (const RowBatch& b : batches) {
    std::vector<Key> k = b.keys;
    std::sort(k.begin(), k.end());
    distinct += static_cast<size_t>(std::unique(k.begin(), k.end()) - k.begin());
  }
  r.distinct = static_cast<double>(distinct) / keys;
  return r;
}

// Syncs every file under dir and drops it from the page cache (only clean pages can be dropped).
void DropCache(const std::string& dir) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

struct GetResult {
  double ssd = 0, rocks = 0;              // keys/s
  double ssd_bytes = 0, rocks_bytes = 0;  // bytes read per requested key
  double ssd_files = 0;                   // files read per batch
};

GetResult GetPhase(const Args& args, Db& db, size_t batch) {
  const auto batches = ZipfBatches(args, batch, 64, 7000 + batch, 0);
  RowBatch out;
  Check(db.ssd->Get(batches[0].keys, &out, nullptr), "SsdStore::Get");
  const std::string rows = RocksGet(*db.rocks, batches[0].keys);
  if (out.size() != batch || std::memcmp(rows.data(), out.values.data(), rows.size()) != 0) {
    std::fprintf(stderr, "SsdStore and RocksDB disagree on batch rows\n");
    std::exit(1);
  }
  GetResult r;
  GetStats stats;
  size_t n = 0;
  double spent = 0;  // timed seconds (cache drops excluded)
  while (n < batches.size() && (n < 2 || spent < args.get_seconds)) {
    if (args.cold) DropCache(args.dir + "/ssd");
    const double t = Now();
    Check(db.ssd->Get(batches[n++].keys, &out, &stats), "SsdStore::Get");
    spent += Now() - t;
  }
  r.ssd = static_cast<double>(n * batch) / spent;
  r.ssd_bytes = static_cast<double>(stats.bytes_read) / static_cast<double>(n * batch);
  r.ssd_files = static_cast<double>(stats.files_read) / static_cast<double>(n);
  size_t m = 0;
  spent = 0;
  while (m < batches.size() && (m < 2 || spent < args.get_seconds)) {
    if (args.cold) DropCache(args.dir + "/rocksdb");
    const double t = Now();
    RocksGet(*db.rocks, batches[m++].keys);
    spent += Now() - t;
  }
  r.rocks = static_cast<double>(m * batch) / spent;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  RocksGet(*db.rocks, batches[std::min(m, batches.size() - 1)].keys);
  r.rocks_bytes = static_cast<double>(rocksdb::get_perf_context()->block_read_byte) / batch;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return r;
}

Args Parse(int argc, char** argv) {
  Args args;
  args.dir = (std::filesystem::temp_directory_path() / "troupe_ssd_bench").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--keys") args.keys = std::stoull(value);
    if (flag == "--skew") args.skew = std::stod(value);
    if (flag == "--file-bytes") args.file_bytes = std::stoull(value);
    if (flag == "--put-keys") args.put_keys = std::stoull(value);
    if (flag == "--get-seconds") args.get_seconds = std::stod(value);
    if (flag == "--dir") args.dir = value;
    if (flag == "--cold") args.cold = value != "0";
    if (flag == "--journal-files") args.journal_files = static_cast<uint32_t>(std::stoul(value));
    if (flag == "--batches") {
      args.batches.clear();
      for (size_t p = 0; p < value.size();) {
        const size_t comma = std::min(value.find(',', p), value.size());
        args.batches.push_back(std::stoull(value.substr(p, comma - p)));
        p = comma + 1;
      }
    }
  }
  return args;
}

int Main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  g_cold = args.cold;
  std::filesystem::remove_all(args.dir);
  std::filesystem::create_directories(args.dir);
  std::printf(
      "SSD-PS vs RocksDB: %llu keys, %zu-byte rows, Zipf %.2f, SsdStore files of %llu "
      "bytes, journal of %u files, dir %s, %s\n",
      static_cast<unsigned long long>(args.keys), kLayout.bytes(), args.skew,
      static_cast<unsigned long long>(args.file_bytes), args.journal_files, args.dir.c_str(),
      args.cold ? "cold (page cache dropped before each Get batch, no RocksDB block cache)"
                : "warm (page cache)");
  Db db = OpenBoth(args);
  Load(args, db);
  uint64_t version = 1;
  // Puts: durable SsdStore against RocksDB sync=true, then both without syncs.
  std::printf(
      "\n| batch | op | SsdStore keys/s | RocksDB keys/s | ratio | SsdStore no-sync keys/s | "
      "RocksDB sync=false keys/s | ratio | SsdStore bytes/key | RocksDB bytes/key | SsdStore "
      "files/batch |\n");
  for (size_t batch : args.batches) {
    const PutResult p = PutPhase(args, db, batch, &version);
    std::printf("| %zu | put (%.0f%% distinct) | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | | | |\n",
                batch, 100 * p.distinct, p.ssd, p.rocks_sync, p.ssd / p.rocks_sync, p.ssd_nosync,
                p.rocks, p.ssd_nosync / p.rocks);
    const GetResult g = GetPhase(args, db, batch);
    std::printf("| %zu | get | %.0f | %.0f | %.2f | | | | %.0f | %.0f | %.1f |\n", batch, g.ssd,
                g.rocks, g.ssd / g.rocks, g.ssd_bytes, g.rocks_bytes, g.ssd_files);
    std::fflush(stdout);
  }
  std::printf("\nSsdStore at the end: %zu keys, %zu files, %.0f MB on disk, stale share %.2f\n",
              db.ssd->size(), db.ssd->file_count(), db.ssd->disk_bytes() / 1e6,
              db.ssd->stale_fraction());
  db.ssd.reset();
  db.rocks.reset();
  std::filesystem::remove_all(args.dir);
  return 0;
}

}  // namespace
}  // namespace troupe::paramserver

int main(int argc, char** argv) { return troupe::paramserver::Main(argc, argv); }
