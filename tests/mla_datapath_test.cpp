// The model's MLA datapath (model/pe/mla_datapath.h) against the golden kernels, on the shapes where a
// vectorised datapath goes wrong: odd channel counts and odd W_A (a half-empty last step pair), widths
// that are not a multiple of the vector length, one-column outputs, 1x1 and 9x9 filters, every MAC-row
// count, and data that drives the accumulators past the edge of their range.
#include "model/pe/mla_datapath.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/golden.h"

namespace s2 {
namespace {

// Runs the datapath over every output row of PE 0's operands and unpacks the results as the harness would.
std::vector<std::int32_t> datapath_results(const Task& t, const HwConfig& cfg) {
  const SramLayout l = sram_layout(t, cfg);
  const PeOperands ops = make_operands(t, 0);
  std::vector<std::uint8_t> sram = pack_sram_image(t, cfg, l, ops);
  MlaDatapath dp;
  dp.load(t, l, cfg, sram.data(), sram.data());
  const std::uint64_t rows = t.op == Op::Conv
                                 ? std::uint64_t((t.conv.C + cfg.mac_rows - 1) / cfg.mac_rows) * t.conv.Ho()
                                 : std::uint64_t((t.mm.H_A + cfg.mac_rows - 1) / cfg.mac_rows);
  std::vector<std::vector<ResultWrite>> writes(rows);
  for (std::uint64_t r = 0; r < rows; ++r) dp.compute_row(r, writes[r]);
  for (const auto& row : writes)
    for (const ResultWrite& w : row)
      for (int k = 0; k < 4; ++k) sram.at(w.byte + k) = static_cast<std::uint8_t>(w.value >> (8 * k));
  return unpack_results(t, cfg, l, sram.data(), sram.size());
}

Task conv(ConvShape s, DataPattern data = DataPattern::Random) {
  Task t;
  t.id = "conv";
  t.op = Op::Conv;
  t.conv = s;
  t.seed = 7;
  t.data = data;
  return t;
}

Task mm(int w_a, int h_a, int w_b, DataPattern data = DataPattern::Random) {
  Task t;
  t.id = "mm";
  t.op = Op::Mm;
  t.mm = {w_a, h_a, w_b, w_a};
  t.seed = 11;
  t.data = data;
  return t;
}

class MlaDatapathTest : public ::testing::TestWithParam<std::string> {
 protected:
  HwConfig cfg() const {
    HwConfig c;
    set_mac_shape(c, GetParam());
    return c;
  }
  void expect_golden(const Task& t) {
    const HwConfig c = cfg();
    const std::vector<PeOperands> ops = {make_operands(t, 0)};
    EXPECT_EQ(datapath_results(t, c), golden_results(t, 0, ops, c)) << t.id;
  }
};

TEST_P(MlaDatapathTest, ConvolutionOddChannelsAndRaggedWidths) {
  expect_golden(conv({17, 5, 3, 3, 3, 4, 1}));   // D odd, Wo = 15
  expect_golden(conv({40, 4, 1, 1, 1, 3, 1}));   // 1x1, D = 1, C not a multiple of the MAC rows
  expect_golden(conv({9, 9, 5, 9, 9, 6, 1}));    // 9x9 filter: one output column
  expect_golden(conv({33, 3, 2, 2, 3, 1, 1}));   // Wo = 32: whole vectors
  expect_golden(conv({70, 2, 7, 5, 1, 5, 1}));   // Hf = 1, Wo = 66
}

TEST_P(MlaDatapathTest, MatrixMultiplicationOddWidths) {
  expect_golden(mm(1, 4, 16));
  expect_golden(mm(7, 5, 17));
  expect_golden(mm(64, 3, 33));
  expect_golden(mm(129, 8, 1));
}

TEST_P(MlaDatapathTest, AccumulatorsWrapLikeTheGoldenKernels) {
  // 256 x 9 x 16384 = 37.7M per output and 4608 steps: past the 29-bit range (268M) only with enough steps,
  // so a long MM row is used as well
  expect_golden(conv({12, 3, 256, 3, 3, 4, 1}, DataPattern::AllMin));
  expect_golden(conv({12, 3, 255, 3, 3, 4, 1}, DataPattern::MinMax));
  expect_golden(mm(20000, 4, 3, DataPattern::AllMin));  // 20000 x 16384 = 327.7M: wraps
  expect_golden(mm(20001, 4, 2, DataPattern::AllMax));
}

INSTANTIATE_TEST_SUITE_P(MacShapes, MlaDatapathTest, ::testing::Values("16x4", "16x2", "8x4"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace s2
