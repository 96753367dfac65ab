// Field ranges: every number of the config schema has one, declared once in config/config.proto
// with the (min), (max) and (max_count) field options, and checked here by reflection.
//
// Contract:
//  - CheckFieldRanges walks a RunConfig (nested messages, repeated fields) and refuses the first
//    number outside its field's range, NaN or infinity, and the first repeated field with more
//    than (max_count) entries, with InvalidInput "name: field.path[i].name: must be in [min, max],
//    got V". Unset singular fields are checked too, with their defaults.
//  - A range on a field of message type applies to every number inside that message (intersected
//    with the inner fields' own ranges), so that one small message type (Oasis.Range) can carry
//    different ranges where it is used.
//  - SchemaRanges lists every numeric field and every repeated field reachable from a message type
//    with the range that applies to it, for the tests that keep the schema complete and
//    docs/config.md's table of ranges in step with it (tests/unit/config_ranges_test.cpp).
// Plain protobuf: no CAF, no file system.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <optional>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace troupe {

Status CheckFieldRanges(const google::protobuf::Message& message, const std::string& name);

struct FieldRange {
  std::string path;  // "cluster.servers[].count"
  const google::protobuf::FieldDescriptor* field = nullptr;
  std::optional<double> min;  // numeric fields: the range that applies
  std::optional<double> max;
  std::optional<int> max_count;  // repeated fields: the most entries
};

std::vector<FieldRange> SchemaRanges(const google::protobuf::Descriptor* root);

// A number as the range messages print it: whole numbers in full ("86400"), others in the
// shortest form that reads back ("0.001", "1e300").
std::string FormatRangeNumber(double value);

// Whether `field` holds a number (integer or floating point; not bool, enum or string).
bool IsNumericField(const google::protobuf::FieldDescriptor* field);

}  // namespace troupe
