// summary.json of every kind of run: the run's summary message (messages/summary.proto, the schema
// of every field) printed by protobuf's JSON printer, so no JSON formatting or escaping is ours.
//
// Contract: one field a line, indented, under its name in summary.proto; every field printed
// (zeros and empty lists too; known `optional` fields after the others), the 64-bit seed as a
// string, doubles so that they read back exactly (15 or 17 significant digits), a trailing
// newline. A double of an `optional` field that is not finite (NaN: unknown) is left out of the
// JSON; a non-finite double in any other field is an Internal error naming the field (the writer
// must make it finite: JSON has no number for it). -0 prints as 0.
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "base/status_or.hpp"

namespace troupe {

// The summary itself is left as it is (an unknown value stays NaN for the run's other readers).
StatusOr<std::string> PrintSummaryJson(const google::protobuf::Message& summary);

}  // namespace troupe
