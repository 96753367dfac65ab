// The run directory is the only thing plots and comparisons read: its statistics must be right,
// its bytes reproducible, and a failed write must leave nothing that looks like a result.
#include "runner/cluster/report_writer.hpp"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runner/cluster/run_summary.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

JobRecord Job(int64_t id, double arrival, double end, bool measured) {
  JobRecord j;
  j.job_id = id;
  j.model = "res18";
  j.gpus = 1;
  j.iterations = 1000;
  j.arrival_s = arrival;
  j.start_s = end < 0 ? -1 : arrival;
  j.end_s = end;
  j.jct_s = end < 0 ? -1 : end - arrival;
  j.measured = measured;
  return j;
}

RoundRecord Round(int64_t index, double start, double end, int gpus, double cpus, double mem) {
  RoundRecord r;
  r.round = index;
  r.start_s = start;
  r.end_s = end;
  r.gpus_allocated = gpus;
  r.cpus_allocated = cpus;
  r.memory_gb_allocated = mem;
  return r;
}

// Measured finished JCTs 100, 200, ..., 1000 (given out of order), plus jobs that must not count.
std::vector<JobRecord> SampleJobs() {
  std::vector<JobRecord> jobs;
  const int order[] = {7, 2, 9, 0, 5, 1, 8, 3, 6, 4};
  for (int k : order) jobs.push_back(Job(10 + k, 50.0 * k, 50.0 * k + 100.0 * (k + 1), true));
  jobs.push_back(Job(3, 0, 99999, false));  // finished, not measured
  jobs.push_back(Job(25, 10, -1, true));    // measured, unfinished
  return jobs;
}

std::vector<RoundRecord> SampleRounds() {
  // 0..300 s with 4 GPUs, 300..600 s with 8 GPUs on an 8-GPU cluster: 75% GPU utilisation.
  return {Round(0, 0, 300, 4, 12, 100), Round(1, 300, 600, 8, 6, 400)};
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path FreshDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("troupe_report_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool HasStagingLeftover(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().find(".tmp-") != std::string::npos) return true;
  }
  return false;
}

TEST(RunSummary, QuantileMatchesNumpysLinearInterpolation) {
  std::vector<double> x = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(Quantile(x, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile(x, 0.95), 3.85);  // numpy.percentile([1,2,3,4], 95)
  EXPECT_DOUBLE_EQ(Quantile(x, 1.0), 4);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0);
}

TEST(RunSummary, StatisticsComeFromMeasuredFinishedJobsAndRounds) {
  summaries::ClusterRunSummary s;
  s.set_config_name("t");
  s.set_events(42);
  Summarize(SampleJobs(), SampleRounds(), ClusterCapacity{8, 24, 500}, &s);
  EXPECT_EQ(s.jobs_total(), 12);
  EXPECT_EQ(s.jobs_finished(), 11);
  EXPECT_EQ(s.jobs_measured(), 11);
  EXPECT_EQ(s.jobs_measured_finished(), 10);
  EXPECT_EQ(s.rounds(), 2);
  EXPECT_DOUBLE_EQ(s.jct_mean_s(), 550);
  EXPECT_DOUBLE_EQ(s.jct_median_s(), 550);
  EXPECT_DOUBLE_EQ(s.jct_p95_s(), 955);  // h = 9 * 0.95 = 8.55: 900 + 0.55 * 100
  EXPECT_DOUBLE_EQ(s.jct_p99_s(), 991);
  EXPECT_DOUBLE_EQ(s.makespan_s(), 600);
  EXPECT_DOUBLE_EQ(s.gpu_utilisation(), (4 * 300 + 8 * 300) / (8.0 * 600));
  EXPECT_DOUBLE_EQ(s.cpu_utilisation(), (12 * 300 + 6 * 300) / (24.0 * 600));
  EXPECT_DOUBLE_EQ(s.memory_utilisation(), (100 * 300 + 400 * 300) / (500.0 * 600));
  // Identity and counters are the caller's.
  EXPECT_EQ(s.config_name(), "t");
  EXPECT_EQ(s.events(), 42u);
}

TEST(RunSummary, NothingMeasuredGivesZeros) {
  summaries::ClusterRunSummary s;
  Summarize({}, {}, ClusterCapacity{8, 24, 500}, &s);
  EXPECT_EQ(s.jobs_total(), 0);
  EXPECT_EQ(s.jct_mean_s(), 0);
  EXPECT_EQ(s.jct_p99_s(), 0);
  EXPECT_EQ(s.gpu_utilisation(), 0);
}

