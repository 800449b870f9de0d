// The golden int8 kernels, the 29-bit accumulator wrap and the seeded operand data (model/golden.h).
#include "model/golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/splitmix64.h"

namespace s2 {
namespace {

constexpr int kBits = 29;
constexpr std::int32_t kTop = (1 << 28) - 1;  // largest 29-bit value
constexpr std::int32_t kBottom = -(1 << 28);  // smallest 29-bit value

// ---------------------------------------------------------------- golden kernels, small hand-computed cases

TEST(GoldenConv, HandComputedTwoChannelsTwoFilters) {
  // ifmap [Wi=3, Hi=2, D=2], filters [Wf=2, Hf=1, D=2, C=2]
  const ConvShape s{3, 2, 2, 2, 1, 2, 1};
  const std::vector<std::int8_t> ifmap = {1, 2, 3, 4, 5, 6,      // d=0: rows y=0, y=1
                                          -1, 0, 1, 2, -2, 3};   // d=1
  const std::vector<std::int8_t> filters = {1, 2, 3, -1,     // c=0: d=0 [1,2], d=1 [3,-1]
                                            -1, -1, 0, 2};   // c=1: d=0 [-1,-1], d=1 [0,2]
  // out[c][y][x] = sum_d sum_kx w[c][d][kx] * in[d][y][x+kx], worked by hand:
  //   c0 y0: 1*1+2*2+3*-1-1*0 = 2,   1*2+2*3+3*0-1*1 = 7
  //   c0 y1: 1*4+2*5+3*2-1*-2 = 22,  1*5+2*6+3*-2-1*3 = 8
  //   c1 y0: -1-2+0+2*0 = -3,        -2-3+0+2*1 = -3
  //   c1 y1: -4-5+0+2*-2 = -13,      -5-6+0+2*3 = -5
  const std::vector<std::int32_t> expected = {2, 7, 22, 8, -3, -3, -13, -5};
  for (GoldenKernel k : golden_kernels()) EXPECT_EQ(golden_conv(s, filters, ifmap, kBits, k), expected) << golden_kernel_name(k);
}

TEST(GoldenConv, SquareFilterSlidesOverRowsAndColumns) {
  // ifmap 3x3 = 1..9, filter [[1,0],[0,-1]]: out = in[y][x] - in[y+1][x+1] = -4 everywhere
  const ConvShape s{3, 3, 1, 2, 2, 1, 1};
  const std::vector<std::int8_t> ifmap = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<std::int8_t> filter = {1, 0, 0, -1};
  for (GoldenKernel k : golden_kernels())
    EXPECT_EQ(golden_conv(s, filter, ifmap, kBits, k), (std::vector<std::int32_t>{-4, -4, -4, -4})) << golden_kernel_name(k);
}

TEST(GoldenConv, OneByOneFilterScalesEveryPixel) {
  const ConvShape s{4, 1, 1, 1, 1, 2, 1};
  const std::vector<std::int8_t> ifmap = {1, -2, 3, 127};
  const std::vector<std::int8_t> filters = {2, -128};
  for (GoldenKernel k : golden_kernels())
    EXPECT_EQ(golden_conv(s, filters, ifmap, kBits, k), (std::vector<std::int32_t>{2, -4, 6, 254, -128, 256, -384, -16256}))
        << golden_kernel_name(k);
}

TEST(GoldenMm, HandComputed) {
  // A is [W_A=3, H_A=2] (rows [1,2,3], [-1,0,4]); B is [W_B=2, H_B=3] (rows [1,-1], [2,0], [3,5])
  const MmShape s{3, 2, 2, 3};
  const std::vector<std::int8_t> a = {1, 2, 3, -1, 0, 4};
  const std::vector<std::int8_t> b = {1, -1, 2, 0, 3, 5};
  // C[0] = [1+4+9, -1+0+15] = [14, 14]; C[1] = [-1+0+12, 1+0+20] = [11, 21]
  for (GoldenKernel k : golden_kernels())
    EXPECT_EQ(golden_mm(s, a, b, kBits, k), (std::vector<std::int32_t>{14, 14, 11, 21})) << golden_kernel_name(k);
}

TEST(GoldenMm, VectorTimesMatrixWithExtremeValues) {
  const MmShape s{2, 1, 3, 2};
  const std::vector<std::int8_t> a = {-128, 127};
  const std::vector<std::int8_t> b = {-128, 127, 0, 127, -128, 1};
  // [-128*-128 + 127*127, -128*127 + 127*-128, 0 + 127] = [32513, -32512, 127]
  for (GoldenKernel k : golden_kernels())
    EXPECT_EQ(golden_mm(s, a, b, kBits, k), (std::vector<std::int32_t>{32513, -32512, 127})) << golden_kernel_name(k);
}

// ---------------------------------------------------------------- the 29-bit accumulator

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }  // the sum modulo 2^32

TEST(WrapAccumulator, EdgeValues) {
  EXPECT_EQ(wrap_accumulator(0, kBits), 0);
  EXPECT_EQ(wrap_accumulator(1, kBits), 1);
  EXPECT_EQ(wrap_accumulator(u32(-1), kBits), -1);
  EXPECT_EQ(wrap_accumulator(u32(kTop), kBits), kTop);             // 2^28 - 1 stays
  EXPECT_EQ(wrap_accumulator(u32(kBottom), kBits), kBottom);       // -2^28 stays
  EXPECT_EQ(wrap_accumulator(u32(1 << 28), kBits), kBottom);       // 2^28 -> -2^28
  EXPECT_EQ(wrap_accumulator(u32(std::int64_t(kBottom) - 1), kBits), kTop);  // -2^28 - 1 -> 2^28 - 1
  EXPECT_EQ(wrap_accumulator(u32(1 << 29), kBits), 0);             // 2^29 -> 0
  EXPECT_EQ(wrap_accumulator(u32((1 << 29) + 5), kBits), 5);
}

TEST(WrapAccumulator, SumsAreTakenModulo2To32) {
  // only the low 29 bits count, sign-extended from bit 28
  EXPECT_EQ(wrap_accumulator(0xffffffffu, kBits), -1);
  EXPECT_EQ(wrap_accumulator(0x80000000u, kBits), 0);
  EXPECT_EQ(wrap_accumulator(0x90000005u, kBits), 0x10000005 - (1 << 29));  // bit 28 set: negative
  EXPECT_EQ(wrap_accumulator(0xe0000000u + 7u, kBits), 7);
  // a sum that overflowed 32 bits on the way gives the same as the exact sum
  const std::uint32_t big = 0xfffffff0u;
  EXPECT_EQ(wrap_accumulator(big + 0x20u, kBits), wrap_accumulator(0x10u, kBits));
}

TEST(WrapAccumulator, OtherWidths) {
  EXPECT_EQ(wrap_accumulator(0x7fffffffu, 32), 0x7fffffff);
  EXPECT_EQ(wrap_accumulator(0x80000000u, 32), INT32_MIN);
  EXPECT_EQ(wrap_accumulator(0x80u, 8), -128);
  EXPECT_EQ(wrap_accumulator(0x17fu, 8), 127);
}

TEST(GoldenWrap, AllMinConvolutionOverflows29BitsAndWraps) {
  // conv [9,9,203] x [9,9,203,1], every operand -128: each product is +16384 and the one output sums
  // 16384 * 81 * 203 = 269402112 > 2^28 - 1, so the accumulator wraps to 269402112 - 2^29 = -267468800.
  Task t;
  t.op = Op::Conv;
  t.conv = ConvShape{9, 9, 203, 9, 9, 1, 1};
  t.data = DataPattern::AllMin;
  const std::int64_t exact = std::int64_t(16384) * 81 * 203;
  ASSERT_EQ(exact, 269402112);
  ASSERT_GT(exact, kTop);
  std::vector<PeOperands> ops;
  for (int p = 0; p < kPesPerQpe; ++p) ops.push_back(make_operands(t, p));
  const HwConfig cfg;
  const std::vector<std::int32_t> r = golden_results(t, 0, ops, cfg);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], -267468800);
  EXPECT_EQ(r[0], exact - (std::int64_t(1) << 29));
  // one channel less deep stays inside the range: 16384 * 81 * 202 = 268075008
  t.conv.D = 202;
  for (int p = 0; p < kPesPerQpe; ++p) ops[static_cast<std::size_t>(p)] = make_operands(t, p);
  EXPECT_EQ(golden_results(t, 0, ops, cfg)[0], 268075008);
}

