// A progress line on stderr for work that takes a while: a run, a sweep, a chaos campaign. It says
// how much is done of how much, the rate and the time left:
//
//   [troupe] run: 1234/5000 jobs (24%) | 412 jobs/s | ETA 9 s | 3.2 h virtual
//
// On a terminal one line overwrites itself; anywhere else (a log file, CI) a plain line is printed
// each time another tenth of the work is done or 10 s have passed, whichever comes first, and one
// when the work ends. A caller busy for long between Updates (one round's planning can take
// minutes) hands the line a Sample to Watch: the line then asks it itself, from a thread of its
// own, so that it keeps coming. The line is only shown: nothing here feeds back into a run, so a
// run's results are the same with or without it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace troupe {

enum class ProgressMode {
  kOff,       // --quiet
  kTerminal,  // one line, rewritten in place
  kPlain,     // whole lines, now and then
};

// kOff when `quiet`; otherwise kTerminal when stderr is a terminal, else kPlain.
ProgressMode ChooseProgressMode(bool quiet);

// "run: 1234/5000 jobs (24%) | 412 jobs/s | ETA 9 s | 3.2 h virtual". `total` 0: unknown (no
// share, no ETA); `detail` "" adds nothing.
std::string FormatProgress(const std::string& what, const std::string& unit, int64_t done,
                           int64_t total, double elapsed_s, const std::string& detail);

// "45 s", "3 min 20 s", "2 h 05 min" (to the nearest unit shown): a time gone.
std::string FormatDuration(double seconds);

// FormatDuration rounded up to the unit shown: a time left, the ETA. 0.4 s left is "1 s".
std::string FormatTimeLeft(double seconds);

class ProgressLine {
 public:
  // The count done and the detail, as Update takes them.
  using Sample = std::function<std::pair<int64_t, std::string>()>;

  // `what` names the work ("run", "sweep", "chaos"), `unit` what is counted ("jobs", "runs").
  // `plain_every_s`: the longest a plain line waits (tests shorten it).
  ProgressLine(ProgressMode mode, std::string what, std::string unit, int64_t total,
               std::FILE* out = stderr, double plain_every_s = 10);
  ~ProgressLine();  // ends a terminal line left open
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Shows the line if it is due (see above). Safe to call from several threads.
  void Update(int64_t done, const std::string& detail = "");
  // On a terminal, erases the line until the next Update, so that other output (a run's log
  // lines) does not start in the middle of it. Elsewhere nothing.
  void Clear();
  // The last line, shown in every mode but kOff.
  void Finish(int64_t done, const std::string& detail = "");
  // From now on (until the line is destroyed) a thread of the line's own calls `sample` a few
  // times a plain interval and Updates with what it says, whoever else calls Update or not.
  // `sample` runs on that thread, so it may only read what is safe to read from there (atomic
  // counters). Replaces the sample before; an empty one stops asking, and returns only once a
  // call in flight has ended (so what `sample` reads may then go). Nothing in kOff.
  void Watch(Sample sample);

 private:
  double Elapsed() const;
  void Print(int64_t done, const std::string& detail, bool final_line);
  void WatchLoop();

  const ProgressMode mode_;
  const std::string what_, unit_;
  const int64_t total_;
  std::FILE* const out_;
  const double start_s_;
  const double plain_every_s_;
  std::mutex mutex_;
  double last_print_s_ = -1;
  int64_t last_tenth_ = 0;
  bool open_line_ = false;
  bool finished_ = false;
  // Watch: the sample, called under watch_mutex_ by watcher_.
  std::mutex watch_mutex_;
  std::condition_variable watch_wake_;
  Sample sample_;
  bool stop_watching_ = false;
  std::thread watcher_;
};

}  // namespace troupe
