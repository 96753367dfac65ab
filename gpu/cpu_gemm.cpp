#include "gpu/cpu_gemm.hpp"

#include <algorithm>

namespace troupe::gpu {

void GemmRowMajor(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  // Rows of C in blocks that keep a block of B's rows in cache while every row of the block
  // streams over them; within a row, k ascending, so each C element sums in the loop's order.
  constexpr int64_t kRowBlock = 32;
  constexpr int64_t kDepthBlock = 128;
  std::fill(c, c + m * n, 0.0f);
  for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
    const int64_t i1 = std::min(m, i0 + kRowBlock);
    for (int64_t p0 = 0; p0 < k; p0 += kDepthBlock) {
      const int64_t p1 = std::min(k, p0 + kDepthBlock);
      for (int64_t i = i0; i < i1; ++i) {
        float* c_row = c + i * n;
        for (int64_t p = p0; p < p1; ++p) {
          const float a_ip = a[i * k + p];
          const float* b_row = b + p * n;
          for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
        }
      }
    }
  }
}

}  // namespace troupe::gpu
