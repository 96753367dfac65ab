// TROUPE_RETURN_IF_ERROR(expr): evaluates a Status-returning expression and returns its Status
// from the enclosing function when it is an error. gpu/ chains many fallible device calls; this
// keeps each one a single line without dropping a failure.
#pragma once

#include "base/status.hpp"

#define TROUPE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::troupe::Status troupe_status_ = (expr);        \
    if (!troupe_status_.ok()) return troupe_status_; \
  } while (0)