TEST(GoldenWrap, MinMaxConvolutionUnderflowsAndWraps) {
  // operand A -128, operand B 127: product -16256; 81 * 204 of them = -268614144 < -2^28 -> +268256768
  Task t;
  t.op = Op::Conv;
  t.conv = ConvShape{10, 9, 204, 9, 9, 2, 1};
  t.data = DataPattern::MinMax;
  std::vector<PeOperands> ops;
  for (int p = 0; p < kPesPerQpe; ++p) ops.push_back(make_operands(t, p));
  const std::vector<std::int32_t> r = golden_results(t, 1, ops, HwConfig{});
  ASSERT_EQ(r.size(), 4u);  // 2 filters x 1 row x 2 columns
  for (std::int32_t v : r) EXPECT_EQ(v, -268614144 + (1 << 29));
}

TEST(GoldenWrap, AllMinMatrixMultiplicationWraps) {
  // W_A = 16385 products of 16384: 268451840 > 2^28 - 1 -> 268451840 - 2^29 = -268419072
  const MmShape s{16385, 1, 2, 16385};
  const std::vector<std::int8_t> a(16385, -128), b(16385 * 2, -128);
  const MmShape s2{16383, 1, 1, 16383};  // 16384 * 16383 = 268419072 fits
  for (GoldenKernel k : golden_kernels()) {
    EXPECT_EQ(golden_mm(s, a, b, kBits, k), (std::vector<std::int32_t>{-268419072, -268419072})) << golden_kernel_name(k);
    EXPECT_EQ(golden_mm(s2, std::vector<std::int8_t>(16383, -128), std::vector<std::int8_t>(16383, -128), kBits, k),
              (std::vector<std::int32_t>{268419072}))
        << golden_kernel_name(k);
  }
}

