// A progress line on stderr for work that takes a while: a run, a sweep, a chaos campaign. It says
// how much is done of how much, the rate and the time left:
//
//   [troupe] run: 1234/5000 jobs (24%) | 412 jobs/s | ETA 9 s | 3.2 h virtual
//
// On a terminal one line overwrites itself; anywhere else (a log file, CI) a plain line is printed
// each time another tenth of the work is done or 10 s have passed, whichever comes first, and one
// when the work ends. The line is only shown: nothing here feeds back into a run, so a run's
// results are the same with or without it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

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

// "45 s", "3 min 20 s", "2 h 05 min".
std::string FormatDuration(double seconds);

class ProgressLine {
 public:
  // `what` names the work ("run", "sweep", "chaos"), `unit` what is counted ("jobs", "runs").
  ProgressLine(ProgressMode mode, std::string what, std::string unit, int64_t total,
               std::FILE* out = stderr);
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

 private:
  double Elapsed() const;
  void Print(int64_t done, const std::string& detail, bool final_line);

  const ProgressMode mode_;
  const std::string what_, unit_;
  const int64_t total_;
  std::FILE* const out_;
  const double start_s_;
  std::mutex mutex_;
  double last_print_s_ = -1;
  int64_t last_tenth_ = 0;
  bool open_line_ = false;
  bool finished_ = false;
};

}  // namespace troupe
