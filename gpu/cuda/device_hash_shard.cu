// The kernels of DeviceHashShard (device_hash_shard.hpp). Slots are claimed with atomicCAS on the
// key; per-slot "claims" (atomicMin of a batch position) pick, among the occurrences of one key in
// a batch, the one whose row is written (insert: the last) or applied next (accumulate: the
// earliest still pending), so results do not depend on thread scheduling.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

#include "gpu/cuda/cuda_check.cuh"
#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda/device_buffer.cuh"
#include "gpu/cuda/device_hash_shard.hpp"
#include "gpu/cuda/device_info.cuh"

namespace troupe::gpu {
namespace {

constexpr int kThreads = 256;
constexpr uint32_t kNoClaim = ~uint32_t{0};
constexpr int64_t kAbsentSlot = -1;

unsigned Blocks(size_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

__device__ uint64_t Mix(uint64_t key) {  // MurmurHash3's finaliser: spreads sequential keys
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ull;
  key ^= key >> 33;
  return key;
}

using ULL = unsigned long long;

// slot[j]: where keys[j] now lives; counters[0] += new keys.
__global__ void InsertKeysKernel(const uint64_t* keys, size_t n, uint64_t* table_keys,
                                 uint64_t mask, int64_t* slot, ULL* counters) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint64_t key = keys[j];
  if (key == kEmptyKey || key == kErasedKey) {  // reserved: never stored
    slot[j] = kAbsentSlot;
    return;
  }
  for (uint64_t s = Mix(key) & mask;; s = (s + 1) & mask) {
    uint64_t current = table_keys[s];
    if (current == kEmptyKey) {
      current = atomicCAS(reinterpret_cast<ULL*>(table_keys + s), static_cast<ULL>(kEmptyKey),
                          static_cast<ULL>(key));
      if (current == kEmptyKey) {
        atomicAdd(counters, 1ull);
        slot[j] = static_cast<int64_t>(s);
        return;
      }
    }
    if (current == key) {
      slot[j] = static_cast<int64_t>(s);
      return;
    }
  }
}

__global__ void FindKeysKernel(const uint64_t* keys, size_t n, const uint64_t* table_keys,
                               uint64_t mask, int64_t* slot) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint64_t key = keys[j];
  if (key == kEmptyKey || key == kErasedKey) {  // reserved: never stored
    slot[j] = kAbsentSlot;
    return;
  }
  for (uint64_t s = Mix(key) & mask;; s = (s + 1) & mask) {
    const uint64_t current = table_keys[s];
    if (current == key) {
      slot[j] = static_cast<int64_t>(s);
      return;
    }
    if (current == kEmptyKey) {
      slot[j] = kAbsentSlot;
      return;
    }
  }
}

// claim[slot] = min over the batch positions naming it of rank(j) (insert: n - 1 - j, so the last
// occurrence wins; accumulate: j among the pending, so the earliest goes first).
__global__ void ClaimKernel(const int64_t* slot, const uint8_t* pending, size_t n, bool last_wins,
                            uint32_t* claim) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n || slot[j] == kAbsentSlot || (pending != nullptr && !pending[j])) return;
  atomicMin(claim + slot[j], static_cast<uint32_t>(last_wins ? n - 1 - j : j));
}

// One thread a float: the claim's winner copies its row into the slot.
__global__ void WriteRowsKernel(const int64_t* slot, const uint32_t* claim, const float* rows,
                                size_t n, int32_t width, float* values) {
  const size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * width) return;
  const size_t j = t / width;
  const int32_t f = static_cast<int32_t>(t % width);
  const int64_t s = slot[j];
  if (s == kAbsentSlot || claim[s] != static_cast<uint32_t>(n - 1 - j)) return;
  values[s * width + f] = rows[t];
}

__global__ void ResetClaimsKernel(const int64_t* slot, size_t n, uint32_t* claim) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < n && slot[j] != kAbsentSlot) claim[slot[j]] = kNoClaim;
}

__global__ void GatherRowsKernel(const int64_t* slot, size_t n, const float* values, int32_t width,
                                 int32_t out_width, float* out, uint8_t* found) {
  const size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * out_width) return;
  const size_t j = t / out_width;
  const int32_t f = static_cast<int32_t>(t % out_width);
  const int64_t s = slot[j];
  if (f == 0 && found != nullptr) found[j] = s != kAbsentSlot;
  if (s != kAbsentSlot) out[t] = values[s * width + f];
}

