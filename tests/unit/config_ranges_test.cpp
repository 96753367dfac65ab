// Every number of the config schema has a range (config/config.proto), and the validator
// enforces it: a field added without one fails here, not in a user's run.
#include "config/config_ranges.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/status_macros.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"

namespace troupe {
namespace {

namespace pb = google::protobuf;

bool IsCountEntry(const FieldRange& r) { return r.field->is_repeated() && !r.path.ends_with("[]"); }

TEST(ConfigRanges, EveryNumericFieldHasBothBoundsAndEveryRepeatedFieldACount) {
  int numeric = 0;
  for (const FieldRange& r : SchemaRanges(config::RunConfig::descriptor())) {
    if (IsCountEntry(r)) {
      EXPECT_TRUE(r.max_count.has_value()) << r.path << " has no (max_count)";
      continue;
    }
    ASSERT_TRUE(IsNumericField(r.field)) << r.path;
    ++numeric;
    ASSERT_TRUE(r.min.has_value()) << r.path << " has no (min)";
    ASSERT_TRUE(r.max.has_value()) << r.path << " has no (max)";
    EXPECT_LE(*r.min, *r.max) << r.path;
    EXPECT_TRUE(std::isfinite(*r.min) && std::isfinite(*r.max)) << r.path;
  }
  EXPECT_GT(numeric, 100);  // the walk reached the whole schema
}

// A default outside its own range would make an untouched config invalid.
TEST(ConfigRanges, DefaultsLieInTheirRanges) {
  for (const FieldRange& r : SchemaRanges(config::RunConfig::descriptor())) {
    if (IsCountEntry(r) || !r.field->has_default_value() || !r.min) continue;
    double value = 0;
    switch (r.field->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_INT32:
        value = r.field->default_value_int32();
        break;
      case pb::FieldDescriptor::CPPTYPE_INT64:
        value = static_cast<double>(r.field->default_value_int64());
        break;
      case pb::FieldDescriptor::CPPTYPE_UINT32:
        value = r.field->default_value_uint32();
        break;
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        value = static_cast<double>(r.field->default_value_uint64());
        break;
      case pb::FieldDescriptor::CPPTYPE_FLOAT:
        value = r.field->default_value_float();
        break;
      default:
        value = r.field->default_value_double();
    }
    EXPECT_GE(value, *r.min) << r.path;
    EXPECT_LE(value, *r.max) << r.path;
  }
}

Status Validate(const std::string& text) {
  config::RunConfig cfg;
  RETURN_IF_ERROR(ParseConfigText(text, "t", &cfg));
  return ValidateConfig(cfg, "t");
}

constexpr char kCluster[] = "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n";

TEST(ConfigRanges, OutOfRangeNamesTheFieldAndTheRange) {
  Status s = Validate(std::string(kCluster) + "scheduler { round_s: 1e-300 }");
  EXPECT_EQ(s.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(s.message(), "t: scheduler.round_s: must be in [1, 1000000000], got 1e-300");
  s = Validate("cluster { servers { count: 1000000000 gpus: 8 cpus: 24 memory_gb: 500 } }");
  EXPECT_NE(s.message().find("t: cluster.servers[0].count: must be in [1, 10000]"),
            std::string::npos)
      << s.message();
}

TEST(ConfigRanges, NanInfinityAndHugeIntegersAreRefused) {
  for (const char* value : {"nan", "inf", "-inf"}) {
    Status s = Validate(std::string(kCluster) + "run { deadline_s: " + value + " }");
    EXPECT_NE(s.message().find("run.deadline_s: must be in"), std::string::npos) << s.message();
  }
  Status s = Validate(std::string(kCluster) + "workload { max_jobs: 9223372036854775807 }");
  EXPECT_NE(s.message().find("got 9223372036854775807"), std::string::npos) << s.message();
}

// Oasis.Range is one message type; each use has its own range, set on the field that holds it.
TEST(ConfigRanges, AMessageFieldsRangeAppliesInsideIt) {
  Status s = Validate("oasis { epochs { lo: 1 hi: 100000 } }");
  EXPECT_NE(s.message().find("oasis.epochs.hi: must be in [1, 1000], got 100000"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Validate("oasis { g1 { lo: 1 hi: 100000 } }").ok());
}

TEST(ConfigRanges, RepeatedFieldsAreCheckedPerEntryAndCounted) {
  Status s = Validate("paramserver { hidden: 64 hidden: 0 }");
  EXPECT_NE(s.message().find("paramserver.hidden[1]: must be in [1, 4096], got 0"),
            std::string::npos)
      << s.message();
  std::string many = "paramserver {";
  for (int i = 0; i < 17; ++i) many += " hidden: 8";
  s = Validate(many + " }");
  EXPECT_NE(s.message().find("paramserver.hidden: must have at most 16 entries, got 17"),
            std::string::npos)
      << s.message();
}

TEST(ConfigRanges, ClusterTotalsAreBounded) {
  std::string groups = "cluster {";
  for (int i = 0; i < 11; ++i) groups += " servers { count: 1000 gpus: 8 cpus: 24 memory_gb: 500 }";
  Status s = Validate(groups + " }");
  EXPECT_NE(s.message().find("at most 10000 servers in all"), std::string::npos) << s.message();
}

TEST(ConfigRanges, TheRepositoryConfigsAreInRange) {
  for (const char* name :
       {"default", "oasis", "hps_ctr", "hps_ctr_faults", "philly-512", "synergy-128-multigpu",
        "fabric-128-1to1", "fabric-128-4to1", "philly-512-fabric", "failure-trace"}) {
    config::RunConfig cfg;
    const std::string path = std::string(TROUPE_SOURCE_DIR) + "/configs/" + name + ".textproto";
    ASSERT_TRUE(LoadConfigFile(path, &cfg).ok()) << path;
    Status s = CheckFieldRanges(cfg, path);
    EXPECT_TRUE(s.ok()) << s.message();
  }
}

// docs/config.md lists every range as a table row; the failure message prints the whole table
// (paste it into the "Ranges" section after changing a range in config.proto).
TEST(ConfigRanges, DocsListEveryRange) {
  std::ifstream in(std::string(TROUPE_SOURCE_DIR) + "/docs/config.md");
  std::stringstream doc;
  doc << in.rdbuf();
  std::string table = "| field | allowed |\n|---|---|\n";
  std::vector<std::string> missing;
  for (const FieldRange& r : SchemaRanges(config::RunConfig::descriptor())) {
    std::string row = "| `";
    row.append(r.path).append("` | ");
    if (IsCountEntry(r)) {
      row.append("at most ").append(std::to_string(*r.max_count)).append(" entries");
    } else {
      row.append("[").append(FormatRangeNumber(*r.min)).append(", ");
      row.append(FormatRangeNumber(*r.max)).append("]");
    }
    row.append(" |\n");
    table += row;
    if (doc.str().find(row) == std::string::npos) missing.push_back(row);
  }
  EXPECT_TRUE(missing.empty()) << "docs/config.md lacks " << missing.front() << "The table:\n"
                               << table;
}

}  // namespace
}  // namespace troupe
