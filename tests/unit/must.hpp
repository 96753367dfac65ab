// Must(StatusOr<T>): the value, for test set-up that cannot go on without it. An error is
// reported as a test failure with its message, then the test binary stops (there is no value to
// go on with).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>

#include "base/status_or.hpp"

namespace troupe {

template <typename T>
T Must(StatusOr<T> result) {
  if (!result.ok()) {
    ADD_FAILURE() << "unexpected error: " << result.status().message();
    std::abort();
  }
  return std::move(*result);
}

}  // namespace troupe
