#include "config/config_loader.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <filesystem>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "base/closest_name.hpp"
#include "base/input_file.hpp"
#include "base/parse.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "config/config_paths.hpp"

namespace troupe {
namespace {

namespace pb = google::protobuf;

// Keeps only the first error: later ones are usually consequences of it, and a Status is one line.
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!error_) error_ = Error{line, column, message};
  }

  struct Error {
    int line;
    int column;
    std::string message;
  };
  const std::optional<Error>& error() const { return error_; }

 private:
  std::optional<Error> error_;
};

Status OverrideError(std::string_view assignment, const std::string& why) {
  return Status::InvalidInput("--set " + Excerpt(assignment) + ": " + why);
}

std::vector<std::string> EnumValueNames(const pb::EnumDescriptor* type) {
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) names.push_back(type->value(i)->name());
  return names;
}

std::vector<std::string> FieldNames(const pb::Descriptor* type) {
  std::vector<std::string> names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  return names;
}

std::string EnumNames(const pb::EnumDescriptor* type) {
  std::string names;
  for (const std::string& name : EnumValueNames(type)) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

// "'x' is not a value of E (a, b, c)", with a "did you mean" when one is close.
std::string NotAnEnumValue(const std::string& value, const pb::EnumDescriptor* type) {
  return Quoted(value) + " is not a value of " + type->full_name() +
         DidYouMean(value, EnumValueNames(type)) + " (" + EnumNames(type) + ")";
}

// Sets the singular non-message `field` of `message` from the text `value`.
Status SetLeaf(std::string_view assignment, const std::string& value,
               const pb::FieldDescriptor* field, pb::Message* message) {
  const pb::Reflection* reflection = message->GetReflection();
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      // Taken verbatim: a path on a command line should not need text-format quoting.
      reflection->SetString(message, field, value);
      return Status::Ok();
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* v = field->enum_type()->FindValueByName(value);
      if (v == nullptr) {
        return OverrideError(assignment, NotAnEnumValue(value, field->enum_type()));
      }
      reflection->SetEnum(message, field, v);
      return Status::Ok();
    }
    default: {
      // Numbers and bools go through protobuf's own text-format value parser, so `--set`
      // accepts exactly what a config file would (range checks included).
      pb::TextFormat::Parser parser;
      FirstErrorCollector errors;
      parser.RecordErrorsTo(&errors);
      if (!parser.ParseFieldValueFromString(value, field, message)) {
        std::string why = errors.error() ? errors.error()->message : "does not parse";
        return OverrideError(assignment, "bad " + std::string(field->cpp_type_name()) + " value " +
                                             Quoted(value) + " for " + field->full_name() + ": " +
                                             Excerpt(why));
      }
      return Status::Ok();
    }
  }
}

class DiscardErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

// protobuf reports an unknown field name or enum value at the token AFTER it (it has already
// consumed the name when it finds out), which points a user at the wrong place. Such messages quote
// the culprit ("... has no field named \"colour\"."): when the token just before the reported
// position is exactly one of the quoted texts, its position is the one to print. Other errors stay
// put.
std::vector<std::string> QuotedTexts(const std::string& message) {
  std::vector<std::string> quoted;
  for (size_t open = message.find('"'); open != std::string::npos;) {
    size_t close = message.find('"', open + 1);
    if (close == std::string::npos) break;
    quoted.push_back(message.substr(open + 1, close - open - 1));
    open = message.find('"', close + 1);
  }
  return quoted;
}

std::pair<int, int> CulpritPosition(std::string_view text, const FirstErrorCollector::Error& e) {
  const std::vector<std::string> quoted = QuotedTexts(e.message);
  if (quoted.empty()) return {e.line, e.column};

  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  DiscardErrors ignore;
  pb::io::Tokenizer tokenizer(&input, &ignore);
  // The same settings TextFormat's parser uses, so both see the same tokens at the same columns.
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  std::optional<pb::io::Tokenizer::Token> previous;
  while (tokenizer.Next()) {
    const auto& t = tokenizer.current();
    if (t.line > e.line || (t.line == e.line && t.column >= e.column)) break;
    previous = t;
  }
  if (previous && std::find(quoted.begin(), quoted.end(), previous->text) != quoted.end()) {
    return {previous->line, previous->column};
  }
  return {e.line, e.column};
}

// The values of every enum that a field called `field` of a config message takes.
std::vector<std::string> EnumValuesOfFieldsNamed(const std::string& field) {
  std::vector<std::string> names;
  std::vector<const pb::Descriptor*> todo = {config::RunConfig::descriptor()};
  std::vector<const pb::Descriptor*> seen;
  while (!todo.empty()) {
    const pb::Descriptor* type = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) continue;
    seen.push_back(type);
    for (int i = 0; i < type->field_count(); ++i) {
      const pb::FieldDescriptor* f = type->field(i);
      if (f->message_type() != nullptr) todo.push_back(f->message_type());
      if (f->enum_type() != nullptr && f->name() == field) {
        for (const std::string& name : EnumValueNames(f->enum_type())) {
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
      }
    }
  }
  return names;
}

