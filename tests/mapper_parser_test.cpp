// The mapper's parser (thesis 4.1): layer lists, chaining, the thesis's operation names, operator fusion,
// and clear errors for networks whose layers do not fit together.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mapper/activations.h"
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

// ---- graphs: named maps, layouts as views, element-wise blocks (docs/real_networks.md, "Graphs ...") ----

namespace {

const char* kFire = R"(input 8 8 3
conv 3 3 3 8 pad=1 as=stem
conv 1 1 8 4 as=sq
conv 1 1 4 6 in=sq as=e1
conv 3 3 4 6 pad=1 in=sq as=e3
concat in=e1,e3 as=cat
shuffle 3 as=sh
slice 2 5 as=part
act sigmoid ein=4 eout=7
)";

std::vector<ChannelSource> sources(std::initializer_list<std::pair<const char*, int>> l) {
  std::vector<ChannelSource> v;
  for (const auto& [m, c] : l) v.push_back({m, c});
  return v;
}

}  // namespace

TEST(MapperParser, ConcatSliceAndShuffleAreViewsOfTheirProducersChannels) {
  const ParsedNetwork n = parse_network(parse_layer_list(kFire, "fire.txt"));
  EXPECT_EQ(core_names(n), (std::vector<std::string>{"CONV_1", "CONV_2", "CONV_3", "CONV_4", "LUT_8"}));
  // both expands read the squeeze, not the layer before them
  EXPECT_EQ(n.find("CONV_3")->inputs, (std::vector<std::string>{"CONV_2"}));
  EXPECT_EQ(n.find("CONV_4")->inputs, (std::vector<std::string>{"CONV_2"}));
  ASSERT_EQ(n.views.size(), 3u);
  const MapView& cat = n.views[0];
  EXPECT_EQ(cat.name, "CAT_5");
  EXPECT_EQ(cat.shape, (Shape3{8, 8, 12}));
  EXPECT_EQ(cat.channels, sources({{"CONV_3", 0}, {"CONV_3", 1}, {"CONV_3", 2}, {"CONV_3", 3}, {"CONV_3", 4}, {"CONV_3", 5},
                                   {"CONV_4", 0}, {"CONV_4", 1}, {"CONV_4", 2}, {"CONV_4", 3}, {"CONV_4", 4}, {"CONV_4", 5}}));
  // 3 groups of 4: output j * 3 + i is input i * 4 + j
  const MapView& sh = n.views[1];
  EXPECT_EQ(sh.name, "SHUFFLE_6");
  EXPECT_EQ(sh.channels, sources({{"CONV_3", 0}, {"CONV_3", 4}, {"CONV_4", 2}, {"CONV_3", 1}, {"CONV_3", 5}, {"CONV_4", 3},
                                  {"CONV_3", 2}, {"CONV_4", 0}, {"CONV_4", 4}, {"CONV_3", 3}, {"CONV_4", 1}, {"CONV_4", 5}}));
  // a view of a view is resolved to the blocks' channels
  const MapView& part = n.views[2];
  EXPECT_EQ(part.name, "SLICE_7");
  EXPECT_EQ(part.shape, (Shape3{8, 8, 5}));
  EXPECT_EQ(part.channels, (std::vector<ChannelSource>(sh.channels.begin() + 2, sh.channels.begin() + 7)));
  const OperationBlock& lut = *n.find("LUT_8");
  EXPECT_EQ(lut.kind, BlockKind::Elementwise);
  EXPECT_EQ(lut.inputs, (std::vector<std::string>{"SLICE_7"}));
  EXPECT_EQ(lut.out(), (Shape3{8, 8, 5}));
  ASSERT_TRUE(lut.core_op().elementwise);
  EXPECT_EQ(lut.core_op().elementwise->table.size(), 256u);
  EXPECT_EQ(lut.core_op().elementwise->function, "sigmoid");
}