// ---------------------------------------------------------------- the vector kernels against the scalar reference

TEST(GoldenKernels, EveryVectorUnitOfThisCpuIsUsed) {
  // so that the comparisons below cannot pass by comparing no vector kernel on a CPU that has one
  const std::vector<GoldenKernel>& k = golden_kernels();
  ASSERT_FALSE(k.empty());
  EXPECT_EQ(k.front(), GoldenKernel::Scalar);
  auto has = [&](GoldenKernel x) { return std::find(k.begin(), k.end(), x) != k.end(); };
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_EQ(has(GoldenKernel::Avx2), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(has(GoldenKernel::Avx512Vnni), __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                                   __builtin_cpu_supports("avx512vnni"));
#else
  EXPECT_EQ(k.size(), 1u);
#endif
}

// How a comparison's operands are drawn: uniform, or the extremes that make the accumulator wrap.
enum class Fill { Random, AllMin, MinMax, Extremes };

std::vector<std::int8_t> fill(std::size_t n, Fill f, bool operand_a, SplitMix64& rng) {
  std::vector<std::int8_t> v(n);
  for (auto& x : v) {
    const std::uint64_t r = rng.next();
    switch (f) {
      case Fill::Random: x = static_cast<std::int8_t>(r >> 56); break;
      case Fill::AllMin: x = -128; break;
      case Fill::MinMax: x = operand_a ? std::int8_t(-128) : std::int8_t(127); break;
      case Fill::Extremes: x = (r >> 63) ? std::int8_t(-128) : std::int8_t(127); break;
    }
  }
  return v;
}

std::string describe(const ConvShape& s) {
  return "conv Wi=" + std::to_string(s.Wi) + " Hi=" + std::to_string(s.Hi) + " D=" + std::to_string(s.D) +
         " Wf=" + std::to_string(s.Wf) + " Hf=" + std::to_string(s.Hf) + " C=" + std::to_string(s.C) +
         " stride=" + std::to_string(s.stride);
}

// Every vector kernel of this CPU gives the scalar reference's results, value for value; returns how many
// results wrapped (the exact sum outside the accumulator's range), for the callers that need wrapping.
std::size_t expect_conv_like_scalar(const ConvShape& s, Fill f, SplitMix64& rng) {
  const std::vector<std::int8_t> w = fill(std::size_t(s.C) * s.D * s.Hf * s.Wf, f, true, rng);
  const std::vector<std::int8_t> in = fill(std::size_t(s.D) * s.Hi * s.Wi, f, false, rng);
  const std::vector<std::int32_t> want = golden_conv_scalar(s, w, in, kBits);
  for (GoldenKernel k : golden_kernels()) EXPECT_EQ(golden_conv(s, w, in, kBits, k), want) << golden_kernel_name(k) << " " << describe(s);
  // the exact sums, in 64 bits, for the count of wrapped results
  const int st = std::max(1, s.stride), Wo = (s.Wi - s.Wf) / st + 1, Ho = (s.Hi - s.Hf) / st + 1;
  std::size_t wrapped = 0;
  for (int c = 0; c < s.C; ++c)
    for (int y = 0; y < Ho; ++y)
      for (int x = 0; x < Wo; ++x) {
        std::int64_t sum = 0;
        for (int d = 0; d < s.D; ++d)
          for (int ky = 0; ky < s.Hf; ++ky)
            for (int kx = 0; kx < s.Wf; ++kx)
              sum += std::int64_t(w[((std::size_t(c) * s.D + d) * s.Hf + ky) * s.Wf + kx]) *
                     in[(std::size_t(d) * s.Hi + std::size_t(y) * st + ky) * s.Wi + std::size_t(x) * st + kx];
        if (sum > kTop || sum < kBottom) ++wrapped;
      }
  return wrapped;
}

TEST(GoldenKernels, ConvolutionLikeScalarOnRandomShapes) {
  SplitMix64 rng{20261127};
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng.next() % std::uint64_t(hi - lo + 1)); };
  for (int i = 0; i < 400; ++i) {
    ConvShape s;
    s.Wf = pick(1, 7);
    s.Hf = pick(1, 7);
    s.stride = pick(1, 4);
    s.Wi = s.Wf + pick(0, 70);  // odd widths, one output column, and past two vectors of 16
    s.Hi = s.Hf + pick(0, 9);
    s.D = i % 10 == 0 ? pick(60, 300) : pick(1, 9);  // odd depths leave a channel pair half empty
    s.C = i % 7 == 0 ? pick(20, 70) : pick(1, 10);   // one channel, part groups of 4 and 8
    expect_conv_like_scalar(s, i % 5 == 0 ? Fill::Extremes : Fill::Random, rng);
  }
}

