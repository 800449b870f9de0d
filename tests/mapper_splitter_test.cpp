// The mapper's splitter (thesis 4.2) and its validation (thesis 5.1.1): pieces fit the SRAM budget after
// alignment, cover each layer with no gaps and no overlaps, and recombine exactly to the unsplit result.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/commands/map_report.h"
#include "mapper/dram_layout.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/split_check.h"
#include "mapper/splitter.h"
#include "model/splitmix64.h"
#include "test_support.h"

using namespace s2::mapper;

namespace {

const BlockSplit& find(const NetworkSplit& s, const std::string& name) {
  for (const auto& b : s.blocks)
    if (b.name == name) return b;
  throw std::runtime_error("no block " + name);
}

int sum(const Parts& p) {
  int n = 0;
  for (int v : p.sizes) n += v;
  return n;
}

// Every invariant a split must keep, for one block.
void expect_valid(const OperationBlock& b, const BlockSplit& s, const SplitRules& r, const std::string& what) {
  SCOPED_TRACE(what + " " + b.name());
  for (const Parts* p : {&s.w, &s.h, &s.c, &s.d}) {
    ASSERT_FALSE(p->sizes.empty());
    for (int v : p->sizes) EXPECT_GT(v, 0);
  }
  const Operation& op = b.core_op();
  if (b.kind == BlockKind::MatMul) {
    EXPECT_EQ(sum(s.w), op.out.W);
    EXPECT_EQ(sum(s.h), op.in.W);
  } else {
    EXPECT_EQ(sum(s.w), op.out.W);
    EXPECT_EQ(sum(s.h), op.out.H);
    EXPECT_EQ(sum(s.c), op.out.D);
    EXPECT_EQ(sum(s.d), b.kind == BlockKind::Convolution ? op.weight_depth() : 1);
  }
  if (const Operation* pool = b.fused_pool()) {  // no pooling window straddles two pieces
    for (std::size_t i = 0; i + 1 < s.w.sizes.size(); ++i) EXPECT_EQ(s.w.sizes[i] % pool->stride, 0);
    for (std::size_t i = 0; i + 1 < s.h.sizes.size(); ++i) EXPECT_EQ(s.h.sizes[i] % pool->stride, 0);
  }
  std::uint64_t pieces = 0;
  for (const PieceGroup& g : s.groups) {
    EXPECT_LE(piece_footprint_bytes(g.aligned, b.kind, r), r.budget_bytes) << g.shape;
    pieces += g.count;
  }
  EXPECT_EQ(pieces, s.pieces);
  EXPECT_EQ(s.pieces, std::uint64_t(s.w.count()) * s.h.count() * s.c.count() * s.d.count());
  const SplitCheck c = check_split(b, s, 7);
  EXPECT_TRUE(c.exact) << c.first_difference;
  EXPECT_EQ(c.pieces, s.pieces);
}

}  // namespace

TEST(MapperSplitter, Vgg16OnQpeDramAsThesisTableG1) {
  const ParsedNetwork n = parse_network(load_network("vgg16"));
  const NetworkSplit s = split_network(n, split_rules(Target::Qpe, s2::HwConfig{}));
  // thesis Table G.1: pieces and the row split of CONV_1 (21 rows x4, 20 rows x7)
  EXPECT_EQ(find(s, "CONV_1").h.to_string(), "21x4,20x7");
  EXPECT_EQ(find(s, "CONV_1").pieces, 176u);
  EXPECT_EQ(find(s, "CONV_2").pieces, 1216u);
  EXPECT_EQ(find(s, "CONV_4").pieces, 512u);
  EXPECT_EQ(find(s, "CONV_5").pieces, 1568u);
  EXPECT_EQ(find(s, "CONV_12").pieces, 1024u);
  EXPECT_EQ(find(s, "CONV_13").pieces, 1280u);
  EXPECT_EQ(find(s, "FC_19").pieces, 1568u);
  EXPECT_EQ(find(s, "FC_20").pieces, 256u);
  EXPECT_EQ(find(s, "FC_21").pieces, 64u);
  // MAC utilisation at least thesis Appendix G's: 1.00 up to CONV_5, 0.88 (28/32, 14/16) after
  for (const BlockSplit& b : s.blocks) {
    if (b.kind != BlockKind::Convolution) continue;
    const int layer = std::stoi(b.name.substr(5));
    EXPECT_GE(b.mac_utilization + 1e-9, layer <= 5 ? 1.0 : 0.875) << b.name;
  }
}

