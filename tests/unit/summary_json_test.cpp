// summary.json is what scripts read: every kind's fields under the names they have always had, as
// JSON numbers where they are numbers, with unknown values left out and any text escaped.
#include "runner/summary_json.hpp"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "messages/summary.pb.h"
#include "runner/cluster/report_writer.hpp"
#include "runner/oasis/oasis_run.hpp"
#include "runner/ps/ps_report.hpp"

namespace troupe {
namespace {

bool Has(const std::string& json, const std::string& text) {
  return json.find(text) != std::string::npos;
}

// Every name scripts have read (`names`, separated by spaces) is still printed; new fields may
// join them.
void ExpectKeys(const std::string& json, const std::string& names) {
  std::istringstream in(names);
  for (std::string name; in >> name;) EXPECT_TRUE(Has(json, "\n \"" + name + "\": ")) << name;
}

TEST(SummaryJson, ClusterFieldsKeepTheirNames) {
  StatusOr<std::string> json = PrintSummaryJson(summaries::ClusterRunSummary());
  ASSERT_TRUE(json.ok()) << json.status().message();
  ExpectKeys(*json,
             "config_name mode policy mechanism end_reason seed jobs_total jobs_finished "
             "jobs_measured jobs_measured_finished rounds jct_mean_s jct_median_s jct_p95_s "
             "jct_p99_s makespan_s gpu_utilisation cpu_utilisation memory_utilisation events "
             "messages wall_s events_per_s messages_per_s jobs_failed wasted_gpu_hours "
             "faults_injected messages_dropped messages_duplicated messages_delayed");
  EXPECT_TRUE(Has(*json, "\"jobs_failed\": 0,")) << "zeros are printed";
}

TEST(SummaryJson, OasisFieldsKeepTheirNames) {
  summaries::OasisRunSummary s;
  s.add_violations("job 3: \"late\"\n");
  StatusOr<std::string> json = PrintSummaryJson(s);
  ASSERT_TRUE(json.ok()) << json.status().message();
  ExpectKeys(*json,
             "config mode policy seed slots worker_servers ps_machines jobs admitted "
             "rejected finished late total_utility low_factor mean_gpu_use "
             "released_worker_slots chunk_pieces messages events wall_s violations");
  summaries::OasisRunSummary read;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &read).ok()) << *json;
  ASSERT_EQ(read.violations_size(), 1);
  EXPECT_EQ(read.violations(0), s.violations(0));
  EXPECT_TRUE(Has(*PrintSummaryJson(summaries::OasisRunSummary()), "\"violations\": []"))
      << "an empty list";
}

TEST(SummaryJson, PsFieldsKeepTheirNames) {
  summaries::PsRunSummary s;
  s.set_auc(0.5);
  s.set_first_loss(0.5);
  s.set_final_loss(0.5);
  StatusOr<std::string> json = PrintSummaryJson(s);
  ASSERT_TRUE(json.ok()) << json.status().message();
  ExpectKeys(*json,
             "config_name mode data seed nodes gpus_per_node batch_size batches examples "
             "emulated_s wall_s examples_per_s examples_per_s_wall auc first_loss final_loss "
             "steady_from read_s partition_s ssd_s train_s slowest_stage slowest_stage_s "
             "batch_time_s stage_sum_s hbm_hit_rate mem_hit_rate mem_hit_rate_first_100 "
             "cache_hit_rate cache_hit_rate_first_100 ssd_rows_read rows_created disk_bytes "
             "net_bytes ssd_bytes_read ssd_bytes_written compaction_bytes bytes_moved "
             "parameters ssd_keys mem_rows mem_capacity_rows ssd_disk_bytes ssd_files "
             "compactions replicas_identical messages events faults_injected crashes "
             "restarts disk_write_failures disk_recoveries steps_replayed updates_lost");
}

TEST(SummaryJson, TheSeedIsAStringAndLargeCountsAreExactNumbers) {
  summaries::ClusterRunSummary s;
  s.set_seed(std::numeric_limits<uint64_t>::max());
  s.set_messages(static_cast<double>((uint64_t{1} << 53) - 1));  // past 2^31, still exact
  s.set_events(5'000'000'000);
  s.set_config_name("say \"hi\"\\\n\t\x01");
  StatusOr<std::string> json = PrintSummaryJson(s);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_TRUE(Has(*json, "\"seed\": \"18446744073709551615\",")) << *json;
  EXPECT_TRUE(Has(*json, "\"messages\": 9007199254740991,")) << *json;
  EXPECT_TRUE(Has(*json, "\"events\": 5000000000,")) << *json;
  summaries::ClusterRunSummary read;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &read).ok()) << *json;
  EXPECT_EQ(read.config_name(), s.config_name());
  EXPECT_EQ(read.seed(), s.seed());
}

TEST(SummaryJson, AnUnknownAucIsLeftOutAndAKnownOneIsPrinted) {
  summaries::PsRunSummary s;
  s.set_auc(std::numeric_limits<double>::quiet_NaN());
  s.set_first_loss(0.5);
  StatusOr<std::string> json = PrintSummaryJson(s);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_FALSE(Has(*json, "\"auc\"")) << *json;
  EXPECT_FALSE(Has(*json, "NaN")) << *json;
  EXPECT_TRUE(Has(*json, "\"first_loss\": 0.5")) << *json;
  EXPECT_TRUE(Has(*json, "\"updates_lost\": 0")) << *json;
  EXPECT_TRUE(std::isnan(s.auc())) << "printing leaves the run's own summary as it was";
  s.set_auc(0.75);
  EXPECT_TRUE(Has(*PrintSummaryJson(s), "\"auc\": 0.75")) << *PrintSummaryJson(s);
}

TEST(SummaryJson, ANonFiniteNumberThatCannotBeUnknownIsAnError) {
  summaries::ClusterRunSummary s;
  s.set_makespan_s(std::numeric_limits<double>::infinity());
  StatusOr<std::string> json = PrintSummaryJson(s);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), Status::Code::kInternal);
  EXPECT_TRUE(Has(json.status().message(), "makespan_s")) << json.status().message();
}

TEST(SummaryJson, NegativeZeroPrintsAsZero) {
  summaries::ClusterRunSummary s;
  s.set_wasted_gpu_hours(-0.0);
  EXPECT_TRUE(Has(*PrintSummaryJson(s), "\"wasted_gpu_hours\": 0,")) << *PrintSummaryJson(s);
}

}  // namespace
}  // namespace troupe