TEST(GoldenKernels, ConvolutionLikeScalarOnTheNetworksShapes) {
  SplitMix64 rng{7};
  // 1x1, a lone output, widths at and around whole vectors, VGG-16's 3x3 with padding, ResNet's 7x7 and 1x1
  // at stride 2, a deep narrow map
  const ConvShape shapes[] = {{1, 1, 1, 1, 1, 1, 1},       {1, 1, 5, 1, 1, 3, 1},       {3, 3, 2, 3, 3, 1, 1},
                              {18, 3, 3, 3, 3, 5, 1},      {17, 2, 4, 1, 2, 9, 1},      {34, 4, 3, 3, 3, 8, 1},
                              {66, 3, 7, 3, 3, 16, 1},     {226, 5, 3, 3, 3, 64, 1},    {16, 16, 512, 3, 3, 24, 1},
                              {30, 5, 256, 3, 3, 4, 1},    {37, 9, 3, 7, 7, 6, 2},      {56, 3, 64, 1, 1, 12, 2},
                              {15, 15, 8, 3, 3, 9, 2},     {9, 2, 1000, 1, 1, 10, 1},   {4, 4, 1, 4, 4, 2, 3}};
  for (const ConvShape& s : shapes) expect_conv_like_scalar(s, Fill::Random, rng);
}