// The arithmetic of paramserver's optimizers (hbm_table.cpp), one thread a float.
__global__ void ApplyGradientsKernel(const int64_t* slot, const uint8_t* pending,
                                     const uint32_t* claim, const float* gradients, size_t n,
                                     int32_t dim, int32_t width, ShardOptimizer opt,
                                     float* values) {
  const size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * dim) return;
  const size_t j = t / dim;
  const int32_t f = static_cast<int32_t>(t % dim);
  if (!pending[j] || claim[slot[j]] != static_cast<uint32_t>(j)) return;
  float* row = values + slot[j] * width;
  const float g = gradients[t];
  if (opt.adagrad) {
    const float acc = __fadd_rn(row[dim + f], __fmul_rn(g, g));
    row[dim + f] = acc;
    row[f] = __fsub_rn(row[f], __fdiv_rn(__fmul_rn(opt.learning_rate, g),
                                         __fsqrt_rn(__fadd_rn(acc, opt.epsilon))));
  } else {
    row[f] = __fsub_rn(row[f], __fmul_rn(opt.learning_rate, g));
  }
}

// The round's winners leave `pending` and give their claim back; counters[0] += still pending.
__global__ void FinishRoundKernel(const int64_t* slot, uint8_t* pending, uint32_t* claim, size_t n,
                                  ULL* counters) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n || !pending[j]) return;
  if (claim[slot[j]] == static_cast<uint32_t>(j)) {
    pending[j] = 0;
    claim[slot[j]] = kNoClaim;
  } else {
    atomicAdd(counters, 1ull);
  }
}

__global__ void FoundFlagsKernel(const int64_t* slot, size_t n, uint8_t* flags) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < n) flags[j] = slot[j] != kAbsentSlot;
}

__global__ void EraseKernel(const int64_t* slot, const uint64_t* keys, size_t n,
                            uint64_t* table_keys, ULL* counters) {
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n || slot[j] == kAbsentSlot) return;
  const ULL old = atomicCAS(reinterpret_cast<ULL*>(table_keys + slot[j]), static_cast<ULL>(keys[j]),
                            static_cast<ULL>(kErasedKey));
  if (old == static_cast<ULL>(keys[j])) atomicAdd(counters, 1ull);
}

}  // namespace

struct DeviceHashShard::Impl {
  int device = 0;
  int32_t dim = 0, width = 0;
  ShardOptimizer optimizer;
  uint64_t mask = 0;
  DeviceBuffer<uint64_t> table_keys;
  DeviceBuffer<float> values;
  DeviceBuffer<uint32_t> claims;
  DeviceBuffer<ULL> counters;
  // Per-batch scratch, grown as needed.
  DeviceBuffer<uint64_t> keys;
  DeviceBuffer<float> rows;
  DeviceBuffer<int64_t> slot;
  DeviceBuffer<uint8_t> flags;

