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

bool LinkCalendar::Fits(double start, double seconds, double rate) const {
  return LoadOver(start, start + seconds) + rate <= capacity_ * (1 + kFit);
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
    if (Fits(s, seconds, rate)) {
      start = s;
      break;
    }
  }
  bookings_.push_back({start, start + seconds, rate, 0});
  return start;
}

void LinkCalendar::Blocked(double rate, std::vector<std::pair<double, double>>* out) const {
  std::vector<std::pair<double, double>> steps;  // (time, change of the load)
  for (const Booking& b : bookings_) {
    steps.emplace_back(b.start, b.rate);
    steps.emplace_back(b.end, -b.rate);
  }
  std::sort(steps.begin(), steps.end());
  double load = 0;
  for (size_t i = 0; i < steps.size();) {
    const double t = steps[i].first;
    for (; i < steps.size() && steps[i].first == t; ++i) load += steps[i].second;
    if (i < steps.size() && load + rate > capacity_ * (1 + kFit)) {
      out->emplace_back(t, steps[i].first);
    }
  }
}

double LinkCalendar::BookAll(const std::vector<LinkCalendar*>& links, int64_t id, double now,
                             double at, double seconds, double rate) {
  for (LinkCalendar* link : links) {
    std::erase_if(link->bookings_, [&](const Booking& b) { return b.id == id || b.end <= now; });
  }
  const bool fits_at_once = std::all_of(links.begin(), links.end(), [&](const LinkCalendar* link) {
    return link->Fits(at, seconds, rate);
  });
  std::vector<std::pair<double, double>> blocked;  // [from, to) where `rate` does not fit
  if (!fits_at_once) {
    for (LinkCalendar* link : links) link->Blocked(rate, &blocked);
  }
  std::sort(blocked.begin(), blocked.end());
  // The earliest start >= at whose whole window misses every blocked interval: `at` or the end
  // of one of them.
  double start = at;
  for (const auto& [from, to] : blocked) {
    if (to <= start) continue;
    if (from >= start + seconds) break;
    start = to;
  }
  for (LinkCalendar* link : links) link->bookings_.push_back({start, start + seconds, rate, id});
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
