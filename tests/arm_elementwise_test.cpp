// The ARM's element-wise operations on int8 maps (model/pe/arm_ops.h: Table8, Affine8, AddScaled8, Mul8,
// ChannelMul8), directed: values worked out by hand from docs/real_networks.md's integers, saturation, the
// rounding of their shifts, a ReLU, their SRAM bounds, and the clocks and SRAM bytes they are charged.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "model/hw_config.h"
#include "model/pe/arm_ops.h"

using namespace s2;

namespace {

// One plane of 2 rows of 3 values at 0 (row stride 4, plane stride 8) and, for two-map operations, the second
// map at 32 laid out alike.
ArmCommand two_by_three(ArmOpKind k) {
  ArmCommand c;
  c.kind = k;
  c.planes = 1;
  c.height = 2;
  c.width = 3;
  c.src_row_stride = c.dst_row_stride = 4;
  c.src_plane_stride = c.dst_plane_stride = 8;
  return c;
}
void put(std::vector<std::uint8_t>& sram, std::size_t at, std::initializer_list<int> rows_of_three) {
  std::size_t i = 0;
  for (int v : rows_of_three) sram[at + (i / 3) * 4 + i % 3] = static_cast<std::uint8_t>(static_cast<std::int8_t>(v)), ++i;
}
std::vector<int> get(const std::vector<std::uint8_t>& sram, std::size_t at) {
  std::vector<int> v;
  for (std::size_t i = 0; i < 6; ++i) v.push_back(static_cast<std::int8_t>(sram[at + (i / 3) * 4 + i % 3]));
  return v;
}
void put32(std::vector<std::uint8_t>& sram, std::size_t at, std::int32_t v) { std::memcpy(sram.data() + at, &v, 4); }

}  // namespace

TEST(ArmElementwise, ATableMapsEveryValueThroughItsPlanesTable) {
  std::vector<std::uint8_t> sram(1024, 0);
  ArmCommand c = two_by_three(ArmOpKind::Table8);
  c.planes = 2;
  c.table = 256;
  c.table_plane_step = 256;  // one table per plane: plane 0 negates, plane 1 adds one (saturating)
  for (int x = -128; x < 128; ++x) {
    sram[256 + std::size_t(x + 128)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(x == -128 ? 127 : -x));
    sram[512 + std::size_t(x + 128)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(x == 127 ? 127 : x + 1));
  }
  put(sram, 0, {-128, -1, 0, 5, 100, 127});
  put(sram, 8, {-128, -1, 0, 5, 100, 127});
  arm_apply(c, sram.data(), sram.size());
  EXPECT_EQ(get(sram, 0), (std::vector<int>{127, 1, 0, -5, -100, -127}));
  EXPECT_EQ(get(sram, 8), (std::vector<int>{-127, 0, 1, 6, 101, 127}));
  c.table_plane_step = 0;  // one table for both planes
  put(sram, 8, {3, 3, 3, 3, 3, 3});
  arm_apply(c, sram.data(), sram.size());
  EXPECT_EQ(get(sram, 8), (std::vector<int>{-3, -3, -3, -3, -3, -3}));
  const ArmOpClocks k;
  EXPECT_EQ(arm_op_cycles(c, k), std::uint64_t(12 * k.table_per_pixel));
  EXPECT_EQ(arm_op_sram_bytes(c).read, 24u);     // a value and its table entry each
  EXPECT_EQ(arm_op_sram_bytes(c).written, 12u);
  c.table = static_cast<std::uint32_t>(sram.size()) - 255;  // the table runs past the SRAM
  EXPECT_THROW(arm_apply(c, sram.data(), sram.size()), std::out_of_range);
}

