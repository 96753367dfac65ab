// CheckFieldRanges and SchemaRanges (config_ranges.hpp): the ranges config/config.proto declares.
#include "config/config_ranges.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "config/config.pb.h"

namespace troupe {
namespace {

namespace pb = google::protobuf;
using Type = pb::FieldDescriptor::CppType;

struct Bounds {
  std::optional<double> min;
  std::optional<double> max;
};

// The field's own range, narrowed by the range of the message field that holds it.
Bounds Narrow(const Bounds& outer, const pb::FieldDescriptor* field) {
  const pb::FieldOptions& o = field->options();
  Bounds b = outer;
  if (o.HasExtension(config::min)) {
    const double own = o.GetExtension(config::min);
    b.min = b.min ? std::max(*b.min, own) : own;
  }
  if (o.HasExtension(config::max)) {
    const double own = o.GetExtension(config::max);
    b.max = b.max ? std::min(*b.max, own) : own;
  }
  return b;
}

std::string RangeText(const Bounds& b) {
  std::string text = "[";
  text += b.min ? FormatRangeNumber(*b.min) : "-inf";
  text += ", ";
  text += b.max ? FormatRangeNumber(*b.max) : "inf";
  text += "]";
  return text;
}

// Integers compare as long double, exact for every 64-bit value on the platforms troupe builds
// for; floating-point values must be finite as well.
bool InRange(long double value, const Bounds& b) {
  if (!std::isfinite(value)) return false;
  if (b.min && value < static_cast<long double>(*b.min)) return false;
  if (b.max && value > static_cast<long double>(*b.max)) return false;
  return true;
}

// The value of a numeric field as text (integers exactly) and as a number to compare.
std::pair<std::string, long double> ReadNumber(const pb::Message& m, const pb::FieldDescriptor* f,
                                               int index) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case Type::CPPTYPE_INT32: {
      const int32_t v = rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      return {std::to_string(v), v};
    }
    case Type::CPPTYPE_INT64: {
      const int64_t v = rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
      return {std::to_string(v), v};
    }
    case Type::CPPTYPE_UINT32: {
      const uint32_t v = rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      return {std::to_string(v), v};
    }
    case Type::CPPTYPE_UINT64: {
      const uint64_t v = rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      return {std::to_string(v), v};
    }
    case Type::CPPTYPE_FLOAT: {
      const float v = rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
      return {FormatRangeNumber(v), v};
    }
    default: {
      const double v = rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
      return {FormatRangeNumber(v), v};
    }
  }
}

class RangeWalk {
 public:
  explicit RangeWalk(const std::string& name) : name_(name) {}

  void Message(const pb::Message& m, const std::string& prefix, const Bounds& outer) {
    const pb::Descriptor* type = m.GetDescriptor();
    const pb::Reflection* r = m.GetReflection();
    for (int i = 0; i < type->field_count() && status_.ok(); ++i) {
      const pb::FieldDescriptor* f = type->field(i);
      const std::string path = prefix + f->name();
      const Bounds bounds = Narrow(outer, f);
      if (!f->is_repeated()) {
        if (f->cpp_type() == Type::CPPTYPE_MESSAGE) {
          if (r->HasField(m, f)) Message(r->GetMessage(m, f), path + ".", bounds);
        } else if (IsNumericField(f)) {
          // An optional double without a default means "none" while unset (a fixed_interval's
          // checkpoint_interval_s under another policy): there is no number to check.
          const bool none = f->cpp_type() == Type::CPPTYPE_DOUBLE && f->has_presence() &&
                            !f->has_default_value() && !r->HasField(m, f);
          if (!none) Number(m, f, -1, path, bounds);
        }
        continue;
      }
      const int count = r->FieldSize(m, f);
      const pb::FieldOptions& o = f->options();
      if (o.HasExtension(config::max_count) && count > o.GetExtension(config::max_count)) {
        Fail(path, "must have at most " + std::to_string(o.GetExtension(config::max_count)) +
                       " entries, got " + std::to_string(count));
        return;
      }
      for (int k = 0; k < count && status_.ok(); ++k) {
        const std::string at = path + "[" + std::to_string(k) + "]";
        if (f->cpp_type() == Type::CPPTYPE_MESSAGE) {
          Message(r->GetRepeatedMessage(m, f, k), at + ".", bounds);
        } else if (IsNumericField(f)) {
          Number(m, f, k, at, bounds);
        }
      }
    }
  }

  const Status& status() const { return status_; }

 private:
  void Number(const pb::Message& m, const pb::FieldDescriptor* f, int index,
              const std::string& path, const Bounds& bounds) {
    auto [text, value] = ReadNumber(m, f, index);
    if (!InRange(value, bounds)) Fail(path, "must be in " + RangeText(bounds) + ", got " + text);
  }

  void Fail(const std::string& path, const std::string& why) {
    if (status_.ok()) status_ = Status::InvalidInput(name_ + ": " + path + ": " + why);
  }

  const std::string& name_;
  Status status_;
};

void ListRanges(const pb::Descriptor* type, const std::string& prefix, const Bounds& outer,
                std::vector<FieldRange>* out) {
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* f = type->field(i);
    const Bounds bounds = Narrow(outer, f);
    std::string path = prefix + f->name();
    if (f->is_repeated()) {
      FieldRange entry{path, f, std::nullopt, std::nullopt, std::nullopt};
      if (f->options().HasExtension(config::max_count)) {
        entry.max_count = f->options().GetExtension(config::max_count);
      }
      out->push_back(entry);
      path += "[]";
    }
    if (f->cpp_type() == Type::CPPTYPE_MESSAGE) {
      ListRanges(f->message_type(), path + ".", bounds, out);
    } else if (IsNumericField(f)) {
      out->push_back(FieldRange{path, f, bounds.min, bounds.max, std::nullopt});
    }
  }
}

}  // namespace

std::string FormatRangeNumber(double value) {
  // A uint64 field's maximum, 2^64 - 1, is held as the double 2^64: no integer lies between.
  if (value == 18446744073709551616.0) return "18446744073709551615";
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  std::string text = ec == std::errc() ? std::string(buf, end) : std::string("?");
  // "1e+300" and "1e-07" read better as "1e300" and "1e-7".
  const size_t e = text.find('e');
  if (e != std::string::npos) {
    size_t digits = e + 1;
    if (text[digits] == '+') text.erase(digits, 1);
    if (text[digits] == '-') ++digits;
    while (digits + 1 < text.size() && text[digits] == '0') text.erase(digits, 1);
  }
  return text;
}

bool IsNumericField(const pb::FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case Type::CPPTYPE_INT32:
    case Type::CPPTYPE_INT64:
    case Type::CPPTYPE_UINT32:
    case Type::CPPTYPE_UINT64:
    case Type::CPPTYPE_FLOAT:
    case Type::CPPTYPE_DOUBLE:
      return true;
    default:
      return false;
  }
}

Status CheckFieldRanges(const pb::Message& message, const std::string& name) {
  RangeWalk walk(name);
  walk.Message(message, "", Bounds{});
  return walk.status();
}

std::vector<FieldRange> SchemaRanges(const pb::Descriptor* root) {
  std::vector<FieldRange> out;
  ListRanges(root, "", Bounds{}, &out);
  return out;
}

}  // namespace troupe
