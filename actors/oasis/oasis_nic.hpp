// The network interface of one PS machine in an OASiS run (docs/oasis.md, "The emulated run").
//
// Every gradient a worker sends to a PS on the machine comes in through it, and every parameter
// message goes out through it. Each direction carries `gbps` (the machine's bandwidth capacity,
// the model's per-machine bandwidth resource, divided by oasis.ps_link_slowdown). A transfer of
// s Gb from a worker link of b Gbps runs at r = min(b, gbps) for s / r seconds; it starts at the
// earliest moment from its request on at which r more fits under gbps for that whole time (a
// reservation calendar: first come, first booked, on the RunClock), and arrives link_delay_s
// after it ends. With room on the NIC, b <= gbps and no delay, a transfer arrives exactly when
// the model says (the message's nominal_s), so the actor run matches the slot simulator.
//
// Contract: every send goes through TellAt; deterministic in emulated mode.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "messages/oasis_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

// One direction of a NIC, or one fabric link (oasis_fabric.hpp): bookings of rate over
// [start, end), under a capacity in whatever unit the rates are. Plain data, no CAF.
class LinkCalendar {
 public:
  explicit LinkCalendar(double capacity) : capacity_(capacity) {}
  // Books `rate` (<= capacity) for `seconds` at the earliest start >= at where it fits; returns it.
  // Requests come in non-decreasing `at` (bookings ending by `at` are forgotten).
  double Book(double at, double seconds, double rate);
  // Books transfer `id`'s `rate` for `seconds` on every link of `links` at the earliest start >=
  // at where it fits on all of them for the whole time, first dropping what `id` had booked on
  // them and the bookings that ended by `now` (<= at); returns the start.
  static double BookAll(const std::vector<LinkCalendar*>& links, int64_t id, double now, double at,
                        double seconds, double rate);
  size_t bookings() const { return bookings_.size(); }

 private:
  struct Booking {
    double start, end, rate;
    int64_t id;
  };
  double LoadOver(double from, double to) const;  // the most booked at any moment of [from, to)
  bool Fits(double start, double seconds, double rate) const;
  // Appends the intervals [from, to) over which `rate` more does not fit.
  void Blocked(double rate, std::vector<std::pair<double, double>>* out) const;
  double capacity_;
  std::vector<Booking> bookings_;
};

struct OasisNicState {
  LinkCalendar in{0}, out{0};
  double gbps = 0;
  double delay_s = 0;
  double waited_s = 0;  // transfers' total time queued or slowed beyond the model's
  RunClock clock;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.oasis.nic";
};

caf::behavior OasisNicActor(caf::stateful_actor<OasisNicState>* self, double gbps, double delay_s,
                            RunClock clock, Telemetry* telemetry);

}  // namespace troupe
