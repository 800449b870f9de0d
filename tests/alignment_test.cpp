// Alignment (thesis equations 2.5 and 2.6) and the placement of operands and results in a PE's SRAM
// (model/sram_layout.h), and the SRAM image the backends load (pack_sram_image / unpack_results).
#include "model/sram_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/golden.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

Task conv_task(int Wi, int Hi, int D, int Wf, int Hf, int C) {
  Task t;
  t.op = Op::Conv;
  t.conv = ConvShape{Wi, Hi, D, Wf, Hf, C, 1};
  return t;
}
Task mm_task(int W_A, int H_A, int W_B) {
  Task t;
  t.op = Op::Mm;
  t.mm = MmShape{W_A, H_A, W_B, W_A};
  return t;
}

// ---------------------------------------------------------------- equation 2.5 (convolution)

struct ConvCase {
  ConvShape s;
  std::uint64_t ifmap, filters, ofmap;  // bytes after alignment, worked out by hand
};

TEST(Equation2_5, ThesisValidationShapes) {
  // ifmap = align16(Wi)*Hi*D; filters = align16(Wf*Hf*D*align_rows(C)); ofmap = align4(Wo)*Ho*C results of 4 bytes
  const ConvCase cases[] = {
      {{226, 22, 3, 3, 3, 4, 1}, 240u * 22 * 3, 112, 224u * 20 * 4 * 4},    // 15840, align16(108) = 112, 71680
      {{114, 9, 64, 3, 3, 4, 1}, 128u * 9 * 64, 2304, 112u * 7 * 4 * 4},    // 73728, 2304, 12544
      {{30, 9, 256, 3, 3, 4, 1}, 32u * 9 * 256, 9216, 28u * 7 * 4 * 4},    // 73728, 9216, 3136
      {{56, 14, 64, 1, 1, 4, 1}, 64u * 14 * 64, 256, 56u * 14 * 4 * 4},    // 57344, 256, 12544
      {{28, 14, 128, 5, 5, 4, 1}, 32u * 14 * 128, 12800, 24u * 10 * 4 * 4},  // 57344, 12800, 3840
      {{28, 10, 128, 7, 7, 4, 1}, 32u * 10 * 128, 25088, 24u * 4 * 4 * 4},   // 40960, 25088, 1536 (Wo 22 -> 24)
  };
  for (const ConvCase& c : cases) {
    const AlignedSizes z = conv_aligned_sizes(c.s, 4);
    SCOPED_TRACE(std::to_string(c.s.Wi) + "x" + std::to_string(c.s.Hi) + "x" + std::to_string(c.s.D));
    EXPECT_EQ(z.operand_b_bytes, c.ifmap);
    EXPECT_EQ(z.operand_a_bytes, c.filters);
    EXPECT_EQ(z.result_bytes, c.ofmap);
    EXPECT_EQ(z.total(), c.ifmap + c.filters + c.ofmap);
  }
  EXPECT_EQ(conv_aligned_sizes({226, 22, 3, 3, 3, 4, 1}, 4).operand_b_bytes, 15840u);
  EXPECT_EQ(conv_aligned_sizes({226, 22, 3, 3, 3, 4, 1}, 4).result_bytes, 71680u);
}

TEST(Equation2_5, FirstVggLayerAsTheThesisWorksItOut) {
  // thesis 3 (decomposition): [226,226,3] x [3,3,3,64] -> 162720 + 1728 + 12845056 bytes
  const AlignedSizes z = conv_aligned_sizes({226, 226, 3, 3, 3, 64, 1}, 4);
  EXPECT_EQ(z.operand_b_bytes, 162720u);
  EXPECT_EQ(z.operand_a_bytes, 1728u);
  EXPECT_EQ(z.result_bytes, 12845056u);
}

TEST(Equation2_5, OddWidthsAndChannels) {
  // [27,5,5] x [3,3,5,6]: ifmap align16(27)=32 *5*5 = 800; filters align16(3*3*5*align4(6)=360) = 368;
  // ofmap align4(25)=28 * 3 * 6 * 4 = 2016
  AlignedSizes z = conv_aligned_sizes({27, 5, 5, 3, 3, 6, 1}, 4);
  EXPECT_EQ(z.operand_b_bytes, 800u);
  EXPECT_EQ(z.operand_a_bytes, 368u);
  EXPECT_EQ(z.result_bytes, 2016u);
  // 2 MAC rows: filters align16(3*3*5*align2(6)=270) = 272
  z = conv_aligned_sizes({27, 5, 5, 3, 3, 6, 1}, 2);
  EXPECT_EQ(z.operand_a_bytes, 272u);
  // [9,9,1] x [9,9,1,1]: ifmap 16*9 = 144, filters align16(81*4) = 336, ofmap align4(1)=4 *1*1*4 = 16
  z = conv_aligned_sizes({9, 9, 1, 9, 9, 1, 1}, 4);
  EXPECT_EQ(z.operand_b_bytes, 144u);
  EXPECT_EQ(z.operand_a_bytes, 336u);
  EXPECT_EQ(z.result_bytes, 16u);
}

