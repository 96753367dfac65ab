// A protobuf message carried inside a CAF message, as its serialised bytes: CAF's inspectors know
// nothing of protobuf's classes. `Proto` names the message the bytes hold, so a field is packed
// and unpacked as that message only; the header needs no more than its declaration.
#pragma once

#include <string>

namespace troupe {

template <class Proto>
struct ProtoBytes {
  std::string bytes;

  static ProtoBytes Pack(const Proto& message) { return ProtoBytes{message.SerializeAsString()}; }
  // False when the bytes are not a `Proto`.
  bool Unpack(Proto* message) const { return message->ParseFromString(bytes); }
};
template <class Inspector, class Proto>
auto inspect(Inspector& f, ProtoBytes<Proto>& x) {
  return f(x.bytes);
}

}  // namespace troupe
