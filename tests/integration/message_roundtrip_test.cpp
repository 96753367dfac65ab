// Every message type that may cross processes (TROUPE_MESSAGE_TYPES) survives CAF's binary
// serializer as the middleman uses it: a caf::message holding the type is written, read back as
// the same type under its registered name, and written again to the very same bytes.
#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>
#include <set>
#include <string>

#include "messages/all_messages.hpp"
#include "messages/message_types.hpp"

namespace troupe {
namespace {

// One type's round trip; "" when it holds, else what went wrong.
template <class T>
std::string RoundTrip(caf::actor_system& sys) {
  caf::message sent = caf::make_message(T{});
  std::vector<char> bytes;
  caf::binary_serializer sink{sys, bytes};
  if (auto err = sink(sent)) return "cannot write: " + sys.render(err);
  caf::message received;
  caf::binary_deserializer source{sys, bytes};
  if (auto err = source(received)) return "cannot read back: " + sys.render(err);
  if (!received.match_elements<T>()) return "read back as another type";
  std::vector<char> again;
  caf::binary_serializer resink{sys, again};
  if (auto err = resink(received)) return "cannot write again: " + sys.render(err);
  if (again != bytes) return "written again to other bytes";
  return "";
}

TEST(MessageTypes, EveryListedTypeSurvivesTheBinarySerializer) {
  caf::actor_system_config cfg;
  RegisterMessageTypes(cfg);
  caf::actor_system sys{cfg};
  int checked = 0;
#define TROUPE_ROUND_TRIP(Type)                                                       \
  {                                                                                   \
    EXPECT_EQ(RoundTrip<Type>(sys), "") << #Type;                                     \
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

}  // namespace
}  // namespace troupe
