// The public traces beside Philly: the samples in configs/traces/, written in the exact formats of
// SenseTime's Helios, Shanghai AI Lab's Acme (Seren and Kalos) and Alibaba PAI's task table, load
// into the jobs their rows describe; the format is told from the header; bad rows are refused
// with file:line; and files are streamed in blocks without changing what is read.
#include "workload/public_traces.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "workload/csv_input.hpp"
#include "workload/model_assigner.hpp"
#include "workload/model_catalog.hpp"
#include "workload/trace_fields.hpp"
#include "workload/trace_reader.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

std::string Sample(const std::string& name) {
  return std::string(TROUPE_SOURCE_DIR) + "/configs/traces/" + name;
}

// What a row of a sample stands for: its arrival after the trace's first job, its run time and
// GPUs, and its line in the file.
struct Row {
  double arrival_s;
  double duration_s;
  int gpus;
  int64_t line;
};

// Checks `jobs` against `rows` in order: ids 0..N-1, models as the 20/70/10 mix hands them out in
// arrival order, iterations = floor(duration / iter_time) (at least 1).
void ExpectJobs(const std::vector<JobSpec>& jobs, const std::vector<Row>& rows) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  ModelAssigner mix(catalog, 20, 70, 10);
  ASSERT_EQ(jobs.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(i) + " (line " + std::to_string(rows[i].line) + ")");
    const ModelProfile& model = mix.Next();
    EXPECT_EQ(jobs[i].job_id, static_cast<int64_t>(i));
    EXPECT_EQ(jobs[i].arrival_s, rows[i].arrival_s);
    EXPECT_EQ(jobs[i].gpus, rows[i].gpus);
    EXPECT_EQ(jobs[i].source_line, rows[i].line);
    EXPECT_EQ(jobs[i].model, model.name);
    const double iterations = std::max(1.0, std::floor(rows[i].duration_s / model.iter_time_s));
    EXPECT_EQ(jobs[i].iterations, static_cast<int64_t>(iterations));
  }
}

Status ReadSample(const std::string& name, std::vector<JobSpec>* jobs,
                  TraceFormat format = TraceFormat::kAutoDetect) {
  TraceOptions options;
  options.format = format;
  return ReadTrace(Sample(name), options, ModelCatalog::BuiltIn(), jobs);
}

