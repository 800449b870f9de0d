// A CNN as the mapper receives it: an input size and a list of layers (convolution, pooling, fully
// connected) with residual blocks, written in the layer-list format (mapper/README.md). VGG-16 and
// ResNet-50 are built in, written in that same format, so they go through the same checks as a user's file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace s2::mapper {

// What a network may ask for, refused before anything is allocated (the model holds every feature map
// in memory and the splitter's search grows with the map's sides): far above VGG-16's and ResNet-50's
// largest (a 224 x 224 input, 3.2 M values in a map, 512 channels, 55 layers).
inline constexpr int kMaxSide = 16384;                // W, H, filter sides, strides, padding
inline constexpr int kMaxChannels = 65536;            // D, C, FC outputs
inline constexpr long long kMaxMapValues = 1LL << 27;  // values in one feature map (checked by the parser)
inline constexpr std::size_t kMaxLayers = 10000;
inline constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

// A network that cannot be what it says: the message names the file, line, layer and field.
class NetworkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Conv, Pool, Fc: the thesis's layers (a block on the MLA or the ARM); ResidualBegin/End: a residual unit;
// Concat, Slice, Shuffle: layouts (channels of maps gathered: no computation, the maps' [C][H][W] planes
// are read where they lie); Elementwise: an int8 operation on the ARM (ElementwiseSpec).
enum class LayerKind { Conv, Pool, Fc, ResidualBegin, ResidualEnd, Concat, Slice, Shuffle, Elementwise };
enum class PoolType { Max, Avg };
enum class Shortcut { Identity, Projection };

struct Shape3 {
  int W = 0, H = 0, D = 0;  // width, height, channels
  long long elements() const { return static_cast<long long>(W) * H * D; }
  bool operator==(const Shape3&) const = default;
};
std::string to_string(const Shape3& s);  // "[W,H,D]"

// An element-wise operation on int8 maps, carried out by the ARM (docs/real_networks.md, "Element-wise
// operations"). Every result is saturated to [-128, 127] (an Affine with `relu`, a Table as built, to [0, 127]).
enum class EltOp {
  Table,       // y = table[t][x + 128]: any int8 -> int8 function (an activation at its scales: tables.h)
  Affine,      // y = (x * scale[c] + offset[c]) >> shift, per channel c (a BatchNorm that no layer absorbs)
  Add,         // y = ((a << shift_a) + (b << shift_b)) >> shift: two maps of one shape
  Mul,         // y = (a * b) >> shift: two maps of one shape
  ChannelMul,  // y = (a * b[c]) >> shift: a map times a per-channel vector b, [1,1,C] (squeeze-and-excitation)
};
const char* to_string(EltOp op);  // "table", "affine", "add", "mul", "channel_mul"
struct ElementwiseSpec {
  EltOp op = EltOp::Table;
  // Table: 256 entries per table, indexed by x + 128; one table for every channel, or one per channel
  std::vector<std::int8_t> table;
  std::string function;  // Table: what it computes ("sigmoid", "hardswish", ...), for reports
  std::vector<std::int32_t> scale, offset;  // Affine: one per channel
  int shift = 0;                // right shift of the int32 result (arithmetic: rounds toward minus infinity)
  int shift_a = 0, shift_b = 0;  // Add: left shifts that bring both operands to one exponent
  bool relu = false;            // Affine, Add: max(0, .) before saturating
  int tables() const { return static_cast<int>(table.size() / 256); }
};

