#include "runner/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "base/seconds.hpp"

namespace troupe {
namespace {

// A terminal line is rewritten at most this often (a plain line comes at least every
// plain_every_s, 10 s unless a test says otherwise).
constexpr double kTerminalEveryS = 0.25;

}  // namespace

ProgressMode ChooseProgressMode(bool quiet) {
  if (quiet) return ProgressMode::kOff;
  return isatty(STDERR_FILENO) ? ProgressMode::kTerminal : ProgressMode::kPlain;
}

std::string FormatDuration(double seconds) {
  const int64_t s = std::llround(std::max(seconds, 0.0));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, s / 60 % 60);
}

std::string FormatTimeLeft(double seconds) {
  // Rounded up to the unit shown: work that remains never reads "0 s", nor "1 h 05 min" when
  // 1 h 05 min 40 s are left.
  double s = std::ceil(std::max(seconds, 0.0));
  if (s >= 3600) s = std::ceil(s / 60) * 60;
  return FormatDuration(s);
}

std::string FormatProgress(const std::string& what, const std::string& unit, int64_t done,
                           int64_t total, double elapsed_s, const std::string& detail) {
  std::string line = fmt::format("{}: {}", what, done);
  if (total > 0) line += fmt::format("/{}", total);
  line += fmt::format(" {}", unit);
  if (total > 0) line += fmt::format(" ({}%)", std::min<int64_t>(100, done * 100 / total));
  if (elapsed_s > 0 && done > 0) {
    const double rate = done / elapsed_s;
    line += fmt::format(" | {:.{}f} {}/s", rate, rate < 10 ? 2 : 0, unit);
    if (total > done) line += fmt::format(" | ETA {}", FormatTimeLeft((total - done) / rate));
  }
  line += fmt::format(" | {}", FormatDuration(elapsed_s));
  if (!detail.empty()) line += " | " + detail;
  return line;
}

ProgressLine::ProgressLine(ProgressMode mode, std::string what, std::string unit, int64_t total,
                           std::FILE* out, double plain_every_s)
    : mode_(mode),
      what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      out_(out),
      start_s_(SteadyWallSeconds()),
      plain_every_s_(plain_every_s) {}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    stop_watching_ = true;
  }
  watch_wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  if (open_line_) std::fputc('\n', out_);
}

void ProgressLine::Watch(Sample sample) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard<std::mutex> lock(watch_mutex_);
  sample_ = std::move(sample);
  if (sample_ && !watcher_.joinable()) watcher_ = std::thread([this] { WatchLoop(); });
}

void ProgressLine::WatchLoop() {
  // A few looks a plain interval (a terminal's line is rewritten each second at most this way).
  const auto tick = std::chrono::duration<double>(std::min(1.0, plain_every_s_ / 4));
  std::unique_lock<std::mutex> lock(watch_mutex_);
  while (!stop_watching_) {
    watch_wake_.wait_for(lock, tick);
    if (stop_watching_ || !sample_) continue;
    const auto [done, detail] = sample_();
    Update(done, detail);
  }
}

double ProgressLine::Elapsed() const { return SteadyWallSeconds() - start_s_; }

void ProgressLine::Update(int64_t done, const std::string& detail) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  const double now = Elapsed();
  if (mode_ == ProgressMode::kTerminal) {
    if (last_print_s_ >= 0 && now - last_print_s_ < kTerminalEveryS) return;
  } else {
    const int64_t tenth = total_ > 0 ? std::min<int64_t>(10, done * 10 / total_) : 0;
    const double since = now - (last_print_s_ < 0 ? 0 : last_print_s_);
    if (tenth <= last_tenth_ && since < plain_every_s_) return;
    last_tenth_ = std::max(last_tenth_, tenth);
  }
  last_print_s_ = now;
  Print(done, detail, false);
}

void ProgressLine::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_line_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  open_line_ = false;
}

void ProgressLine::Finish(int64_t done, const std::string& detail) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  Print(done, detail, true);
}

void ProgressLine::Print(int64_t done, const std::string& detail, bool final_line) {
  std::string shown = detail;
  if (final_line) shown += shown.empty() ? "done" : " | done";
  const std::string text =
      "[troupe] " + FormatProgress(what_, unit_, done, total_, Elapsed(), shown);
  if (mode_ == ProgressMode::kTerminal) {
    // \r back to the start, ESC[K clears what a longer line left behind.
    std::fprintf(out_, "\r%s\x1b[K%s", text.c_str(), final_line ? "\n" : "");
    open_line_ = !final_line;
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

}  // namespace troupe