TEST(PublicTraces, HeliosSampleKeepsGpuJobsBySubmitTime) {
  std::vector<JobSpec> jobs;
  Status status = ReadSample("helios_cluster_log.csv", &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  // Lines 4 and 8 are CPU jobs (gpu_num 0). Times from 2020-06-09 18:41:01.
  ExpectJobs(jobs, {{0, 36848, 1, 2},
                    {26, 249, 4, 3},
                    {129, 7260, 8, 5},
                    {539, 0, 2, 6},
                    {1292, 20011, 16, 7},
                    {2998, 86400, 1, 9},
                    {4739, 1800, 4, 10},
                    {4739, 600, 1, 11}});
}

TEST(PublicTraces, AcmeSerenSampleRunsFromStartToEnd) {
  std::vector<JobSpec> jobs;
  Status status = ReadSample("acme_trace_seren.csv", &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  // From 2023-03-01 00:18:22+08:00; line 4 is a CPU job; line 6 was submitted before line 5.
  ExpectJobs(jobs, {{0, 117, 8, 2},
                    {336, 2693, 8, 3},
                    {2497, 65, 1, 6},
                    {2498, 14400, 32, 5},
                    {6703, 5400, 16, 7},
                    {6703, 900, 4, 8},
                    {9698, 3600, 2, 9}});
}

TEST(PublicTraces, AcmeKalosSampleTakesRunTimeNotTheDurationColumn) {
  std::vector<JobSpec> jobs;
  Status status = ReadSample("acme_trace_kalos.csv", &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  // Kalos's `duration` (18, 82, 1203) also counts the time queued; the job ran end - start.
  // Line 5 is a CPU job, line 6 was cancelled while queued (no start_time).
  ExpectJobs(jobs, {{0, 8, 64, 2}, {242, 1200, 8, 4}, {1664, 70, 64, 3}});
}

TEST(PublicTraces, PaiSampleTurnsGpuTasksIntoJobs) {
  std::vector<JobSpec> jobs;
  Status status = ReadSample("pai_task_table.csv", &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  // From start_time 1739162. Skipped: a parameter server without GPUs (line 3), a task still
  // waiting (7) and one still running (8). GPUs: 1 x 50% -> 1, 4 x 100% -> 4, 2 x 800% -> 16,
  // 3 x 25% -> 1, 1 x 200% -> 2.
  ExpectJobs(
      jobs,
      {{0, 38, 1, 2}, {0, 7200, 2, 9}, {88, 600, 16, 5}, {138, 5700, 4, 4}, {838, 3600, 1, 6}});
}

TEST(PublicTraces, TheHeaderPicksTheReader) {
  const std::pair<const char*, TraceFormat> kSamples[] = {
      {"helios_cluster_log.csv", TraceFormat::kHelios},
      {"acme_trace_seren.csv", TraceFormat::kAcme},
      {"acme_trace_kalos.csv", TraceFormat::kAcme},
      {"pai_task_table.csv", TraceFormat::kAlibabaPai}};
  for (const auto& [name, format] : kSamples) {
    SCOPED_TRACE(name);
    std::ifstream in(Sample(name));
    std::string first;
    std::getline(in, first);
    CsvCursor cursor(first);
    CsvLine line;
    ASSERT_TRUE(cursor.Next(&line));
    CsvHeader header;
    ASSERT_TRUE(header.Parse(line, name).ok());
    EXPECT_EQ(DetectPublicFormat(header), format);
    // Read as what it is, the sample gives what auto-detection gives.
    std::vector<JobSpec> detected, told;
    ASSERT_TRUE(ReadSample(name, &detected).ok());
    ASSERT_TRUE(ReadSample(name, &told, format).ok());
    EXPECT_EQ(detected.size(), told.size());
  }
  // Told the wrong format, a reader names the column it misses.
  std::vector<JobSpec> jobs;
  Status status = ReadSample("pai_task_table.csv", &jobs, TraceFormat::kHelios);
  EXPECT_NE(status.message().find("pai_task_table.csv:1: header has no column 'submit_time'"),
            std::string::npos)
      << status.message();
  status = ReadSample("helios_cluster_log.csv", &jobs, TraceFormat::kAlibabaPai);
  EXPECT_NE(status.message().find("header has no column 'inst_num'"), std::string::npos)
      << status.message();
}

TEST(PublicTraces, TimesWithAZoneOffsetAreTakenToUtc) {
  int64_t utc = 0, east = 0, west = 0;
  ASSERT_TRUE(ParseDateTime("2023-02-28 16:18:22", ZoneOffset::kNone, &utc));
  ASSERT_TRUE(ParseDateTime("2023-03-01 00:18:22+08:00", ZoneOffset::kOptional, &east));
  ASSERT_TRUE(ParseDateTime("2023-02-28 10:48:22-05:30", ZoneOffset::kOptional, &west));
  EXPECT_EQ(east, utc);
  EXPECT_EQ(west, utc);
  EXPECT_EQ(utc, 1677601102);
  EXPECT_FALSE(ParseDateTime("2023-03-01 00:18:22+08:00", ZoneOffset::kNone, &utc));
  EXPECT_FALSE(ParseDateTime("2023-03-01 00:18:22+8:00", ZoneOffset::kOptional, &utc));
  EXPECT_FALSE(ParseDateTime("2023-03-01 00:18:22+24:00", ZoneOffset::kOptional, &utc));
}

class PublicTraceErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("troupe_public_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` and reads it; returns the error message ("" when it was accepted).
  std::string Refusal(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    std::vector<JobSpec> jobs;
    Status status = ReadTrace(path, {}, ModelCatalog::BuiltIn(), &jobs);
    if (status.ok()) return "";
    EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
    EXPECT_TRUE(jobs.empty());
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
    return status.message().substr(status.message().find(name));
  }

  fs::path dir_;
};

constexpr const char* kHeliosHeader =
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
    "queue\n";
constexpr const char* kHeliosRow =
    "1,u,vc,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n";
constexpr const char* kAcmeHeader =
    "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,"
    "queue,gpu_time\n";
constexpr const char* kPaiHeader =
    "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n";

TEST_F(PublicTraceErrors, BadRowsAreRefusedWithFileAndLine) {
  const std::string helios = std::string(kHeliosHeader) + kHeliosRow;
  EXPECT_EQ(Refusal("h.csv", helios), "");
  EXPECT_EQ(
      Refusal("h.csv", helios + "2,u,vc,1,1,1,COMPLETED,2020-13-09 18:41:01,2020-06-09 18:41:01,"
                                "2020-06-09 18:42:01,60,0\n"),
      "h.csv:3: column 'submit_time': not a 'YYYY-MM-DD HH:MM:SS' time: "
      "'2020-13-09 18:41:01'");
  EXPECT_EQ(
      Refusal("h.csv", helios + "2,u,vc,-1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,"
                                "2020-06-09 18:42:01,60,0\n"),
      "h.csv:3: column 'gpu_num': must be in [1, 100000], got -1");
  EXPECT_EQ(Refusal("h.csv", helios + "\n# a comment\n2,u,vc,1,1\n"),
            "h.csv:5: expected 12 columns, found 5");

  const std::string acme = std::string(kAcmeHeader) +
                           "7,u1,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,"
                           "2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0\n";
  EXPECT_EQ(Refusal("a.csv", acme), "");
  EXPECT_EQ(
      Refusal("a.csv", acme + "8,u1,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,"
                              "2023-03-01 00:18:54+08:00,2023-03-01 00:10:51+08:00,117,32,1\n"),
      "a.csv:3: column 'end_time': must be in [start_time, start_time + 1e9 s], got "
      "2023-03-01 00:10:51+08:00 (start_time 2023-03-01 00:18:54+08:00)");
  EXPECT_EQ(
      Refusal("a.csv", acme + "8,u1,1,8,128,Other,FAILED,2023-03-01 00:18:22+8,"
                              "2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,1\n"),
      "a.csv:3: column 'submit_time': not a 'YYYY-MM-DD HH:MM:SS[+HH:MM]' time: "
      "'2023-03-01 00:18:22+8'");

  const std::string pai =
      std::string(kPaiHeader) + "j1,worker,1.0,Terminated,100.0,200.0,600.0,29.3,100.0,V100\n";
  EXPECT_EQ(Refusal("p.csv", pai), "");
  EXPECT_EQ(Refusal("p.csv", pai + "j2,worker,1.0,Terminated,300.0,200.0,600.0,29.3,100.0,T4\n"),
            "p.csv:3: column 'end_time': the task ends (200.0) before it starts (300.0)");
  EXPECT_EQ(Refusal("p.csv", pai + "j2,worker,1.5,Terminated,100.0,200.0,600.0,29.3,100.0,T4\n"),
            "p.csv:3: column 'inst_num': not a whole number >= 1: '1.5'");
  EXPECT_EQ(Refusal("p.csv", pai + "j2,worker,1.0,Terminated,100.0,200.0,600.0,29.3,lots,T4\n"),
            "p.csv:3: column 'plan_gpu': not a number: 'lots'");
}

// A PAI trace naming 5,000 GPU types loads every task. (Each row's type was looked for among all
// the types seen before it: minutes for a long trace of thousands of types.)
TEST_F(PublicTraceErrors, APaiTraceOfThousandsOfGpuTypesLoadsEveryTask) {
  std::string text = kPaiHeader;
  std::vector<Row> rows;
  for (int i = 0; i < 10000; ++i) {
    const int gpus = 1 + i % 4;
    std::ostringstream row;
    row << "j" << i << ",worker," << gpus << ".0,Terminated," << 1000 + i << ".0," << 1600 + i
        << ".0,600.0,29.3,100.0,gpu_type_" << i % 5000 << "\n";
    text += row.str();
    rows.push_back({static_cast<double>(i), 600, gpus, i + 2});
  }
  std::vector<JobSpec> jobs;
  TraceOptions options;
  const Status status = ParseTrace(text, "p.csv", options, ModelCatalog::BuiltIn(), &jobs);
  ASSERT_TRUE(status.ok()) << status.message();
  ExpectJobs(jobs, rows);
}

TEST_F(PublicTraceErrors, AnUnknownHeaderNamesTheFormatsThereAre) {
  std::string message = Refusal("x.csv", "when,how_long,gpus\n1,2,3\n");
  EXPECT_NE(message.find("x.csv:1: cannot tell the trace format"), std::string::npos) << message;
  EXPECT_NE(message.find("Helios"), std::string::npos) << message;
  EXPECT_NE(message.find("PAI"), std::string::npos) << message;
}

// A file is read in 64 KiB blocks: lines that straddle blocks, a byte-order mark, CRLF endings
// and a last line without '\n' read exactly as the same text parsed in memory.
TEST_F(PublicTraceErrors, StreamingAFileReadsWhatTheTextSays) {
  std::string text = "\xEF\xBB\xBF" + std::string(kHeliosHeader);
  for (int i = 0; i < 3000; ++i) {
    text += std::to_string(i) + ",user" + std::to_string(i % 7) + ",vc" + std::to_string(i % 3) +
            "," + std::to_string(1 + i % 8) + ",4,1,COMPLETED,2020-06-" +
            std::to_string(10 + i % 9) + " 1" + std::to_string(i % 10) + ":00:0" +
            std::to_string(i % 10) + ",2020-06-09 18:41:01,2020-06-09 18:42:01," +
            std::to_string(60 + i) + ",0" + (i % 2 ? "\r\n" : "\n");
  }
  text +=
      "3000,u,vc,2,1,1,COMPLETED,2020-06-19 00:00:00,2020-06-09 18:41:01,"
      "2020-06-09 18:42:01,5,0";
  ASSERT_GT(text.size(), 3u << 16);
  std::string path = (dir_ / "big.csv").string();
  std::ofstream(path, std::ios::binary) << text;
  std::vector<JobSpec> streamed, parsed;
  ASSERT_TRUE(ReadTrace(path, {}, ModelCatalog::BuiltIn(), &streamed).ok());
  ASSERT_TRUE(ParseTrace(text, path, {}, ModelCatalog::BuiltIn(), &parsed).ok());
  ASSERT_EQ(streamed.size(), 3001u);
  ASSERT_EQ(parsed.size(), streamed.size());
  for (size_t i = 0; i < parsed.size(); ++i) {
    ASSERT_EQ(streamed[i].arrival_s, parsed[i].arrival_s) << i;
    ASSERT_EQ(streamed[i].source_line, parsed[i].source_line) << i;
    ASSERT_EQ(streamed[i].gpus, parsed[i].gpus) << i;
    ASSERT_EQ(streamed[i].iterations, parsed[i].iterations) << i;
  }
  EXPECT_EQ(streamed.back().source_line, 3002);
}

}  // namespace
}  // namespace troupe