// A "did you mean" for protobuf's two messages about a misspelt name: 'Message type "T" has no
// field named "x".' and 'Unknown enumeration value of "x" for field "f".'; else "".
std::string SuggestionFor(const std::string& message) {
  const std::vector<std::string> quoted = QuotedTexts(message);
  if (quoted.size() != 2) return "";
  if (message.find("has no field named") != std::string::npos) {
    const pb::Descriptor* type =
        pb::DescriptorPool::generated_pool()->FindMessageTypeByName(quoted[0]);
    return type == nullptr ? "" : DidYouMean(quoted[1], FieldNames(type));
  }
  if (message.starts_with("Unknown enumeration value of")) {
    return DidYouMean(quoted[0], EnumValuesOfFieldsNamed(quoted[1]));
  }
  return "";
}

}  // namespace

Status ParseConfigText(std::string_view text, const std::string& name, config::RunConfig* out) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::InvalidInput(name + ": file too large");
  }
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  pb::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (parser.Parse(&input, out)) return Status::Ok();
  if (!errors.error()) return Status::InvalidInput(name + ": does not parse");
  auto [line, column] = CulpritPosition(text, *errors.error());
  std::string message = Excerpt(errors.error()->message, 4 * kMaxQuotedBytes);
  if (const std::string suggestion = SuggestionFor(errors.error()->message); !suggestion.empty()) {
    if (message.ends_with('.')) message.pop_back();
    message += suggestion;
  }
  // protobuf counts lines and columns from 0; editors and compilers count from 1.
  return Status::InvalidInput(name + ":" + std::to_string(line + 1) + ":" +
                              std::to_string(column + 1) + ": " + message);
}

Status LoadConfigFile(const std::string& path, config::RunConfig* out) {
  std::string text;
  RETURN_IF_ERROR(ReadWholeFile(path, "config file", &text));
  RETURN_IF_ERROR(ParseConfigText(text, path, out));
  // A config names its input files relative to itself, so it runs from any current folder.
  ResolveInputPaths(std::filesystem::path(path).parent_path(), out);
  return Status::Ok();
}

namespace {

// One step of a --set path: a field name and, for a repeated field, the entry ("servers[1]").
struct PathPart {
  std::string name;
  std::optional<int> index;
};

Status ParsePart(std::string_view assignment, std::string_view text, PathPart* part) {
  const size_t open = text.find('[');
  part->name = std::string(text.substr(0, open));
  part->index.reset();
  if (open == std::string_view::npos) return Status::Ok();
  uint64_t index = 0;
  if (text.back() != ']' ||
      !ParseWholeNumber(text.substr(open + 1, text.size() - open - 2), 1u << 30, &index)) {
    return OverrideError(assignment, Quoted(text) +
                                         ": an entry of a repeated field is NAME[INDEX], with "
                                         "INDEX a whole number from 0");
  }
  part->index = static_cast<int>(index);
  return Status::Ok();
}

// The entry `part.index` of the repeated `field` must exist: --set changes entries, it does
// not add them.
Status CheckIndex(std::string_view assignment, const PathPart& part,
                  const pb::FieldDescriptor* field, const pb::Message& message) {
  const int size = message.GetReflection()->FieldSize(message, field);
  if (*part.index < size) return Status::Ok();
  const std::string entries =
      size == 0   ? "no entries"
      : size == 1 ? "1 entry (index 0)"
                  : std::to_string(size) + " entries (index 0-" + std::to_string(size - 1) + ")";
  return OverrideError(assignment, "index " + std::to_string(*part.index) +
                                       " out of range: " + field->full_name() + " has " + entries);
}

// Sets entry `index` of the repeated non-message `field`: parsed as a new last entry (the same
// parsing a single field gets), then swapped into place.
Status SetRepeatedLeaf(std::string_view assignment, const std::string& value, int index,
                       const pb::FieldDescriptor* field, pb::Message* message) {
  const pb::Reflection* reflection = message->GetReflection();
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
    reflection->SetRepeatedString(message, field, index, value);
    return Status::Ok();
  }
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
    const pb::EnumValueDescriptor* v = field->enum_type()->FindValueByName(value);
    if (v == nullptr) {
      return OverrideError(assignment, NotAnEnumValue(value, field->enum_type()));
    }
    reflection->SetRepeatedEnum(message, field, index, v);
    return Status::Ok();
  }
  RETURN_IF_ERROR(SetLeaf(assignment, value, field, message));
  const int last = reflection->FieldSize(*message, field) - 1;
  reflection->SwapElements(message, field, index, last);
  reflection->RemoveLast(message, field);
  return Status::Ok();
}