// ---------------------------------------------------------------- equation 2.6 (matrix multiplication)

TEST(Equation2_6, ThesisValidationShape) {
  // [64,1] x [1024,64]: A = align4(64)*align4(1) = 256; B = align16(1024)*align4(64) = 65536;
  // C = align16(1024)*align4(1) results of 4 bytes = 16384
  const AlignedSizes z = mm_aligned_sizes({64, 1, 1024, 64}, 4);
  EXPECT_EQ(z.operand_a_bytes, 256u);
  EXPECT_EQ(z.operand_b_bytes, 65536u);
  EXPECT_EQ(z.result_bytes, 16384u);
}

TEST(Equation2_6, OddShapes) {
  // [24,3] x [21,24]: A = 24*4 = 96; B = 32*24 = 768; C = 32*4*4 = 512
  AlignedSizes z = mm_aligned_sizes({24, 3, 21, 24}, 4);
  EXPECT_EQ(z.operand_a_bytes, 96u);
  EXPECT_EQ(z.operand_b_bytes, 768u);
  EXPECT_EQ(z.result_bytes, 512u);
  // [5,6] x [17,5]: A = align4(5)=8 * align4(6)=8 = 64; B = 32 * align4(5)=8 = 256; C = 32*8*4 = 1024
  z = mm_aligned_sizes({5, 6, 17, 5}, 4);
  EXPECT_EQ(z.operand_a_bytes, 64u);
  EXPECT_EQ(z.operand_b_bytes, 256u);
  EXPECT_EQ(z.result_bytes, 1024u);
  // 2 MAC rows: A = 8 * align2(6)=6 = 48; C = 32*6*4 = 768
  z = mm_aligned_sizes({5, 6, 17, 5}, 2);
  EXPECT_EQ(z.operand_a_bytes, 48u);
  EXPECT_EQ(z.result_bytes, 768u);
}

// ---------------------------------------------------------------- sram_layout

std::vector<Task> layout_tasks() {
  return {conv_task(226, 22, 3, 3, 3, 4),   conv_task(114, 9, 64, 3, 3, 4), conv_task(30, 9, 256, 3, 3, 4),
          conv_task(56, 14, 64, 1, 1, 4),   conv_task(28, 14, 128, 5, 5, 4), conv_task(28, 10, 128, 7, 7, 4),
          conv_task(27, 5, 5, 3, 3, 6),     conv_task(9, 9, 203, 9, 9, 1),   conv_task(17, 3, 1, 1, 3, 1),
          conv_task(40, 4, 16, 1, 1, 8),    mm_task(64, 1, 1024),            mm_task(24, 3, 21),
          mm_task(1, 1, 1),                 mm_task(5, 6, 17),               mm_task(2000, 8, 32)};
}

TEST(SramLayout, BThenAThenResultsAlignedWithoutOverlap) {
  for (const HwConfig& cfg : mac_shape_configs()) {
    for (const Task& t : layout_tasks()) {
      SCOPED_TRACE(cfg.mac_shape() + " " + to_string(t.op) + " task " +
                   (t.op == Op::Conv ? std::to_string(t.conv.Wi) + "x" + std::to_string(t.conv.D)
                                     : std::to_string(t.mm.W_A) + "x" + std::to_string(t.mm.W_B)));
      const SramLayout l = sram_layout(t, cfg);
      EXPECT_EQ(l.b_base, 0u);
      EXPECT_EQ(l.b_base % 16, 0u);
      EXPECT_EQ(l.a_base % 16, 0u);
      EXPECT_EQ(l.o_base % 16, 0u);
      EXPECT_GE(l.a_base, l.b_base + l.b_bytes);
      EXPECT_LT(l.a_base, l.b_base + l.b_bytes + 16);  // packed: at most alignment padding between them
      EXPECT_GE(l.o_base, l.a_base + l.a_bytes);
      EXPECT_LT(l.o_base, l.a_base + l.a_bytes + 16);
      EXPECT_EQ(l.total_bytes(), l.o_base + l.o_bytes);
      EXPECT_EQ(l.b_row_stride % 16, 0u);
      EXPECT_EQ(l.a_group_stride % 16, 0u);
      EXPECT_GT(l.a_bytes, 0u);
      EXPECT_GT(l.b_bytes, 0u);
      EXPECT_GT(l.o_bytes, 0u);
    }
  }
}

