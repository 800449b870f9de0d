// The mapper's parser (thesis 4.1): layer lists, chaining, the thesis's operation names, operator fusion,
// and clear errors for networks whose layers do not fit together.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mapper/network.h"
#include "mapper/parser.h"

using namespace s2::mapper;

namespace {

std::vector<std::string> core_names(const ParsedNetwork& n) {
  std::vector<std::string> v;
  for (const auto& b : n.blocks) v.push_back(b.name());
  return v;
}

std::vector<std::string> op_names(const OperationBlock& b) {
  std::vector<std::string> v;
  for (const auto& o : b.ops) v.push_back(o.name);
  return v;
}

// The error a layer list gets, or "" if it parses.
std::string error_of(const std::string& text) {
  try {
    parse_network(parse_layer_list(text, "net.txt"));
  } catch (const NetworkError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MapperParser, Vgg16BlocksAndNamesAreTheThesis) {
  const ParsedNetwork n = parse_network(load_network("vgg16"));
  // thesis Tables G.1/I.1: every pooling is 2x2/2, so it joins the convolution before it (no pooling block)
  const std::vector<std::string> want = {"CONV_1",  "CONV_2",  "CONV_4",  "CONV_5",  "CONV_7",  "CONV_8",
                                         "CONV_9",  "CONV_11", "CONV_12", "CONV_13", "CONV_15", "CONV_16",
                                         "CONV_17", "FC_19",   "FC_20",   "FC_21"};
  EXPECT_EQ(core_names(n), want);
  const OperationBlock& c2 = *n.find("CONV_2");
  EXPECT_EQ(op_names(c2), (std::vector<std::string>{"PADD_2", "CONV_2", "ACTI_2", "QUAN_2", "POOL_3"}));
  EXPECT_EQ(c2.core_op().in, (Shape3{226, 226, 64}));
  EXPECT_EQ(c2.core_op().out, (Shape3{224, 224, 64}));
  ASSERT_NE(c2.fused_pool(), nullptr);
  EXPECT_EQ(c2.out(), (Shape3{112, 112, 64}));
  const OperationBlock& fc19 = *n.find("FC_19");
  EXPECT_EQ(fc19.kind, BlockKind::MatMul);
  EXPECT_EQ(fc19.core_op().in.W, 7 * 7 * 512);
  EXPECT_EQ(fc19.core_op().out.W, 4096);
  EXPECT_EQ(n.find("FC_21")->core_op().out.W, 1024);  // as thesis Table G.1 has it
  EXPECT_EQ(n.find("CONV_17")->out(), (Shape3{7, 7, 512}));
}

TEST(MapperParser, Resnet50NumbersShortcutsAsTheThesisDoes) {
  const ParsedNetwork n = parse_network(load_network("resnet50"));
  // thesis 5.2.2: CONV_42 and CONV_SC_14 are stride-2 convolutions
  ASSERT_NE(n.find("CONV_42"), nullptr);
  EXPECT_EQ(n.find("CONV_42")->core_op().stride, 2);
  ASSERT_NE(n.find("CONV_SC_14"), nullptr);
  EXPECT_EQ(n.find("CONV_SC_14")->core_op().stride, 2);
  // the 3x3/2 max pooling is a pooling block with its padding
  const OperationBlock& p2 = *n.find("POOL_2");
  EXPECT_EQ(p2.kind, BlockKind::Pooling);
  EXPECT_EQ(op_names(p2), (std::vector<std::string>{"PADD_2", "POOL_2"}));
  EXPECT_EQ(p2.out(), (Shape3{56, 56, 64}));
  // the first bottleneck: projection shortcut and addition carry the number of its last convolution; as
  // the thesis's parser orders them, the last convolution comes first and the projection's block adds it
  const OperationBlock& c5 = *n.find("CONV_5");
  EXPECT_EQ(op_names(c5), (std::vector<std::string>{"CONV_5", "QUAN_5"}));
  EXPECT_EQ(c5.inputs, (std::vector<std::string>{"CONV_4"}));
  const OperationBlock& sc5 = *n.find("CONV_SC_5");
  EXPECT_EQ(op_names(sc5), (std::vector<std::string>{"CONV_SC_5", "QUAN_SC_5", "MAT_ELE_5", "ACTI_5"}));
  EXPECT_EQ(sc5.inputs, (std::vector<std::string>{"POOL_2", "CONV_5"}));
  EXPECT_EQ(n.find("CONV_6")->inputs, (std::vector<std::string>{"CONV_SC_5"}));  // the unit's output
  EXPECT_EQ(n.find("CONV_8")->inputs, (std::vector<std::string>{"CONV_7", "CONV_SC_5"}));  // identity shortcut
  EXPECT_EQ(op_names(*n.find("CONV_8")), (std::vector<std::string>{"CONV_8", "QUAN_8", "MAT_ELE_8", "ACTI_8"}));
  std::size_t sc = 0, last = 0;
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    if (n.blocks[i].name() == "CONV_SC_5") sc = i;
    if (n.blocks[i].name() == "CONV_5") last = i;
  }
  EXPECT_EQ(sc, last + 1);
  EXPECT_EQ(n.find("CONV_50")->out(), (Shape3{7, 7, 2048}));
  EXPECT_EQ(n.find("POOL_51")->out(), (Shape3{1, 1, 2048}));
  EXPECT_EQ(n.find("FC_52")->core_op().out.W, 1000);
  int convs = 0;
  for (const auto& b : n.blocks) convs += b.kind == BlockKind::Convolution;
  EXPECT_EQ(convs, 49 + 4);  // 49 convolutions + 4 projection shortcuts
}

TEST(MapperParser, ChannelMismatchNamesLayerAndField) {
  const std::string e = error_of("input 32 32 3\nconv 3 3 3 16 pad=same\nconv 3 3 8 16\n");
  EXPECT_NE(e.find("net.txt:3"), std::string::npos) << e;
  EXPECT_NE(e.find("layer CONV_2, field D"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 16"), std::string::npos) << e;
  EXPECT_NE(e.find("got 8"), std::string::npos) << e;
}

TEST(MapperParser, FullyConnectedInputMustBeTheFlattenedMap) {
  const std::string e = error_of("input 8 8 4\nconv 3 3 4 4\nfc 100 10\n");
  EXPECT_NE(e.find("layer FC_2, field IN: expected 144"), std::string::npos) << e;
}

TEST(MapperParser, OtherInconsistenciesAreRefused) {
  EXPECT_NE(error_of("input 4 4 3\nconv 5 5 3 8\n").find("field Wf: expected at most 4"), std::string::npos);
  EXPECT_NE(error_of("input 8 8 4\nresidual begin\nconv 1 1 4 8\nresidual end shortcut=identity\n")
                .find("layer MAT_ELE_1, field shortcut"),
            std::string::npos);
  EXPECT_NE(error_of("input 8 8 4\nresidual begin\nconv 3 3 4 4\n").find("never ended"), std::string::npos);
  EXPECT_NE(error_of("input 8 8 4\nconv 3 3 4 4 strid=2\n").find("unknown option 'strid'"), std::string::npos);
  EXPECT_NE(error_of("input 8 8 4\nconv 3 3 x 4\n").find("field D: expected an integer, got 'x'"), std::string::npos);
  EXPECT_NE(error_of("input 8 8 4\ndense 3\n").find("unknown keyword 'dense'"), std::string::npos);
  EXPECT_NE(error_of("conv 3 3 4 4\n").find("'input W H D' line must come before"), std::string::npos);
  EXPECT_NE(error_of("input 8 8 4\nconv 2 2 4 4 pad=same\n").find("field pad"), std::string::npos);
}

TEST(MapperParser, UnreadableFileIsAnError) {
  EXPECT_THROW(load_network("/nonexistent/net.txt"), NetworkError);
}

TEST(MapperParser, AbsurdSizesAreRefusedBeforeAnythingIsAllocated) {
  // a 10^10-pixel input, a map of 2^30 values after a layer, a field beyond int, a million layers
  EXPECT_EQ(error_of("input 100000 100000 3\nconv 3 3 3 64\n"), "net.txt:1: field W: expected at most 16384, got 100000");
  EXPECT_NE(error_of("input 16384 16384 3\n").find("net.txt:1: expected an input of at most 134217728 values"), std::string::npos);
  EXPECT_EQ(error_of("input 4096 4096 3\nconv 3 3 3 64 pad=same\n"),
            "net.txt:2: layer CONV_1, field size: expected feature maps of at most 134217728 values, got "
            "[4096,4096,64] (1073741824)");
  EXPECT_EQ(error_of("input 8 8 4\nconv 1 1 4 99999999999\n"), "net.txt:2: field C: expected at most 65536, got 99999999999");
  std::string many = "input 8 8 4\n";
  for (int i = 0; i < 20000; ++i) many += "conv 1 1 4 4\n";
  EXPECT_EQ(error_of(many), "net.txt:10002: expected at most 10000 layers");
  // the thesis's networks are far inside the bounds
  EXPECT_NO_THROW(parse_network(load_network("vgg16")));
  EXPECT_NO_THROW(parse_network(load_network("resnet50")));
}

// Only a max pooling joins the convolution block before it (the PE pools in place by the maximum); a global
// average pooling right after a convolution, as an ONNX model's GlobalAveragePool gives it, is its own block.
TEST(MapperParser, OnlyMaxPoolingJoinsTheConvolutionBlock) {
  const ParsedNetwork max = parse_network(parse_layer_list("input 8 8 4\nconv 3 3 4 8 pad=1\npool max 2 2\n", "t"));
  ASSERT_EQ(max.blocks.size(), 1u);
  EXPECT_NE(max.blocks[0].fused_pool(), nullptr);
  const ParsedNetwork avg = parse_network(parse_layer_list("input 8 8 4\nconv 3 3 4 8 pad=1\npool avg 8 8\n", "t"));
  ASSERT_EQ(avg.blocks.size(), 2u);
  EXPECT_EQ(avg.blocks[1].kind, BlockKind::Pooling);
}
