// Sending with the run's counters: every message a troupe actor sends goes through Tell or
// TellAt, and every request through Ask (or AskWithin), so that a run can report its message and
// event counts in both modes, and so that the run's fault network (fault_network.hpp), when it has
// one, may drop, delay or duplicate it. Code outside any actor (the agent gateway's threads, a
// run's setup) sends with TellAnon, counted too.
//
// An actor passes its ActorContext (actor_context.hpp: its clock and the run's telemetry, which
// holds the fault network), or the telemetry alone where it needs no clock. The sender may be a
// typed actor or not, and so may the receiver: a typed receiver's interface (messages/
// actor_interfaces.hpp) must accept the message — a compile error otherwise — and a typed sender
// must accept the receiver's answer to it.
#pragma once

#include <caf/actor.hpp>
#include <caf/check_typed_input.hpp>
#include <caf/delegated.hpp>
#include <caf/detail/implicit_conversions.hpp>
#include <caf/detail/profiled_send.hpp>
#include <caf/message_id.hpp>
#include <caf/response_type.hpp>
#include <caf/send.hpp>
#include <type_traits>
#include <utility>

#include "messages/atoms.hpp"
#include "runtime/actor_context.hpp"
#include "runtime/fault_network.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {
namespace send_detail {

template <class Dest>
caf::actor_id IdOf(const Dest& dest) {
  if constexpr (std::is_pointer_v<Dest>) {
    return dest->id();
  } else {
    return dest ? dest.id() : 0;
  }
}

// A typed receiver must accept `Ts...`, and a typed sender the receiver's answer to it. (CAF's
// own send also forbids a typed sender an untyped receiver; troupe's actors talk to untyped ones
// — the metrics recorder, the checkpoint store, compute workers — so Tell checks the typed side
// alone.)
template <class Self, class Dest, class... Ts>
constexpr void CheckMessage() {
  if constexpr (caf::statically_typed<Dest>()) {
    using token = caf::detail::type_list<caf::detail::strip_and_convert_t<Ts>...>;
    using answer = caf::response_type_unbox<caf::signatures_of_t<Dest>, token>;
    static_assert(answer::valid, "the receiver's interface does not accept this message");
    if constexpr (answer::valid) {
      static_assert(
          caf::is_void_response<typename answer::type>::value ||
              caf::response_type_unbox<caf::signatures_of_t<Self>, typename answer::type>::valid,
          "the sender's interface does not accept the receiver's answer");
    }
  }
}

// What self->send and self->scheduled_send do, for any sender and receiver (checked above).
template <class Self, class Dest, class... Ts>
void Deliver(Self* self, const Dest& dest, Ts&&... xs) {
  caf::detail::profiled_send(self, self->ctrl(), dest, caf::make_message_id(), {}, self->context(),
                             std::forward<Ts>(xs)...);
}
template <class Self, class Dest, class... Ts>
void DeliverAt(Self* self, const Dest& dest, caf::actor_clock::time_point due, Ts&&... xs) {
  caf::detail::profiled_send(self, self->ctrl(), dest, self->system().clock(), due,
                             caf::make_message_id(), std::forward<Ts>(xs)...);
}

// Sends `xs` at time point `due` (now: at once) through the fault network. Returns false if the
// network left the message to the caller (no network, or nothing to do but a plain send).
template <class Self, class Dest, class... Ts>
bool SendThroughNetwork(Self* self, Telemetry* telemetry, const Dest& dest,
                        caf::actor_clock::time_point now, caf::actor_clock::time_point due,
                        Ts&&... xs) {
  FaultNetwork* network = telemetry->network;
  if (network == nullptr) return false;
  const NetworkRoute route = network->Decide(self->id(), IdOf(dest), now);
  if (route.copies == 1 && route.delay_s == 0) return false;
  if (route.copies == 0) return true;
  const auto late = due + SecondsToTimespan(route.delay_s / network->clock().time_scale);
  telemetry->timed_events.fetch_add(route.copies, std::memory_order_relaxed);
  for (int i = 1; i < route.copies; ++i) DeliverAt(self, dest, late, xs...);
  DeliverAt(self, dest, late, std::forward<Ts>(xs)...);
  return true;
}

}  // namespace send_detail

template <class Self, class Dest, class... Ts>
void Tell(Self* self, Telemetry* telemetry, const Dest& dest, Ts&&... xs) {
  send_detail::CheckMessage<Self, Dest, Ts...>();
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  if (telemetry->network != nullptr) {
    const caf::actor_clock::time_point now = self->clock().now();
    if (send_detail::SendThroughNetwork(self, telemetry, dest, now, now, xs...)) return;
  }
  send_detail::Deliver(self, dest, std::forward<Ts>(xs)...);
}

template <class Self, class Dest, class... Ts>
void Tell(Self* self, const ActorContext& ctx, const Dest& dest, Ts&&... xs) {
  Tell(self, ctx.telemetry, dest, std::forward<Ts>(xs)...);
}

