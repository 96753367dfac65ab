// StatusOr<T>: either a T or the non-OK Status that explains why there is none.
//
// The return type of factories and readers that can fail (`StatusOr<std::unique_ptr<MemCache>>
// MemCache::Create(...)`). Built implicitly from a T or from a Status; building one from an OK
// Status is a programming error and yields a kInternal error instead, so a caller never sees
// ok() without a value. value()/operator*/operator-> may be used only after ok() is checked.
// Like Status, a StatusOr is [[nodiscard]].
#pragma once

#include <cassert>
#include <optional>
#include <type_traits>
#include <utility>

#include "base/status.hpp"

namespace troupe {

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): returning a Status must read naturally.
  StatusOr(Status status)
      : status_(status.ok() ? Status::Internal("StatusOr built from an OK Status")
                            : std::move(status)) {}
  // NOLINTNEXTLINE(google-explicit-constructor): returning a value must read naturally.
  StatusOr(T value) : value_(std::move(value)) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U&&, T> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, StatusOr<T>>>>
  // NOLINTNEXTLINE(google-explicit-constructor): e.g. unique_ptr<Derived> into unique_ptr<Base>.
  StatusOr(U&& value) : value_(T(std::forward<U>(value))) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace troupe
