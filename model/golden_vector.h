// Internal to the golden kernels (model/golden.cpp): the vector path's inner loop, compiled once per
// instruction set (golden_avx2.cpp, golden_avx512.cpp) and chosen at run time, so one binary runs on any x86-64.
// Operands are int16 pairs in 32-bit words (channel 2p in the low half, 2p+1 in the high half): the
// multiply-add of a pair of pairs is exact (|product| <= 2^14) and the sums wrap modulo 2^32 in every lane
// like the scalar kernels' unsigned adds, so the result is the same whatever the order of the steps.
#pragma once

#include <cstddef>
#include <cstdint>

namespace s2::golden_vector {

// sums[r * sums_stride + x] (+)= sum over steps s of the pair dot product of input[offsets[s] + x] and
// weights[s * rows + r], for r < rows and x < width; width is a whole number of lanes * vectors and the input
// is readable (zero-padded) that far. With `accumulate` the sums go on from what `sums` holds.
struct PairDotJob {
  const std::uint32_t* input = nullptr;
  const std::size_t* offsets = nullptr;  // in words, one per step
  const std::uint32_t* weights = nullptr;
  std::size_t steps = 0;
  int rows = 1;     // output channels at once: 1, 4 or 8
  int vectors = 1;  // vectors of output columns at once: 1, 2 or 4
  int width = 0;
  std::uint32_t* sums = nullptr;
  std::size_t sums_stride = 0;
  bool accumulate = false;
};

// One instruction set's inner loop: its lanes (32-bit words per vector) and how many accumulators it keeps in
// registers (rows * vectors at most).
struct PairDotIsa {
  int lanes;
  int accumulators;
  void (*run)(const PairDotJob&);
};

#if defined(__x86_64__) || defined(__i386__)
extern const PairDotIsa kAvx2;        // AVX2: vpmaddwd, then vpaddd
extern const PairDotIsa kAvx512Vnni;  // AVX-512 BW with VNNI: vpdpwssd (non-saturating)
#endif

}  // namespace s2::golden_vector
