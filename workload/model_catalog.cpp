#include "workload/model_catalog.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/input_file.hpp"
#include "base/status_macros.hpp"
#include "workload/csv_input.hpp"

namespace troupe {
namespace builtin {
extern const char* const kModelsCsv;
extern const char* const kSensitivityCsv;
}  // namespace builtin

namespace {

std::string UnknownModelOf(const std::vector<ModelProfile>& models, std::string_view name) {
  std::string known;
  for (const ModelProfile& model : models) {
    if (!known.empty()) known += ", ";
    known += model.name;
  }
  return "unknown model '" + std::string(name) + "' (known: " + known + ")";
}

std::string Where(std::string_view file, int64_t line) {
  return std::string(file) + ":" + std::to_string(line);
}

// Reads the header line of `file`; an empty file is an error.
Status ReadHeader(CsvCursor* cursor, std::string_view file, CsvHeader* header) {
  CsvLine line;
  if (!cursor->Next(&line)) return Status::InvalidInput(std::string(file) + ": empty file");
  return header->Parse(line, file);
}

// The columns synergy_models.csv must have, in ModelProfile's field order.
constexpr const char* kModelColumns[] = {"model",
                                         "class",
                                         "iter_time_s_at_proportional",
                                         "batch_size",
                                         "ideal_cpus_per_gpu",
                                         "ideal_mem_gb_per_gpu",
                                         "speedup_at_ideal"};

// A positive number from `field`, or an error naming the column.
Status ParsePositive(std::string_view field, std::string_view file, int64_t line,
                     std::string_view column, double* out) {
  Status status = ParseDoubleField(field, file, line, column, out);
  if (status.ok() && !(*out > 0)) {
    return FieldError(file, line, column, "must be positive, got " + std::string(field));
  }
  return status;
}

// Optional columns of synergy_models.csv (the analytic memory model, then the fabric's): 0 when
// absent.
constexpr const char* kOptionalModelColumns[] = {"dataset_gb_per_gpu", "storage_throughput",
                                                 "min_mem_gb_per_gpu", "thrash_throughput",
                                                 "gradient_mb",        "comm_overlap"};
constexpr size_t kCommOverlapColumn = 5;
constexpr double kBytesPerMb = 1e6;

Status ParseOptionalColumns(const CsvLine& line, const int* col, std::string_view file,
                            ModelProfile* model) {
  double gradient_mb = 0;
  double* fields[] = {&model->dataset_gb_per_gpu,
                      &model->storage_throughput,
                      &model->min_memory_gb_per_gpu,
                      &model->thrash_throughput,
                      &gradient_mb,
                      &model->comm_overlap};
  static_assert(std::size(fields) == std::size(kOptionalModelColumns));
  for (size_t i = 0; i < std::size(kOptionalModelColumns); ++i) {
    if (col[i] < 0) continue;
    RETURN_IF_ERROR(ParseDoubleField(line.fields[col[i]], file, line.number,
                                     kOptionalModelColumns[i], fields[i]));
    if (*fields[i] < 0) {
      return FieldError(file, line.number, kOptionalModelColumns[i], "must not be negative");
    }
    if (i == kCommOverlapColumn && *fields[i] > 1) {
      return FieldError(file, line.number, kOptionalModelColumns[i],
                        "must be at most 1, got " + std::string(line.fields[col[i]]));
    }
  }
  model->gradient_bytes = gradient_mb * kBytesPerMb;
  return Status::Ok();
}

Status ParseModelRow(const CsvLine& line, const int* col, std::string_view file,
                     ModelProfile* model) {
  const auto& f = line.fields;
  model->name = std::string(f[col[0]]);
  model->model_class = std::string(f[col[1]]);
  if (model->name.empty()) return FieldError(file, line.number, kModelColumns[0], "empty name");
  if (model->model_class != "image" && model->model_class != "language" &&
      model->model_class != "speech") {
    return FieldError(file, line.number, kModelColumns[1],
                      "must be image, language or speech, got '" + model->model_class + "'");
  }
  int64_t batch = 0;
  Status status =
      ParsePositive(f[col[2]], file, line.number, kModelColumns[2], &model->iter_time_s);
  if (status.ok()) status = ParseInt64Field(f[col[3]], file, line.number, kModelColumns[3], &batch);
  if (status.ok() && (batch < 1 || batch > std::numeric_limits<int>::max())) {
    status = FieldError(file, line.number, kModelColumns[3], "must be at least 1");
  }
  model->batch_size = static_cast<int>(batch);
  if (status.ok()) {
    status =
        ParsePositive(f[col[4]], file, line.number, kModelColumns[4], &model->ideal_cpus_per_gpu);
  }
  if (status.ok()) {
    status = ParsePositive(f[col[5]], file, line.number, kModelColumns[5],
                           &model->ideal_memory_gb_per_gpu);
  }
  if (status.ok()) {
    status =
        ParsePositive(f[col[6]], file, line.number, kModelColumns[6], &model->speedup_at_ideal);
  }
  return status;
}

Status ParseModels(std::string_view text, std::string_view file,
                   std::vector<ModelProfile>* models) {
  CsvCursor cursor(text);
  CsvHeader header;
  Status status = ReadHeader(&cursor, file, &header);
  int col[std::size(kModelColumns)];
  for (size_t i = 0; status.ok() && i < std::size(kModelColumns); ++i) {
    status = header.Require(kModelColumns[i], file, &col[i]);
  }
  int optional[std::size(kOptionalModelColumns)];
  for (size_t i = 0; i < std::size(kOptionalModelColumns); ++i) {
    optional[i] = header.Find(kOptionalModelColumns[i]);
  }
  CsvLine line;
  while (status.ok() && cursor.Next(&line)) {
    status = header.CheckWidth(line, file);
    ModelProfile model;
    if (status.ok()) status = ParseModelRow(line, col, file, &model);
    if (status.ok()) status = ParseOptionalColumns(line, optional, file, &model);
    if (!status.ok()) break;
    for (const ModelProfile& other : *models) {
      if (other.name == model.name) {
        return FieldError(file, line.number, "model", "'" + model.name + "' is listed twice");
      }
    }
    models->push_back(std::move(model));
  }
  if (status.ok() && models->empty()) {
    return Status::InvalidInput(std::string(file) + ": no models");
  }
  return status;
}

struct SensitivityRow {
  size_t model = 0;
  double cpus = 0, memory = 0, throughput = 0;
  int64_t line = 0;
};

Status ParseSensitivityRows(std::string_view text, std::string_view file,
                            const std::vector<ModelProfile>& models,
                            std::vector<SensitivityRow>* rows) {
  static constexpr const char* kColumns[] = {"model", "cpus_per_gpu", "mem_gb_per_gpu",
                                             "throughput_vs_proportional"};
  CsvCursor cursor(text);
  CsvHeader header;
  Status status = ReadHeader(&cursor, file, &header);
  int col[4];
  for (size_t i = 0; status.ok() && i < 4; ++i) status = header.Require(kColumns[i], file, &col[i]);
  CsvLine line;
  while (status.ok() && cursor.Next(&line)) {
    status = header.CheckWidth(line, file);
    if (!status.ok()) break;
    SensitivityRow row;
    row.line = line.number;
    std::string_view name = line.fields[col[0]];
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const ModelProfile& m) { return m.name == name; });
    if (it == models.end()) {
      return FieldError(file, line.number, kColumns[0], UnknownModelOf(models, name));
    }
    row.model = it - models.begin();
    status = ParsePositive(line.fields[col[1]], file, line.number, kColumns[1], &row.cpus);
    if (status.ok()) {
      status = ParsePositive(line.fields[col[2]], file, line.number, kColumns[2], &row.memory);
    }
    if (status.ok()) {
      status =
          ParseDoubleField(line.fields[col[3]], file, line.number, kColumns[3], &row.throughput);
    }
    if (status.ok() && row.throughput < 0) {
      status = FieldError(file, line.number, kColumns[3], "must not be negative");
    }
    rows->push_back(row);
  }
  return status;
}