TEST(MapperParser, ElementwiseBlocksReadTheirMapsAndAMulByAVectorIsPerChannel) {
  const ParsedNetwork n = parse_network(parse_layer_list(R"(input 6 6 4
conv 3 3 4 4 pad=1 as=x
pool avg 6 6 as=gap
conv 1 1 4 4 act=none
act hardsigmoid ein=3 eout=7 as=gate
mul in=x,gate shift=7 as=se
add in=se,x shift=1 act=relu
affine shift=10 act=relu
)", "se.txt"));
  // the gate's table follows its convolution, which nothing else reads: it joins that block (operator fusion)
  EXPECT_EQ(core_names(n), (std::vector<std::string>{"CONV_1", "POOL_2", "CONV_3", "MUL_5", "ADD_6", "AFFINE_7"}));
  EXPECT_EQ(op_names(*n.find("CONV_3")), (std::vector<std::string>{"CONV_3", "QUAN_3", "LUT_4"}));
  EXPECT_EQ(n.find("CONV_3")->ops.back().kind, PrimitiveKind::Elementwise);
  const OperationBlock& mul = *n.find("MUL_5");
  EXPECT_EQ(mul.inputs, (std::vector<std::string>{"CONV_1", "CONV_3"}));
  EXPECT_EQ(mul.core_op().elementwise->op, EltOp::ChannelMul);  // the gate is [1,1,4]
  EXPECT_EQ(mul.out(), (Shape3{6, 6, 4}));
  const ElementwiseSpec& add = *n.find("ADD_6")->core_op().elementwise;
  EXPECT_EQ(add.op, EltOp::Add);
  EXPECT_EQ(n.find("ADD_6")->inputs, (std::vector<std::string>{"MUL_5", "CONV_1"}));
  EXPECT_TRUE(add.relu);
  EXPECT_EQ(add.shift, 1);
  // a layer list's affine draws its m and o per channel of its input, from its line
  const ElementwiseSpec& aff = *n.find("AFFINE_7")->core_op().elementwise;
  ASSERT_EQ(aff.scale.size(), 4u);
  ASSERT_EQ(aff.offset.size(), 4u);
  for (std::int32_t m : aff.scale) {
    EXPECT_GE(m, 1 << 8);
    EXPECT_LE(m, 1 << 10);
  }
}

TEST(MapperParser, AMapReadTwiceKeepsItsBlockAsItIs) {
  // CONV_1's output is read by the pooling and by the add: the pooling may not join its block (the add would
  // then read the pooled map), so it is a block of its own; likewise the residual end cannot add into CONV_3's
  // block, which the last layer reads too: an element-wise Add stands for it
  const ParsedNetwork n = parse_network(parse_layer_list(R"(input 8 8 4
conv 3 3 4 4 pad=1 as=a
pool max 2 2 stride=2
conv 3 3 4 4 pad=1 in=a as=b
residual end shortcut=identity in=a
conv 1 1 4 4 in=b
)", "twice.txt"));
  EXPECT_EQ(core_names(n), (std::vector<std::string>{"CONV_1", "POOL_2", "CONV_3", "ADD_4", "CONV_5"}));
  EXPECT_EQ(n.find("CONV_1")->fused_pool(), nullptr);
  EXPECT_EQ(n.find("ADD_4")->inputs, (std::vector<std::string>{"CONV_3", "CONV_1"}));
  EXPECT_EQ(n.find("ADD_4")->core_op().elementwise->shift, 0);
  EXPECT_EQ(n.find("CONV_5")->inputs, (std::vector<std::string>{"CONV_3"}));
  // read once, they fuse as before (MAT_ELE into the unit's last convolution)
  const ParsedNetwork once = parse_network(parse_layer_list(R"(input 8 8 4
conv 3 3 4 4 pad=1 as=a
conv 3 3 4 4 pad=1
residual end shortcut=identity in=a
)", "once.txt"));
  EXPECT_EQ(op_names(once.blocks.back()), (std::vector<std::string>{"PADD_2", "CONV_2", "ACTI_2", "QUAN_2", "MAT_ELE_2", "ACTI_2"}));
  EXPECT_EQ(once.blocks.back().inputs, (std::vector<std::string>{"CONV_1", "CONV_1"}));
}

TEST(MapperParser, CeilModePoolingPadsTheEnd) {
  const ParsedNetwork n = parse_network(parse_layer_list("input 7 7 2\nconv 1 1 2 2\npool max 3 3 stride=2 padend=1\n", "ceil.txt"));
  const OperationBlock& p = *n.find("POOL_2");
  EXPECT_EQ(op_names(p), (std::vector<std::string>{"PADD_2", "POOL_2"}));
  EXPECT_EQ(p.ops[0].pad, 0);
  EXPECT_EQ(p.ops[0].pad_end, 1);
  EXPECT_EQ(p.core_op().in, (Shape3{8, 8, 2}));
  EXPECT_EQ(p.out(), (Shape3{3, 3, 2}));  // ceil((7 - 3) / 2) + 1
}

TEST(MapperParser, GraphMistakesNameTheLineAndField) {
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2 in=nothing\n"),
            "net.txt:2: layer CONV_1, field in: no earlier layer writes a map named 'nothing' (name one with as=NAME, or read 'input')");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2 as=a\npool max 2 2 as=b\nconcat in=a,b\n"),
            "net.txt:4: layer CAT_3, field in: map 'b' [2,2,2] differs in width or height from the first, a [4,4,...]");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2\nslice 1 2\n"),
            "net.txt:3: layer SLICE_2, field COUNT: channels [1, 3) are not within the output of CONV_1 [4,4,2]");
  EXPECT_EQ(error_of("input 4 4 6\nshuffle 4\nconv 1 1 6 2\n"),
            "net.txt:2: layer SHUFFLE_1, field G: expected a divisor of the channels of the network input [4,4,6], got 4");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2 as=a\nconv 1 1 2 3 in=input as=b\nadd in=a,b\n"),
            "net.txt:4: layer ADD_3, field in: the two maps differ in shape: [4,4,2] and [4,4,3]");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2 as=a\nconv 1 1 2 2 as=a\n"),
            "net.txt:3: field as: the name 'a' is already taken by an earlier layer");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2\npool avg 2 2 padend=1\n"),
            "net.txt:3: layer POOL_2, field padend: end padding (a ceil-mode window) is for max pooling only: an average's divisor would differ");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2 as=a\nconv 1 1 2 2 in=input as=b\nconcat in=a,b\n"),
            "net.txt: the network ends in CAT_3, a layout (concatenation, slice or shuffle) of maps: its output must be a computing layer's");
  EXPECT_EQ(error_of("input 4 4 2\nact swish\n"),
            "net.txt:2: field FUNC: unknown activation 'swish' (expected one of relu, relu6, sigmoid, hardsigmoid, hardswish, silu, tanh, leakyrelu)");
  EXPECT_EQ(error_of("input 4 4 2\nadd in=input\n"), "net.txt:2: field in: 'add' reads two maps, in=A,B");
  EXPECT_EQ(error_of("input 4 4 2\nconv 1 1 2 2\nadd in=input,input shifta=22\n"), "net.txt:3: field shifta: expected at most 21, got 22");
}