// Walks `assignment`'s dotted path down from `root` and sets the leaf. A repeated field is
// reached through one of its entries, by index.
Status ApplyTo(std::string_view assignment, pb::Message* root) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return OverrideError(assignment, "expected field.path=value");
  }
  std::string_view path = assignment.substr(0, eq);
  std::string value(assignment.substr(eq + 1));

  pb::Message* message = root;
  while (true) {
    size_t dot = path.find('.');
    PathPart part;
    RETURN_IF_ERROR(ParsePart(assignment, path.substr(0, dot), &part));
    const pb::Descriptor* type = message->GetDescriptor();
    const pb::FieldDescriptor* field = type->FindFieldByName(part.name);
    if (field == nullptr) {
      return OverrideError(assignment, "no field " + Quoted(part.name) + " in " +
                                           type->full_name() +
                                           DidYouMean(part.name, FieldNames(type)));
    }
    if (field->is_repeated() && !part.index) {
      return OverrideError(assignment, Quoted(part.name) + " in " + type->full_name() +
                                           " is a repeated field; name one entry, e.g. " +
                                           Excerpt(part.name) + "[0]");
    }
    if (!field->is_repeated() && part.index) {
      return OverrideError(assignment, Quoted(part.name) + " in " + type->full_name() +
                                           " is not a repeated field; it takes no index");
    }
    if (part.index) {
      RETURN_IF_ERROR(CheckIndex(assignment, part, field, *message));
    }
    bool is_message = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE;
    if (dot == std::string_view::npos) {
      if (is_message) {
        return OverrideError(assignment, Quoted(part.name) + " is a message (" +
                                             field->message_type()->full_name() +
                                             "); set one of its fields");
      }
      if (part.index) return SetRepeatedLeaf(assignment, value, *part.index, field, message);
      return SetLeaf(assignment, value, field, message);
    }
    if (!is_message) {
      return OverrideError(assignment, Quoted(part.name) + " in " + type->full_name() +
                                           " is not a message; it has no fields");
    }
    const pb::Reflection* reflection = message->GetReflection();
    message = part.index ? reflection->MutableRepeatedMessage(message, field, *part.index)
                         : reflection->MutableMessage(message, field);
    path = path.substr(dot + 1);
  }
}

}  // namespace

Status ApplyOverride(std::string_view assignment, config::RunConfig* cfg) {
  // Works on a copy: protobuf stores the 7 of "7x" before it sees the junk, and walking the path
  // creates sub-messages, yet a rejected override must leave the config exactly as it was.
  config::RunConfig copy = *cfg;
  Status status = ApplyTo(assignment, &copy);
  if (status.ok()) cfg->Swap(&copy);
  return status;
}

}  // namespace troupe

namespace troupe {
namespace {

// "servers[1]" -> {"servers", 1}; "count" -> {"count", -1}; nullopt when malformed.
std::optional<std::pair<std::string, int>> SplitPathPart(std::string_view part) {
  const size_t open = part.find('[');
  if (open == std::string_view::npos) return std::make_pair(std::string(part), -1);
  uint64_t index = 0;
  if (part.back() != ']' ||
      !ParseWholeNumber(part.substr(open + 1, part.size() - open - 2), 1u << 30, &index)) {
    return std::nullopt;
  }
  return std::make_pair(std::string(part.substr(0, open)), static_cast<int>(index));
}

}  // namespace

int FieldLine(std::string_view text, std::string_view field_path) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return 0;
  config::RunConfig parsed;
  pb::TextFormat::ParseInfoTree tree;
  pb::TextFormat::Parser parser;
  DiscardErrors ignore;
  parser.RecordErrorsTo(&ignore);
  parser.WriteLocationsTo(&tree);
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, &parsed)) return 0;
  const pb::Descriptor* type = config::RunConfig::descriptor();
  const pb::TextFormat::ParseInfoTree* at = &tree;
  while (true) {
    const size_t dot = field_path.find('.');
    const auto part = SplitPathPart(field_path.substr(0, dot));
    if (!part || type == nullptr) return 0;
    const pb::FieldDescriptor* field = type->FindFieldByName(part->first);
    if (field == nullptr || field->is_repeated() != (part->second >= 0)) return 0;
    if (dot == std::string_view::npos) {
      const pb::TextFormat::ParseLocation location = at->GetLocation(field, part->second);
      return location.line < 0 ? 0 : location.line + 1;
    }
    at = at->GetTreeForNested(field, part->second);
    if (at == nullptr) return 0;
    type = field->message_type();
    field_path = field_path.substr(dot + 1);
  }
}

Status LocateConfigError(Status status, const std::string& path,
                         const std::vector<std::string>& sets) {
  const std::string prefix = path + ": ";
  const std::string& message = status.message();
  if (status.ok() || message.rfind(prefix, 0) != 0) return status;
  const size_t end = message.find(": ", prefix.size());
  if (end == std::string::npos) return status;
  const std::string field_path = message.substr(prefix.size(), end - prefix.size());
  for (auto set = sets.rbegin(); set != sets.rend(); ++set) {
    if (set->substr(0, set->find('=')) == field_path) {
      return Status::InvalidInput("--set " + Excerpt(*set) + ": " + message.substr(prefix.size()));
    }
  }
  std::string text;
  if (!ReadWholeFile(path, "config file", &text).ok()) return status;
  const int line = FieldLine(text, field_path);
  if (line == 0) return status;
  return Status::InvalidInput(path + ":" + std::to_string(line) + message.substr(path.size()));
}

}  // namespace troupe
