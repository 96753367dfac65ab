// A message type's "filled" sample and a field-by-field comparison, both walking the type's
// fields as the language lays them out (tests/support/aggregate_fields.hpp), never through its
// `inspect`. Filler::Fill sets every field, nested ones included, to a value unlike the field's
// default and unlike every value it set before (numbers count up, strings are numbered, vectors
// get two filled elements, actor handles are live actors of their own); so a field that `inspect`
// leaves out comes back from a round trip with its default, and two fields swapped come back
// crossed. FirstDifference names the first field (by path, ".3[1].0") where two values differ;
// FirstDefaultField the first one a sample left at its default. A field of a type the walker
// does not know is a compile error ("teach the filler"), not a field skipped.
#pragma once

#include <google/protobuf/message.h>

#include <array>
#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_actor.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "messages/float_blob.hpp"
#include "tests/support/aggregate_fields.hpp"

namespace troupe::testing {

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsArray : std::false_type {};
template <class T, size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};
// A typed actor handle (messages/actor_interfaces.hpp): filled and compared as an actor handle.
template <class T>
struct IsTypedActor : std::false_type {};
template <class... Sigs>
struct IsTypedActor<caf::typed_actor<Sigs...>> : std::true_type {};

template <class T>
struct IsSharedPtr : std::false_type {};
template <class T>
struct IsSharedPtr<std::shared_ptr<T>> : std::true_type {};

template <class T>
inline constexpr bool kIsProto = std::is_base_of_v<google::protobuf::Message, T>;

// Sets every field of a protobuf message (nested messages to a depth of 3) to a value unlike its
// default; `next` counts up as in Filler.
inline void FillProto(google::protobuf::Message& m, int* next, int depth = 0);

class Filler {
 public:
  explicit Filler(caf::actor_system& sys) : sys_(sys) {}
  ~Filler() {
    for (const caf::actor& a : actors_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  Filler(const Filler&) = delete;
  Filler& operator=(const Filler&) = delete;

  template <class T>
  T Sample() {
    T x{};
    Fill(x);
    return x;
  }

  template <class T>
  void Fill(T& x) {
    if constexpr (std::is_same_v<T, bool>) {
      x = !x;
    } else if constexpr (std::is_arithmetic_v<T>) {
      const T before = x;
      x = static_cast<T>(x + static_cast<T>(++next_));
      if (x == before) x = static_cast<T>(x + 1);  // a narrow type wrapped around
    } else if constexpr (std::is_enum_v<T>) {
      x = static_cast<T>(static_cast<std::underlying_type_t<T>>(x) + 1);
    } else if constexpr (std::is_same_v<T, std::string>) {
      x = "field " + std::to_string(++next_);
    } else if constexpr (IsVector<T>::value) {
      x.resize(2);
      for (auto& e : x) Fill(e);
    } else if constexpr (IsArray<T>::value) {
      for (auto& e : x) Fill(e);
    } else if constexpr (IsSharedPtr<T>::value) {
      auto value = std::make_shared<std::remove_const_t<typename T::element_type>>();
      Fill(*value);
      x = std::move(value);
    } else if constexpr (std::is_same_v<T, caf::actor>) {
      x = sys_.spawn([]() -> caf::behavior { return {[](int) {}}; });
      actors_.push_back(x);
    } else if constexpr (IsTypedActor<T>::value) {
      caf::actor a;
      Fill(a);
      x = caf::actor_cast<T>(a);
    } else if constexpr (std::is_same_v<T, FloatBlob>) {
      const std::array<float, 2> values = {static_cast<float>(++next_),
                                           static_cast<float>(++next_)};
      x = FloatBlob::Of(values);
    } else if constexpr (kIsProto<T>) {
      FillProto(x, &next_);
    } else if constexpr (std::is_aggregate_v<T>) {
      std::apply([this](auto&... field) { (Fill(field), ...); }, Fields(x));
    } else {
      static_assert(sizeof(T) == 0, "teach the filler this field type");
    }
  }

 private:
  caf::actor_system& sys_;
  std::vector<caf::actor> actors_;  // alive until the filler goes
  int next_ = 0;
};

// "" when `a` and `b` hold the same values, field by field; else the path of the first field that
// differs (".2" the third field, ".2[1]" its second element) and how.
template <class T>
std::string FirstDifference(const T& a, const T& b);

namespace sample_detail {

inline std::string Prefixed(size_t index, const std::string& difference) {
  return difference.empty() ? "" : "." + std::to_string(index) + difference;
}

template <class T, size_t... I>
std::string FirstFieldDifference(const T& a, const T& b, std::index_sequence<I...>) {
  [[maybe_unused]] const auto fa = Fields(a);
  [[maybe_unused]] const auto fb = Fields(b);
  std::string found;
  ((found = found.empty() ? Prefixed(I, FirstDifference(std::get<I>(fa), std::get<I>(fb))) : found),
   ...);
  return found;
}

template <class T>
constexpr bool kIsRecord = std::is_aggregate_v<T> && !IsArray<T>::value;

}  // namespace sample_detail

template <class T>
std::string FirstDifference(const T& a, const T& b) {
  if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string> ||
                std::is_same_v<T, caf::actor> || IsTypedActor<T>::value) {
    return a == b ? "" : " (values differ)";
  } else if constexpr (IsVector<T>::value || IsArray<T>::value) {
    if (a.size() != b.size()) {
      return " (" + std::to_string(a.size()) + " against " + std::to_string(b.size()) +
             " elements)";
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::string d = FirstDifference(a[i], b[i]); !d.empty()) {
        return "[" + std::to_string(i) + "]" + d;
      }
    }
    return "";
  } else if constexpr (IsSharedPtr<T>::value) {
    if (!a || !b) return (a == nullptr) == (b == nullptr) ? "" : " (one holds nothing)";
    return FirstDifference(*a, *b);
  } else if constexpr (std::is_same_v<T, FloatBlob>) {
    return FirstDifference(a.ToFloats(), b.ToFloats());
  } else if constexpr (kIsProto<T>) {
    return a.SerializeAsString() == b.SerializeAsString() ? "" : " (messages differ)";
  } else if constexpr (sample_detail::kIsRecord<T>) {
    return sample_detail::FirstFieldDifference(a, b, std::make_index_sequence<FieldCount<T>()>{});
  } else {
    static_assert(sizeof(T) == 0, "teach FirstDifference this field type");
  }
}

