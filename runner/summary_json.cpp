#include "runner/summary_json.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <memory>

#include "base/status_macros.hpp"

namespace troupe {
namespace {

namespace pb = google::protobuf;

// Clears the unknown values of optional doubles, turns -0 into 0, and refuses any other
// non-finite double (proto3's JSON would print it as the string "NaN").
Status NormaliseDoubles(pb::Message* m) {
  const pb::Descriptor* d = m->GetDescriptor();
  const pb::Reflection* r = m->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE || f->is_repeated()) continue;
    if (f->has_presence() && !r->HasField(*m, f)) continue;
    const double value = r->GetDouble(*m, f);
    if (std::isfinite(value)) {
      r->SetDouble(m, f, value + 0.0);  // + 0.0: no "-0"
    } else if (f->has_presence()) {
      r->ClearField(m, f);
    } else {
      return Status::Internal("summary.json: " + f->name() + " is not a finite number");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> PrintSummaryJson(const pb::Message& summary) {
  const std::unique_ptr<pb::Message> printed(summary.New());
  printed->CopyFrom(summary);
  RETURN_IF_ERROR(NormaliseDoubles(printed.get()));
  pb::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  if (const auto s = pb::util::MessageToJsonString(*printed, &json, options); !s.ok()) {
    return Status::Internal("summary.json: " + s.ToString());
  }
  return json;  // the printer ends the object with a newline
}

}  // namespace troupe