TEST(SramLayout, StridesAndSizesFollowTheLayoutRules) {
  const HwConfig cfg;  // 16x4
  // conv [27,5,5] x [3,3,5,6]: B rows of align16(27) = 32; A groups of align16(5*3*3*4 = 180) = 192, 2 groups;
  // results rows of align4(25) = 28 int32, Ho = 3, 8 channels (C padded to the MAC rows)
  SramLayout l = sram_layout(conv_task(27, 5, 5, 3, 3, 6), cfg);
  EXPECT_EQ(l.b_row_stride, 32u);
  EXPECT_EQ(l.b_bytes, 32u * 5 * 5);
  EXPECT_EQ(l.a_group_stride, 192u);
  EXPECT_EQ(l.a_bytes, 384u);
  EXPECT_EQ(l.o_row_stride, 28u);
  EXPECT_EQ(l.o_bytes, 28u * 3 * 8 * 4);
  EXPECT_EQ(l.a_base, 800u);
  EXPECT_EQ(l.o_base, 800u + 384u);
  // mm [24,3] x [21,24]: B rows of 32 bytes, 24 rows; A one group of align16(24*4) = 96; C rows of 32 int32, 4 rows
  l = sram_layout(mm_task(24, 3, 21), cfg);
  EXPECT_EQ(l.b_row_stride, 32u);
  EXPECT_EQ(l.b_bytes, 768u);
  EXPECT_EQ(l.a_group_stride, 96u);
  EXPECT_EQ(l.a_bytes, 96u);
  EXPECT_EQ(l.o_row_stride, 32u);
  EXPECT_EQ(l.o_bytes, 512u);
  EXPECT_EQ(l.total_bytes(), 768u + 96u + 512u);
}

TEST(SramLayout, MatchesTheEquationsWhereTheyApply) {
  const HwConfig cfg;  // 4 MAC rows: eq. 2.6 exactly, and eq. 2.5 for C <= 4 (B and A; results padded to 4 rows)
  for (const Task& t : layout_tasks()) {
    const SramLayout l = sram_layout(t, cfg);
    if (t.op == Op::Mm) {
      const AlignedSizes z = mm_aligned_sizes(t.mm, cfg.mac_rows);
      EXPECT_EQ(l.a_bytes, z.operand_a_bytes);
      EXPECT_EQ(l.b_bytes, z.operand_b_bytes);
      EXPECT_EQ(l.o_bytes, z.result_bytes);
    } else if (t.conv.C <= cfg.mac_rows) {
      const AlignedSizes z = conv_aligned_sizes(t.conv, cfg.mac_rows);
      EXPECT_EQ(l.b_bytes, z.operand_b_bytes);
      EXPECT_EQ(l.a_bytes, z.operand_a_bytes);
      if (t.conv.C == cfg.mac_rows) {
        EXPECT_EQ(l.o_bytes, z.result_bytes);
      }
    }
  }
}

// ---------------------------------------------------------------- SRAM image round trip

// Reads the operands back out of an SRAM image by the formulas of sram_layout.h, and writes results in.
PeOperands read_operands(const Task& t, const HwConfig& cfg, const SramLayout& l, const std::vector<std::uint8_t>& img) {
  PeOperands o;
  const int rows = cfg.mac_rows;
  auto at = [&](std::size_t byte) { return static_cast<std::int8_t>(img.at(byte)); };
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    for (int c = 0; c < s.C; ++c)
      for (int d = 0; d < s.D; ++d)
        for (int ky = 0; ky < s.Hf; ++ky)
          for (int kx = 0; kx < s.Wf; ++kx)
            o.a.push_back(at(l.a_base + std::size_t(c / rows) * l.a_group_stride +
                             ((std::size_t(d) * s.Hf + ky) * s.Wf + kx) * rows + c % rows));
    for (int d = 0; d < s.D; ++d)
      for (int y = 0; y < s.Hi; ++y)
        for (int x = 0; x < s.Wi; ++x) o.b.push_back(at(l.b_base + (std::size_t(d) * s.Hi + y) * l.b_row_stride + x));
  } else {
    const MmShape& s = t.mm;
    for (int i = 0; i < s.H_A; ++i)
      for (int k = 0; k < s.W_A; ++k)
        o.a.push_back(at(l.a_base + std::size_t(i / rows) * l.a_group_stride + std::size_t(k) * rows + i % rows));
    for (int k = 0; k < s.H_B; ++k)
      for (int j = 0; j < s.W_B; ++j) o.b.push_back(at(l.b_base + std::size_t(k) * l.b_row_stride + j));
  }
  return o;
}