// One line of a layer list.
struct LayerSpec {
  LayerKind kind = LayerKind::Conv;
  // conv: filter [Wf,Hf,D,C]; pool: window [Wf,Hf]; fc: D inputs, C outputs
  int Wf = 1, Hf = 1, D = 0, C = 0;
  int stride = 1;
  int pad = 0;             // zero padding on every side (conv and pool)
  bool relu = true;        // conv and fc: a ReLU follows
  PoolType pool = PoolType::Max;
  Shortcut shortcut = Shortcut::Identity;  // residual end
  // conv, fc and a projection's residual end: QUAN's right shift (`shift=N`); -1: the distributor's rule
  // for test data (mapper/README.md, "Distributor")
  int shift = -1;
  // conv, fc and a projection's residual end: QUAN's right shift per output channel (a layer whose weights are
  // quantized per channel: docs/real_networks.md), each 0..31; null: `shift` for every channel
  std::shared_ptr<const std::vector<std::uint8_t>> shifts;
  // conv, pool, fc: the PEs that work on the layer (`workers=N`; 0: every PE the target has), as the
  // OctopuScheduler paper gives its MLP's layers 8, 4 and 1 workers
  int workers = 0;
  // conv, fc and a projection's residual end: the trained int8 weights, as ONNX and PyTorch order them
  // (conv [C][D][Hf][Wf], fc [OUT][IN]); null: drawn from the seed like the test data. A layer list has
  // none; an ONNX model (mapper/onnx/import.h) brings them.
  std::shared_ptr<const std::vector<std::int8_t>> weights;
  // conv, fc and a projection's residual end: the per-output-channel int32 bias the ARM adds to the sums
  // before the ReLU and QUAN's shift (at the sums' scale, 2^-(e_x + e_w)); null: none. An ONNX model brings
  // it; a layer list's `bias=seed` draws it from the layer's number (drawn_bias).
  std::shared_ptr<const std::vector<std::int32_t>> bias;
  bool bias_drawn = false;
  // conv, fc: QUAN's largest int8 result (127; a Clip such as ReLU6 lowers it to its quantized bound)
  int clamp_high = 127;  // `bias=seed`: the parser draws the bias (drawn_bias)
  // The maps a layer reads (`in=A,B`): names given by earlier layers' `as=`, or "input"; empty: the output of
  // the layer before it (a chain). Concat reads two or more, Add and Mul two, the others one. A residual end
  // with `in=X` takes X as the unit's input (what its shortcut adds, or its projection reads) instead of the
  // map at the open `residual begin` (which it then needs none of).
  std::vector<std::string> inputs;
  std::string name;  // `as=NAME`: later layers may read this layer's output by NAME
  int first = 0, count = 0;  // Slice: channels [first, first + count) of its input
  // Shuffle: channel c = i * (D / groups) + j moves to j * groups + i (ShuffleNet). Conv (`groups=G`): a grouped
  // convolution, filters [C][D/G][Hf][Wf]: filter c reads only the D/G input channels of its group c / (C/G)
  int groups = 1;
  // Pool: zero padding after the last row and column on top of `pad` (a ceil-mode pooling's last window
  // over the edge; a max pooling only, of a map that cannot be negative)
  int pad_end = 0;
  std::shared_ptr<const ElementwiseSpec> elementwise;  // Elementwise
  int line = 0;            // where it was written
};

struct Network {
  std::string name;
  std::string source;      // file name, or "built-in"
  Shape3 input;
  std::vector<LayerSpec> layers;
  // an imported model's power-of-two scales (a real value is int8 * 2^-exponent): its input's, to
  // quantize a float input, and its output's, to read the result; none for a layer list
  std::optional<int> input_exponent, output_exponent;
  // an imported model's final Softmax, LogSoftmax or Sigmoid, left to the host ("" if none): the output is its input
  std::string host_activation;
  // an imported model whose output is a flattened map ([1, C*H*W], as a convolutional head's Flatten gives)
  bool output_flattened = false;
  // what an import folded, lowered or left to the host, one line per node (run-net and check print them)
  std::vector<std::string> notes;
};

// The bias a layer list's `bias=seed` gives layer `line` with `outputs` channels and QUAN shift `shift`:
// drawn from the line, as large as a few steps of the layer's output (+-2^(shift+3)),
// so that it changes the result without drowning it.
std::vector<std::int32_t> drawn_bias(int line, int outputs, int shift);
// A layer list's `affine` (no trained values): per channel m in [2^(shift-2), 2^shift] (the map scaled by 1/4
// to 1) and o within a few output steps (+-2^(shift+3)), drawn from the line; `e.shift` given.
void draw_affine(int line, int channels, ElementwiseSpec& e);

// Reads a layer list; syntax errors are NetworkError naming the file, line and field. Shapes are checked
// later, by the parser (parse_network in parser.h).
Network parse_layer_list(const std::string& text, const std::string& source);
Network read_layer_list(const std::string& path);

// The thesis's networks (thesis 2.2, Appendices G/I), as layer lists.
const std::string& vgg16_layer_list();
const std::string& resnet50_layer_list();
// "vgg16", "resnet50", an ONNX model (a path ending in .onnx: mapper/onnx/import.h, without calibration), or a
// layer-list file.
Network load_network(const std::string& name_or_path);
// Whether `name` is a built-in network's (vgg16, resnet50) rather than a file.
bool is_builtin_network(const std::string& name);

}  // namespace s2::mapper
