// The compute devices this build of troupe can use: the CPU reference backend always, CUDA GPUs
// when built with CUDA (cmake/TroupeCuda.cmake) and a driver answers, and the NCCL version when
// built with NCCL. A CUDA build on a machine without a GPU lists the CPU and says why no GPU
// is listed.
#pragma once

#include <string>
#include <vector>

namespace troupe::gpu {

struct DeviceInfo {
  std::string kind;  // "cpu" | "cuda"
  int index = 0;
  std::string name;
  double memory_gb = 0;
};

struct DeviceReport {
  std::vector<DeviceInfo> devices;
  bool built_with_cuda = false;
  bool built_with_nccl = false;
  std::string cuda_status;  // "" when CUDA answered, else why it did not (driver, no device)
  std::string nccl_version;
};

DeviceReport ListDevices();
std::string FormatDeviceReport(const DeviceReport& report);

}  // namespace troupe::gpu