TEST(GoldenKernels, ConvolutionLikeScalarWhenTheAccumulatorWraps) {
  SplitMix64 rng{3};
  // 3x3 x 2048 channels: 18432 products of +16384 (-128 x -128) = 301989888 > 2^28 - 1, every result wraps;
  // -128 x 127 the same way below -2^28; random extremes on the way
  const ConvShape deep{7, 5, 2048, 3, 3, 9, 1};
  EXPECT_EQ(expect_conv_like_scalar(deep, Fill::AllMin, rng), 9u * 3 * 5);
  EXPECT_EQ(expect_conv_like_scalar(deep, Fill::MinMax, rng), 9u * 3 * 5);
  expect_conv_like_scalar(deep, Fill::Extremes, rng);
  const ConvShape strided{21, 9, 4100, 2, 2, 5, 2};  // 16400 taps at stride 2
  EXPECT_EQ(expect_conv_like_scalar(strided, Fill::AllMin, rng), 5u * 4 * 10);
}

TEST(GoldenKernels, MatrixMultiplicationLikeScalar) {
  SplitMix64 rng{11};
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng.next() % std::uint64_t(hi - lo + 1)); };
  for (int i = 0; i < 200; ++i) {
    MmShape s;
    s.W_A = s.H_B = i % 10 == 0 ? pick(1000, 5000) : pick(1, 300);
    s.H_A = i % 3 == 0 ? 1 : pick(1, 20);  // the network's fully connected layers: a vector times a matrix
    s.W_B = pick(1, 150);
    const Fill f = i % 4 == 0 ? Fill::Extremes : Fill::Random;
    const std::vector<std::int8_t> a = fill(std::size_t(s.H_A) * s.W_A, f, true, rng);
    const std::vector<std::int8_t> b = fill(std::size_t(s.H_B) * s.W_B, f, false, rng);
    const std::vector<std::int32_t> want = golden_mm_scalar(s, a, b, kBits);
    for (GoldenKernel k : golden_kernels())
      EXPECT_EQ(golden_mm(s, a, b, kBits, k), want) << golden_kernel_name(k) << " mm W_A=" << s.W_A << " H_A=" << s.H_A
                                                    << " W_B=" << s.W_B;
  }
}

TEST(GoldenKernels, MatrixMultiplicationWrapsPast32Bits) {
  // 2^18 + 3 products of +16384: the exact sum 4295016448 passes 2^32 too; modulo 2^32 it is 49152, in 29 bits
  // still 49152: the lanes' 32-bit sums wrap as the scalar kernel's do
  const int n = (1 << 18) + 3;
  const MmShape s{n, 2, 33, n};
  const std::vector<std::int8_t> a(std::size_t(2) * n, -128), b(std::size_t(n) * 33, -128);
  const std::vector<std::int32_t> want(2 * 33, 49152);
  ASSERT_EQ(golden_mm_scalar(s, a, b, kBits), want);
  for (GoldenKernel k : golden_kernels()) EXPECT_EQ(golden_mm(s, a, b, kBits, k), want) << golden_kernel_name(k);
}

// ---------------------------------------------------------------- seeded operands

Task small_conv(std::uint64_t seed) {
  Task t;
  t.op = Op::Conv;
  t.conv = ConvShape{20, 5, 3, 3, 3, 6, 1};
  t.seed = seed;
  return t;
}

