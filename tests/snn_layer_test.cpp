// SNN synaptic processing's building blocks: the layer and its golden currents (model/snn_layer.h), and the
// ARM operations the layouts need (model/pe/arm_ops.h: MacInt8, PermuteWords, Copy8), what they compute and
// what they cost.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/pe/arm_ops.h"
#include "model/snn_layer.h"

using namespace s2;

namespace {

SnnLayer tiny() {
  // 2 delays, 3 pre, 2 post, 4 timesteps
  SnnLayer l;
  l.delays = 2;
  l.pre = 3;
  l.post = 2;
  l.timesteps = 4;
  l.weights.assign(2 * 3 * 2, 0);
  auto w = [&](int d, int i, int j, int v) { l.weights[(std::size_t(d) * 3 + std::size_t(i)) * 2 + std::size_t(j)] = static_cast<std::int8_t>(v); };
  w(0, 0, 0, 5);    // pre 0 -> post 0, delay 0
  w(1, 1, 0, -7);   // pre 1 -> post 0, delay 1
  w(1, 2, 1, 100);  // pre 2 -> post 1, delay 1
  w(0, 2, 1, -128); // and also delay 0 (the format allows it)
  l.spikes = {1, 0, 0,   // t0: pre 0
              0, 1, 1,   // t1: pre 1, 2
              0, 0, 0,   // t2
              1, 1, 1};  // t3
  return l;
}

std::int32_t load32(const std::vector<std::uint8_t>& m, std::size_t at) {
  std::int32_t v;
  std::memcpy(&v, &m[at], 4);
  return v;
}

}  // namespace

TEST(SnnLayer, GoldenCurrentsByHand) {
  const std::vector<std::int32_t> i = snn_currents(tiny());
  // I[t][0] = 5 s[t][0] - 7 s[t-1][1];  I[t][1] = -128 s[t][2] + 100 s[t-1][2]
  const std::vector<std::int32_t> want = {5, 0,            // t0
                                          0, -128,         // t1
                                          -7, 100,         // t2: the delay-1 spikes of t1
                                          5, -128};        // t3
  EXPECT_EQ(i, want);
}

TEST(SnnLayer, EmptyAndFullSpikeTrains) {
  SnnLayer l = tiny();
  std::fill(l.spikes.begin(), l.spikes.end(), 0);
  for (std::int32_t v : snn_currents(l)) EXPECT_EQ(v, 0);
  std::fill(l.spikes.begin(), l.spikes.end(), 1);
  const std::vector<std::int32_t> i = snn_currents(l);
  EXPECT_EQ(i[0], 5);            // t0: only delay 0 reaches
  EXPECT_EQ(i[1], -128);
  EXPECT_EQ(i[2 * 2 + 0], 5 - 7);  // t2: both delays
  EXPECT_EQ(i[2 * 2 + 1], -28);
}

TEST(SnnLayer, BadLayersAreRefusedNamingTheField) {
  auto refused = [](SnnLayer l, const std::string& field) {
    try {
      check_snn_layer(l);
      ADD_FAILURE() << "accepted; expected a complaint about " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  SnnLayer l = tiny();
  l.spikes[4] = 2;
  refused(l, "spike [1][1] is 2");
  l = tiny();
  l.weights.pop_back();
  refused(l, "weights hold 11 values");
  l = tiny();
  l.delays = 0;
  refused(l, "delays is 0");
  l = tiny();
  l.post = 1 << 20;
  refused(l, "post is 1048576");
  l = tiny();
  l.delays = 64;
  l.pre = 65536;
  l.post = 100;
  refused(l, "weights of");  // 64 x 65536 x 100 bytes: more than 64 MB
  l.post = 1;
  refused(l, "29-bit accumulators");
  EXPECT_THROW(draw_snn_layer({10, 10, 2, 5, 1.5, 0.1, 1}), std::invalid_argument);
  EXPECT_THROW(draw_snn_layer({0, 10, 2, 5, 0.1, 0.1, 1}), std::invalid_argument);
}

TEST(SnnLayer, DrawnLayersAreSeededAndAsAsked) {
  const SnnDraw d{800, 200, 4, 50, 0.1, 0.05, 7};
  const SnnLayer a = draw_snn_layer(d), b = draw_snn_layer(d);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.spikes, b.spikes);
  SnnDraw other = d;
  other.seed = 8;
  EXPECT_NE(draw_snn_layer(other).weights, a.weights);
  // one delay per synapse, density and rate near what was asked (160000 pairs, 40000 spikes)
  std::size_t synapses = 0;
  for (int i = 0; i < a.pre; ++i)
    for (int j = 0; j < a.post; ++j) {
      int delays = 0;
      for (int k = 0; k < a.delays; ++k) delays += a.weight(k, i, j) != 0;
      EXPECT_LE(delays, 1);
      synapses += std::size_t(delays);
    }
  EXPECT_EQ(synapses, a.synapses());
  EXPECT_NEAR(double(synapses) / (800.0 * 200.0), 0.1, 0.005);
  EXPECT_NEAR(double(a.spike_count()) / (800.0 * 50.0), 0.05, 0.005);
  // every delay used
  for (int k = 0; k < a.delays; ++k) {
    std::size_t n = 0;
    for (int i = 0; i < a.pre; ++i)
      for (int j = 0; j < a.post; ++j) n += a.weight(k, i, j) != 0;
    EXPECT_GT(n, synapses / 5) << "delay " << k;
  }
}

TEST(SnnArmOps, MacInt8AddsTheWeightRowsOfNonZeroOperandsIntoEveryPlane) {
  std::vector<std::uint8_t> sram(4096, 0);
  // operand a: 2 rows x 3 values in the MLA's operand-A layout (value (r, k) at 4k + r)
  const std::int8_t a[2][3] = {{1, 0, 1}, {0, 2, 0}};
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 3; ++k) sram[std::size_t(4 * k + r)] = static_cast<std::uint8_t>(a[r][k]);
  // weights: 2 planes x 3 rows x 2 columns at 256, rows 8 bytes apart, planes 64
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < 3; ++k)
      for (int x = 0; x < 2; ++x) sram[256 + std::size_t(p * 64 + k * 8 + x)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(10 * p + 3 * k - x - 4));
  ArmCommand c;
  c.kind = ArmOpKind::MacInt8;
  c.src = 0;
  c.src_row_stride = 1;
  c.a_col_stride = 4;
  c.depth = 3;
  c.height = 2;
  c.width = 2;
  c.planes = 2;
  c.weights = 256;
  c.weights_row_stride = 8;
  c.weights_plane_stride = 64;
  c.dst = 1024;
  c.dst_row_stride = 16;
  c.dst_plane_stride = 128;
  // the destination holds something already: the operation adds to it
  std::memcpy(&sram[1024], "\x01\x00\x00\x00", 4);
  const std::vector<std::uint8_t> before = sram;
  arm_apply(c, sram.data(), sram.size());
  for (int p = 0; p < 2; ++p)
    for (int r = 0; r < 2; ++r)
      for (int x = 0; x < 2; ++x) {
        std::int32_t want = (p == 0 && r == 0 && x == 0) ? 1 : 0;
        for (int k = 0; k < 3; ++k) want += a[r][k] * (10 * p + 3 * k - x - 4);
        EXPECT_EQ(load32(sram, 1024 + std::size_t(p * 128 + r * 16 + 4 * x)), want) << p << r << x;
      }
  // 6 values tested, 3 non-zero, each adding 2 planes x 2 weights
  ArmOpClocks k;
  EXPECT_EQ(arm_op_cycles(c, k, before.data(), before.size()), std::uint64_t(6 * 2.5 + 3 * 2 * 2 * 8.0));
  // without the SRAM: bounded as if every value were non-zero
  EXPECT_EQ(arm_op_cycles(c, k), std::uint64_t(6 * 2.5 + 6 * 2 * 2 * 8.0));
  c.depth = 1000;  // past the SRAM
  EXPECT_THROW(arm_apply(c, sram.data(), sram.size()), std::out_of_range);
}

