// The model catalogue: the built-in profiles match configs/models, Speedup interpolates the way
// schedulers rely on, and a broken catalogue is refused with a message that points at the fault.
#include "workload/model_catalog.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace troupe {
namespace {

// The data rows of a CSV in configs/models, split on commas, read independently of the parser.
std::vector<std::vector<std::string>> ReadRows(const std::string& file) {
  std::ifstream in(std::string(TROUPE_SOURCE_DIR) + "/configs/models/" + file);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream split(line);
    std::string field;
    while (std::getline(split, field, ',')) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

TEST(ModelCatalogTest, BuiltInHasTheTenModelsWithTheirIterationTimes) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  auto rows = ReadRows("synergy_models.csv");
  ASSERT_EQ(rows.size(), 10u);
  ASSERT_EQ(catalog.models().size(), 10u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ModelProfile& model = catalog.models()[i];
    EXPECT_EQ(model.name, rows[i][0]);
    EXPECT_EQ(model.model_class, rows[i][1]);
    EXPECT_DOUBLE_EQ(model.iter_time_s, std::stod(rows[i][2])) << model.name;
    EXPECT_EQ(model.batch_size, std::stoi(rows[i][3])) << model.name;
    EXPECT_EQ(catalog.Find(rows[i][0]), &model);
  }
  EXPECT_EQ(catalog.Find("no-such-model"), nullptr);
}

TEST(ModelCatalogTest, ModelsOfClassFollowTheCatalogueOrder) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  std::vector<std::string> image;
  for (const ModelProfile* model : catalog.ModelsOfClass("image")) image.push_back(model->name);
  EXPECT_EQ(image,
            (std::vector<std::string>{"alexnet", "res18", "res50", "mobilenet", "shufflenet"}));
  EXPECT_EQ(catalog.ModelsOfClass("language").size(), 3u);
  EXPECT_EQ(catalog.ModelsOfClass("speech").size(), 2u);
  EXPECT_TRUE(catalog.ModelsOfClass("video").empty());
}

TEST(ModelCatalogTest, SpeedupIsExactAtEveryGridPoint) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  auto rows = ReadRows("synergy_sensitivity.csv");
  ASSERT_EQ(rows.size(), 450u);
  for (const auto& row : rows) {
    const ModelProfile* model = catalog.Find(row[0]);
    ASSERT_NE(model, nullptr) << row[0];
    EXPECT_EQ(model->Speedup(std::stod(row[1]), std::stod(row[2])), std::stod(row[3]))
        << row[0] << " at " << row[1] << " CPUs, " << row[2] << " GB";
  }
}

TEST(ModelCatalogTest, ProportionalShareIsOneForEveryModel) {
  for (const ModelProfile& model : ModelCatalog::BuiltIn().models()) {
    EXPECT_EQ(model.Speedup(3, 62.5), 1.0) << model.name;
  }
}

TEST(ModelCatalogTest, MidwayBetweenGridPointsIsTheMean) {
  for (const ModelProfile& model : ModelCatalog::BuiltIn().models()) {
    const auto& cpus = model.sensitivity.cpu_grid;
    const auto& memory = model.sensitivity.memory_grid;
    for (size_t c = 0; c + 1 < cpus.size(); ++c) {
      for (size_t m = 0; m + 1 < memory.size(); ++m) {
        double a = model.Speedup(cpus[c], memory[m]), b = model.Speedup(cpus[c + 1], memory[m]);
        double d = model.Speedup(cpus[c], memory[m + 1]);
        double e = model.Speedup(cpus[c + 1], memory[m + 1]);
        double mid_cpu = (cpus[c] + cpus[c + 1]) / 2, mid_mem = (memory[m] + memory[m + 1]) / 2;
        EXPECT_NEAR(model.Speedup(mid_cpu, memory[m]), (a + b) / 2, 1e-12) << model.name;
        EXPECT_NEAR(model.Speedup(cpus[c], mid_mem), (a + d) / 2, 1e-12) << model.name;
        EXPECT_NEAR(model.Speedup(mid_cpu, mid_mem), (a + b + d + e) / 4, 1e-12) << model.name;
      }
    }
  }
}

