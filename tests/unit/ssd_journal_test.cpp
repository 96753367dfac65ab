// SsdStore's journal (paramserver/ssd_store.hpp): small Puts commit by their own files, without
// rewriting the manifest; a reopen replays them; a Put torn by a crash (its last file short or
// failing a checksum) is dropped whole while the Puts before it stay; a missing or corrupt Put
// that a later one follows is an error naming its file; a full journal goes into the manifest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "paramserver/ssd_store.hpp"
#include "tests/unit/scoped_temp_dir.hpp"
#include "tests/unit/ssd_test_rows.hpp"

namespace troupe::paramserver {
namespace {

namespace fs = std::filesystem;

using ssd_test::kLayout;
using ssd_test::Rows;

// Files of 4 rows, fdatasynced, pre-created files: what a durable store does.
SsdStoreOptions Options() {
  SsdStoreOptions options;
  options.file_bytes = ssd::ParamFileBytes(4, kLayout.floats());
  options.layout = kLayout;
  return options;
}

std::map<Key, float> Contents(SsdStore& store) { return ssd_test::Contents(store, 64); }

std::map<Key, float> Expected(std::initializer_list<std::pair<Key, float>> puts_first_n_version,
                              Key n) {
  std::map<Key, float> model;
  for (const auto& [first, version] : puts_first_n_version) {
    for (Key k = first; k < first + n; ++k) model[k] = version;
  }
  return model;
}

std::unique_ptr<SsdStore> OpenOk(const std::string& dir) {
  return ssd_test::OpenOk(dir, Options());
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

size_t EmptyFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) n += entry.file_size() == 0;
  return n;
}

// Three Puts of 10 keys (3 files each), tags 1-3, then the store closed without a manifest
// listing them; returns the last file of each Put.
std::vector<std::string> ThreeJournalPuts(const std::string& dir) {
  auto store = OpenOk(dir);
  const std::string manifest = Bytes(dir + "/" + ssd::kManifestName);
  std::vector<std::string> lasts;
  for (uint64_t put = 1; put <= 3; ++put) {
    EXPECT_TRUE(store->Put(Rows(8 * (put - 1), 10, static_cast<float>(put)), put).ok());
    lasts.push_back(store->FilePath(store->FileSeqs().back()));
  }
  // The Puts committed themselves: the manifest is the new store's, unchanged; the next files
  // were pre-created (empty).
  EXPECT_EQ(Bytes(dir + "/" + ssd::kManifestName), manifest);
  EXPECT_GT(EmptyFiles(dir), 0u);
  return lasts;
}

TEST(SsdJournal, PutsCommitByTheirFilesAndAReopenReplaysThem) {
  const test::ScopedTempDir scoped_dir("ssd_journal_replay");
  const std::string& dir = scoped_dir.path();
  ThreeJournalPuts(dir);
  auto store = OpenOk(dir);
  EXPECT_EQ(Contents(*store), Expected({{0, 1.0f}, {8, 2.0f}, {16, 3.0f}}, 10));
  EXPECT_EQ(store->tag(), 3u);
  EXPECT_EQ(store->file_count(), 9u);
  EXPECT_EQ(EmptyFiles(dir), 0u);  // the pre-created files were removed
  // Listed by the manifest the reopen wrote: a corrupt file of theirs is now an error.
  ASSERT_TRUE(store->Put(Rows(30, 2, 4.0f), 4).ok());
  store.reset();
  store = OpenOk(dir);
  EXPECT_EQ(store->tag(), 4u);
  EXPECT_EQ(Contents(*store)[31], 4.0f);
}

TEST(SsdJournal, TornLastPutIsDroppedWholeAndTheOthersStay) {
  for (const bool truncate : {true, false}) {
    const test::ScopedTempDir scoped_dir(truncate ? "ssd_journal_torn_short"
                                                  : "ssd_journal_torn_crc");
    const std::string& dir = scoped_dir.path();
    const std::vector<std::string> lasts = ThreeJournalPuts(dir);
    // A crash while Put 3 was being written: its last file short, or a block never written.
    if (truncate) {
      fs::resize_file(lasts[2], fs::file_size(lasts[2]) / 2);
    } else {
      std::fstream io(lasts[2], std::ios::in | std::ios::out | std::ios::binary);
      io.seekp(static_cast<std::streamoff>(fs::file_size(lasts[2]) - 8));
      io.write("\0\0\0\0\0\0\0\0", 8);
    }
    auto store = OpenOk(dir);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(Contents(*store), Expected({{0, 1.0f}, {8, 2.0f}}, 10)) << truncate;
    EXPECT_EQ(store->tag(), 2u);
    EXPECT_EQ(store->file_count(), 6u);
    EXPECT_FALSE(fs::exists(lasts[2]));
    // Writing on works, and survives another reopen.
    ASSERT_TRUE(store->Put(Rows(40, 3, 5.0f), 5).ok());
    store.reset();
    store = OpenOk(dir);
    EXPECT_EQ(Contents(*store)[42], 5.0f);
    EXPECT_EQ(Contents(*store).count(20), 0u);
    EXPECT_EQ(store->tag(), 5u);
  }
}

TEST(SsdJournal, LostPutThatALaterOneFollowsIsAnErrorNamingIt) {
  const test::ScopedTempDir scoped_dir("ssd_journal_lost");
  const std::string& dir = scoped_dir.path();
  const std::vector<std::string> lasts = ThreeJournalPuts(dir);
  fs::remove(lasts[1]);  // Put 2 acknowledged (Put 3 follows it), then its file lost
  std::unique_ptr<SsdStore> store;
  const Status status = SsdStore::Open(dir, Options(), &store);
  EXPECT_EQ(status.code(), Status::Code::kCorrupt);
  EXPECT_NE(status.message().find(lasts[1]), std::string::npos) << status.message();
  EXPECT_EQ(store, nullptr);
  EXPECT_TRUE(fs::exists(lasts[2]));  // nothing deleted
}

TEST(SsdJournal, AFullJournalGoesIntoTheManifest) {
  const test::ScopedTempDir scoped_dir("ssd_journal_full");
  const std::string& dir = scoped_dir.path();
  SsdStoreOptions options = Options();
  options.journal_files = 4;
  std::unique_ptr<SsdStore> store;
  ASSERT_TRUE(SsdStore::Open(dir, options, &store).ok());
  const std::string manifest = dir + "/" + ssd::kManifestName;
  const std::string fresh = Bytes(manifest);
  ASSERT_TRUE(store->Put(Rows(0, 4, 1.0f), 1).ok());  // 1 file: the journal's
  EXPECT_EQ(Bytes(manifest), fresh);
  ASSERT_TRUE(store->Put(Rows(4, 12, 2.0f), 2).ok());  // 3 more: the journal is full
  EXPECT_NE(Bytes(manifest), fresh);
  const std::string listed = Bytes(manifest);
  ASSERT_TRUE(store->Put(Rows(16, 20, 3.0f), 3).ok());  // 5 files: more than a journal holds
  EXPECT_NE(Bytes(manifest), listed);
  const std::string all = Bytes(manifest);
  ASSERT_TRUE(store->Put(RowBatch{}, 4).ok());  // a tag alone
  EXPECT_NE(Bytes(manifest), all);
  store.reset();
  ASSERT_TRUE(SsdStore::Open(dir, options, &store).ok());
  std::map<Key, float> model;
  for (Key k = 0; k < 36; ++k) model[k] = k < 4 ? 1.0f : k < 16 ? 2.0f : 3.0f;
  EXPECT_EQ(Contents(*store), model);
  EXPECT_EQ(store->tag(), 4u);
}

}  // namespace
}  // namespace troupe::paramserver
