// The golden kernels' vector path for AVX-512 BW with VNNI (model/golden_vector.h); this file alone is compiled
// with -mavx512f -mavx512bw -mavx512vnni.
#include <immintrin.h>

#include "model/golden_vector_kernel.h"

namespace s2::golden_vector {
namespace {

struct Avx512Vnni {
  using Vec = __m512i;
  static constexpr int kLanes = 16;
  static Vec zero() { return _mm512_setzero_si512(); }
  static Vec load(const std::uint32_t* p) { return _mm512_loadu_si512(p); }
  static Vec broadcast(std::uint32_t w) { return _mm512_set1_epi32(static_cast<int>(w)); }
  // vpdpwssd, not vpdpwssds: the sum wraps modulo 2^32 instead of saturating
  static Vec dot(Vec acc, Vec pairs, Vec w) { return _mm512_dpwssd_epi32(acc, pairs, w); }
  static void store(std::uint32_t* p, Vec v) { _mm512_storeu_si512(p, v); }
};

}  // namespace

// 32 vector registers: 16 accumulators leave room for the input vectors and the broadcast weight
const PairDotIsa kAvx512Vnni{Avx512Vnni::kLanes, 16, &run<Avx512Vnni>};

}  // namespace s2::golden_vector