TEST(MapperParser, ActivationTablesRoundTheFloatFunctionAtTheScales) {
  // sigmoid at e_in 4 (x / 16), e_out 7 (y * 128): t[x + 128] = round_half_even(sigmoid(x / 16) * 128), at most 127
  const std::vector<std::int8_t> t = activation_table(default_activation("sigmoid"), 4, 7);
  EXPECT_EQ(t[128], 64);        // sigmoid(0) = 0.5
  EXPECT_EQ(t[128 + 16], 94);   // sigmoid(1) * 128 = 93.58
  EXPECT_EQ(t[128 - 16], 34);   // sigmoid(-1) * 128 = 34.42
  EXPECT_EQ(t[255], 127);       // sigmoid(127/16) * 128 = 127.96: saturated
  EXPECT_EQ(t[0], 0);           // sigmoid(-8) * 128 = 0.04
  // hardswish at e 4 in and out: x * relu6(x + 3) / 6; x = 1 (16): 16 * 4 / 6 = 10.67 -> 11; x = -1: -2 / 6 * 16 = -5.33 -> -5
  const std::vector<std::int8_t> h = activation_table(default_activation("hardswish"), 4, 4);
  EXPECT_EQ(h[128 + 16], 11);
  EXPECT_EQ(h[128 - 16], -5);
  EXPECT_EQ(h[128 - 64], 0);    // x = -4: 0
  // half to even: leakyrelu 0.5 at e 0 -> 0: x = -3 gives -1.5 -> -2, x = -1 gives -0.5 -> -0
  Activation leaky = default_activation("leakyrelu");
  leaky.alpha = 0.5;
  const std::vector<std::int8_t> l = activation_table(leaky, 0, 0);
  EXPECT_EQ(l[128 - 3], -2);
  EXPECT_EQ(l[128 - 1], 0);
  EXPECT_EQ(l[128 + 5], 5);
}