TEST(ReportWriter, WritesThreeFilesWithExactHeadersAndSortedRows) {
  fs::path dir = FreshDir("three");
  summaries::ClusterRunSummary s;
  s.set_config_name("say \"hi\"\\\n");
  Summarize(SampleJobs(), SampleRounds(), ClusterCapacity{8, 24, 500}, &s);
  s.set_wall_s(1.25);
  s.set_events_per_s(1234.5);
  Status st = WriteRunDirectory((dir / "out").string(), s, SampleJobs(), SampleRounds());
  ASSERT_TRUE(st.ok()) << st.message();

  std::string jobs = ReadFile(dir / "out" / "jobs.csv");
  std::string header = jobs.substr(0, jobs.find('\n'));
  EXPECT_EQ(header,
            "job_id,model,gpus,iterations,arrival_s,start_s,end_s,jct_s,ideal_duration_s,"
            "rounds_run,gpu_seconds,measured,profiling_points,profiling_s,wasted_gpu_s,restarts,"
            "failure");
  std::istringstream lines(jobs);
  std::string line;
  std::getline(lines, line);
  int64_t previous = -1, rows = 0;
  while (std::getline(lines, line)) {
    int64_t id = std::stoll(line.substr(0, line.find(',')));
    EXPECT_LT(previous, id);
    previous = id;
    ++rows;
  }
  EXPECT_EQ(rows, 12);
  EXPECT_NE(
      jobs.find(
          "\n3,res18,1,1000,0.000,0.000,99999.000,99999.000,0.000,0,0.000,0,0,0.000,0.000,0,\n"),
      std::string::npos);
  EXPECT_NE(
      jobs.find("\n25,res18,1,1000,10.000,-1.000,-1.000,-1.000,0.000,0,0.000,1,0,0.000,0.000,0,\n"),
      std::string::npos);

  std::string rounds = ReadFile(dir / "out" / "rounds.csv");
  EXPECT_EQ(rounds,
            "round,start_s,end_s,gpus_allocated,cpus_allocated,memory_gb_allocated,jobs_running,"
            "jobs_queued,jobs_finished\n"
            "0,0.000,300.000,4,12.000,100.000,0,0,0\n"
            "1,300.000,600.000,8,6.000,400.000,0,0,0\n");

  // summary.json reads back, under summary.proto's names, to the summary's values.
  std::string json = ReadFile(dir / "out" / "summary.json");
  summaries::ClusterRunSummary read;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &read).ok()) << json;
  EXPECT_EQ(read.config_name(), s.config_name());
  EXPECT_EQ(read.jct_p95_s(), s.jct_p95_s()) << "numbers read back exactly";
  EXPECT_NEAR(read.jct_p95_s(), 955, 1e-9);
  EXPECT_EQ(read.gpu_utilisation(), s.gpu_utilisation());
  EXPECT_NEAR(read.gpu_utilisation(), 0.75, 1e-12);
  EXPECT_EQ(read.wall_s(), 1.25);
  EXPECT_EQ(read.jobs_total(), s.jobs_total());
  for (const char* key :
       {"mode", "policy", "mechanism", "end_reason", "seed", "jobs_total", "jobs_finished",
        "jobs_measured", "jobs_measured_finished", "rounds", "jct_mean_s", "jct_median_s",
        "jct_p99_s", "makespan_s", "cpu_utilisation", "memory_utilisation", "events", "messages",
        "events_per_s"}) {
    EXPECT_NE(json.find("\"" + std::string(key) + "\": "), std::string::npos) << key;
  }
  // Wall-clock figures only in the summary.
  EXPECT_EQ((jobs + rounds).find("1.250"), std::string::npos);
  EXPECT_FALSE(HasStagingLeftover(dir));
  fs::remove_all(dir);
}

TEST(ReportWriter, SameRecordsGiveSameBytes) {
  fs::path dir = FreshDir("same");
  summaries::ClusterRunSummary s;
  Summarize(SampleJobs(), SampleRounds(), ClusterCapacity{8, 24, 500}, &s);
  std::vector<JobRecord> shuffled = SampleJobs();
  std::swap(shuffled.front(), shuffled.back());
  ASSERT_TRUE(WriteRunDirectory((dir / "a").string(), s, SampleJobs(), SampleRounds()).ok());
  ASSERT_TRUE(WriteRunDirectory((dir / "b").string(), s, shuffled, SampleRounds()).ok());
  for (const char* file : {"summary.json", "jobs.csv", "rounds.csv"}) {
    EXPECT_EQ(ReadFile(dir / "a" / file), ReadFile(dir / "b" / file)) << file;
  }
  fs::remove_all(dir);
}

