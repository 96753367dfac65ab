// GemmRowMajor: the CPU reference of one GEMM, C = A · B, all row-major (A m × k, B k × n,
// C m × n). The compute backend's CPU side runs its step chain with it; tests check it against
// the textbook triple loop. The k loop is blocked and innermost over n so the compiler vectorises
// it; summation order per element is k ascending, as in the triple loop.
#pragma once

#include <cstdint>

namespace troupe::gpu {

void GemmRowMajor(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);

}  // namespace troupe::gpu
