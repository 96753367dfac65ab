#include "gpu/devices.hpp"

#include <sstream>
#include <thread>

#include "gpu/cuda_backends.hpp"

namespace troupe::gpu {

DeviceReport ListDevices() {
  DeviceReport report;
  report.devices.push_back(DeviceInfo{
      "cpu", 0,
      "CPU reference backend (" + std::to_string(std::thread::hardware_concurrency()) + " threads)",
      0});
#ifdef TROUPE_HAVE_CUDA
  report.built_with_cuda = true;
  // The GPUs come from the plugin (gpu/cuda_backends.hpp): listing them loads it.
  const CudaBackendsTable* table = nullptr;
  if (Status s = LoadCudaBackends(&table); s.ok()) {
    table->append_devices(&report);
  } else {
    report.cuda_status = s.message();
  }
#else
  report.cuda_status = "built without CUDA";
#endif
#ifdef TROUPE_HAVE_NCCL
  report.built_with_nccl = true;
#endif
  return report;
}

std::string FormatDeviceReport(const DeviceReport& report) {
  std::ostringstream out;
  for (const DeviceInfo& d : report.devices) {
    out << "  " << d.kind << ":" << d.index << "  " << d.name;
    if (d.memory_gb > 0) out << ", " << d.memory_gb << " GB";
    out << "\n";
  }
  if (!report.cuda_status.empty()) out << "  cuda: " << report.cuda_status << "\n";
  if (report.built_with_nccl) out << "  nccl: " << report.nccl_version << "\n";
  return out.str();
}

}  // namespace troupe::gpu
