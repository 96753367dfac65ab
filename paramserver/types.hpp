// Keys, values and batches of the hierarchical parameter server.
//
// A key is a 64-bit feature id. Its value is a row of `dim` embedding floats followed by the
// optimizer's state (e.g. one Adagrad accumulator float per embedding float): ValueLayout says how
// many of each. Batches are columnar — keys in one vector, rows back to back in one float vector —
// so a batch crosses a tier, a node or a process as one message, never one per key.
// Partition policy (the paper's): a key lives on node key % nodes, and inside that node on GPU
// (key / nodes) % gpus_per_node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace troupe::paramserver {

using Key = uint64_t;

struct ValueLayout {
  int32_t dim = 8;               // embedding floats
  int32_t optimizer_floats = 8;  // optimizer state floats after them (Adagrad: dim)

  int32_t floats() const { return dim + optimizer_floats; }
  size_t bytes() const { return static_cast<size_t>(floats()) * sizeof(float); }
  // At least one embedding float, no negative optimizer width: what every store requires.
  bool valid() const { return dim >= 1 && optimizer_floats >= 0; }
};

// keys[i]'s row is values[i * floats, (i + 1) * floats).
struct RowBatch {
  std::vector<Key> keys;
  std::vector<float> values;

  size_t size() const { return keys.size(); }
  std::span<float> row(size_t i, const ValueLayout& layout) {
    return {values.data() + i * layout.floats(), static_cast<size_t>(layout.floats())};
  }
  std::span<const float> row(size_t i, const ValueLayout& layout) const {
    return {values.data() + i * layout.floats(), static_cast<size_t>(layout.floats())};
  }
};

inline int32_t NodeOf(Key key, int32_t nodes) { return static_cast<int32_t>(key % nodes); }
inline int32_t GpuOf(Key key, int32_t nodes, int32_t gpus_per_node) {
  return static_cast<int32_t>((key / nodes) % gpus_per_node);
}

}  // namespace troupe::paramserver