TEST(ModelCatalogTest, SpeedupClampsToTheGridEdges) {
  const ModelProfile& alexnet = *ModelCatalog::BuiltIn().Find("alexnet");
  EXPECT_EQ(alexnet.Speedup(0.5, 10), alexnet.Speedup(1, 20.83));
  EXPECT_EQ(alexnet.Speedup(100, 1000), alexnet.Speedup(24, 250));
  EXPECT_EQ(alexnet.Speedup(48, 62.5), alexnet.Speedup(24, 62.5));
  EXPECT_EQ(alexnet.Speedup(3, 0), alexnet.Speedup(3, 20.83));
  EXPECT_LT(alexnet.Speedup(0.5, 10), alexnet.Speedup(24, 250));
}

TEST(ModelCatalogTest, LoadFromDirReadsTheRepositoryCatalogue) {
  ModelCatalog catalog;
  Status status =
      ModelCatalog::LoadFromDir(std::string(TROUPE_SOURCE_DIR) + "/configs/models", &catalog);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(catalog.models().size(), 10u);
  ModelCatalog missing;
  status = ModelCatalog::LoadFromDir("/nonexistent/troupe-models", &missing);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(status.message().find("/nonexistent/troupe-models/synergy_models.csv"),
            std::string::npos);
}

// A two-model catalogue on a 2 × 2 grid, small enough to break one line at a time.
constexpr const char* kModels =
    "model,class,iter_time_s_at_proportional,batch_size,ideal_cpus_per_gpu,"
    "ideal_mem_gb_per_gpu,speedup_at_ideal\n"
    "a,image,0.5,64,6,125,2\n"
    "b,speech,0.25,32,3,62.5,1\n";
constexpr const char* kGrid =
    "model,cpus_per_gpu,mem_gb_per_gpu,throughput_vs_proportional\n"
    "a,3,62.5,1\na,3,125,1.5\na,6,62.5,1.25\na,6,125,2\n"
    "b,3,62.5,1\nb,3,125,1\nb,6,62.5,1\nb,6,125,1\n";

Status ParseSmall(const std::string& models, const std::string& grid, ModelCatalog* out) {
  return ModelCatalog::Parse(models, "m.csv", grid, "s.csv", out);
}

void ExpectInvalid(const Status& status, const std::vector<std::string>& fragments) {
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput) << status.message();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos)
        << "'" << status.message() << "' lacks '" << fragment << "'";
  }
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << "one line";
}

TEST(ModelCatalogParseTest, AcceptsAWellFormedCatalogueWithColumnsInAnyOrder) {
  ModelCatalog catalog;
  std::string grid =
      "throughput_vs_proportional,mem_gb_per_gpu,model,cpus_per_gpu\n"
      "1,62.5,a,3\n1.5,125,a,3\n1.25,62.5,a,6\n2,125,a,6\n"
      "1,62.5,b,3\n1,125,b,3\n1,62.5,b,6\n1,125,b,6\n";
  Status status = ParseSmall(kModels, grid, &catalog);
  ASSERT_TRUE(status.ok()) << status.message();
  const ModelProfile& a = *catalog.Find("a");
  EXPECT_EQ(a.Speedup(6, 62.5), 1.25);
  EXPECT_EQ(a.Speedup(3, 125), 1.5);
  EXPECT_NEAR(a.Speedup(4.5, 93.75), (1 + 1.5 + 1.25 + 2) / 4.0, 1e-12);
}

TEST(ModelCatalogParseTest, NonNumberNamesFileLineAndColumn) {
  ModelCatalog catalog;
  std::string models = kModels;
  models.replace(models.find("0.25"), 4, "fast");
  ExpectInvalid(ParseSmall(models, kGrid, &catalog),
                {"m.csv:3", "'iter_time_s_at_proportional'", "'fast'"});
  std::string grid = kGrid;
  grid.replace(grid.find("1.25"), 4, "1.2x");
  ExpectInvalid(ParseSmall(kModels, grid, &catalog),
                {"s.csv:4", "'throughput_vs_proportional'", "'1.2x'"});
}

TEST(ModelCatalogParseTest, ShortLineNamesFileAndLine) {
  ModelCatalog catalog;
  std::string grid = kGrid;
  grid.replace(grid.find("a,6,125,2"), 9, "a,6,125");
  ExpectInvalid(ParseSmall(kModels, grid, &catalog), {"s.csv:5", "expected 4 columns, found 3"});
}