TEST(MapperParser, AnActivationTableJoinsTheConvolutionBeforeItUnlessAnotherLayerReadsIt) {
  const ParsedNetwork n = parse_network(parse_layer_list(R"(input 8 8 4
conv 3 3 4 4 pad=1 act=none
act silu ein=4 eout=4
conv 3 3 4 4 pad=1 act=none as=x
act silu ein=4 eout=4
add in=x,input
)", "fuse.txt"));
  EXPECT_EQ(core_names(n), (std::vector<std::string>{"CONV_1", "CONV_3", "LUT_4", "ADD_5"}));
  EXPECT_EQ(op_names(*n.find("CONV_1")), (std::vector<std::string>{"PADD_1", "CONV_1", "QUAN_1", "LUT_2"}));
  EXPECT_EQ(n.find("CONV_3")->inputs, (std::vector<std::string>{"CONV_1"}));
  EXPECT_EQ(n.find("ADD_5")->inputs, (std::vector<std::string>{"CONV_3", "input"}));  // x: the map before the table
}

TEST(MapperParser, AGroupedConvolutionCarriesItsGroupsAndTheirWeightCount) {
  const ParsedNetwork n = parse_network(parse_layer_list(
      "input 8 8 32\nconv 3 3 32 32 pad=1 groups=32\nconv 3 3 32 32 pad=1 groups=4\nconv 1 1 32 64 groups=4 bias=seed\n",
      "net.txt"));
  ASSERT_EQ(n.blocks.size(), 3u);
  const Operation& dw = n.blocks[0].core_op();
  EXPECT_EQ(dw.groups, 32);
  EXPECT_EQ(dw.weight_depth(), 1);
  EXPECT_EQ(n.blocks[1].core_op().groups, 4);
  EXPECT_EQ(n.blocks[1].core_op().weight_depth(), 8);
  EXPECT_EQ(n.blocks[2].core_op().weight_depth(), 8);
  ASSERT_NE(n.blocks[2].core_op().bias, nullptr);
  EXPECT_EQ(n.blocks[2].core_op().bias->size(), 64u);
  // without groups= a convolution has one group: every input channel
  EXPECT_EQ(parse_network(parse_layer_list("input 4 4 2\nconv 1 1 2 3\n", "net.txt")).blocks[0].core_op().groups, 1);
  // trained weights: C x D/G x Hf x Wf of them
  Network net = parse_layer_list("input 4 4 8\nconv 3 3 8 4 pad=1 groups=2\n", "net.txt");
  net.layers[0].weights = std::make_shared<const std::vector<std::int8_t>>(std::vector<std::int8_t>(4 * 4 * 9, 1));
  EXPECT_NO_THROW(parse_network(net));
  net.layers[0].weights = std::make_shared<const std::vector<std::int8_t>>(std::vector<std::int8_t>(4 * 8 * 9, 1));
  try {
    parse_network(net);
    ADD_FAILURE() << "no error";
  } catch (const NetworkError& e) {
    EXPECT_STREQ(e.what(), "net.txt:2: layer CONV_1, field weights: expected 144 values, got 288");
  }
}

TEST(MapperParser, GroupsMustDivideTheChannelsAndFilters) {
  EXPECT_EQ(error_of("input 4 4 6\nconv 3 3 6 8 groups=4\n"),
            "net.txt:2: layer CONV_1, field groups: expected a divisor of the input channels D = 6 and of the filters C = 8, got 4");
  EXPECT_EQ(error_of("input 4 4 8\nconv 3 3 8 6 groups=4\n"),
            "net.txt:2: layer CONV_1, field groups: expected a divisor of the input channels D = 8 and of the filters C = 6, got 4");
  EXPECT_EQ(error_of("input 4 4 8\nconv 3 3 8 8 groups=0\n"), "net.txt:2: field groups: expected at least 1, got 0");
  EXPECT_EQ(error_of("input 4 4 8\nconv 3 3 8 8\npool max 2 2 groups=2\n"), "net.txt:3: unknown option 'groups' for pool");
}
