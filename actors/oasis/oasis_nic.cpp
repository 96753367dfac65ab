#include "actors/oasis/oasis_nic.hpp"

#include <algorithm>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

constexpr double kFit = 1e-9;  // relative slack when adding rates up to the capacity

using NicSelf = caf::stateful_actor<OasisNicState>;

// When a transfer of `gb` at the sender's `gbps` requested at `ready_s` arrives; the model's
// `nominal_s` when it is neither queued nor slowed, so that defaults reproduce the model's
// arithmetic bit for bit.
double Transfer(NicSelf* self, LinkCalendar* link, double gb, double gbps, double ready_s,
                double nominal_s) {
  OasisNicState& st = self->state;
  const double rate = std::min(gbps, st.gbps);
  if (!(gb > 0) || !(rate > 0)) return nominal_s + st.delay_s;
  const double seconds = gb / rate;
  const double start = link->Book(ready_s, seconds, rate);
  const double end = start == ready_s && rate == gbps ? nominal_s : start + seconds;
  st.waited_s += std::max(0.0, end - nominal_s);
  return end + st.delay_s;
}

}  // namespace

double LinkCalendar::LoadOver(double from, double to) const {
  double most = 0;
  auto load_at = [&](double t) {
    double sum = 0;
    for (const Booking& b : bookings_) {
      if (b.start <= t && t < b.end) sum += b.rate;
    }
    return sum;
  };
  most = load_at(from);
  for (const Booking& b : bookings_) {
    if (b.start > from && b.start < to) most = std::max(most, load_at(b.start));
  }
  return most;
}

double LinkCalendar::Book(double at, double seconds, double rate) {
  std::erase_if(bookings_, [at](const Booking& b) { return b.end <= at; });
  std::vector<double> starts{at};
  for (const Booking& b : bookings_) {
    if (b.end > at) starts.push_back(b.end);
  }
  std::sort(starts.begin(), starts.end());
  double start = starts.back();  // every booking over: it fits
  for (double s : starts) {
    if (LoadOver(s, s + seconds) + rate <= gbps_ * (1 + kFit)) {
      start = s;
      break;
    }
  }
  bookings_.push_back({start, start + seconds, rate});
  return start;
}

caf::behavior OasisNicActor(NicSelf* self, double gbps, double delay_s, RunClock clock,
                            Telemetry* telemetry) {
  OasisNicState& st = self->state;
  st.in = LinkCalendar(gbps);
  st.out = LinkCalendar(gbps);
  st.gbps = gbps;
  st.delay_s = delay_s;
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](OasisGradient& g) {
        OasisNicState& s = self->state;
        g.at_s = Transfer(self, &s.in, g.gb, g.gbps, g.ready_s, g.nominal_s);
        g.nic = caf::actor{self};
        const caf::actor ps = g.ps;
        TellAt(self, s.telemetry, s.clock, ps, g.at_s, std::move(g));
      },
      [=](OasisParams& p) {
        OasisNicState& s = self->state;
        p.at_s = Transfer(self, &s.out, p.gb, p.gbps, p.ready_s, p.nominal_s);
        const caf::actor worker = p.reply_to;
        TellAt(self, s.telemetry, s.clock, worker, p.at_s, std::move(p));
      },
  };
}

}  // namespace troupe