  Status Grow(size_t n, size_t row_floats) {
    if (keys.size() < n) RETURN_IF_ERROR(keys.Allocate(n));
    if (slot.size() < n) RETURN_IF_ERROR(slot.Allocate(n));
    if (flags.size() < n) RETURN_IF_ERROR(flags.Allocate(n));
    if (rows.size() < row_floats) RETURN_IF_ERROR(rows.Allocate(row_floats));
    return Status::Ok();
  }
  Status Clear() {
    TROUPE_CUDA_CHECK(cudaMemset(table_keys.data(), 0xFF, table_keys.size() * sizeof(uint64_t)));
    TROUPE_CUDA_CHECK(cudaMemset(claims.data(), 0xFF, claims.size() * sizeof(uint32_t)));
    return Status::Ok();
  }
  Status ReadCounter(size_t* value) {
    ULL host = 0;
    TROUPE_CUDA_CHECK(cudaMemcpy(&host, counters.data(), sizeof(ULL), cudaMemcpyDeviceToHost));
    *value = static_cast<size_t>(host);
    return Status::Ok();
  }
  Status ZeroCounter() {
    TROUPE_CUDA_CHECK(cudaMemset(counters.data(), 0, sizeof(ULL)));
    return Status::Ok();
  }
  // d_keys, d_rows on the device; slot filled; *inserted = new keys.
  Status InsertBatch(const uint64_t* d_keys, const float* d_rows, size_t n, size_t* inserted) {
    RETURN_IF_ERROR(ZeroCounter());
    InsertKeysKernel<<<Blocks(n), kThreads>>>(d_keys, n, table_keys.data(), mask, slot.data(),
                                              counters.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    ClaimKernel<<<Blocks(n), kThreads>>>(slot.data(), nullptr, n, true, claims.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    WriteRowsKernel<<<Blocks(n * width), kThreads>>>(slot.data(), claims.data(), d_rows, n, width,
                                                     values.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    ResetClaimsKernel<<<Blocks(n), kThreads>>>(slot.data(), n, claims.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    return ReadCounter(inserted);
  }
  Status FindSlots(const uint64_t* d_keys, size_t n) {
    FindKeysKernel<<<Blocks(n), kThreads>>>(d_keys, n, table_keys.data(), mask, slot.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    return Status::Ok();
  }
};

DeviceHashShard::DeviceHashShard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DeviceHashShard::~DeviceHashShard() {
  if (impl_) (void)cudaSetDevice(impl_->device);  // frees below happen on the shard's GPU
}

size_t DeviceHashShard::slots() const { return impl_->table_keys.size(); }

Status DeviceHashShard::Create(int device, size_t capacity_rows, int32_t dim, int32_t width,
                               const ShardOptimizer& optimizer,
                               std::unique_ptr<DeviceHashShard>* out) {
  if (dim < 1 || width < dim || (optimizer.adagrad && width < 2 * dim)) {
    return Status::InvalidInput("hash shard: bad row layout (Adagrad needs width >= 2 dim)");
  }
  RETURN_IF_ERROR(RequireGpu("hash shard"));
  TROUPE_CUDA_CHECK(cudaSetDevice(device));
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  impl->dim = dim;
  impl->width = width;
  impl->optimizer = optimizer;
  size_t slots = 1;
  while (slots < 2 * std::max<size_t>(1, capacity_rows)) slots *= 2;
  impl->mask = slots - 1;
  RETURN_IF_ERROR(impl->table_keys.Allocate(slots));
  RETURN_IF_ERROR(impl->values.Allocate(slots * static_cast<size_t>(width)));
  RETURN_IF_ERROR(impl->claims.Allocate(slots));
  RETURN_IF_ERROR(impl->counters.Allocate(1));
  RETURN_IF_ERROR(impl->Clear());
  out->reset(new DeviceHashShard(std::move(impl)));
  return Status::Ok();
}

Status DeviceHashShard::Insert(const uint64_t* keys, const float* rows, size_t n, size_t* inserted,
                               size_t* overwritten) {
  *inserted = *overwritten = 0;
  if (n == 0) return Status::Ok();
  Impl& m = *impl_;
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  RETURN_IF_ERROR(m.Grow(n, n * m.width));
  RETURN_IF_ERROR(m.keys.CopyFrom(keys, n));
  TROUPE_CUDA_CHECK(
      cudaMemcpy(m.rows.data(), rows, n * m.width * sizeof(float), cudaMemcpyHostToDevice));
  RETURN_IF_ERROR(m.InsertBatch(m.keys.data(), m.rows.data(), n, inserted));
  *overwritten = n - *inserted;
  live_ += *inserted;
  return Status::Ok();
}

Status DeviceHashShard::Find(const uint64_t* keys, size_t n, int32_t out_width, float* rows,
                             uint8_t* found) {
  if (n == 0) return Status::Ok();
  Impl& m = *impl_;
  if (out_width < 1 || out_width > m.width) return Status::InvalidInput("hash shard: bad width");
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  RETURN_IF_ERROR(m.Grow(n, n * out_width));
  RETURN_IF_ERROR(m.keys.CopyFrom(keys, n));
  // Absent keys' rows must come back as the caller left them: start from the caller's rows.
  TROUPE_CUDA_CHECK(
      cudaMemcpy(m.rows.data(), rows, n * out_width * sizeof(float), cudaMemcpyHostToDevice));
  RETURN_IF_ERROR(m.FindSlots(m.keys.data(), n));
  GatherRowsKernel<<<Blocks(n * out_width), kThreads>>>(m.slot.data(), n, m.values.data(), m.width,
                                                        out_width, m.rows.data(), m.flags.data());
  TROUPE_CUDA_CHECK_LAUNCH();
  RETURN_IF_ERROR(m.rows.CopyTo(rows, n * out_width));
  return m.flags.CopyTo(found, n);
}

Status DeviceHashShard::Accumulate(const uint64_t* keys, const float* gradients, size_t n,
                                   uint8_t* found) {
  if (n == 0) return Status::Ok();
  Impl& m = *impl_;
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  RETURN_IF_ERROR(m.Grow(n, n * m.dim));
  RETURN_IF_ERROR(m.keys.CopyFrom(keys, n));
  TROUPE_CUDA_CHECK(
      cudaMemcpy(m.rows.data(), gradients, n * m.dim * sizeof(float), cudaMemcpyHostToDevice));
  RETURN_IF_ERROR(m.FindSlots(m.keys.data(), n));
  FoundFlagsKernel<<<Blocks(n), kThreads>>>(m.slot.data(), n, m.flags.data());
  TROUPE_CUDA_CHECK_LAUNCH();
  RETURN_IF_ERROR(m.flags.CopyTo(found, n));
  // flags now serves as "pending": every present occurrence, until its round applies it.
  for (size_t pending = n; pending > 0;) {
    RETURN_IF_ERROR(m.ZeroCounter());
    ClaimKernel<<<Blocks(n), kThreads>>>(m.slot.data(), m.flags.data(), n, false, m.claims.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    ApplyGradientsKernel<<<Blocks(n * m.dim), kThreads>>>(m.slot.data(), m.flags.data(),
                                                          m.claims.data(), m.rows.data(), n, m.dim,
                                                          m.width, m.optimizer, m.values.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    FinishRoundKernel<<<Blocks(n), kThreads>>>(m.slot.data(), m.flags.data(), m.claims.data(), n,
                                               m.counters.data());
    TROUPE_CUDA_CHECK_LAUNCH();
    RETURN_IF_ERROR(m.ReadCounter(&pending));
  }
  return Status::Ok();
}

Status DeviceHashShard::Erase(const uint64_t* keys, size_t n, size_t* erased) {
  *erased = 0;
  if (n == 0) return Status::Ok();
  Impl& m = *impl_;
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  RETURN_IF_ERROR(m.Grow(n, 0));
  RETURN_IF_ERROR(m.keys.CopyFrom(keys, n));
  RETURN_IF_ERROR(m.FindSlots(m.keys.data(), n));
  RETURN_IF_ERROR(m.ZeroCounter());
  EraseKernel<<<Blocks(n), kThreads>>>(m.slot.data(), m.keys.data(), n, m.table_keys.data(),
                                       m.counters.data());
  TROUPE_CUDA_CHECK_LAUNCH();
  RETURN_IF_ERROR(m.ReadCounter(erased));
  live_ -= *erased;
  erased_ += *erased;
  return Status::Ok();
}

Status DeviceHashShard::Drain(std::vector<uint64_t>* keys, std::vector<float>* rows) {
  Impl& m = *impl_;
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  std::vector<uint64_t> table_keys(m.table_keys.size());
  std::vector<float> values(m.values.size());
  RETURN_IF_ERROR(m.table_keys.CopyTo(table_keys.data(), table_keys.size()));
  RETURN_IF_ERROR(m.values.CopyTo(values.data(), values.size()));
  std::vector<size_t> live;
  for (size_t s = 0; s < table_keys.size(); ++s) {
    if (table_keys[s] != kEmptyKey && table_keys[s] != kErasedKey) live.push_back(s);
  }
  // Slot order depends on which thread won each CAS; key order does not.
  std::sort(live.begin(), live.end(),
            [&](size_t a, size_t b) { return table_keys[a] < table_keys[b]; });
  const auto width = static_cast<size_t>(m.width);
  keys->clear();
  rows->clear();
  keys->reserve(live.size());
  rows->reserve(live.size() * width);
  for (size_t s : live) {
    keys->push_back(table_keys[s]);
    rows->insert(rows->end(), values.begin() + s * width, values.begin() + (s + 1) * width);
  }
  RETURN_IF_ERROR(m.Clear());
  live_ = erased_ = 0;
  return Status::Ok();
}

Status DeviceHashShard::Rebuild() {
  std::vector<uint64_t> keys;
  std::vector<float> rows;
  RETURN_IF_ERROR(Drain(&keys, &rows));
  size_t inserted = 0, overwritten = 0;
  return Insert(keys.data(), rows.data(), keys.size(), &inserted, &overwritten);
}

Status DeviceHashShard::InsertOnDevice(const uint64_t* d_keys, const float* d_rows, size_t n,
                                       size_t* inserted) {
  Impl& m = *impl_;
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  RETURN_IF_ERROR(m.Grow(n, 0));
  RETURN_IF_ERROR(m.InsertBatch(d_keys, d_rows, n, inserted));
  live_ += *inserted;
  return Status::Ok();
}

Status DeviceHashShard::FindOnDevice(const uint64_t* d_keys, size_t n, float* d_rows,
                                     uint8_t* d_found) {
  Impl& m = *impl_;
  TROUPE_CUDA_CHECK(cudaSetDevice(m.device));
  RETURN_IF_ERROR(m.Grow(n, 0));
  RETURN_IF_ERROR(m.FindSlots(d_keys, n));
  GatherRowsKernel<<<Blocks(n * m.width), kThreads>>>(m.slot.data(), n, m.values.data(), m.width,
                                                      m.width, d_rows, d_found);
  TROUPE_CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status cuda_impl::MeasureHashShard(size_t keys, int repeats, HashMeasurement* out) {
  RETURN_IF_ERROR(RequireGpu("hash benchmark"));
  TROUPE_CUDA_CHECK(cudaSetDevice(0));
  // Distinct keys: an odd multiplier is a bijection on 64-bit integers.
  std::vector<uint64_t> host_keys(keys);
  for (size_t i = 0; i < keys; ++i) host_keys[i] = (i + 1) * 0x9E3779B97F4A7C15ull % kErasedKey;
  std::vector<float> host_rows(keys, 1.0f);
  DeviceBuffer<uint64_t> d_keys;
  DeviceBuffer<float> d_rows, d_out;
  DeviceBuffer<uint8_t> d_found;
  RETURN_IF_ERROR(d_keys.CopyFrom(host_keys.data(), keys));
  RETURN_IF_ERROR(d_rows.CopyFrom(host_rows.data(), keys));
  RETURN_IF_ERROR(d_out.Allocate(keys));
  RETURN_IF_ERROR(d_found.Allocate(keys));
  const ShardOptimizer sgd{false, 0.05f, 1e-8f};
  double best_insert = 0, best_find = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    std::unique_ptr<DeviceHashShard> shard;
    RETURN_IF_ERROR(DeviceHashShard::Create(0, keys, 1, 1, sgd, &shard));
    TROUPE_CUDA_CHECK(cudaDeviceSynchronize());
    // InsertOnDevice ends by reading the new-key counter back, so host time covers the kernels.
    auto start = std::chrono::steady_clock::now();
    size_t inserted = 0;
    RETURN_IF_ERROR(shard->InsertOnDevice(d_keys.data(), d_rows.data(), keys, &inserted));
    const double insert_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (inserted != keys) {
      return Status::Internal("hash benchmark: inserted " + std::to_string(inserted) + " of " +
                              std::to_string(keys) + " distinct keys");
    }
    start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(shard->FindOnDevice(d_keys.data(), keys, d_out.data(), d_found.data()));
    TROUPE_CUDA_CHECK(cudaDeviceSynchronize());
    const double find_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best_insert = std::max(best_insert, static_cast<double>(keys) / insert_s);
    best_find = std::max(best_find, static_cast<double>(keys) / find_s);
    out->load = static_cast<double>(shard->size()) / static_cast<double>(shard->slots());
  }
  out->insert_keys_per_s = best_insert;
  out->find_keys_per_s = best_find;
  return Status::Ok();
}

}  // namespace troupe::gpu