TEST(ModelCatalogParseTest, MissingGridPointNamesModelAndPoint) {
  ModelCatalog catalog;
  std::string grid = kGrid;
  grid.erase(grid.find("b,6,62.5,1\n"), 11);
  ExpectInvalid(ParseSmall(kModels, grid, &catalog),
                {"s.csv", "model 'b'", "cpus_per_gpu 6", "mem_gb_per_gpu 62.5"});
}

TEST(ModelCatalogParseTest, UnknownModelInSensitivityNamesTheLine) {
  ModelCatalog catalog;
  std::string grid = std::string(kGrid) + "c,3,62.5,1\n";
  ExpectInvalid(ParseSmall(kModels, grid, &catalog), {"s.csv:10", "'model'", "unknown model 'c'"});
}

TEST(ModelCatalogParseTest, RepeatedPointAndRepeatedModelAreRefused) {
  ModelCatalog catalog;
  ExpectInvalid(ParseSmall(kModels, std::string(kGrid) + "a,3,125,9\n", &catalog),
                {"s.csv:10", "model 'a'", "repeats line 3"});
  ExpectInvalid(ParseSmall(std::string(kModels) + "a,image,1,8,3,62.5,1\n", kGrid, &catalog),
                {"m.csv:4", "'a' is listed twice"});
}

TEST(ModelCatalogParseTest, MissingHeaderColumnAndBadClassAreRefused) {
  ModelCatalog catalog;
  std::string models = kModels;
  models.replace(models.find("batch_size"), 10, "batch");
  ExpectInvalid(ParseSmall(models, kGrid, &catalog), {"m.csv:1", "'batch_size'"});
  models = kModels;
  models.replace(models.find("speech"), 6, "vision");
  ExpectInvalid(ParseSmall(models, kGrid, &catalog), {"m.csv:3", "'class'", "vision"});
  ExpectInvalid(ParseSmall("", kGrid, &catalog), {"m.csv", "empty"});
}

TEST(ModelCatalogTest, BuiltInCarriesTheMemoryModelColumns) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  auto rows = ReadRows("synergy_models.csv");  // columns 7..10: the memory model
  for (size_t i = 0; i < rows.size(); ++i) {
    const ModelProfile& model = catalog.models()[i];
    ASSERT_EQ(rows[i].size(), 13u) << model.name;
    EXPECT_DOUBLE_EQ(model.dataset_gb_per_gpu, std::stod(rows[i][7])) << model.name;
    EXPECT_DOUBLE_EQ(model.storage_throughput, std::stod(rows[i][8])) << model.name;
    EXPECT_DOUBLE_EQ(model.min_memory_gb_per_gpu, std::stod(rows[i][9])) << model.name;
    EXPECT_DOUBLE_EQ(model.thrash_throughput, std::stod(rows[i][10])) << model.name;
  }
  EXPECT_EQ(catalog.Find("alexnet")->dataset_gb_per_gpu, 125);
  EXPECT_EQ(catalog.Find("gnmt")->dataset_gb_per_gpu, 0);
}

TEST(ModelCatalogParseTest, MemoryModelColumnsAreOptionalAndNonNegative) {
  ModelCatalog catalog;
  ASSERT_TRUE(ParseSmall(kModels, kGrid, &catalog).ok());
  EXPECT_EQ(catalog.Find("a")->dataset_gb_per_gpu, 0);
  EXPECT_EQ(catalog.Find("a")->thrash_throughput, 0);
  std::string models =
      "model,class,iter_time_s_at_proportional,batch_size,ideal_cpus_per_gpu,"
      "ideal_mem_gb_per_gpu,speedup_at_ideal,storage_throughput,dataset_gb_per_gpu\n"
      "a,image,0.5,64,6,125,2,1.5,100\n"
      "b,speech,0.25,32,3,62.5,1,0,0\n";
  ASSERT_TRUE(ParseSmall(models, kGrid, &catalog).ok());
  EXPECT_EQ(catalog.Find("a")->dataset_gb_per_gpu, 100);
  EXPECT_EQ(catalog.Find("a")->storage_throughput, 1.5);
  EXPECT_EQ(catalog.Find("a")->min_memory_gb_per_gpu, 0);
  std::string negative = models;
  negative.replace(negative.find("1.5,100"), 7, "1.5,-1");
  ExpectInvalid(ParseSmall(negative, kGrid, &catalog),
                {"m.csv:2", "'dataset_gb_per_gpu'", "negative"});
  std::string junk = models;
  junk.replace(junk.find("1.5,100"), 7, "fast,100");
  ExpectInvalid(ParseSmall(junk, kGrid, &catalog), {"m.csv:2", "'storage_throughput'", "'fast'"});
}