TEST(MapperSplitter, RandomLayersFitCoverAndRecombine) {
  s2::SplitMix64 g{2026};
  auto pick = [&](int lo, int hi) { return lo + int(g.next() % std::uint64_t(hi - lo + 1)); };
  for (int i = 0; i < 120; ++i) {
    const int F = pick(0, 2) * 2 + 1, stride = pick(1, 4) == 1 ? 2 : 1, D = pick(1, 48), C = pick(1, 40);
    const int W = pick(F + 2, 40), H = pick(F + 2, 40);
    std::string text = "input " + std::to_string(W) + " " + std::to_string(H) + " " + std::to_string(D) + "\n";
    text += "conv " + std::to_string(F) + " " + std::to_string(F) + " " + std::to_string(D) + " " + std::to_string(C) +
            " stride=" + std::to_string(stride) + (pick(0, 1) ? " pad=same\n" : "\n");
    const int kind = pick(0, 2);
    if (kind == 1) text += "pool max 2 2\n";                // fused into the convolution block
    if (kind == 2) text += "pool avg 3 3 stride=2 pad=1\n";  // a pooling block
    text += "fc " + std::string("@") + " " + std::to_string(pick(1, 300)) + "\n";
    // the fc's input is whatever the layers before give: fill it in from the parse without it
    const ParsedNetwork head = parse_network(parse_layer_list(text.substr(0, text.find("fc @")), "random"));
    text.replace(text.find('@'), 1, std::to_string(head.blocks.back().out().elements()));
    const ParsedNetwork n = parse_network(parse_layer_list(text, "random"));
    for (const Target t : {Target::Qpe, Target::SpiNNaker2}) {
      SplitRules r = split_rules(t, s2::HwConfig{});
      r.budget_bytes = std::uint64_t(pick(24, 96)) * 1024;  // small budgets force every kind of split
      for (const OperationBlock& b : n.blocks) {
        BlockSplit s;
        ASSERT_NO_THROW(s = split_block(b, r)) << text;
        expect_valid(b, s, r, text);
        if (HasFailure()) return;
      }
    }
  }
}

TEST(MapperSplitter, ReducedVgg16AndResnet50RecombineExactly) {
  // thesis 5.1.1 at reduced size: the networks' layer structure and channels on small inputs; the full
  // size is the documented command `s2cosim map --net vgg16 --verify` (docs/usage.md, "Mapping a CNN")
  std::string vgg = vgg16_layer_list();
  vgg.replace(vgg.find("input 224 224 3"), 15, "input 32 32 3");
  vgg.replace(vgg.find("fc 25088 4096"), 13, "fc 512 4096");
  std::string resnet = resnet50_layer_list();
  resnet.replace(resnet.find("input 224 224 3"), 15, "input 64 64 3");
  resnet.replace(resnet.find("pool avg 7 7"), 12, "pool avg 2 2");
  for (const std::string& text : {vgg, resnet}) {
    const ParsedNetwork n = parse_network(parse_layer_list(text, "reduced"));
    const SplitRules r = split_rules(Target::Qpe, s2::HwConfig{});
    for (const OperationBlock& b : n.blocks) {
      const BlockSplit s = split_block(b, r);
      EXPECT_GE(s.pieces, r.min_pieces) << b.name();
      expect_valid(b, s, r, n.name);
    }
  }
}