TEST(ArmElementwise, AnAffineMultipliesAddsAndShiftsPerPlaneIn32Bits) {
  std::vector<std::uint8_t> sram(256, 0);
  ArmCommand c = two_by_three(ArmOpKind::Affine8);
  c.table = 64;
  c.shift = 4;
  put32(sram, 64, 24);  // y = (24 x + 8) >> 4 = floor(1.5 x + 0.5)
  put32(sram, 68, 8);
  put(sram, 0, {-128, -3, -1, 0, 1, 100});
  arm_apply(c, sram.data(), sram.size());
  // -128: -3064 >> 4 = -192 -> -128; -3: -64 >> 4 = -4; -1: -16 >> 4 = -1; 0: 0; 1: 2; 100: 2408 >> 4 = 150 -> 127
  EXPECT_EQ(get(sram, 0), (std::vector<int>{-128, -4, -1, 0, 2, 127}));
  c.relu = true;
  put(sram, 0, {-128, -3, -1, 0, 1, 100});
  arm_apply(c, sram.data(), sram.size());
  EXPECT_EQ(get(sram, 0), (std::vector<int>{0, 0, 0, 0, 2, 127}));
  const ArmOpClocks k;
  EXPECT_EQ(arm_op_cycles(c, k), std::uint64_t(6 * k.affine_per_pixel));
  EXPECT_EQ(arm_op_sram_bytes(c).read, 6u + 8u);  // the values, and the plane's m and o once
}

TEST(ArmElementwise, AddsAndMultipliesRoundHalfUpAfterTheirShifts) {
  std::vector<std::uint8_t> sram(256, 0);
  ArmCommand add = two_by_three(ArmOpKind::AddScaled8);
  add.src = 32;  // dst (at 0) = ((dst << 1) + src + 2) >> 2
  add.shift_a = 1;
  add.shift = 2;
  put(sram, 0, {1, -1, 100, -100, 0, 3});
  put(sram, 32, {1, -2, 100, -128, 1, -5});
  arm_apply(add, sram.data(), sram.size());
  // (2+1+2)>>2 = 1; (-2-2+2)>>2 = -1; (200+100+2)>>2 = 75; (-200-128+2)>>2 = -82; (0+1+2)>>2 = 0; (6-5+2)>>2 = 0
  EXPECT_EQ(get(sram, 0), (std::vector<int>{1, -1, 75, -82, 0, 0}));
  add.shift = 0;
  add.shift_a = 0;
  add.relu = true;
  put(sram, 0, {100, -1, 0, 0, 0, 0});
  put(sram, 32, {100, -1, 0, 0, 0, 0});
  arm_apply(add, sram.data(), sram.size());
  EXPECT_EQ(get(sram, 0), (std::vector<int>{127, 0, 0, 0, 0, 0}));  // saturated; the ReLU
  ArmCommand mul = two_by_three(ArmOpKind::Mul8);
  mul.src = 32;
  mul.shift = 3;  // (a b + 4) >> 3
  put(sram, 0, {3, -3, 127, -128, 12, 2});
  put(sram, 32, {4, 4, 127, -128, -1, 2});
  arm_apply(mul, sram.data(), sram.size());
  // 12+4 = 16 >> 3 = 2; -12+4 = -8 >> 3 = -1; 16129 >> 3 -> 127; 16384 -> 127; -12+4 >> 3 = -1; 4+4 >> 3 = 1
  EXPECT_EQ(get(sram, 0), (std::vector<int>{2, -1, 127, 127, -1, 1}));
  ArmCommand ch = two_by_three(ArmOpKind::ChannelMul8);
  ch.planes = 2;
  ch.table = 128;
  ch.shift = 1;
  sram[128] = static_cast<std::uint8_t>(-3);
  sram[129] = 5;
  put(sram, 0, {1, 2, 3, -1, 0, 100});
  put(sram, 8, {1, 2, 3, -1, 0, 100});
  arm_apply(ch, sram.data(), sram.size());
  EXPECT_EQ(get(sram, 0), (std::vector<int>{-1, -3, -4, 2, 0, -128}));  // (-3x + 1) >> 1
  EXPECT_EQ(get(sram, 8), (std::vector<int>{3, 5, 8, -2, 0, 127}));     // (5x + 1) >> 1
  const ArmOpClocks k;
  EXPECT_EQ(arm_op_cycles(add, k), std::uint64_t(6 * k.add_scaled_per_pixel));
  EXPECT_EQ(arm_op_cycles(mul, k), std::uint64_t(6 * k.mul_per_pixel));
  EXPECT_EQ(arm_op_cycles(ch, k), std::uint64_t(12 * k.channel_mul_per_pixel));
  EXPECT_EQ(snn_op_extents(ch).size(), 2u);  // the values and the factors: what the chip's race check sees
}