// The fabric needs every built-in model's gradient: parameters x 4 bytes (docs/network.md).
TEST(ModelCatalogTest, BuiltInGivesEveryModelAGradientSizeAndAnOverlap) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  auto rows = ReadRows("synergy_models.csv");  // columns 11, 12: gradient_mb, comm_overlap
  ASSERT_EQ(rows.size(), catalog.models().size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ModelProfile& model = catalog.models()[i];
    ASSERT_EQ(rows[i].size(), 13u) << model.name;
    EXPECT_GT(model.gradient_bytes, 0) << model.name;
    EXPECT_DOUBLE_EQ(model.gradient_bytes, std::stod(rows[i][11]) * 1e6) << model.name;
    EXPECT_DOUBLE_EQ(model.comm_overlap, std::stod(rows[i][12])) << model.name;
    EXPECT_GE(model.comm_overlap, 0) << model.name;
    EXPECT_LE(model.comm_overlap, 1) << model.name;
  }
  // torchvision's ResNet-50 has 25,557,032 parameters; AlexNet 61,100,840.
  EXPECT_DOUBLE_EQ(catalog.Find("res50")->gradient_bytes, 25557032.0 * 4);
  EXPECT_DOUBLE_EQ(catalog.Find("alexnet")->gradient_bytes, 61100840.0 * 4);
}

TEST(ModelCatalogParseTest, GradientAndOverlapColumnsAreOptionalAndBounded) {
  ModelCatalog catalog;
  ASSERT_TRUE(ParseSmall(kModels, kGrid, &catalog).ok());
  EXPECT_EQ(catalog.Find("a")->gradient_bytes, 0);
  EXPECT_EQ(catalog.Find("a")->comm_overlap, 0);
  std::string models =
      "model,class,iter_time_s_at_proportional,batch_size,ideal_cpus_per_gpu,"
      "ideal_mem_gb_per_gpu,speedup_at_ideal,comm_overlap,gradient_mb\n"
      "a,image,0.5,64,6,125,2,0.25,102.5\n"
      "b,speech,0.25,32,3,62.5,1,1,0\n";
  Status status = ParseSmall(models, kGrid, &catalog);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_DOUBLE_EQ(catalog.Find("a")->gradient_bytes, 102.5e6);
  EXPECT_EQ(catalog.Find("a")->comm_overlap, 0.25);
  EXPECT_EQ(catalog.Find("b")->comm_overlap, 1);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = models;
    changed.replace(changed.find(from), from.size(), to);
    return changed;
  };
  ExpectInvalid(ParseSmall(with("0.25,102.5", "0.25,-3"), kGrid, &catalog),
                {"m.csv:2", "'gradient_mb'", "negative"});
  ExpectInvalid(ParseSmall(with("0.25,102.5", "1.5,102.5"), kGrid, &catalog),
                {"m.csv:2", "'comm_overlap'", "at most 1", "1.5"});
  ExpectInvalid(ParseSmall(with("0.25,102.5", "-0.1,102.5"), kGrid, &catalog),
                {"m.csv:2", "'comm_overlap'", "negative"});
  ExpectInvalid(ParseSmall(with("0.25,102.5", "0.25,big"), kGrid, &catalog),
                {"m.csv:2", "'gradient_mb'", "'big'"});
  EXPECT_EQ(catalog.Find("a")->gradient_bytes, 102.5e6) << "a refused catalogue changes nothing";
}

TEST(ModelCatalogParseTest, AFailedParseLeavesTheOutputUntouched) {
  ModelCatalog catalog;
  ASSERT_TRUE(ParseSmall(kModels, kGrid, &catalog).ok());
  EXPECT_FALSE(ParseSmall(kModels, "model,cpus_per_gpu\n", &catalog).ok());
  EXPECT_EQ(catalog.models().size(), 2u);
}

}  // namespace
}  // namespace troupe
