// DeviceBuffer<T>: an owned array in the current GPU's memory, freed on destruction, with
// checked copies to and from host arrays. Keeps gpu/cuda/ free of hand-paired cudaMalloc/cudaFree.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda/cuda_check.cuh"

namespace troupe::gpu {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Free();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { Free(); }

  // Frees the old array and allocates `count` elements (at least one, so data() is valid).
  Status Allocate(size_t count) {
    Free();
    TROUPE_CUDA_CHECK(cudaMalloc(&data_, (count > 0 ? count : 1) * sizeof(T)));
    size_ = count;
    return Status::Ok();
  }
  // (Re)allocates to `count` elements unless already that size, then copies them in.
  Status CopyFrom(const T* host, size_t count) {
    if (size_ != count || data_ == nullptr) RETURN_IF_ERROR(Allocate(count));
    if (count > 0) {
      TROUPE_CUDA_CHECK(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice));
    }
    return Status::Ok();
  }
  // Copies the first `count` elements (<= size()) to the host.
  Status CopyTo(T* host, size_t count) const {
    if (count > size_) return Status::Internal("DeviceBuffer::CopyTo: more than the buffer holds");
    if (count > 0) {
      TROUPE_CUDA_CHECK(cudaMemcpy(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost));
    }
    return Status::Ok();
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  // A failed free at teardown is not actionable; the result is deliberately dropped.
  void Free() {
    if (data_ != nullptr) (void)cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace troupe::gpu
