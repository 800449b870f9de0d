// The golden int8 kernels, the 29-bit accumulator wrap and the seeded operand data (model/golden.h).
#include "model/golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

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
  EXPECT_EQ(golden_conv(s, filters, ifmap, kBits), expected);
}

TEST(GoldenConv, SquareFilterSlidesOverRowsAndColumns) {
  // ifmap 3x3 = 1..9, filter [[1,0],[0,-1]]: out = in[y][x] - in[y+1][x+1] = -4 everywhere
  const ConvShape s{3, 3, 1, 2, 2, 1, 1};
  const std::vector<std::int8_t> ifmap = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<std::int8_t> filter = {1, 0, 0, -1};
  EXPECT_EQ(golden_conv(s, filter, ifmap, kBits), (std::vector<std::int32_t>{-4, -4, -4, -4}));
}

TEST(GoldenConv, OneByOneFilterScalesEveryPixel) {
  const ConvShape s{4, 1, 1, 1, 1, 2, 1};
  const std::vector<std::int8_t> ifmap = {1, -2, 3, 127};
  const std::vector<std::int8_t> filters = {2, -128};
  EXPECT_EQ(golden_conv(s, filters, ifmap, kBits),
            (std::vector<std::int32_t>{2, -4, 6, 254, -128, 256, -384, -16256}));
}

TEST(GoldenMm, HandComputed) {
  // A is [W_A=3, H_A=2] (rows [1,2,3], [-1,0,4]); B is [W_B=2, H_B=3] (rows [1,-1], [2,0], [3,5])
  const MmShape s{3, 2, 2, 3};
  const std::vector<std::int8_t> a = {1, 2, 3, -1, 0, 4};
  const std::vector<std::int8_t> b = {1, -1, 2, 0, 3, 5};
  // C[0] = [1+4+9, -1+0+15] = [14, 14]; C[1] = [-1+0+12, 1+0+20] = [11, 21]
  EXPECT_EQ(golden_mm(s, a, b, kBits), (std::vector<std::int32_t>{14, 14, 11, 21}));
}

TEST(GoldenMm, VectorTimesMatrixWithExtremeValues) {
  const MmShape s{2, 1, 3, 2};
  const std::vector<std::int8_t> a = {-128, 127};
  const std::vector<std::int8_t> b = {-128, 127, 0, 127, -128, 1};
  // [-128*-128 + 127*127, -128*127 + 127*-128, 0 + 127] = [32513, -32512, 127]
  EXPECT_EQ(golden_mm(s, a, b, kBits), (std::vector<std::int32_t>{32513, -32512, 127}));
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
  EXPECT_EQ(golden_mm(s, a, b, kBits), (std::vector<std::int32_t>{-268419072, -268419072}));
  const MmShape s2{16383, 1, 1, 16383};  // 16384 * 16383 = 268419072 fits
  EXPECT_EQ(golden_mm(s2, std::vector<std::int8_t>(16383, -128), std::vector<std::int8_t>(16383, -128), kBits),
            (std::vector<std::int32_t>{268419072}));
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
