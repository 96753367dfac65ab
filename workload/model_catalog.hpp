// ModelCatalog: the models a job can train and how their speed depends on CPUs and memory.
//
// Contract: a catalogue is built from two CSVs (configs/models/): synergy_models.csv, one row per
// model (class, iteration time at the GPU-proportional share, batch size, ideal CPUs and memory
// per GPU, speedup at the ideal; optionally the memory model's dataset_gb_per_gpu,
// storage_throughput, min_mem_gb_per_gpu and thrash_throughput, and the fabric's gradient_mb and
// comm_overlap, 0 when absent, never negative, an overlap at most 1), and
// synergy_sensitivity.csv, each model's throughput at every point of a CPUs-per-GPU ×
// memory-per-GPU grid, 1.0 being the GPU-proportional share (3 CPUs and 62.5 GB per GPU on
// Synergy's 8-GPU, 24-CPU, 500 GB servers). Columns are found by name. Parse refuses a catalogue
// that a scheduler could misread: a model without every grid point, a model listed twice, a
// sensitivity row for a model it does not know, a number that does not parse. Errors are one
// InvalidInput line naming the file and line (or the model and grid point). A catalogue is
// immutable once built; the built-in one lives for the whole process.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "messages/sensitivity.hpp"

namespace troupe {

struct ModelProfile {
  std::string name, model_class;  // class: image | language | speech
  double iter_time_s = 0;         // seconds per iteration at the GPU-proportional share
  int batch_size = 0;
  double ideal_cpus_per_gpu = 0, ideal_memory_gb_per_gpu = 0, speedup_at_ideal = 1;
  // The analytic memory model's inputs (scheduling::DatasetModel, docs/profiling.md), derived
  // from the same profiles: optional columns dataset_gb_per_gpu, storage_throughput,
  // min_mem_gb_per_gpu and thrash_throughput; absent = 0 = memory-insensitive.
  double dataset_gb_per_gpu = 0, storage_throughput = 0;
  double min_memory_gb_per_gpu = 0, thrash_throughput = 0;
  // The fabric's inputs (docs/network.md): the gradient a data-parallel job all-reduces each
  // iteration, in bytes (column gradient_mb: parameters x 4 bytes, in units of 1e6 bytes), and the
  // share of that communication hidden behind compute, in [0, 1] (column comm_overlap). Absent = 0:
  // no gradient size known, nothing hidden.
  double gradient_bytes = 0;
  double comm_overlap = 0;
  // CPUs per GPU {1,2,3,4,5,6,9,12,24} x GB per GPU {20.83,62.5,125,187.5,250}; 1.0 at the
  // proportional share.
  SensitivityMatrix sensitivity;

  // Throughput relative to the proportional share at this allocation per GPU: bilinear
  // interpolation inside the grid, clamped to the grid's edges outside it. Exact at grid points.
  double Speedup(double cpus_per_gpu, double memory_gb_per_gpu) const;
};

class ModelCatalog {
 public:
  // The catalogue compiled into the binary (configs/models/*.csv, embedded by CMake as
  // troupe::builtin::kModelsCsv and kSensitivityCsv), parsed once. Those files are checked by the
  // unit tests, so a failure to parse them is a build defect: Internal, naming the file and line.
  static StatusOr<const ModelCatalog*> LoadBuiltIn();
  // LoadBuiltIn's catalogue, or an empty one if it failed: for tests and benchmarks, which check
  // the catalogue's contents themselves. Runs use LoadBuiltIn.
  static const ModelCatalog& BuiltIn();
  // Reads dir/synergy_models.csv and dir/synergy_sensitivity.csv.
  static Status LoadFromDir(const std::string& dir, ModelCatalog* out);
  // Builds a catalogue from the two CSV texts; the names are used in error messages.
  static Status Parse(std::string_view models_csv, std::string_view models_name,
                      std::string_view sensitivity_csv, std::string_view sensitivity_name,
                      ModelCatalog* out);

  const ModelProfile* Find(std::string_view name) const;  // nullptr if unknown
  // "unknown model 'x' (known: a, b, c)": the one wording of a name Find does not know.
  std::string UnknownModel(std::string_view name) const;
  const std::vector<ModelProfile>& models() const { return models_; }  // in the CSV's order
  // The models of one class, in catalogue order (empty for an unknown class).
  std::vector<const ModelProfile*> ModelsOfClass(std::string_view model_class) const;

 private:
  std::vector<ModelProfile> models_;
};

}  // namespace troupe