TEST(SnnArmOps, PermuteWordsFollowsTheCirclesInPlace) {
  // the paper's example (section 3.1.2): source -> target 0->3->0 and 1->4->5->2->1
  const std::vector<std::uint16_t> target = {3, 4, 1, 0, 5, 2};
  std::vector<std::uint8_t> sram(512, 0);
  for (std::size_t s = 0; s < 6; ++s) {
    sram[200 + 2 * s] = static_cast<std::uint8_t>(target[s]);
    sram[201 + 2 * s] = 0;
  }
  // two planes of 6 words, 32 bytes apart
  for (std::size_t p = 0; p < 2; ++p)
    for (std::size_t s = 0; s < 6; ++s) {
      const std::int32_t v = static_cast<std::int32_t>(1000 * p + s);
      std::memcpy(&sram[p * 32 + 4 * s], &v, 4);
    }
  ArmCommand c;
  c.kind = ArmOpKind::PermuteWords;
  c.src = 0;
  c.width = 6;
  c.planes = 2;
  c.src_plane_stride = 32;
  c.table = 200;
  const std::vector<std::uint8_t> before = sram;
  arm_apply(c, sram.data(), sram.size());
  for (std::size_t p = 0; p < 2; ++p)
    for (std::size_t s = 0; s < 6; ++s) EXPECT_EQ(load32(sram, p * 32 + 4 * target[s]), std::int32_t(1000 * p + s));
  // every word moves, in two circles: per plane 6 entries read, 6 words moved, 2 circles started
  ArmOpClocks k;
  EXPECT_EQ(arm_op_cycles(c, k, before.data(), before.size()), std::uint64_t(2 * (6 * 2.0 + 6 * 4.0 + 2 * 8.0)));
  // a table that is not a permutation is refused
  sram = before;
  sram[200 + 2 * 4] = 4;  // 1->4->4: no longer a permutation
  EXPECT_THROW(arm_apply(c, sram.data(), sram.size()), std::invalid_argument);
}

TEST(SnnArmOps, Copy8CopiesStridedRows) {
  std::vector<std::uint8_t> sram(512, 0);
  std::iota(sram.begin(), sram.begin() + 100, 1);
  ArmCommand c;
  c.kind = ArmOpKind::Copy8;
  c.src = 3;
  c.src_row_stride = 10;
  c.src_plane_stride = 1;  // planes overlap: the shifted rows of a spike history
  c.width = 4;
  c.height = 3;
  c.planes = 2;
  c.dst = 300;
  c.dst_row_stride = 4;
  c.dst_plane_stride = 12;
  arm_apply(c, sram.data(), sram.size());
  for (std::size_t p = 0; p < 2; ++p)
    for (std::size_t y = 0; y < 3; ++y)
      for (std::size_t x = 0; x < 4; ++x) EXPECT_EQ(sram[300 + p * 12 + y * 4 + x], 3 + p + y * 10 + x + 1);
  EXPECT_EQ(arm_op_cycles(c, ArmOpClocks{}), 6u * 4u);  // six 4-byte rows, 4 clocks a word
}
