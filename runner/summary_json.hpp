// summary.json of every kind of run: the run's summary message (messages/summary.proto, the schema
// of every field) printed by protobuf's JSON printer, so no JSON formatting or escaping is ours.
//
// Contract: one field a line, indented, under its name in summary.proto; every field printed
// (zeros and empty lists too), the 64-bit seed as a string, doubles in their shortest round-trip
// form, a trailing newline. A double of an `optional` field that is not finite (NaN: unknown) is
// left out of the JSON; a non-finite double in any other field is an Internal error (the writer
// must make it finite), since JSON has no number for it. -0 prints as 0.
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "base/status_or.hpp"

namespace troupe {

StatusOr<std::string> PrintSummaryJson(google::protobuf::Message* summary);

}  // namespace troupe
