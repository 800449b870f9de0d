// Internal to golden_avx2.cpp and golden_avx512.cpp: the vector path's inner loop (model/golden_vector.h),
// written once over an instruction set's vector type V. Included only by the files compiled for that
// instruction set; everything here has internal linkage and uses no library templates, so none of its code can
// be chosen by the linker for a caller on a CPU without that instruction set.
#pragma once

#include "model/golden_vector.h"

namespace s2::golden_vector {
namespace {

// R output channels times XV vectors of output columns accumulate in registers over every step; each step
// loads XV input vectors once and multiplies them with R broadcast weight pairs.
template <class V, int R, int XV>
void pair_dot(const PairDotJob& j) {
  constexpr int kBlock = V::kLanes * XV;
  for (int x = 0; x < j.width; x += kBlock) {
    typename V::Vec acc[XV][R];
    for (int v = 0; v < XV; ++v)
      for (int r = 0; r < R; ++r)
        acc[v][r] = j.accumulate ? V::load(j.sums + std::size_t(r) * j.sums_stride + x + v * V::kLanes) : V::zero();
    const std::uint32_t* in = j.input + x;
    for (std::size_t s = 0; s < j.steps; ++s) {
      const std::uint32_t* p = in + j.offsets[s];
      typename V::Vec pairs[XV];
      for (int v = 0; v < XV; ++v) pairs[v] = V::load(p + v * V::kLanes);
      const std::uint32_t* w = j.weights + s * R;
      for (int r = 0; r < R; ++r) {
        const typename V::Vec wr = V::broadcast(w[r]);
        for (int v = 0; v < XV; ++v) acc[v][r] = V::dot(acc[v][r], pairs[v], wr);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < XV; ++v) V::store(j.sums + std::size_t(r) * j.sums_stride + x + v * V::kLanes, acc[v][r]);
  }
}

template <class V, int R>
void pair_dot_rows(const PairDotJob& j) {
  switch (j.vectors) {
    case 4: pair_dot<V, R, 4>(j); break;
    case 2: pair_dot<V, R, 2>(j); break;
    default: pair_dot<V, R, 1>(j); break;
  }
}

template <class V>
void run(const PairDotJob& j) {
  switch (j.rows) {
    case 8: pair_dot_rows<V, 8>(j); break;
    case 4: pair_dot_rows<V, 4>(j); break;
    default: pair_dot_rows<V, 1>(j); break;
  }
}

}  // namespace
}  // namespace s2::golden_vector
