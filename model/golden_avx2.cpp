// The golden kernels' vector path for AVX2 (model/golden_vector.h); this file alone is compiled with -mavx2.
#include <immintrin.h>

#include "model/golden_vector_kernel.h"

namespace s2::golden_vector {
namespace {

struct Avx2 {
  using Vec = __m256i;
  static constexpr int kLanes = 8;
  static Vec zero() { return _mm256_setzero_si256(); }
  static Vec load(const std::uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Vec broadcast(std::uint32_t w) { return _mm256_set1_epi32(static_cast<int>(w)); }
  static Vec dot(Vec acc, Vec pairs, Vec w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, w)); }
  static void store(std::uint32_t* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};

}  // namespace

// 16 vector registers: 8 accumulators leave room for the input vectors and the broadcast weight
const PairDotIsa kAvx2{Avx2::kLanes, 8, &run<Avx2>};

}  // namespace s2::golden_vector