// A failure reason is free text: one with a comma, a quote or a line break is one quoted field,
// its quotes doubled; a plain one is written as it is.
TEST(ReportWriter, AFailureReasonIsOneCsvField) {
  std::vector<JobRecord> jobs = {Job(1, 0, -1, true), Job(2, 0, -1, true)};
  jobs[0].failure = "server 3 lost, \"for good\"\nno restart";
  jobs[1].failure = "needs 16 GPUs";
  const std::string csv = JobsCsv(jobs);
  EXPECT_NE(csv.find(",0,\"server 3 lost, \"\"for good\"\"\nno restart\"\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",0,needs 16 GPUs\n"), std::string::npos) << csv;
}

// jobs.csv and rounds.csv are written a chunk at a time; a file of many chunks (a few MB here)
// must read exactly as the whole text would, rows sorted by job id across the chunk boundaries.
TEST(ReportWriter, ALargeRunsCsvsAreTheWholeTextWrittenInPieces) {
  fs::path dir = FreshDir("large");
  std::vector<JobRecord> jobs;
  std::vector<RoundRecord> rounds;
  for (int64_t i = 0; i < 30000; ++i) {
    const int64_t id = (i * 7919) % 30000;  // out of order, as jobs finish
    jobs.push_back(Job(id, 10.0 * id, id % 5 == 0 ? -1 : 10.0 * id + 3600.5, id % 2 == 0));
    rounds.push_back(Round(i, 300.0 * i, 300.0 * (i + 1), static_cast<int>(i % 128), 1.5, 2.25));
  }
  summaries::ClusterRunSummary s;
  ASSERT_TRUE(WriteRunDirectory((dir / "out").string(), s, jobs, rounds).ok());
  const std::string jobs_csv = JobsCsv(jobs);
  ASSERT_GT(jobs_csv.size(), 1u << 20);  // four chunks and more
  EXPECT_EQ(ReadFile(dir / "out" / "jobs.csv"), jobs_csv);
  EXPECT_EQ(ReadFile(dir / "out" / "rounds.csv"), RoundsCsv(rounds));
  EXPECT_FALSE(HasStagingLeftover(dir));
  fs::remove_all(dir);
}

TEST(ReportWriter, ARunDirectoryTroupeWroteIsReplacedWhole) {
  fs::path dir = FreshDir("replace");
  summaries::ClusterRunSummary s;
  const std::vector<LeaseRecord> leases;
  ASSERT_TRUE(WriteRunDirectory((dir / "out").string(), s, SampleJobs(), {}, &leases).ok());
  ASSERT_TRUE(fs::exists(dir / "out" / "leases.csv"));
  // A trailing slash still names the same folder; the second run writes no leases.csv.
  ASSERT_TRUE(WriteRunDirectory((dir / "out").string() + "/", s, SampleJobs(), {}).ok());
  EXPECT_FALSE(fs::exists(dir / "out" / "leases.csv"));
  EXPECT_EQ(ReadFile(dir / "out" / "jobs.csv"), JobsCsv(SampleJobs()));
  EXPECT_EQ(ReadFile(dir / "out" / "rounds.csv"), std::string(kRoundsCsvHeader) + "\n");
  EXPECT_FALSE(HasStagingLeftover(dir));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(ReportWriter, AFolderTroupeDidNotWriteIsNeverReplaced) {
  fs::path dir = FreshDir("user");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "notes.txt") << "the user's";
  std::ofstream(dir / "out" / "jobs.csv") << "the user's too";
  summaries::ClusterRunSummary s;
  Status st = WriteRunDirectory((dir / "out").string(), s, SampleJobs(), {});
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("not written by troupe"), std::string::npos) << st.message();
  EXPECT_EQ(ReadFile(dir / "out" / "notes.txt"), "the user's");
  EXPECT_EQ(ReadFile(dir / "out" / "jobs.csv"), "the user's too");
  EXPECT_FALSE(HasStagingLeftover(dir));
  // An empty folder holds nothing of anyone's: it may receive a run.
  fs::create_directories(dir / "empty");
  EXPECT_TRUE(WriteRunDirectory((dir / "empty").string(), s, SampleJobs(), {}).ok());
  fs::remove_all(dir);
}

TEST(ReportWriter, ParentThatIsAFileFailsAndLeavesNothing) {
  fs::path dir = FreshDir("parentfile");
  std::ofstream(dir / "file") << "x";
  summaries::ClusterRunSummary s;
  Status st = WriteRunDirectory((dir / "file" / "out").string(), s, SampleJobs(), SampleRounds());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("file"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir / "file" / "out"));
  EXPECT_FALSE(HasStagingLeftover(dir));
  EXPECT_EQ(ReadFile(dir / "file"), "x");
  fs::remove_all(dir);
}

TEST(ReportWriter, AFileAtOutDirIsRefusedAndKept) {
  fs::path dir = FreshDir("outfile");
  std::ofstream(dir / "out") << "not a run";
  summaries::ClusterRunSummary s;
  Status st = WriteRunDirectory((dir / "out").string(), s, SampleJobs(), SampleRounds());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("not a folder"), std::string::npos) << st.message();
  EXPECT_EQ(ReadFile(dir / "out"), "not a run");
  EXPECT_FALSE(HasStagingLeftover(dir));
  fs::remove_all(dir);
}

TEST(ReportWriter, SummaryTableShowsHoursAndPercents) {
  summaries::ClusterRunSummary s;
  s.set_config_name("default");
  s.set_jct_mean_s(81.09 * 3600);
  s.set_jct_p99_s(214.6 * 3600);
  s.set_gpu_utilisation(0.853);
  s.set_events(1000);
  s.set_wall_s(2);
  s.set_events_per_s(500);
  std::string t = FormatSummaryTable(s);
  EXPECT_NE(t.find("mean 81.09"), std::string::npos) << t;
  EXPECT_NE(t.find("p99 214.60"), std::string::npos) << t;
  EXPECT_NE(t.find("GPU 85.3%"), std::string::npos) << t;
  EXPECT_NE(t.find("500 events/s"), std::string::npos) << t;
  EXPECT_LE(std::count(t.begin(), t.end(), '\n'), 24);
}

}  // namespace
}  // namespace troupe