// Delivers at virtual time at_s (at once if it has passed), at a time point computed from one
// reading of the actor clock. (A delayed_send would read the clock again: in real mode the wall
// clock moves between the two readings, by microseconds when a thread is preempted, so a message
// due later could be delivered before one due earlier — a restart before its crash.)
template <class Self, class Dest, class... Ts>
void TellAt(Self* self, Telemetry* telemetry, const RunClock& clock, const Dest& dest, double at_s,
            Ts&&... xs) {
  send_detail::CheckMessage<Self, Dest, Ts...>();
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  telemetry->timed_events.fetch_add(1, std::memory_order_relaxed);
  const caf::actor_clock::time_point now = self->clock().now();
  const caf::actor_clock::time_point due = now + clock.DelayUntil(now, at_s);
  if (send_detail::SendThroughNetwork(self, telemetry, dest, now, due, xs...)) return;
  send_detail::DeliverAt(self, dest, due, std::forward<Ts>(xs)...);
}

template <class Self, class Dest, class... Ts>
void TellAt(Self* self, const ActorContext& ctx, const Dest& dest, double at_s, Ts&&... xs) {
  TellAt(self, ctx.telemetry, ctx.clock, dest, at_s, std::forward<Ts>(xs)...);
}

// A message from outside any actor (no sender; the fault network, which knows only actors, never
// touches it), counted as Tell counts.
template <class Dest, class... Ts>
void TellAnon(Telemetry* telemetry, const Dest& dest, Ts&&... xs) {
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  caf::anon_send(dest, std::forward<Ts>(xs)...);
}

// How a request the fault network keeps dropping is asked again.
struct AskRetry {
  double every_s = 1;    // virtual seconds between tries
  int64_t tries = 1000;  // then the destination is unreachable
};

// A request and its reply (counted as two messages, each try). Without a fault network it is a
// plain request. With one, the network decides for the request as for any message: delayed, it is
// asked that much later; dropped, it is asked again `retry.every_s` later, as a requester that
// hears nothing asks again, and after `retry.tries` drops in a row `on_unreachable()` is called
// instead (a partition that never heals); a duplicate is asked once (a reply handler need not be
// idempotent). The waiting is a timer of the asking actor, which must answer ask_later_atom with
// AskLaterHandler() in its behaviour.
template <class Self, class Dest, class Msg, class OnReply, class OnUnreachable>
void Ask(Self* self, Telemetry* telemetry, const Dest& dest, Msg msg, OnReply on_reply,
         OnUnreachable on_unreachable, AskRetry retry = {}) {
  telemetry->messages.fetch_add(2, std::memory_order_relaxed);
  FaultNetwork* network = telemetry->network;
  const NetworkRoute route =
      network ? network->Decide(self->id(), send_detail::IdOf(dest), self->clock().now())
              : NetworkRoute{};
  if (route.copies > 0 && route.delay_s == 0) {
    self->request(dest, caf::infinite, std::move(msg)).then(std::move(on_reply));
    return;
  }
  if (route.copies == 0 && retry.tries <= 1) return on_unreachable();
  const double wait_s = route.copies == 0 ? retry.every_s : route.delay_s;
  telemetry->timed_events.fetch_add(1, std::memory_order_relaxed);
  // A request to itself that nobody answers times out after the wait: then ask (again).
  self->request(caf::actor_cast<caf::actor>(self),
                SecondsToTimespan(wait_s / network->clock().time_scale), ask_later_atom::value)
      .then([] {},
            [=](const caf::error&) mutable {
              if (route.copies > 0) {
                self->request(dest, caf::infinite, std::move(msg)).then(std::move(on_reply));
                return;
              }
              Ask(self, telemetry, dest, std::move(msg), std::move(on_reply),
                  std::move(on_unreachable), AskRetry{retry.every_s, retry.tries - 1});
            });
}

template <class Self, class Dest, class Msg, class OnReply, class OnUnreachable>
void Ask(Self* self, const ActorContext& ctx, const Dest& dest, Msg msg, OnReply on_reply,
         OnUnreachable on_unreachable, AskRetry retry = {}) {
  Ask(self, ctx.telemetry, dest, std::move(msg), std::move(on_reply), std::move(on_unreachable),
      retry);
}

// A request with a deadline (an error answer, or none within `timeout` on the actor clock, goes
// to the error handler), counted as Ask counts; the caller adds the handlers: AskWithin(...)
// .then(on_reply, on_error), or .await(...) to take no other message until the answer. The fault
// network never touches it: it is for requests between actors the network does not know (a
// node's spawn, a gang part's exchange).
template <class Self, class Dest, class... Ts>
auto AskWithin(Self* self, Telemetry* telemetry, const Dest& dest, caf::timespan timeout,
               Ts&&... xs) {
  telemetry->messages.fetch_add(2, std::memory_order_relaxed);
  return self->request(dest, timeout, std::forward<Ts>(xs)...);
}

// The handler Ask's timers need in the asking actor's behaviour: never answered, so that the
// request times out when the wait is over.
inline auto AskLaterHandler() {
  return [](ask_later_atom) { return caf::delegated<void>{}; };
}

}  // namespace troupe
