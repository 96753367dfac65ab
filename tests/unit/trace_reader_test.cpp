// Trace files: troupe's CSV and the Philly trace load into the jobs a run expects, and every
// kind of bad input is refused with one line that says where the problem is.
#include "workload/trace_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workload/job_source.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

class TraceReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("troupe_trace_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  Status Read(const std::string& path, std::vector<JobSpec>* jobs, TraceOptions options = {}) {
    return ReadTrace(path, options, ModelCatalog::BuiltIn(), jobs);
  }

  fs::path dir_;
};

TEST_F(TraceReaderTest, ColumnsMayComeInAnyOrder) {
  std::vector<JobSpec> a, b;
  ASSERT_TRUE(Read(Write("a.csv",
                         "job_id,model,arrival_s,iterations,gpus\n"
                         "0,gnmt,0,100,1\n1,res50,30.5,2000,4\n"),
                   &a)
                  .ok());
  Status status = Read(Write("b.csv",
                             "gpus,iterations,arrival_s,model,job_id\n"
                             "1,100,0,gnmt,0\n4,2000,30.5,res50,1\n"),
                       &b);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i].job_id, b[i].job_id);
    EXPECT_EQ(a[i].model, b[i].model);
    EXPECT_EQ(a[i].iterations, b[i].iterations);
    EXPECT_EQ(a[i].gpus, b[i].gpus);
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
  }
  EXPECT_EQ(b[1].model, "res50");
  EXPECT_EQ(b[1].gpus, 4);
  EXPECT_EQ(b[1].iterations, 2000);
  EXPECT_EQ(b[1].arrival_s, 30.5);
  EXPECT_EQ(b[1].source_line, 3);
}

TEST_F(TraceReaderTest, DurationIsTurnedIntoIterationsAtTheProportionalShare) {
  std::vector<JobSpec> jobs;
  Status status = Read(Write("d.csv",
                             "job_id,model,arrival_s,duration_s,gpus\n"
                             "0,lstm,0,100,1\n"    // 100 / 0.011 = 9090.9
                             "1,res50,0,0.5,1\n"   // under one iteration: still 1
                             "2,res18,0,3600,2\n"  // 3600 / 0.64 = 5625
                             ),
                       &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].iterations, 9090);
  EXPECT_EQ(jobs[1].iterations, 1);
  EXPECT_EQ(jobs[2].iterations, 5625);
}

TEST_F(TraceReaderTest, JobsAreSortedByArrivalThenIdAndCommentsAreSkipped) {
  std::vector<JobSpec> jobs;
  Status status = Read(Write("s.csv",
                             "# a hand-made trace\n"
                             "job_id,model,arrival_s,iterations,gpus\n"
                             "7,gnmt,50,10,1\n"
                             "\n"
                             "3,m5,10,10,1\n"
                             "# the next two arrive together\n"
                             "9,lstm,20,10,1\n"
                             "4,alexnet,20,10,1\n"),
                       &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<int64_t> ids, lines;
  for (const JobSpec& job : jobs) {
    ids.push_back(job.job_id);
    lines.push_back(job.source_line);
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{3, 4, 9, 7}));
  EXPECT_EQ(lines, (std::vector<int64_t>{5, 8, 7, 3}));

  TraceOptions first_two;
  first_two.max_jobs = 2;
  ASSERT_TRUE(Read((dir_ / "s.csv").string(), &jobs, first_two).ok());
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].job_id, 4);
}

struct BadCase {
  const char* what;
  const char* header;
  const char* row;  // line 3; line 2 is always "1,gnmt,0,100,1"
  std::vector<std::string> expected;
};