TEST(MapperSplitter, SpiNNaker2PiecesComeInPowersOfTwoTimes128) {
  // thesis 4.2.1: for SpiNNaker2 the pieces should be as close to 2^P x 128 as possible (after the MAC
  // utilisation); every ResNet-50 convolution reaches one exactly, and none loses MAC utilisation for it
  const ParsedNetwork n = parse_network(load_network("resnet50"));
  const SplitRules s2r = split_rules(Target::SpiNNaker2, s2::HwConfig{});
  const SplitRules qpe = split_rules(Target::Qpe, s2::HwConfig{});
  for (const OperationBlock& b : n.blocks) {
    if (b.kind != BlockKind::Convolution) continue;
    const BlockSplit s = split_block(b, s2r);
    std::uint64_t p = s.pieces / 128;
    EXPECT_TRUE(s.pieces % 128 == 0 && p > 0 && (p & (p - 1)) == 0) << b.name() << ": " << s.pieces << " pieces";
    EXPECT_GE(s.mac_utilization + 1e-9, split_block(b, qpe).mac_utilization) << b.name();
  }
}

TEST(MapperSplitter, MapPrintsTheSplitTargets) {
  const ParsedNetwork n = parse_network(load_network("vgg16"));
  const std::string report = s2::format_split(n, split_network(n, split_rules(Target::Qpe, s2::HwConfig{})));
  EXPECT_NE(report.find("[met ] every split piece fits 98304 bytes after alignment: 20 of 20 piece shapes"), std::string::npos);
  EXPECT_NE(report.find("[met ] MAC utilisation at least thesis Table G.2's: 16 of 16 operations"), std::string::npos);
  // a budget the pieces were not cut for: the fit target must say so
  SplitRules tight = split_rules(Target::Qpe, s2::HwConfig{});
  NetworkSplit s = split_network(n, tight);
  s.rules.budget_bytes = 64 * 1024;
  EXPECT_NE(s2::format_split(n, s).find("[MISS] every split piece fits 65536 bytes"), std::string::npos);
  EXPECT_EQ(s2::thesis_mac_utilization("vgg16", "qpe", "CONV_7"), 0.88);
  EXPECT_FALSE(s2::thesis_mac_utilization("resnet50", "qpe", "CONV_7").has_value());
}

TEST(MapperSplitter, BalancedPartsDifferByOneStep) {
  EXPECT_EQ(balanced_parts(224, 11, 1).to_string(), "21x4,20x7");
  EXPECT_EQ(balanced_parts(224, 38, 2).to_string(), "6x36,4x2");
  EXPECT_EQ(balanced_parts(7, 2, 2).to_string(), "4x1,3x1");  // an odd remainder goes to the last part
  EXPECT_TRUE(balanced_parts(4, 3, 2).sizes.empty());          // not enough whole steps
}

TEST(MapperSplitter, TheThesisSplitFileGivesTableI2) {
  // vectors/thesis_vgg16_s2_split.txt holds Appendix I's Table I.1; the pieces it makes are Table I.2's
  const ParsedNetwork n = parse_network(load_network("vgg16"));
  s2::HwConfig cfg;
  const std::vector<SplitChoice> chosen = read_split_file(s2::test::source_path("vectors/thesis_vgg16_s2_split.txt"));
  EXPECT_EQ(chosen.size(), 16u);  // every convolution and FC block
  const NetworkSplit s = split_network(n, split_rules(Target::SpiNNaker2, cfg), chosen);
  const std::vector<std::tuple<std::string, std::uint64_t, double>> table_i2 = {
      {"CONV_1", 256, 0.62},   {"CONV_2", 1568, 0.51},  {"CONV_4", 512, 0.82},  {"CONV_5", 1792, 0.68},
      {"CONV_7", 256, 0.85},   {"CONV_8", 1024, 0.83},  {"CONV_9", 1024, 0.79}, {"CONV_11", 512, 0.83},
      {"CONV_12", 1792, 0.70}, {"CONV_13", 1792, 0.70}, {"CONV_15", 896, 0.53}, {"CONV_17", 896, 0.53},
      {"FC_19", 3136, 0.34},   {"FC_20", 512, 0.34},    {"FC_21", 512, 0.09}};
  for (const auto& [op, pieces, sram] : table_i2) {
    SCOPED_TRACE(op);
    const BlockSplit& b = find(s, op);
    EXPECT_EQ(b.pieces, pieces);
    EXPECT_NEAR(b.sram_utilization_max, sram, 0.005);
  }
}

