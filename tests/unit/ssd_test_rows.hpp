// What the SsdStore tests share: rows whose every float is a version number, the store's contents
// as key -> first float, and an Open that fails the calling test on error. Their folders are
// tests/unit/scoped_temp_dir.hpp's.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "paramserver/ssd_store.hpp"

namespace troupe::paramserver::ssd_test {

constexpr ValueLayout kLayout{2, 2};  // 4 floats a row

// Keys [first, first + n), every float of a row = version.
inline RowBatch Rows(Key first, Key n, float version) {
  RowBatch batch;
  for (Key k = first; k < first + n; ++k) {
    batch.keys.push_back(k);
    for (int j = 0; j < kLayout.floats(); ++j) batch.values.push_back(version);
  }
  return batch;
}

// Every key in [0, key_space) the store holds, with its row's first float.
inline std::map<Key, float> Contents(SsdStore& store, Key key_space) {
  std::vector<Key> keys;
  for (Key k = 0; k < key_space; ++k) keys.push_back(k);
  RowBatch out;
  const Status status = store.Get(keys, &out, nullptr);
  EXPECT_TRUE(status.ok()) << status.message();
  std::map<Key, float> contents;
  for (size_t i = 0; i < out.size(); ++i) contents[out.keys[i]] = out.row(i, kLayout)[0];
  return contents;
}

inline std::unique_ptr<SsdStore> OpenOk(const std::string& dir, const SsdStoreOptions& options) {
  std::unique_ptr<SsdStore> store;
  const Status status = SsdStore::Open(dir, options, &store);
  EXPECT_TRUE(status.ok()) << status.message();
  return store;
}

}  // namespace troupe::paramserver::ssd_test
