// SSD-PS under injected write faults (paramserver/ssd_fault.hpp): a failing Put, compaction or
// manifest write returns an I/O error naming the file, leaves the store as it was in memory and
// on disk (a reopen finds the same rows and no leftover files), and works again once the fault
// ends. Also the tag Put commits with its batch, across a reopen.
#include "paramserver/ssd_fault.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
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

using ssd_test::Contents;
using ssd_test::kLayout;
using ssd_test::OpenOk;
using ssd_test::Rows;

SsdStoreOptions Options(SsdWriteFault* fault, uint64_t file_bytes = 1 << 20) {
  SsdStoreOptions options;
  options.sync = false;
  options.file_bytes = file_bytes;
  options.layout = kLayout;
  options.write_fault = fault;
  return options;
}

size_t FilesInDir(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) n += entry.path().extension() == ".ssd";
  return n;
}

// A Put that fails on its second file (EIO), on its last (EIO) or, when the manifest commits it,
// on its manifest (ENOSPC): an I/O error naming the file, nothing of the batch visible, no file
// of it left behind, the tag unchanged.
TEST(SsdFault, FailedPutChangesNothingAndNamesTheFile) {
  for (const int64_t healthy : {int64_t{1}, int64_t{3}, int64_t{4}}) {
    const test::ScopedTempDir scoped_dir("ssd_fault_put" + std::to_string(healthy));
    const std::string& dir = scoped_dir.path();
    SsdWriteFault fault;
    // Files of 2 rows: the Put below writes 4 files. With healthy == 4 every parameter file is
    // written and the manifest fails: a journal of 2 files makes the manifest commit that Put.
    SsdStoreOptions options = Options(&fault, ssd::ParamFileBytes(2, kLayout.floats()));
    if (healthy == 4) options.journal_files = 2;
    std::unique_ptr<SsdStore> store = OpenOk(dir, options);
    ASSERT_TRUE(store->Put(Rows(0, 6, 1.0f), 7).ok());
    const std::map<Key, float> before = Contents(*store, 20);
    const size_t files_before = FilesInDir(dir);
    const int error = healthy < 4 ? EIO : ENOSPC;
    fault.Fail(error, healthy);
    const Status failed = store->Put(Rows(4, 8, 2.0f), 8);  // 4 files, then the manifest
    EXPECT_EQ(failed.code(), Status::Code::kIoError);
    EXPECT_NE(failed.message().find(dir + "/"), std::string::npos) << failed.message();
    EXPECT_NE(failed.message().find(std::strerror(error)), std::string::npos) << failed.message();
    if (healthy == 4) {
      EXPECT_NE(failed.message().find("MANIFEST.tmp"), std::string::npos);
    }
    EXPECT_EQ(Contents(*store, 20), before);
    EXPECT_EQ(store->tag(), 7u);
    EXPECT_EQ(FilesInDir(dir), files_before);
    EXPECT_GE(fault.failed_writes(), 1);

    // Reopened, the store is the one before the failed Put.
    store.reset();
    store = OpenOk(dir, options);
    EXPECT_EQ(Contents(*store, 20), before);
    EXPECT_EQ(store->tag(), 7u);
    EXPECT_FALSE(fs::exists(dir + "/MANIFEST.tmp"));

    // The fault ends: the same Put succeeds.
    fault.Clear();
    ASSERT_TRUE(store->Put(Rows(4, 8, 2.0f), 8).ok());
    std::map<Key, float> after = before;
    for (Key k = 4; k < 12; ++k) after[k] = 2.0f;
    EXPECT_EQ(Contents(*store, 20), after);
    store.reset();
    store = OpenOk(dir, options);
    EXPECT_EQ(Contents(*store, 20), after);
    EXPECT_EQ(store->tag(), 8u);
  }
}

// A compaction on a full disk fails without losing a row; it succeeds once space is back.
TEST(SsdFault, FailedCompactionKeepsEveryRow) {
  const test::ScopedTempDir scoped_dir("ssd_fault_compact");
  const std::string& dir = scoped_dir.path();
  SsdWriteFault fault;
  const SsdStoreOptions options = Options(&fault, ssd::ParamFileBytes(4, kLayout.floats()));
  std::unique_ptr<SsdStore> store = OpenOk(dir, options);
  // Four files of 4 rows, then half of each overwritten by four files of 2: Compact merges all
  // eight (stale rows or room left), 16 live rows into 4 files.
  ASSERT_TRUE(store->Put(Rows(0, 16, 1.0f)).ok());
  for (Key first : {Key{0}, Key{4}, Key{8}, Key{12}}) {
    ASSERT_TRUE(store->Put(Rows(first, 2, 2.0f)).ok());
  }
  const std::map<Key, float> before = Contents(*store, 16);
  const uint64_t disk_before = store->disk_bytes();
  fault.Fail(ENOSPC, 1);  // one merged file written, then the disk is full
  const Status failed = store->Compact();
  EXPECT_EQ(failed.code(), Status::Code::kIoError);
  EXPECT_NE(failed.message().find("No space left on device"), std::string::npos);
  EXPECT_EQ(Contents(*store, 16), before);
  EXPECT_EQ(store->disk_bytes(), disk_before);
  EXPECT_EQ(FilesInDir(dir), store->file_count());
  store.reset();
  store = OpenOk(dir, options);
  EXPECT_EQ(Contents(*store, 16), before);

  fault.Clear();
  ASSERT_TRUE(store->Compact().ok());
  EXPECT_LT(store->disk_bytes(), disk_before);
  EXPECT_EQ(Contents(*store, 16), before);
}

// The tag travels with the manifest: an empty Put can commit it alone, Put without a tag keeps
// it, a reopen reads it back.
TEST(SsdFault, TagIsCommittedWithTheBatch) {
  const test::ScopedTempDir scoped_dir("ssd_fault_tag");
  const std::string& dir = scoped_dir.path();
  const SsdStoreOptions options = Options(nullptr);
  std::unique_ptr<SsdStore> store = OpenOk(dir, options);
  EXPECT_EQ(store->tag(), 0u);
  ASSERT_TRUE(store->Put(RowBatch{}, 3).ok());
  EXPECT_EQ(store->tag(), 3u);
  ASSERT_TRUE(store->Put(Rows(0, 2, 1.0f)).ok());
  EXPECT_EQ(store->tag(), 3u);
  ASSERT_TRUE(store->Put(Rows(1, 2, 2.0f), 4).ok());
  EXPECT_EQ(store->Keys(), (std::vector<Key>{0, 1, 2}));
  store.reset();
  store = OpenOk(dir, options);
  EXPECT_EQ(store->tag(), 4u);
  EXPECT_EQ(Contents(*store, 4), (std::map<Key, float>{{0, 1.0f}, {1, 2.0f}, {2, 2.0f}}));
}

}  // namespace
}  // namespace troupe::paramserver