// "" when every field of `sample` (the fields of nested aggregates included) differs from the
// same field of a default T; else the path of the first that does not.
template <class T>
std::string FirstDefaultField(const T& sample);

namespace sample_detail {

template <class T, size_t... I>
std::string FirstDefaultFieldOf(const T& sample, std::index_sequence<I...>) {
  const T defaults{};
  [[maybe_unused]] const auto fs = Fields(sample);
  [[maybe_unused]] const auto fd = Fields(defaults);
  std::string found;
  [[maybe_unused]] auto check = [&](size_t index, const auto& field, const auto& default_field) {
    if (!found.empty()) return;
    if constexpr (kIsRecord<std::remove_cvref_t<decltype(field)>>) {
      found = Prefixed(index, FirstDefaultField(field));
    } else if (FirstDifference(field, default_field).empty()) {
      found = "." + std::to_string(index);
    }
  };
  (check(I, std::get<I>(fs), std::get<I>(fd)), ...);
  return found;
}

}  // namespace sample_detail

template <class T>
std::string FirstDefaultField(const T& sample) {
  static_assert(sample_detail::kIsRecord<T>, "a message is a plain aggregate");
  return sample_detail::FirstDefaultFieldOf(sample, std::make_index_sequence<FieldCount<T>()>{});
}

inline void FillProto(google::protobuf::Message& m, int* next, int depth) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const int n = ++*next;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (depth >= 3) continue;
      FillProto(f->is_repeated() ? *r->AddMessage(&m, f) : *r->MutableMessage(&m, f), next,
                depth + 1);
      continue;
    }
    const bool repeated = f->is_repeated();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        repeated ? r->AddInt32(&m, f, n) : r->SetInt32(&m, f, n);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        repeated ? r->AddInt64(&m, f, n) : r->SetInt64(&m, f, n);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        repeated ? r->AddUInt32(&m, f, n) : r->SetUInt32(&m, f, n);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        repeated ? r->AddUInt64(&m, f, n) : r->SetUInt64(&m, f, n);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        repeated ? r->AddDouble(&m, f, n + 0.5) : r->SetDouble(&m, f, n + 0.5);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        repeated ? r->AddFloat(&m, f, n + 0.5f) : r->SetFloat(&m, f, n + 0.5f);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        repeated ? r->AddBool(&m, f, true) : r->SetBool(&m, f, !f->default_value_bool());
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        repeated ? r->AddString(&m, f, "field " + std::to_string(n))
                 : r->SetString(&m, f, "field " + std::to_string(n));
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const google::protobuf::EnumDescriptor* e = f->enum_type();
        const auto* value = e->value(e->value_count() - 1);
        repeated ? r->AddEnum(&m, f, value) : r->SetEnum(&m, f, value);
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace troupe::testing
