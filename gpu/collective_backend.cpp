#include "gpu/collective_backend.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include "base/status_macros.hpp"

namespace troupe::gpu {

Status CheckSameLength(const std::vector<std::vector<float>>& buffers) {
  if (buffers.empty()) return Status::InvalidInput("all-reduce of no ranks");
  for (const std::vector<float>& b : buffers) {
    if (b.size() != buffers[0].size()) {
      return Status::InvalidInput("all-reduce: ranks hold buffers of different lengths");
    }
  }
  return Status::Ok();
}

namespace {

class EmulatedCollective final : public CollectiveBackend {
 public:
  explicit EmulatedCollective(const LinkModel& link) : link_(link) {}
  std::string_view name() const override { return "emulated"; }
  int max_ranks() const override { return std::numeric_limits<int>::max(); }
  Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) override {
    RETURN_IF_ERROR(CheckSameLength(*buffers));
    *seconds = RingAllReduceSeconds(static_cast<double>((*buffers)[0].size() * sizeof(float)),
                                    static_cast<int>(buffers->size()), link_);
    return Status::Ok();
  }

 private:
  LinkModel link_;
};

class CpuCollective final : public CollectiveBackend {
 public:
  std::string_view name() const override { return "cpu"; }
  int max_ranks() const override { return std::numeric_limits<int>::max(); }
  Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) override {
    RETURN_IF_ERROR(CheckSameLength(*buffers));
    const auto start = std::chrono::steady_clock::now();
    // Sum into rank 0 in rank order, then copy the sum to every other rank.
    std::vector<float>& sum = (*buffers)[0];
    for (size_t r = 1; r < buffers->size(); ++r) {
      const std::vector<float>& rank = (*buffers)[r];
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += rank[i];
    }
    for (size_t r = 1; r < buffers->size(); ++r) (*buffers)[r] = sum;
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Status::Ok();
  }
};

}  // namespace

double RingAllReduceSeconds(double bytes, int ranks, const LinkModel& link) {
  if (ranks <= 1) return 0;
  const double n = ranks;
  return 2 * (n - 1) / n * bytes / link.bytes_per_s + 2 * (n - 1) * link.latency_s;
}

std::unique_ptr<CollectiveBackend> MakeEmulatedCollective(const LinkModel& link) {
  return std::make_unique<EmulatedCollective>(link);
}

std::unique_ptr<CollectiveBackend> MakeCpuCollective() { return std::make_unique<CpuCollective>(); }

}  // namespace troupe::gpu
