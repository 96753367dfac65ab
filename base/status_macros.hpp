// RETURN_IF_ERROR and ASSIGN_OR_RETURN: propagate a failed Status or StatusOr in one line.
//
//   RETURN_IF_ERROR(store.Flush());             // a Status-returning expression
//   ASSIGN_OR_RETURN(auto table, Table::Open(path));   // declares `table`
//   ASSIGN_OR_RETURN(config_, LoadConfig(path));       // assigns an existing variable
//
// Both return the error, unchanged, from the enclosing function, which must return Status or a
// StatusOr (an error Status converts to either). Where the caller adds context to the message
// ("trace.csv: " + s.message()), write the check out instead: these macros only propagate.
// ASSIGN_OR_RETURN expands to several statements: use it only where a statement list may stand
// (not as the lone body of an unbraced `if`). Its left side takes no commas (no structured
// bindings); the right side may.
#pragma once

#include <utility>

#include "base/status.hpp"
#include "base/status_or.hpp"

#define RETURN_IF_ERROR(expr)                                    \
  do {                                                           \
    ::troupe::Status troupe_status_macro_ = (expr);              \
    if (!troupe_status_macro_.ok()) return troupe_status_macro_; \
  } while (0)

#define TROUPE_STATUS_CONCAT_INNER_(a, b) a##b
#define TROUPE_STATUS_CONCAT_(a, b) TROUPE_STATUS_CONCAT_INNER_(a, b)

#define ASSIGN_OR_RETURN(lhs, ...)                                                          \
  TROUPE_ASSIGN_OR_RETURN_IMPL_(TROUPE_STATUS_CONCAT_(troupe_status_or_, __COUNTER__), lhs, \
                                __VA_ARGS__)

#define TROUPE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, ...) \
  auto tmp = (__VA_ARGS__);                          \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
