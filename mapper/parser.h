// The parser (thesis 4.1): chains a network's layers (each layer's input is the previous one's output),
// fills in every size, checks that the layers fit together, decomposes each layer into the primitive
// operations the hardware runs (padding, convolution, matrix multiplication, ReLU, quantization, pooling,
// element-wise addition) and fuses them into operation blocks around one core operation (convolution,
// pooling or matrix multiplication) that the splitter splits and the distributor places.
//
// Names follow the thesis: one counter over the network's convolution, pooling and fully connected
// layers, and every operation of a layer carries its layer's number (CONV_1, PADD_1, ACTI_1, QUAN_1,
// POOL_3, FC_19 ...). A residual block's projection shortcut and its addition carry the number of the
// block's last convolution (CONV_SC_14, MAT_ELE_14), as thesis 5.2.2 names them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "network.h"

namespace s2::mapper {

// Elementwise: an ElementwiseSpec's operation on the ARM (a Table, Affine, Add, Mul or ChannelMul block)
enum class PrimitiveKind { Padding, Convolution, MatMul, ReLU, Quantization, Pooling, ElementwiseAdd, Elementwise };
const char* to_string(PrimitiveKind k);

struct Operation {
  std::string name;        // PADD_1, CONV_1, CONV_SC_14, ACTI_1, QUAN_1, POOL_3, FC_19, MAT_ELE_5 ...
  PrimitiveKind kind = PrimitiveKind::Convolution;
  int layer = 0;           // the layer number in the name
  Shape3 in;               // input (for a convolution or pooling: after padding)
  Shape3 out;
  // convolution: filter [Wf,Hf,in.D/groups,out.D]; pooling: window [Wf,Hf]; padding: pad on every side
  int Wf = 1, Hf = 1, stride = 1, pad = 0;
  // convolution: its groups (LayerSpec::groups): filter c reads input channels [g * in.D/groups, (g+1) * in.D/groups)
  // of its group g = c / (out.D/groups) only
  int groups = 1;
  PoolType pool = PoolType::Max;
  int shift = -1;  // quantization: the right shift its layer gives (LayerSpec::shift); -1: the distributor's rule
  // quantization: one right shift per output channel (LayerSpec::shifts), null: `shift` for all
  std::shared_ptr<const std::vector<std::uint8_t>> shifts;
  int saturate_high = 127;  // quantization: its largest int8 result (LayerSpec::clamp_high: ReLU6's quantized 6)
  // convolution, matrix multiplication: the layer's trained weights (LayerSpec::weights), null: drawn
  std::shared_ptr<const std::vector<std::int8_t>> weights;
  // convolution, matrix multiplication: the layer's per-output-channel int32 bias (LayerSpec::bias), null: none
  std::shared_ptr<const std::vector<std::int32_t>> bias;
  // pooling: zero padding after the last row and column on top of `pad` (LayerSpec::pad_end)
  int pad_end = 0;
  // element-wise: what the ARM computes (LayerSpec::elementwise)
  std::shared_ptr<const ElementwiseSpec> elementwise;
  bool on_mla() const { return kind == PrimitiveKind::Convolution || kind == PrimitiveKind::MatMul; }
  // a convolution's filter depth: the input channels of one group (all of them without groups)
  int weight_depth() const { return in.D / groups; }
};

// Elementwise: an int8 operation of the ARM on one or two maps (EltOp), pieces of channels and rows
enum class BlockKind { Convolution, Pooling, MatMul, Elementwise };
const char* to_string(BlockKind k);

// Operations whose intermediate results stay in the PE (thesis 4.1, operator fusion); only the core
// operation is split, the others follow its split.
struct OperationBlock {
  BlockKind kind = BlockKind::Convolution;
  std::vector<Operation> ops;
  std::size_t core = 0;              // index of the core operation in ops
  std::vector<std::string> inputs;   // the blocks whose outputs it reads ("input" = the network input)
  int workers = 0;                   // the PEs that work on it (LayerSpec::workers; 0: every PE)
  const Operation& core_op() const { return ops[core]; }
  const std::string& name() const { return ops[core].name; }
  // the fused pooling of a convolution block (nullptr if none)
  const Operation* fused_pool() const;
  Shape3 out() const { return ops.back().out; }
};

// A map no block computes: other maps' channels gathered (a Concat, a Slice, a Shuffle). A block that reads it
// reads each channel plane where it lies, as the DRAM holds maps in [C][H][W] order: a concatenation's producers
// write their planes side by side, a slice is a range of planes, a shuffle a permutation of them (no copy).
struct ChannelSource {
  std::string map;  // a block's name, or "input"
  int channel = 0;
  bool operator==(const ChannelSource&) const = default;
};
struct MapView {
  std::string name;   // CAT_n, SLICE_n, SHUFFLE_n
  Shape3 shape;
  std::vector<ChannelSource> channels;  // channel k of the view is channels[k] (views of views resolved)
  int line = 0;
};

struct ParsedNetwork {
  std::string name;
  Shape3 input;
  std::vector<OperationBlock> blocks;   // in execution order
  std::vector<MapView> views;           // the maps blocks read that no block computes
  // The map a block or view names (OperationBlock::inputs) is: a view, or nullptr (a block's output or "input").
  const MapView* find_view(const std::string& name) const;
  const OperationBlock* find(const std::string& core_name) const;
};

// QUAN's right shift for test data (a layer without shift=): about half the bits a sum of K products of
// random int8 values grows by (the thesis gives no shift).
int test_data_shift(int K);

// The block's first operation of kind k, or nullptr.
const Operation* find_op(const OperationBlock& b, PrimitiveKind k);

// Throws NetworkError naming the source, line, layer (by its thesis name) and field for a network whose
// layers do not fit together (a channel mismatch, a filter larger than its input, a shortcut that cannot
// be added, ...).
ParsedNetwork parse_network(const Network& net);

}  // namespace s2::mapper