TEST_F(TraceReaderTest, BadInputNamesFileLineAndColumn) {
  const char* kHeader = "job_id,model,arrival_s,iterations,gpus";
  // Header faults (line 1) are found before any row is read.
  const std::vector<BadCase> cases = {
      {"missing column", "job_id,model,arrival_s,iterations", "2,gnmt,0,5", {":1:", "'gpus'"}},
      {"short line", kHeader, "2,gnmt,10,100", {":3:", "expected 5 columns, found 4"}},
      {"not a number", kHeader, "2,gnmt,10,100,abc", {":3: column 'gpus': not a number: 'abc'"}},
      {"fractional gpus", kHeader, "2,gnmt,10,100,1.5", {":3:", "'gpus'", "'1.5'"}},
      {"negative arrival", kHeader, "2,gnmt,-5,100,1", {":3:", "'arrival_s'", "[0, 1000000000]"}},
      {"arrival past 1e9 s", kHeader, "2,gnmt,1e300,100,1", {":3:", "'arrival_s'", "got 1e300"}},
      {"no gpus", kHeader, "2,gnmt,10,100,0", {":3:", "'gpus'", "must be in [1, 100000], got 0"}},
      {"no iterations", kHeader, "2,gnmt,10,0,1", {":3:", "'iterations'", "must be in [1, "}},
      {"endless job",
       kHeader,
       "2,gnmt,10,9223372036854775807,1",
       {":3:", "'iterations'", "got 9223372036854775807"}},
      {"huge job id", kHeader, "9223372036854775807,gnmt,10,100,1", {":3:", "'job_id'"}},
      {"duplicate id", kHeader, "1,gnmt,10,100,1", {":3:", "'job_id'", "first on line 2"}},
      {"unknown model", kHeader, "2,resnet9000,10,100,1", {":3:", "'model'", "'resnet9000'"}},
      {"bad duration",
       "job_id,model,arrival_s,duration_s,gpus",
       "2,gnmt,10,-1,1",
       {":3:", "'duration_s'"}},
      {"duration past 1e9 s",
       "job_id,model,arrival_s,duration_s,gpus",
       "2,gnmt,10,1e10,1",
       {":3:", "'duration_s'", "must be in [0, 1000000000]"}},
      {"both lengths",
       "job_id,model,arrival_s,duration_s,gpus,iterations",
       "2,gnmt,10,5,1,5",
       {":1:", "'iterations'", "'duration_s'"}},
      {"unknown format", "id,name,when", "1,2,3", {":1:", "cannot tell the trace format"}},
  };
  for (const BadCase& c : cases) {
    std::string path =
        Write("bad.csv", std::string(c.header) + "\n1,gnmt,0,100,1\n" + c.row + "\n");
    std::vector<JobSpec> jobs;
    Status status = Read(path, &jobs);
    EXPECT_EQ(status.code(), Status::Code::kInvalidInput) << c.what;
    EXPECT_TRUE(jobs.empty()) << c.what;
    EXPECT_EQ(status.message().rfind(path, 0), 0u) << c.what << ": " << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << c.what;
    for (const std::string& fragment : c.expected) {
      EXPECT_NE(status.message().find(fragment), std::string::npos)
          << c.what << ": '" << status.message() << "' lacks '" << fragment << "'";
    }
  }
}

// The user named a path that is no readable file: bad input (exit status 2), naming the path.
TEST_F(TraceReaderTest, MissingFileOrDirectoryIsInvalidInput) {
  std::vector<JobSpec> jobs;
  Status status = Read((dir_ / "absent.csv").string(), &jobs);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(status.message().find("absent.csv"), std::string::npos);
  status = Read(dir_.string(), &jobs);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput) << status.message();
  EXPECT_NE(status.message().find(dir_.string()), std::string::npos);
}

// Unsorted rows across a leap day and a new year; two rows share a timestamp.
constexpr const char* kPhilly =
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-01 00:00:10,3600.0,8,28800.0,c1\n"
    "2016-02-28 23:59:59,100.0,1,100.0,c1\n"
    "2016-03-01 00:00:00,0.0,2,0.0,c2\n"
    "2017-10-01 00:00:10,61.0,4,244.0,c2\n"
    "2016-12-31 23:59:59,68.0,16,1088.0,c3\n"
    "2017-01-01 00:00:00,6.3,1,6.3,c3\n";