TEST(MapperSplitter, AChosenSplitMustCoverTheLayerAndFitAndAFileSaysWhereItIsWrong) {
  const ParsedNetwork n = parse_network(load_network("vgg16"));
  const SplitRules r = split_rules(Target::SpiNNaker2, s2::HwConfig{});
  const OperationBlock& conv5 = *n.find("CONV_5");  // 112 x 112 output, 128 filters, fused 2x2 pooling
  auto choose = [](const char* w, const char* h, const char* c) {
    return SplitChoice{"CONV_5", parse_parts(w), parse_parts(h), parse_parts(c), {}, "f:3", {}, {}};
  };
  EXPECT_EQ(split_block_as(conv5, r, choose("112x1", "2x56", "4x32")).pieces, 1792u);
  auto message = [&](const SplitChoice& c) {
    try {
      split_block_as(conv5, r, c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(choose("112x1", "2x55", "4x32")),
            "f:3: CONV_5, field H parts: expected parts summing to the output height 112, got 110");
  EXPECT_NE(message(choose("112x1", "3x36,4x1", "4x32")).find("multiples of 2"), std::string::npos);  // the pooling
  EXPECT_NE(message(choose("112x1", "2x56", "6x21,2x1")).find("multiples of 4"), std::string::npos);  // MAC rows
  EXPECT_NE(message(choose("112x1", "112x1", "4x32")).find("fit the SRAM budget"), std::string::npos);
  EXPECT_THROW(parse_parts("14x2,"), std::invalid_argument);
  EXPECT_THROW(parse_parts("14y2"), std::invalid_argument);
  EXPECT_EQ(parse_parts("14x2,12x1").to_string(), "14x2,12x1");
  // the file: line and field named, unknown blocks refused
  const s2::test::TempDir dir;
  const std::string path = dir.write("split.txt", "# comment\n\nCONV_5 112x1 2x56 4x3x2\n");
  try {
    read_split_file(path);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3: field C parts"), std::string::npos) << e.what();
  }
  EXPECT_THROW(split_network(n, r, read_split_file(dir.write("split.txt", "CONV_55 112x1 2x56 4x32\n"))), std::invalid_argument);
}

// A grouped convolution (groups=G): every filter part lies in one group and starts a MAC-row group of the packed
// filters, a piece reads its group's D/G channels whole (no partial sums), and the pieces recombine exactly
// (check_split against the layer written with block-diagonal filters).
TEST(MapperSplitter, GroupedConvolutionsSplitEachGroupsFiltersAndReadItsChannels) {
  s2::SplitMix64 g{45};
  auto pick = [&](int lo, int hi) { return lo + int(g.next() % std::uint64_t(hi - lo + 1)); };
  for (int i = 0; i < 60; ++i) {
    const int G = pick(1, 3) == 1 ? pick(2, 4) : pick(4, 40), Dg = pick(0, 2) == 0 ? pick(1, 20) : 1,
              Cg = Dg == 1 && pick(0, 1) ? 1 : pick(1, 40), F = pick(0, 1) * 2 + 1, stride = pick(1, 3) == 1 ? 2 : 1;
    const int W = pick(F + 2, 30), H = pick(F + 2, 30);
    const std::string text = "input " + std::to_string(W) + " " + std::to_string(H) + " " + std::to_string(G * Dg) +
                             "\nconv " + std::to_string(F) + " " + std::to_string(F) + " " + std::to_string(G * Dg) + " " +
                             std::to_string(G * Cg) + " stride=" + std::to_string(stride) + " groups=" + std::to_string(G) +
                             (pick(0, 1) ? " pad=same\n" : "\n");
    const ParsedNetwork n = parse_network(parse_layer_list(text, "random"));
    const OperationBlock& b = n.blocks[0];
    for (const Target t : {Target::Qpe, Target::SpiNNaker2}) {
      SplitRules r = split_rules(t, s2::HwConfig{});
      r.budget_bytes = std::uint64_t(pick(16, 96)) * 1024;
      BlockSplit s;
      ASSERT_NO_THROW(s = split_block(b, r)) << text;
      expect_valid(b, s, r, text);
      EXPECT_EQ(s.d.count(), 1) << text;
      EXPECT_EQ(s.partial_sum_adds, 0u) << text;
      for (int ic = 0; ic < s.c.count(); ++ic) {
        const int c0 = s.c.begin(ic), last = c0 + s.c.sizes[std::size_t(ic)] - 1;
        EXPECT_EQ(c0 / Cg, last / Cg) << text << " part " << ic << " straddles two groups";
        EXPECT_EQ(filter_slot(b.core_op(), r.mac_rows, c0) % r.mac_rows, 0) << text << " part " << ic;
        const ConvPiece p = conv_piece(b, s, 0, 0, ic, 0);
        EXPECT_EQ(p.task.D, Dg) << text;
        EXPECT_EQ(p.d0, c0 / Cg * Dg) << text;
      }
      if (HasFailure()) return;
    }
  }
}

// Depthwise: one filter per group, one task per channel, using one row of the MAC array (the utilisation says so);
// as many pieces as the workers need.
TEST(MapperSplitter, ADepthwiseLayerIsOneTaskPerChannelAndSaysItUsesOneRow) {
  const ParsedNetwork n = parse_network(parse_layer_list("input 16 16 96\nconv 3 3 96 96 pad=1 groups=96\n", "dw"));
  const SplitRules r = split_rules(Target::Qpe, s2::HwConfig{});
  const BlockSplit s = split_block(n.blocks[0], r);
  EXPECT_EQ(s.c.count(), 96);
  EXPECT_EQ(s.c.largest(), 1);
  EXPECT_EQ(s.d.to_string(), "1x1");
  EXPECT_GE(s.pieces, r.min_pieces);
  EXPECT_NEAR(s.mac_utilization, 1.0 / r.mac_rows, 1e-9);  // 16 results on 16 columns, 1 filter on 4 rows
  // the filters: one row group per channel, each one filter deep
  EXPECT_EQ(filter_row_groups(n.blocks[0].core_op(), r.mac_rows), 96u);
  EXPECT_EQ(filter_group_bytes(n.blocks[0].core_op(), r.mac_rows), 48u);  // 3x3 weights of 4 lanes, 16-byte aligned
  // on the chip, as many pieces as its 128 workers
  const BlockSplit chip = split_block(n.blocks[0], split_rules(Target::SpiNNaker2, s2::HwConfig{}));
  EXPECT_GE(chip.pieces, 128u);
  // a chosen split keeps to the groups: a part across two groups is refused
  const ParsedNetwork g4 = parse_network(parse_layer_list("input 8 8 32\nconv 3 3 32 32 pad=1 groups=4\n", "g4"));
  auto message = [&](const char* c, const char* d) {
    try {
      split_block_as(g4.blocks[0], r, SplitChoice{"CONV_1", parse_parts("8x1"), parse_parts("8x1"), parse_parts(c),
                                                  d[0] ? parse_parts(d) : Parts{}, "f:1", {}, {}});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("8x4", ""), "no error");
  EXPECT_EQ(message("4x8", ""), "no error");
  EXPECT_EQ(message("2x16", ""), "f:1: CONV_1, field C parts: expected parts of each group in multiples of 4 but its last, got 2x16");
  EXPECT_EQ(message("16x2", ""), "f:1: CONV_1, field C parts: expected parts inside one group of 8 filters each, got 16x2");
  EXPECT_EQ(message("8x4", "4x2"),
            "f:1: CONV_1, field D parts: expected the group's 8 input channels whole (a grouped convolution's pieces have no "
            "partial sums), got 4x2");
}