TEST(SramImage, PackPlacesOperandsWhereTheLayoutSays) {
  for (const HwConfig& cfg : mac_shape_configs()) {
    for (const Task& base : {conv_task(27, 5, 5, 3, 3, 6), conv_task(17, 3, 2, 5, 3, 3), mm_task(24, 3, 21),
                             mm_task(5, 6, 17)}) {
      Task t = base;
      t.seed = 9;
      const SramLayout l = sram_layout(t, cfg);
      const PeOperands ops = make_operands(t, 1);
      const std::vector<std::uint8_t> img = pack_sram_image(t, cfg, l, ops);
      ASSERT_EQ(img.size(), l.total_bytes());
      const PeOperands back = read_operands(t, cfg, l, img);
      EXPECT_EQ(back.a, ops.a) << cfg.mac_shape();
      EXPECT_EQ(back.b, ops.b) << cfg.mac_shape();
      // padding (alignment gaps, padded filters / rows of A, the results area) is zero
      std::size_t nonzero = 0;
      for (std::uint8_t byte : img) nonzero += byte != 0;
      std::size_t nonzero_ops = 0;
      for (std::int8_t v : ops.a) nonzero_ops += v != 0;
      for (std::int8_t v : ops.b) nonzero_ops += v != 0;
      EXPECT_EQ(nonzero, nonzero_ops) << cfg.mac_shape();
    }
  }
}

TEST(SramImage, UnpackReadsResultsBackInLogicalOrder) {
  for (const HwConfig& cfg : mac_shape_configs()) {
    for (const Task& t : {conv_task(27, 5, 5, 3, 3, 6), mm_task(24, 3, 21), conv_task(9, 9, 1, 9, 9, 1)}) {
      const SramLayout l = sram_layout(t, cfg);
      std::vector<std::uint8_t> img(l.total_bytes(), 0xee);
      const std::size_t n = result_count(t);
      std::vector<std::int32_t> expected(n);
      for (std::size_t i = 0; i < n; ++i) {
        expected[i] = static_cast<std::int32_t>(0x10000000u - 977u * i) - ((i & 1) ? (1 << 28) : 0);
        const ResultPos p = result_position(t, i);
        // conv: (c*Ho + y)*o_row_stride + x; mm: i*o_row_stride + j (row = c*Ho + y or i, column = x or j)
        const std::size_t byte = l.o_base + (std::size_t(p.row) * l.o_row_stride + p.column) * 4;
        ASSERT_LE(byte + 4, l.o_base + l.o_bytes);
        for (int k = 0; k < 4; ++k) img[byte + k] = static_cast<std::uint8_t>(std::uint32_t(expected[i]) >> (8 * k));
      }
      EXPECT_EQ(unpack_results(t, cfg, l, img.data(), img.size()), expected) << cfg.mac_shape();
      EXPECT_THROW(unpack_results(t, cfg, l, img.data(), l.total_bytes() - 1), std::runtime_error);
    }
  }
}

TEST(SramImage, ResultCountAndPositions) {
  const Task c = conv_task(27, 5, 5, 3, 3, 6);  // Wo 25, Ho 3, C 6
  EXPECT_EQ(result_count(c), 6u * 3 * 25);
  ResultPos p = result_position(c, 25 * 4 + 7);  // c = 1, y = 1, x = 7
  EXPECT_EQ(p.row, 4);
  EXPECT_EQ(p.column, 7);
  const Task m = mm_task(24, 3, 21);
  EXPECT_EQ(result_count(m), 3u * 21);
  p = result_position(m, 21 * 2 + 20);
  EXPECT_EQ(p.row, 2);
  EXPECT_EQ(p.column, 20);
}

}  // namespace
}  // namespace s2