TEST_F(TraceReaderTest, PhillyRowsAreSortedRebasedAndGivenModelsInArrivalOrder) {
  std::vector<JobSpec> jobs;
  Status status = Read(Write("philly.csv", kPhilly), &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(jobs.size(), 6u);
  struct Expected {
    double arrival;
    int64_t line;
    const char* model;
    int64_t iterations;
    int gpus;
  };
  // Lag-first with 20/70/10 gives language, image, language, speech, language, language.
  const Expected expected[] = {{0, 3, "gnmt", 833, 1},
                               {86401, 4, "alexnet", 1, 2},
                               {26524800, 6, "transformer", 101, 16},
                               {26524801, 7, "m5", 10, 1},
                               {50112011, 2, "lstm", 327272, 8},
                               {50112011, 5, "gnmt", 508, 4}};
  for (size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(i));
    EXPECT_EQ(jobs[i].job_id, static_cast<int64_t>(i));
    EXPECT_EQ(jobs[i].arrival_s, expected[i].arrival);
    EXPECT_EQ(jobs[i].source_line, expected[i].line);
    EXPECT_EQ(jobs[i].model, expected[i].model);
    EXPECT_EQ(jobs[i].iterations, expected[i].iterations);
    EXPECT_EQ(jobs[i].gpus, expected[i].gpus);
  }

  TraceOptions first_three;
  first_three.max_jobs = 3;
  first_three.format = TraceFormat::kPhilly;
  ASSERT_TRUE(Read((dir_ / "philly.csv").string(), &jobs, first_three).ok());
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[2].model, "transformer");
}

TEST_F(TraceReaderTest, PhillyBadTimestampAndMixAreRefused) {
  std::vector<JobSpec> jobs;
  std::string path = Write("p.csv",
                           "timestamp,duration,num_gpus,gpu_time,cluster\n"
                           "2017-10-01 00:00:10,36.0,1,36.0,c1\n"
                           "2017-02-29 10:00:00,36.0,1,36.0,c1\n");
  Status status = Read(path, &jobs);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(status.message().find(path + ":3: column 'timestamp'"), std::string::npos)
      << status.message();
  TraceOptions no_mix;
  no_mix.image_percent = no_mix.language_percent = no_mix.speech_percent = 0;
  status = Read(Write("ok.csv", kPhilly), &jobs, no_mix);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(status.message().find("sum to 0"), std::string::npos) << status.message();
}