std::vector<double> SortedUnique(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::string PointText(double cpus, double memory) {
  return "(cpus_per_gpu " + FormatNumber(cpus) + ", mem_gb_per_gpu " + FormatNumber(memory) + ")";
}

// Lays the rows out on the grid spanned by every CPU and memory value the file mentions; every
// model must have every point exactly once, or a scheduler would interpolate across a hole.
Status FillGrids(const std::vector<SensitivityRow>& rows, std::string_view file,
                 std::vector<ModelProfile>* models) {
  std::vector<double> cpus, memory;
  for (const SensitivityRow& row : rows) {
    cpus.push_back(row.cpus);
    memory.push_back(row.memory);
  }
  cpus = SortedUnique(std::move(cpus));
  memory = SortedUnique(std::move(memory));
  const double kHole = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<int64_t>> seen_at(models->size(),
                                            std::vector<int64_t>(cpus.size() * memory.size(), 0));
  for (ModelProfile& model : *models) {
    model.sensitivity.cpu_grid = cpus;
    model.sensitivity.memory_grid = memory;
    model.sensitivity.values.assign(cpus.size() * memory.size(), kHole);
  }
  for (const SensitivityRow& row : rows) {
    size_t c = std::lower_bound(cpus.begin(), cpus.end(), row.cpus) - cpus.begin();
    size_t m = std::lower_bound(memory.begin(), memory.end(), row.memory) - memory.begin();
    size_t cell = c * memory.size() + m;
    ModelProfile& model = (*models)[row.model];
    if (seen_at[row.model][cell] != 0) {
      return Status::InvalidInput(Where(file, row.line) + ": model '" + model.name + "': point " +
                                  PointText(row.cpus, row.memory) + " repeats line " +
                                  std::to_string(seen_at[row.model][cell]));
    }
    seen_at[row.model][cell] = row.line;
    model.sensitivity.values[cell] = row.throughput;
  }
  for (const ModelProfile& model : *models) {
    for (size_t cell = 0; cell < model.sensitivity.values.size(); ++cell) {
      if (std::isnan(model.sensitivity.values[cell])) {
        return Status::InvalidInput(
            std::string(file) + ": model '" + model.name + "': missing grid point " +
            PointText(cpus[cell / memory.size()], memory[cell % memory.size()]));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

double ModelProfile::Speedup(double cpus_per_gpu, double memory_gb_per_gpu) const {
  return sensitivity.At(cpus_per_gpu, memory_gb_per_gpu);
}

Status ModelCatalog::Parse(std::string_view models_csv, std::string_view models_name,
                           std::string_view sensitivity_csv, std::string_view sensitivity_name,
                           ModelCatalog* out) {
  std::vector<ModelProfile> models;
  Status status = ParseModels(models_csv, models_name, &models);
  std::vector<SensitivityRow> rows;
  if (status.ok()) status = ParseSensitivityRows(sensitivity_csv, sensitivity_name, models, &rows);
  if (status.ok() && rows.empty()) {
    status = Status::InvalidInput(std::string(sensitivity_name) + ": no sensitivity rows");
  }
  if (status.ok()) status = FillGrids(rows, sensitivity_name, &models);
  if (status.ok()) out->models_ = std::move(models);
  return status;
}

Status ModelCatalog::LoadFromDir(const std::string& dir, ModelCatalog* out) {
  std::string models_path = dir + "/synergy_models.csv";
  std::string sensitivity_path = dir + "/synergy_sensitivity.csv";
  std::string models_csv, sensitivity_csv;
  RETURN_IF_ERROR(ReadWholeFile(models_path, "workload.models_dir", &models_csv));
  RETURN_IF_ERROR(ReadWholeFile(sensitivity_path, "workload.models_dir", &sensitivity_csv));
  return Parse(models_csv, models_path, sensitivity_csv, sensitivity_path, out);
}

namespace {

struct ParsedBuiltIn {
  ModelCatalog catalog;  // empty unless status is OK
  Status status;
};

const ParsedBuiltIn& BuiltInOnce() {
  static const ParsedBuiltIn parsed = [] {
    ParsedBuiltIn p;
    ModelCatalog catalog;
    p.status = ModelCatalog::Parse(builtin::kModelsCsv, "configs/models/synergy_models.csv",
                                   builtin::kSensitivityCsv,
                                   "configs/models/synergy_sensitivity.csv", &catalog);
    if (p.status.ok()) {
      p.catalog = std::move(catalog);
    } else {
      p.status = Status::Internal("the built-in model catalogue is broken: " + p.status.message());
    }
    return p;
  }();
  return parsed;
}

}  // namespace

StatusOr<const ModelCatalog*> ModelCatalog::LoadBuiltIn() {
  const ParsedBuiltIn& parsed = BuiltInOnce();
  if (!parsed.status.ok()) return parsed.status;
  return &parsed.catalog;
}

const ModelCatalog& ModelCatalog::BuiltIn() { return BuiltInOnce().catalog; }

const ModelProfile* ModelCatalog::Find(std::string_view name) const {
  for (const ModelProfile& model : models_) {
    if (model.name == name) return &model;
  }
  return nullptr;
}

std::string ModelCatalog::UnknownModel(std::string_view name) const {
  return UnknownModelOf(models_, name);
}

std::vector<const ModelProfile*> ModelCatalog::ModelsOfClass(std::string_view model_class) const {
  std::vector<const ModelProfile*> out;
  for (const ModelProfile& model : models_) {
    if (model.model_class == model_class) out.push_back(&model);
  }
  return out;
}

}  // namespace troupe
