// Every message type that may cross processes (TROUPE_MESSAGE_TYPES) survives CAF's binary
// serializer as the middleman uses it, every field of it: a filled sample of the type (every
// field, nested ones included, set to a value unlike its default: tests/support/filled_sample.hpp)
// is written in a caf::message, read back as the same type under its registered name, compared
// field by field with what was sent, and written again to the very same bytes. A field that the
// type's `inspect` leaves out comes back with its default and fails here, naming its position; the
// last test shows that on a type made to leave one out.
#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "messages/all_messages.hpp"
#include "messages/message_types.hpp"
#include "tests/support/filled_sample.hpp"

namespace troupe {
namespace {

using testing::Filler;
using testing::FirstDefaultField;
using testing::FirstDifference;

// `sent`'s round trip; "" when it holds, else what went wrong.
template <class T>
std::string RoundTrip(caf::actor_system& sys, const T& sent) {
  std::vector<char> bytes;
  caf::binary_serializer sink{sys, bytes};
  if (auto err = sink(caf::make_message(sent))) return "cannot write: " + sys.render(err);
  caf::message received;
  caf::binary_deserializer source{sys, bytes};
  if (auto err = source(received)) return "cannot read back: " + sys.render(err);
  if (!received.match_elements<T>()) return "read back as another type";
  if (std::string d = FirstDifference(sent, received.get_as<T>(0)); !d.empty()) {
    return "field " + d + " came back unlike it was sent (left out of inspect?)";
  }
  std::vector<char> again;
  caf::binary_serializer resink{sys, again};
  if (auto err = resink(received)) return "cannot write again: " + sys.render(err);
  if (again != bytes) return "written again to other bytes";
  return "";
}

TEST(MessageTypes, EveryFieldOfEveryListedTypeSurvivesTheBinarySerializer) {
  caf::actor_system_config cfg;
  RegisterMessageTypes(cfg);
  caf::actor_system sys{cfg};
  Filler filler(sys);
  int checked = 0;
#define TROUPE_ROUND_TRIP(Type)                                                       \
  {                                                                                   \
    const Type sample = filler.Sample<Type>();                                        \
    EXPECT_EQ(FirstDefaultField(sample), "") << #Type << ": a field left at default"; \
    EXPECT_EQ(RoundTrip(sys, sample), "") << #Type;                                   \
    EXPECT_EQ(sys.types().portable_name(0, &typeid(Type)), "troupe." #Type) << #Type; \
    ++checked;                                                                        \
  }
  TROUPE_MESSAGE_TYPES(TROUPE_ROUND_TRIP)
#undef TROUPE_ROUND_TRIP
  EXPECT_GE(checked, 68);
}

TEST(MessageTypes, EveryTypeIsListedOnceUnderItsOwnName) {
  std::set<std::string> names;
  int listed = 0;
#define TROUPE_COLLECT(Type) \
  names.insert(#Type);       \
  ++listed;
  TROUPE_MESSAGE_TYPES(TROUPE_COLLECT)
#undef TROUPE_COLLECT
  EXPECT_EQ(names.size(), static_cast<size_t>(listed)) << "a type is listed twice";
}

// A message whose inspect forgets its third field, nested in one that lists all of its own.
struct Leaky {
  int64_t id = 0;
  std::string name;
  double forgotten = 0;
};
template <class Inspector>
auto inspect(Inspector& f, Leaky& x) {
  return f(x.id, x.name);
}
struct HoldsLeaky {
  int32_t round = 0;
  std::vector<Leaky> parts;
};
template <class Inspector>
auto inspect(Inspector& f, HoldsLeaky& x) {
  return f(x.round, x.parts);
}

TEST(MessageTypes, AFieldLeftOutOfInspectFailsTheRoundTrip) {
  caf::actor_system_config cfg;
  cfg.add_message_type<Leaky>("test.Leaky");
  cfg.add_message_type<HoldsLeaky>("test.HoldsLeaky");
  caf::actor_system sys{cfg};
  Filler filler(sys);
  const HoldsLeaky sample = filler.Sample<HoldsLeaky>();
  EXPECT_EQ(FirstDefaultField(sample), "");
  EXPECT_EQ(RoundTrip(sys, filler.Sample<Leaky>()),
            "field .2 (values differ) came back unlike it was sent (left out of inspect?)");
  EXPECT_EQ(RoundTrip(sys, sample),
            "field .1[0].2 (values differ) came back unlike it was sent (left out of inspect?)");
}

// Defaults that are not zero, an actor handle, a vector and a nested record: what a sample made
// by zero-filling or by hand would miss.
struct Defaults {
  bool granted = true;
  int32_t parts = 1;
  double speed = 1;
  caf::actor scheduler;
  std::vector<int32_t> gpu_ids;
  HoldsLeaky nested;
};

TEST(MessageTypes, AFilledSampleLeavesNoFieldAtItsDefault) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  Filler filler(sys);
  const Defaults sample = filler.Sample<Defaults>();
  EXPECT_FALSE(sample.granted);
  EXPECT_NE(sample.parts, 1);
  EXPECT_NE(sample.speed, 1);
  EXPECT_TRUE(sample.scheduler);
  EXPECT_EQ(sample.gpu_ids.size(), 2u);
  EXPECT_EQ(sample.nested.parts.size(), 2u);
  EXPECT_EQ(FirstDefaultField(sample), "");
  // A field left at its default is found and named, nested or not.
  Defaults partly = sample;
  partly.speed = 1;
  EXPECT_EQ(FirstDefaultField(partly), ".2");
  partly = sample;
  partly.nested.round = 0;
  EXPECT_EQ(FirstDefaultField(partly), ".5.0");
}

}  // namespace
}  // namespace troupe