TEST(MakeOperands, SizesFollowTheShape) {
  const PeOperands c = make_operands(small_conv(1), 0);
  EXPECT_EQ(c.a.size(), 6u * 3 * 3 * 3);  // C * D * Hf * Wf
  EXPECT_EQ(c.b.size(), 3u * 5 * 20);     // D * Hi * Wi
  Task m;
  m.op = Op::Mm;
  m.mm = MmShape{7, 3, 5, 7};
  const PeOperands o = make_operands(m, 2);
  EXPECT_EQ(o.a.size(), 3u * 7);  // H_A * W_A
  EXPECT_EQ(o.b.size(), 7u * 5);  // H_B * W_B
}

TEST(MakeOperands, DeterministicForTheSameTaskAndPe) {
  for (int p = 0; p < kPesPerQpe; ++p) {
    const PeOperands x = make_operands(small_conv(42), p);
    const PeOperands y = make_operands(small_conv(42), p);
    EXPECT_EQ(x.a, y.a);
    EXPECT_EQ(x.b, y.b);
  }
}

TEST(MakeOperands, DiffersPerPeAndPerSeed) {
  const PeOperands p0 = make_operands(small_conv(42), 0);
  for (int p = 1; p < kPesPerQpe; ++p) {
    const PeOperands q = make_operands(small_conv(42), p);
    EXPECT_NE(p0.a, q.a) << "PE " << p;
    EXPECT_NE(p0.b, q.b) << "PE " << p;
  }
  const PeOperands other_seed = make_operands(small_conv(43), 0);
  EXPECT_NE(p0.a, other_seed.a);
  EXPECT_NE(p0.b, other_seed.b);
  // operand A and operand B of one PE are different streams
  EXPECT_FALSE(std::equal(p0.a.begin(), p0.a.end(), p0.b.begin()));
}

TEST(MakeOperands, RandomDataSpansTheInt8Range) {
  Task t = small_conv(7);
  t.conv.D = 64;  // 6400 ifmap bytes
  const PeOperands o = make_operands(t, 0);
  const auto [lo, hi] = std::minmax_element(o.b.begin(), o.b.end());
  EXPECT_LT(*lo, -120);
  EXPECT_GT(*hi, 120);
}

TEST(MakeOperands, ExtremePatterns) {
  Task t = small_conv(1);
  auto all_equal = [](const std::vector<std::int8_t>& v, int x) {
    return std::all_of(v.begin(), v.end(), [x](std::int8_t e) { return e == x; });
  };
  t.data = DataPattern::AllMin;
  PeOperands o = make_operands(t, 3);
  EXPECT_TRUE(all_equal(o.a, -128));
  EXPECT_TRUE(all_equal(o.b, -128));
  t.data = DataPattern::AllMax;
  o = make_operands(t, 3);
  EXPECT_TRUE(all_equal(o.a, 127));
  EXPECT_TRUE(all_equal(o.b, 127));
  t.data = DataPattern::MinMax;
  o = make_operands(t, 3);
  EXPECT_TRUE(all_equal(o.a, -128));
  EXPECT_TRUE(all_equal(o.b, 127));
}

TEST(GoldenResults, OperandAComesFromTheSourcePe) {
  Task t = small_conv(5);
  t.a_src_shift = 1;  // PE i takes its weights from PE (i+1) mod 4
  std::vector<PeOperands> ops;
  for (int p = 0; p < kPesPerQpe; ++p) ops.push_back(make_operands(t, p));
  const HwConfig cfg;
  for (int p = 0; p < kPesPerQpe; ++p) {
    const int src = (p + 1) % kPesPerQpe;
    EXPECT_EQ(golden_results(t, p, ops, cfg),
              golden_conv(t.conv, ops[static_cast<std::size_t>(src)].a, ops[static_cast<std::size_t>(p)].b, kBits));
  }
  Task m;
  m.op = Op::Mm;
  m.mm = MmShape{9, 5, 17, 9};
  m.a_src_shift = 3;
  std::vector<PeOperands> mops;
  for (int p = 0; p < kPesPerQpe; ++p) mops.push_back(make_operands(m, p));
  EXPECT_EQ(golden_results(m, 2, mops, cfg), golden_mm(m.mm, mops[1].a, mops[2].b, kBits));
}

}  // namespace
}  // namespace s2
