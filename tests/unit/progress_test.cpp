// The progress line a user reads while a run, sweep or chaos campaign goes on: done of total,
// the rate, the time left; plain lines (for a log) only as each tenth of the work is done.
#include "runner/progress.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>

#include "tests/unit/scoped_temp_dir.hpp"

namespace troupe {
namespace {

TEST(Progress, SaysDoneOfTotalRateAndTimeLeft) {
  EXPECT_EQ(FormatProgress("run", "jobs", 1000, 5000, 10, "3.2 h virtual"),
            "run: 1000/5000 jobs (20%) | 100 jobs/s | ETA 40 s | 10 s | 3.2 h virtual");
  EXPECT_EQ(FormatProgress("sweep", "runs", 3, 12, 30, ""),
            "sweep: 3/12 runs (25%) | 0.10 runs/s | ETA 1 min 30 s | 30 s");
  // Nothing done yet: no rate, no ETA. Unknown total: no share, no ETA.
  EXPECT_EQ(FormatProgress("run", "jobs", 0, 10, 1, ""), "run: 0/10 jobs (0%) | 1 s");
  EXPECT_EQ(FormatProgress("run", "jobs", 50, 0, 5, ""), "run: 50 jobs | 10 jobs/s | 5 s");
  // A total that was only an estimate never shows more than 100%.
  EXPECT_EQ(FormatProgress("run", "jobs", 5010, 5000, 10, ""),
            "run: 5010/5000 jobs (100%) | 501 jobs/s | 10 s");
}

TEST(Progress, DurationsReadAsAPersonWouldSayThem) {
  EXPECT_EQ(FormatDuration(0.4), "0 s");
  EXPECT_EQ(FormatDuration(59), "59 s");
  EXPECT_EQ(FormatDuration(200), "3 min 20 s");
  EXPECT_EQ(FormatDuration(7500), "2 h 05 min");
}

// Time left rounds up: work that remains never reads "ETA 0 s".
TEST(Progress, TimeLeftRoundsUp) {
  EXPECT_EQ(FormatTimeLeft(0), "0 s");
  EXPECT_EQ(FormatTimeLeft(0.4), "1 s");
  EXPECT_EQ(FormatTimeLeft(4.2), "5 s");
  EXPECT_EQ(FormatTimeLeft(5), "5 s");
  EXPECT_EQ(FormatTimeLeft(59.5), "1 min 0 s");
  EXPECT_EQ(FormatTimeLeft(3600 + 65 * 60 + 1), "2 h 06 min");
  // 999 of 1000 jobs in 399.6 s: 2.5 jobs/s, 0.4 s left.
  EXPECT_EQ(FormatProgress("run", "jobs", 999, 1000, 399.6, ""),
            "run: 999/1000 jobs (99%) | 2.50 jobs/s | ETA 1 s | 6 min 40 s");
}

std::string Captured(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, file)) > 0) text.append(buf, n);
  return text;
}

int Lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// Not on a terminal: one whole line per tenth of the work passed, one at the end, nothing else.
TEST(Progress, PlainLinesComeEachTenthAndAtTheEnd) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine line(ProgressMode::kPlain, "sweep", "runs", 100, file);
    for (int done = 0; done < 100; ++done) line.Update(done);
    line.Finish(100);
  }
  const std::string text = Captured(file);
  std::fclose(file);
  EXPECT_EQ(Lines(text), 10) << text;  // 10%, 20%, ..., 90%, and the end
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("[troupe] sweep: 10/100 runs (10%)"), std::string::npos) << text;
  EXPECT_NE(text.find("[troupe] sweep: 100/100 runs (100%)"), std::string::npos) << text;
  EXPECT_NE(text.find("| done\n"), std::string::npos) << text;
}

TEST(Progress, OffPrintsNothingAndATerminalLineRewritesItself) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine off(ProgressMode::kOff, "run", "jobs", 10, file);
    off.Update(5);
    off.Finish(10);
  }
  EXPECT_EQ(Captured(file), "");
  std::fclose(file);
  file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine terminal(ProgressMode::kTerminal, "run", "jobs", 10, file);
    terminal.Update(5);
    terminal.Clear();  // erased (back to the start, clear to the end) for other output
    terminal.Finish(10);
  }
  const std::string text = Captured(file);
  std::fclose(file);
  EXPECT_EQ(text.rfind("\r[troupe] run: 5/10 jobs (50%)", 0), 0u) << text;
  EXPECT_NE(text.find("\x1b[K\r\x1b[K\r[troupe] run: 10/10"), std::string::npos) << text;
  EXPECT_EQ(Lines(text), 1) << text;  // one line, ended when the work ended
  EXPECT_NE(text.find("\r[troupe] run: 10/10 jobs (100%)"), std::string::npos) << text;
}

// A caller busy for long between Updates (one round's planning took minutes, and no line came):
// the line asks the watched counters itself and a plain line still comes each interval.
TEST(Progress, AWatchedLineComesWhileTheCallerIsBusy) {
  const test::ScopedTempDir dir("watched_progress");
  std::filesystem::create_directories(dir.path());
  const std::string path = dir.path() + "/progress.txt";
  std::FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  auto written = [&path] {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::atomic<int64_t> done{3};
  std::string text;
  {
    ProgressLine line(ProgressMode::kPlain, "run", "jobs", 10, file, 0.05);
    line.Watch([&done] { return std::make_pair(done.load(), std::string("planning round 1")); });
    // No Update at all: wait (with no deadline to fail a slow machine) for two lines.
    while (Lines(text = written()) < 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    line.Watch(nullptr);  // the counters may go now
  }
  std::fclose(file);
  EXPECT_EQ(text.rfind("[troupe] run: 3/10 jobs (30%)", 0), 0u) << text;
  EXPECT_NE(text.find("| planning round 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace troupe
