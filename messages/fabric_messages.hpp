// The fabric among actors (actors/fabric_actor.hpp): a sender asks the fabric before it sends
// bytes from one server to another, and sends them when the fabric says the transfer is done.
//
//   sender --FlowStart{key, from, to, bytes}--> fabric   a transfer begins; its bytes share the
//                                                         links of its route max-min with the
//                                                         other flows
//   fabric --FlowDone{key, seconds}--> sender            at the instant its last byte and the
//                                                         route's latency are through
//   sender --FlowStop{key}--> fabric                     withdraws a flow before it is done
//
// `key` is the sender's own name for the flow (unique among its flows in flight); servers are the
// run's server indices (fabric/topology.hpp). Every type has a free `inspect` and is registered
// under its name: senders may live in other processes.
#pragma once

#include <cstdint>

namespace troupe {

struct FlowStart {
  int64_t key = 0;
  int32_t from_server = 0;
  int32_t to_server = 0;
  double bytes = 0;
};
template <class Inspector>
auto inspect(Inspector& f, FlowStart& x) {
  return f(x.key, x.from_server, x.to_server, x.bytes);
}

struct FlowDone {
  int64_t key = 0;
  double seconds = 0;  // from FlowStart to this answer, on the fabric's actor clock
};
template <class Inspector>
auto inspect(Inspector& f, FlowDone& x) {
  return f(x.key, x.seconds);
}

struct FlowStop {
  int64_t key = 0;
};
template <class Inspector>
auto inspect(Inspector& f, FlowStop& x) {
  return f(x.key);
}

}  // namespace troupe
