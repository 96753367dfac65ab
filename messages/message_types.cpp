#include "messages/message_types.hpp"

#include <caf/actor_system_config.hpp>

#include "messages/all_messages.hpp"

namespace troupe {

void RegisterMessageTypes(caf::actor_system_config& cfg) {
#define TROUPE_REGISTER_MESSAGE(Type) cfg.add_message_type<Type>("troupe." #Type);
  TROUPE_MESSAGE_TYPES(TROUPE_REGISTER_MESSAGE)
#undef TROUPE_REGISTER_MESSAGE
}

}  // namespace troupe