TEST_F(TraceReaderTest, TraceSourceHandsOutJobsInOrderAndDescribesItself) {
  std::unique_ptr<JobSource> source;
  Status status =
      OpenTraceSource(Write("philly.csv", kPhilly), {}, ModelCatalog::BuiltIn(), &source);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(source->Describe(), "trace philly.csv (6 jobs)");
  std::vector<int64_t> ids;
  double last = 0;
  while (source->NextArrival()) {
    double arrival = *source->NextArrival();
    EXPECT_GE(arrival, last);
    last = arrival;
    ids.push_back(source->Pop().job_id);
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(VectorJobSourceTest, SortsByArrivalThenJobId) {
  std::vector<JobSpec> jobs(3);
  jobs[0].job_id = 5, jobs[0].arrival_s = 10;
  jobs[1].job_id = 2, jobs[1].arrival_s = 10;
  jobs[2].job_id = 9, jobs[2].arrival_s = 1;
  VectorJobSource source(jobs, "hand-made");
  EXPECT_EQ(source.Describe(), "hand-made (3 jobs)");
  EXPECT_EQ(source.Pop().job_id, 9);
  EXPECT_EQ(source.Pop().job_id, 2);
  EXPECT_EQ(*source.NextArrival(), 10);
  EXPECT_EQ(source.Pop().job_id, 5);
  EXPECT_FALSE(source.NextArrival().has_value());
}

TEST_F(TraceReaderTest, ALineLongerThanOneMebibyteIsRefusedNamingFileAndLine) {
  // A comment: only the bound on a line's length can refuse it.
  const std::string header = "job_id,model,arrival_s,iterations,gpus\n0,gnmt,0,100,1\n#";
  const std::string path =
      Write("long.csv", header + std::string(1 << 20, 'x') + "\n1,gnmt,0,100,1\n");
  std::vector<JobSpec> jobs;
  Status status = Read(path, &jobs);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(status.message(),
            path + ":3: line longer than 1048576 bytes (1 MiB); is this a text file?");
  EXPECT_TRUE(jobs.empty());
  // 1 MiB itself is a line (the '#' and 2^20 - 1 more bytes).
  status = Read(Write("bound.csv", header + std::string((1 << 20) - 1, 'x') + "\n1,gnmt,0,100,1\n"),
                &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(jobs.size(), 2u);
}

// A header 20,000 columns wide: troupe's five among them, far apart, are found where they are,
// and a repeated name is refused with both places. (Finding repeats compared every pair of
// names: 2 * 10^8 comparisons here, minutes for the widest header a 1 MiB line allows.)
TEST_F(TraceReaderTest, AWideHeaderFindsItsColumnsAndNamesBothPlacesOfARepeat) {
  constexpr int kColumns = 20000;
  std::vector<std::string> names(kColumns), fields(kColumns, "x");
  for (int i = 0; i < kColumns; ++i) names[i] = "extra_" + std::to_string(i);
  const std::pair<int, const char*> troupe_columns[] = {
      {17, "gpus"}, {4000, "model"}, {9999, "arrival_s"}, {15000, "job_id"}, {19999, "iterations"}};
  const char* values[] = {"4", "res50", "30.5", "7", "2000"};
  for (size_t c = 0; c < std::size(troupe_columns); ++c) {
    names[troupe_columns[c].first] = troupe_columns[c].second;
    fields[troupe_columns[c].first] = values[c];
  }
  auto joined = [](const std::vector<std::string>& parts) {
    std::string line;
    for (const std::string& part : parts) line += (line.empty() ? "" : ",") + part;
    return line + "\n";
  };
  std::vector<JobSpec> jobs;
  Status status = Read(Write("wide.csv", joined(names) + joined(fields)), &jobs);
  ASSERT_TRUE(status.ok()) << status.message().substr(0, 200);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job_id, 7);
  EXPECT_EQ(jobs[0].model, "res50");
  EXPECT_EQ(jobs[0].arrival_s, 30.5);
  EXPECT_EQ(jobs[0].iterations, 2000);
  EXPECT_EQ(jobs[0].gpus, 4);

  names[kColumns - 2] = "extra_1";
  const std::string path = Write("repeat.csv", joined(names) + joined(fields));
  status = Read(path, &jobs);
  EXPECT_EQ(status.message(),
            path + ":1: column 'extra_1' appears twice in the header (columns 2 and 19999)");
}

TEST(PhillyTraceTest, TheFullPublicTraceLoads) {
  const std::string path = TROUPE_DATA_DIR "/philly.csv";
  ASSERT_TRUE(fs::exists(path)) << path << " ships with troupe (data/README.md)";
  std::vector<JobSpec> jobs;
  auto start = std::chrono::steady_clock::now();
  Status status = ReadTrace(path, {}, ModelCatalog::BuiltIn(), &jobs);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(status.ok()) << status.message();
  RecordProperty("load_seconds", std::to_string(seconds));
  std::cout << "philly.csv: " << jobs.size() << " jobs in " << seconds << " s\n";
  ASSERT_EQ(jobs.size(), 82247u);
  EXPECT_EQ(jobs.front().arrival_s, 0);
  int max_gpus = 0;
  int64_t language = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(jobs[i].arrival_s, jobs[i - 1].arrival_s) << "job " << i;
    }
    EXPECT_EQ(jobs[i].job_id, static_cast<int64_t>(i));
    EXPECT_GE(jobs[i].iterations, 1);
    max_gpus = std::max(max_gpus, jobs[i].gpus);
    if (ModelCatalog::BuiltIn().Find(jobs[i].model)->model_class == "language") ++language;
  }
  EXPECT_EQ(max_gpus, 128);
  EXPECT_NEAR(static_cast<double>(language), 0.7 * jobs.size(), 1.0);
}

}  // namespace
}  // namespace troupe
