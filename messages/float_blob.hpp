// FloatBlob: floats carried by a message as their raw bytes, shared rather than copied.
//
// A blob is a view of consecutive floats of a buffer it shares (std::shared_ptr), so a message
// that carries a slice of a large buffer holds no copy of it: in one process the receiver reads the
// sender's floats; across processes CAF's serializer writes them straight from the buffer into the
// connection's bytes, and the deserializer reads them into a fresh buffer that is not zeroed first
// (one copy each way, the least a byte stream allows). CAF 0.17 serialises a float vector element
// by element (about 40x slower) and zeroes a byte vector before filling it.
// On the wire a blob is what CAF writes for a std::vector<uint8_t>: a varint byte count, the bytes.
// The processes of one deployment share the floats' byte order (IEEE 754, little-endian on every
// machine troupe builds for).
//
// Shared floats are read-only to every holder of a blob. Share() lets the owner of a buffer hand
// out views of it without a copy; the owner promises not to change the viewed floats while a view
// may still be read (actors/allreduce_rank_actor.hpp: a rank overwrites its contribution to a
// segment only with that segment's sum, which exists only once every contribution was read).
#pragma once

#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace troupe {

class FloatBlob {
 public:
  FloatBlob() = default;

  // A copy of `values` (one copy).
  static FloatBlob Of(std::span<const float> values) {
    FloatBlob blob = Allocate(values.size_bytes());
    if (!values.empty()) std::memcpy(blob.data_.get(), values.data(), values.size_bytes());
    return blob;
  }
  // A view of `buffer[offset, offset + floats)`, no copy (see the promise above).
  static FloatBlob Share(const std::shared_ptr<float[]>& buffer, size_t offset, size_t floats) {
    FloatBlob blob;
    blob.data_ = std::shared_ptr<float[]>(buffer, buffer.get() + offset);
    blob.bytes_ = floats * sizeof(float);
    return blob;
  }

  // Floats held; a blob read from a byte count that is no whole number of floats holds none.
  size_t floats() const { return whole() ? bytes_ / sizeof(float) : 0; }
  bool whole() const { return bytes_ % sizeof(float) == 0; }
  std::span<const float> values() const { return {data_.get(), floats()}; }

  // Precondition: out.size() == floats().
  void CopyTo(std::span<float> out) const {
    if (!out.empty()) std::memcpy(out.data(), data_.get(), out.size_bytes());
  }
  std::vector<float> ToFloats() const { return {values().begin(), values().end()}; }

  // The floats to change in place: this blob's own buffer when no other blob (nor message) shares
  // it, else a copy. Leaves this blob empty.
  std::shared_ptr<float[]> TakeWritable() && {
    std::shared_ptr<float[]> out = std::exchange(data_, nullptr);
    if (out.use_count() > 1) out = Of(std::span<const float>(out.get(), floats())).data_;
    bytes_ = 0;
    return out;
  }

  friend caf::error inspect(caf::serializer& f, FloatBlob& x);
  friend caf::error inspect(caf::deserializer& f, FloatBlob& x);

  size_t bytes() const { return bytes_; }

 private:
  // Room for `bytes`, rounded up to whole floats, not zeroed.
  static FloatBlob Allocate(size_t bytes) {
    FloatBlob blob;
    blob.data_ =
        std::make_shared_for_overwrite<float[]>((bytes + sizeof(float) - 1) / sizeof(float));
    blob.bytes_ = bytes;
    return blob;
  }

  std::shared_ptr<float[]> data_;
  size_t bytes_ = 0;
};

inline caf::error inspect(caf::serializer& f, FloatBlob& x) {
  size_t bytes = x.bytes_;
  if (auto err = f.begin_sequence(bytes)) return err;
  if (bytes > 0) {
    // The serializer only reads through this pointer.
    if (auto err = f.apply_raw(bytes, const_cast<float*>(x.data_.get()))) return err;
  }
  return f.end_sequence();
}

inline caf::error inspect(caf::deserializer& f, FloatBlob& x) {
  size_t bytes = 0;
  if (auto err = f.begin_sequence(bytes)) return err;
  // A count past the frame's end is refused before anything is allocated for it.
  auto* binary = dynamic_cast<caf::binary_deserializer*>(&f);
  if (binary != nullptr && bytes > binary->remaining()) return caf::sec::end_of_stream;
  x = FloatBlob::Allocate(bytes);
  if (bytes > 0) {
    if (auto err = f.apply_raw(bytes, x.data_.get())) return err;
  }
  return f.end_sequence();
}

// Anything else that inspects a message (CAF's to_string) sees the byte count.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, FloatBlob& x) {
  static_assert(Inspector::reads_state, "a FloatBlob is read only by (de)serializers");
  size_t bytes = x.bytes();
  return f(caf::meta::type_name("FloatBlob"), bytes);
}

}  // namespace troupe
