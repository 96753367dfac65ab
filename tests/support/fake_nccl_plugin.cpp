// A stand-in for troupe_cuda_backends.so that lets the NCCL gang's protocol run on a machine
// without a GPU (NcclGangAcrossProcesses.*, loaded through $TROUPE_CUDA_BACKENDS): "cuda"
// compute is the CPU backend, the one-process "nccl" collective is the CPU one, and the
// cross-process communicator (gpu/nccl_gang.hpp) is a folder of files under
// $TROUPE_FAKE_NCCL_DIR:
//   - the unique id is 16 random bytes (then zeros); its hex names the gang's folder;
//   - joining writes join.<rank> and waits for all ranks' (like ncclCommInitRank);
//   - all-reduce k writes <k>.<rank> (renamed into place whole), waits for every rank's and adds
//     them in rank order, so every rank gets the same sum as the rank-order reference.
// It is the same build as the test's troupe (TROUPE_BUILD_ID), so the loader takes it. Nothing of
// CUDA or NCCL is exercised: only troupe's side of the protocol.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/status_macros.hpp"
#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/cuda_backends_abi.hpp"
#include "gpu/nccl_gang.hpp"

namespace troupe::gpu {
namespace {

namespace fs = std::filesystem;

Status NoGpu() { return Status::Internal("fake NCCL plugin: no GPU backends"); }

std::string Hex(const NcclUniqueIdBytes& id) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 16; ++i) {
    out += kDigits[id[i] >> 4];
    out += kDigits[id[i] & 15];
  }
  return out;
}

fs::path Root() {
  const char* dir = std::getenv("TROUPE_FAKE_NCCL_DIR");
  return dir != nullptr ? fs::path(dir) : fs::temp_directory_path() / "troupe-fake-nccl";
}

void WriteWhole(const fs::path& path, const std::vector<float>& values) {
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
  }
  fs::rename(partial, path);
}

class FileGang final : public NcclGangComm {
 public:
  FileGang(fs::path dir, const NcclRankPlan& plan, double timeout_s)
      : dir_(std::move(dir)), plan_(plan), timeout_s_(timeout_s) {}

  const NcclRankPlan& plan() const override { return plan_; }

  Status Join() {
    std::error_code error;
    fs::create_directories(dir_, error);
    for (int32_t i = 0; i < plan_.local_ranks; ++i) {
      WriteWhole(dir_ / ("join." + std::to_string(plan_.first_rank + i)), {});
    }
    return WaitForAll("join.");
  }

  Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) override {
    if (buffers->size() != static_cast<size_t>(plan_.local_ranks)) {
      return Status::InvalidInput("fake nccl gang: a buffer per local rank");
    }
    const auto began = std::chrono::steady_clock::now();
    const std::string round = std::to_string(round_++) + ".";
    for (int32_t i = 0; i < plan_.local_ranks; ++i) {
      WriteWhole(dir_ / (round + std::to_string(plan_.first_rank + i)), (*buffers)[i]);
    }
    RETURN_IF_ERROR(WaitForAll(round));
    std::vector<std::vector<float>> all;
    for (int32_t r = 0; r < plan_.nranks; ++r) {
      std::ifstream in(dir_ / (round + std::to_string(r)), std::ios::binary);
      std::vector<float> values((*buffers)[0].size());
      in.read(reinterpret_cast<char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
      if (in.gcount() != static_cast<std::streamsize>(values.size() * sizeof(float))) {
        return Status::InvalidInput("fake nccl gang: rank " + std::to_string(r) +
                                    " has a buffer of another length");
      }
      all.push_back(std::move(values));
    }
    double unused = 0;
    RETURN_IF_ERROR(MakeCpuCollective()->AllReduceSum(&all, &unused));
    for (std::vector<float>& buffer : *buffers) buffer = all[0];
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    return Status::Ok();
  }

 private:
  Status WaitForAll(const std::string& prefix) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    for (int32_t r = 0; r < plan_.nranks; ++r) {
      while (!fs::exists(dir_ / (prefix + std::to_string(r)))) {
        if (std::chrono::steady_clock::now() > deadline) {
          return Status::Internal("fake nccl gang: rank " + std::to_string(r) + " never wrote " +
                                  prefix);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return Status::Ok();
  }

  fs::path dir_;
  NcclRankPlan plan_;
  double timeout_s_;
  int64_t round_ = 0;
};

Status MakeCompute(std::unique_ptr<ComputeBackend>* out) {
  *out = MakeCpuComputeBackend();
  return Status::Ok();
}

Status MakeCollective(std::unique_ptr<CollectiveBackend>* out) {
  *out = MakeCpuCollective();
  return Status::Ok();
}

Status MakeUniqueId(NcclUniqueIdBytes* out) {
  std::random_device entropy;
  out->fill(0);
  for (size_t i = 0; i < 16; ++i) (*out)[i] = static_cast<uint8_t>(entropy());
  return Status::Ok();
}

Status MakeGangComm(const NcclGangOptions& options, std::unique_ptr<NcclGangComm>* out) {
  auto gang = std::make_unique<FileGang>(Root() / Hex(options.id), options.plan, options.timeout_s);
  RETURN_IF_ERROR(gang->Join());
  *out = std::move(gang);
  return Status::Ok();
}

const CudaBackendsTable kTable{
    .header = {kCudaBackendsAbi, TROUPE_BUILD_ID},
    .make_compute = &MakeCompute,
    .make_nccl_collective = &MakeCollective,
    .make_embedding = [](std::unique_ptr<EmbeddingBackend>*) { return NoGpu(); },
    .make_hbm_table = [](const paramserver::HbmConfig&,
                         std::unique_ptr<paramserver::HbmBackend>*) { return NoGpu(); },
    .append_devices = [](DeviceReport*) {},
    .measure_embedding = [](int64_t, int32_t, int64_t, int32_t, int,
                            EmbeddingMeasurement*) { return NoGpu(); },
    .measure_nccl_all_reduce = [](size_t, int, int, AllReduceMeasurement*) { return NoGpu(); },
    .measure_hash_shard = [](size_t, int, HashMeasurement*) { return NoGpu(); },
    .make_nccl_unique_id = &MakeUniqueId,
    .make_nccl_gang_comm = &MakeGangComm,
};

}  // namespace
}  // namespace troupe::gpu

extern "C" __attribute__((visibility("default"))) const troupe::gpu::CudaBackendsTable*
troupe_cuda_backends() {
  return &troupe::gpu::kTable;
}
