// Messages that close a run: the scheduler tells the metrics recorder why and when it ended.
#pragma once

#include <cstdint>
#include <string>

namespace troupe {

struct RunEnd {
  std::string reason;  // "measured jobs finished" | "all jobs finished" | "deadline"
  double end_s = 0;    // virtual time of the end of the last round
  int64_t rounds = 0;
};
template <class Inspector>
auto inspect(Inspector& f, RunEnd& x) {
  return f(x.reason, x.end_s, x.rounds);
}

}  // namespace troupe
