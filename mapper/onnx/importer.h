// The ONNX import's reader (import.h): one model read node by node into the layer list an equivalent
// file gives. Inside the mapper only; its parts by role:
//   graph.cpp          reading and checking the protobuf graph: tensors, the input, each node's inputs,
//                      attributes, scales and window, and the node's op type to the function that takes it
//   layers.cpp         the nodes that become layers (Conv, Gemm / MatMul, pooling, ReLU, Clip, Add, flattening)
//   elementwise.cpp    the ARM's element-wise operations (activation tables, a BatchNorm as an affine, Mul) and
//                      the layouts (Concat, Split / Slice, ShuffleNet's channel shuffle), ReduceMean / ReduceMax
//   folds.cpp          the nodes that fold into a layer or only give scales and constants (QuantizeLinear,
//                      DequantizeLinear, Constant, BatchNormalization, a constant Add, Pad, Identity / Dropout,
//                      a final Softmax / LogSoftmax / Sigmoid)
//   chain.cpp          the walk over the graph in its order: residual units, the maps each layer reads, the layer list
//   quantize.cpp       the exponents (calibration of a float model), each layer's shift, weights and bias
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mapper/activations.h"
#include "mapper/onnx/import.h"

// Not "onnx": that is the protobuf classes' namespace.
namespace s2::mapper::onnx_reader {

// A tensor's values are bounded by its data: its dims must give exactly the bytes (or values) its file or
// external file holds, checked before anything is allocated, so a forged dims field cannot make the reader
// allocate more than the data present.
// the exponent an element-wise layer's tables and parameters are built at when the maps' are unknown (a float
// model without calibration): they then map and their clocks count, their values are stand-ins
inline constexpr int kPlaceholderExponent = 4;

// The ops the import takes, in the order its messages list them, comma-separated.
std::string supported_ops();
std::string dims_str(const std::vector<std::int64_t>& d);
// bytes of one element of the types the import reads; 0: another type
std::size_t element_bytes(int dtype);
// one element of raw_data (little-endian, as the host)
double raw_value(int dtype, const char* p);
// A constant's value as an integer, clamped to +-2^62 (a forged value would otherwise overflow the cast).
inline std::int64_t to_i64(double v) {
  if (!(v == v)) return 0;
  return static_cast<std::int64_t>(std::clamp(v, -4.6e18, 4.6e18));
}
inline std::string in_quotes(const std::string& name) { return "'" + name + "'"; }
// 2^-e as a text ("2^-5"), for messages about scales
inline std::string scale_str(int e) { return "2^" + std::to_string(-e); }

// A constant tensor (an initializer, a Constant node's value, or one of those quantized / dequantized).
struct Const {
  int dtype = 0;  // onnx::TensorProto::DataType
  std::vector<std::int64_t> dims;
  std::vector<double> v;  // every type the import reads is exact in a double (int64 up to 2^53)
  // an integer tensor a DequantizeLinear gave a scale: real value = v * scale
  std::optional<double> scale;
  // a DequantizeLinear's per-axis scales where they differ (per-channel weights, their bias), along `axis`;
  // empty: `scale` for every value
  std::vector<double> scales;
  int axis = 0;
  std::string what;  // "initializer 'W'", "output 'w' of node X (DequantizeLinear)"
  bool all_zero() const {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
  }
  bool is_float() const { return dtype == onnx::TensorProto::FLOAT || dtype == onnx::TensorProto::DOUBLE; }
};

// A feature map: [1,C,H,W] (rank 4) or, flattened, [1,N] (rank 2) or [N] (rank 1), stored {N,1,1}.
struct Act {
  Shape3 shape;
  int rank = 4;
  int cls = 0;  // its exponent's class (Scales)
  std::vector<std::int64_t> dims() const {
    if (rank == 4) return {1, shape.D, shape.H, shape.W};
    if (rank == 2) return {1, shape.W};
    return {shape.W};
  }
};

// The exponents of the maps: one class per map that has its own; a pooling, a flattening, a folded ReLU and
// a residual addition keep their input's (the hardware does not rescale them), so they join its class.
struct Scales {
  std::vector<int> parent;
  std::vector<std::optional<int>> e;
  std::vector<std::string> by;     // the node that set e, for messages
  std::vector<std::string> calib;  // the tensor whose float values calibrate it (a float model)
  // tensors calibrated with it: a concatenation's group takes the largest |value| over all its maps
  std::vector<std::vector<std::string>> also;
  int make(const std::string& calib_tensor) {
    parent.push_back(static_cast<int>(parent.size()));
    e.emplace_back();
    by.emplace_back();
    calib.push_back(calib_tensor);
    also.emplace_back();
    return parent.back();
  }
  int root(int c) {
    while (parent[c] != c) c = parent[c] = parent[parent[c]];
    return c;
  }
  // "" or why not
  std::string set(int c, int exp, const std::string& who) {
    c = root(c);
    if (e[c] && *e[c] != exp)
      return "its scale " + scale_str(exp) + " differs from " + scale_str(*e[c]) + " that " + by[c] +
             " gave the same map (the hardware does not rescale a map between layers)";
    e[c] = exp;
    by[c] = who;
    return "";
  }
  // One class for a and b, calibrated on calib_tensor (and what either was calibrated with too, if `join`: a
  // concatenation's inputs and output).
  std::string merge(int a, int b, const std::string& calib_tensor, bool join = false) {
    a = root(a);
    b = root(b);
    if (a != b && e[a] && e[b] && *e[a] != *e[b])
      return "maps at scales " + scale_str(*e[a]) + " (" + by[a] + ") and " + scale_str(*e[b]) + " (" + by[b] +
             ") meet here, and the hardware has one exponent for them";
    if (join) {
      also[a].push_back(calib[a]);
      also[a].push_back(calib[b]);
    }
    if (a != b) {
      parent[b] = a;
      if (!e[a] && e[b]) {
        e[a] = e[b];
        by[a] = by[b];
      }
      also[a].insert(also[a].end(), also[b].begin(), also[b].end());
    }
    calib[a] = calib_tensor;
    return "";
  }
};

enum class Op { Conv, Fc, Relu, Clip, MaxPool, AvgPool, Flatten, Add, Concat, Slice, Shuffle, Table, Affine, Mul };

// A node that computes (the Q/DQ nodes and constants are gone: they only give scales and weights).
struct Node {
  Op op = Op::Conv;
  int index = 0;  // 1-based, in the graph's node list
  std::string label;
  std::vector<std::string> in;  // feature maps (canonical names): one; two for Add and Mul; a Concat's all
  std::string out;
  int kW = 1, kH = 1, stride = 1, pad = 0;  // conv, pools
  int C = 0, D = 0;                         // conv: filters, channels; fc: outputs, inputs
  // conv and fc weights in the hardware's order (conv [C][D][Hf][Wf], fc [OUT][IN]): float (to quantize)
  // or int8 with their exponent (a quantized model)
  std::vector<double> wf;
  std::vector<std::int8_t> wq;
  std::optional<int> e_w;
  std::vector<int> e_wc;  // int8 weights quantized per output channel: each channel's exponent (else e_w)
  bool float_weights = false;
  // conv and fc: a bias per output (none, or all zero: empty): float (a float model, bf) or int32 (bq) with
  // its scale (a DequantizeLinear's; none for QLinearConv's, whose scale is x_scale * w_scale by definition)
  std::vector<double> bf, bq;
  std::optional<double> bias_scale;
  std::vector<double> bias_scales;  // a per-channel bias's scales (per-channel weights), else bias_scale
  std::string bias_name;
  bool has_bias() const { return !bf.empty() || !bq.empty(); }
  // conv: its groups (weights [C][D/groups][kH][kW])
  int groups = 1;
  // clip: the bounds (a Clip after a Conv or Gemm: low 0 and a high, as ReLU6)
  double lo = 0, hi = 0;
  // max pooling with ceil_mode: zero padding after the last row and column (LayerSpec::pad_end)
  int pad_end = 0;
  // slice: channels [first, first + count); shuffle: its groups are `groups`
  int first = 0, count = 0;
  // table: f(x), or x * f(x) (times_x: SiLU and HardSwish as exported), one activation or one per channel (PRelu)
  std::vector<Activation> acts;
  bool times_x = false;
  // affine: y = x * s[c] + b[c] per channel (a BatchNorm: s = scale / sqrt(var + eps), b = B - mean * s)
  std::vector<double> s, b;
  // mul: in[1] is a [1,C,1,1] vector (squeeze-and-excitation's gate), one factor per channel of in[0]
  bool channel = false;
  // the activation a table computes, channel c
  double table_value(double x, std::size_t c) const {
    const Activation& a = acts[acts.size() == 1 ? 0 : c];
    return times_x ? x * activation_value(a, x) : activation_value(a, x);
  }
};
// The exponent e of a power-of-two scale 2^-e, or nullopt.
std::optional<int> exponent_of_scale(double s);
// docs/real_networks.md: e = floor(log2(127 / max)), exactly: the largest e with max * 2^e <= 127 (scaling a
// double by a power of two is exact, so no rounding of log2 decides it). max > 0 and finite.
int exponent_for_max(double max);
// What to change in the model or its export, for an op the import does not take.
std::string hint_for(const std::string& op);

class Importer {
 public:
  explicit Importer(std::string path) : path_(std::move(path)) {}

  // s2cosim check: every node that will not map, each with why and what to change; then (if none) the
  // rest of the import's checks. The notes say what the import changed (folded, lowered, left to the host).
  // `bytes`: the model's bytes (the fuzz target's); nullptr: the file at the path, parsed as it is read (its
  // bytes are never held beside the protobuf's copy)
  OnnxCheck check(const std::string* bytes);
  Network run(const std::string* bytes, const std::vector<std::vector<float>>& calibration);

 private:
  // Where a node's messages come from.
  struct Ctx {
    const Importer& im;
    const onnx::NodeProto& n;
    int index;  // 1-based
    std::string label;
    [[noreturn]] void fail(const std::string& why) const { throw NetworkError(im.path_ + ": " + label + ": " + why); }
    std::string in(int k) const { return k < n.input_size() ? n.input(k) : std::string(); }
    bool has(int k) const { return !in(k).empty(); }
    void inputs(int min, int max) const {
      if (n.input_size() < min || n.input_size() > max)
        fail("expected " + (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)) +
             " inputs, got " + std::to_string(n.input_size()));
      for (int k = 0; k < min; ++k)
        if (n.input(k).empty()) fail("input " + std::to_string(k + 1) + " is required, but its name is empty");
    }
    const std::string& out() const {
      if (n.output_size() < 1) fail("has no output");
      return n.output(0);
    }
  };

  // The attributes of a node, typed; an attribute the import does not know is refused rather than ignored
  // (it could change what the node computes).
  class Attrs {
   public:
    Attrs(const Ctx& c, std::initializer_list<const char*> known) : c_(c) {
      for (const onnx::AttributeProto& a : c.n.attribute()) {
        if (std::none_of(known.begin(), known.end(), [&](const char* k) { return a.name() == k; }))
          c.fail("attribute " + in_quotes(a.name()) + " is not supported");
        by_name_[a.name()] = &a;
      }
    }
    const onnx::AttributeProto* find(const std::string& name, onnx::AttributeProto::AttributeType type) const {
      const auto it = by_name_.find(name);
      if (it == by_name_.end()) return nullptr;
      if (it->second->type() != type)
        c_.fail("attribute " + in_quotes(name) + " has type " + std::to_string(it->second->type()) + ", expected " +
                std::to_string(type));
      return it->second;
    }
    bool has(const std::string& name) const { return by_name_.count(name) != 0; }
    std::int64_t i(const std::string& name, std::int64_t def) const {
      const auto* a = find(name, onnx::AttributeProto::INT);
      return a ? a->i() : def;
    }
    float f(const std::string& name, float def) const {
      const auto* a = find(name, onnx::AttributeProto::FLOAT);
      return a ? a->f() : def;
    }
    std::string s(const std::string& name, const std::string& def) const {
      const auto* a = find(name, onnx::AttributeProto::STRING);
      return a ? a->s() : def;
    }
    std::optional<std::vector<std::int64_t>> ints(const std::string& name) const {
      const auto* a = find(name, onnx::AttributeProto::INTS);
      if (!a) return std::nullopt;
      return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
    }
    const onnx::TensorProto* t(const std::string& name) const {
      const auto* a = find(name, onnx::AttributeProto::TENSOR);
      return a ? &a->t() : nullptr;
    }

   private:
    const Ctx& c_;
    std::map<std::string, const onnx::AttributeProto*> by_name_;
  };

  [[noreturn]] void fail(const std::string& why) const { throw NetworkError(path_ + ": " + why); }
  [[noreturn]] void fail_at(const Node& n, const std::string& why) const;

  // ---------------------------------------------------------------- reading the graph (graph.cpp)

  // A convolution's or pooling's window on `in`: one stride for both directions, the same padding on every side.
  struct Window {
    int stride = 1, pad = 0;
    // top, left, bottom, right (a pooling's are all `pad`; a convolution's may differ)
    std::array<int, 4> pads{};
    bool alike() const { return pads[0] == pads[1] && pads[1] == pads[2] && pads[2] == pads[3]; }
    Shape3 out;
    // a pooling's ceil_mode=1: the zero padding after the last row and column that gives ONNX's output size
    // (0: none needed), and the size without it
    int pad_end = 0;
    Shape3 floor_out;
  };
  Window window(const Ctx& c, const Attrs& a, const Shape3& in, int kH, int kW, bool pool) const;
  // A convolution whose pads differ per side (inception's 1x7 at pads 0,3; TensorFlow's SAME with an even
  // kernel): its kernel framed by zero rows and columns so that one pad, the largest, gives the same sums
  // (docs/real_networks.md, "Pads that differ per side"); nd's weights, kH, kW and pad are replaced.
  void frame_kernel(const Ctx& c, Node& nd, const std::array<int, 4>& pads, int extra_pad);
  // The model from `bytes`, or from the file at path_ if null (at most kMaxOnnxFileBytes either way).
  void parse(const std::string* bytes);
  // A TensorProto's values; `what` names it in messages.
  Const read_tensor(const onnx::TensorProto& t, const std::string& what) const;
  // The values of a tensor whose data is in an external file (data_location EXTERNAL): its `location`
  // relative to the model's directory, `offset` and `length`; only its bytes are read. `need`: the bytes its
  // dims give (nullopt: more than 2^64).
  void read_external(const onnx::TensorProto& t, const std::string& what, Const& c, std::optional<std::uint64_t> need,
                     std::size_t elem) const;
  // One node; collecting (s2cosim check), a refusal is recorded and its outputs stand in with the shape ONNX
  // gives them (refused_output), else as copies of its first map input, so that the nodes after it are checked too.
  void visit(const Ctx& c);
  // The output of a node the check refused, as ONNX defines it (a Conv's, a pooling's, a Gemm's, a Concat's,
  // a Flatten's), so that the nodes after it are checked against the shape the model has rather than its
  // input's; nullopt: not one of these, or not enough known to tell (the input's shape is taken then).
  std::optional<Act> refused_output(const Ctx& c, int k) const;
  // The graph: initializers, its one input and output, then every node in order (ONNX keeps them in
  // topological order, so each node's inputs are known when it comes).
  void read_graph();
  void read_input(const onnx::ValueInfoProto& v);
  std::string canon(const std::string& name) const;
  // A feature-map input of a node.
  std::pair<std::string, Act> act_in(const Ctx& c, int k, bool padded_ok = false) const;
  // A map read with padded_ok: the map a Pad before it stands for, with that padding (else itself and 0).
  std::pair<std::string, int> unpadded(const std::string& map) const;
  // A constant input of a node (weights, scales, zero points, shapes).
  const Const& const_in(const Ctx& c, int k, const std::string& role) const;
  // The output name of a node, checked to be new.
  std::string new_output(const Ctx& c) const;
  void add_act(const Ctx& c, const std::string& name, const Act& a);
  // A scale input: one positive power of two (a per-axis scale with all values equal counts as one).
  int scale_exponent(const Ctx& c, int k, const std::string& role) const;
  // A scale input's exponents, one per value (a per-axis scale), each a positive power of two.
  std::vector<int> scale_exponents(const Ctx& c, int k, const std::string& role) const;
  // A zero point: absent (where the op allows it) or int8 zeros.
  void zero_point(const Ctx& c, int k, bool required, const std::string& role) const;
  void set_scale(const Ctx& c, const std::string& map, int e);
  Ctx ctx(const onnx::NodeProto& n, int index) const;
  void supported(const Ctx& c) const;
  // One node by its op type, to the function below that takes it.
  void node(const Ctx& c);
  // Registers a computing node; its output (returned) is a map of its own exponent (own_scale) or its input's.
  std::string finish(const Ctx& c, Node nd, std::vector<std::string> in, Act out, bool own_scale);

  // ---------------------------------------------------------------- nodes that become layers (layers.cpp)

  // Weights as the layer takes them: float (a float model) or int8 with a power-of-two scale.
  void take_weights(const Ctx& c, const Const& w, const std::string& name, Node& nd, bool transpose);
  // A Conv's or Gemm's bias (input k): one value per output ([C]; Gemm's C also [1,C] or one value for all).
  // All zero: none, as before biases were taken. Float in a float model (quantized with the layer, at the
  // sums' scale 2^-(e_x + e_w)); int32 through a DequantizeLinear in a QDQ model, or QLinearConv's int32 B.
  void take_bias(const Ctx& c, int k, Node& nd, bool qlinear) const;
  void conv(const Ctx& c, bool qlinear);
  // QLinearConv and QLinearMatMul lay out their operands alike: the map, its scale and zero point, the
  // weights, their scale and zero point, the output's scale and zero point (`x`/`a` and `w`/`b` name them).
  void take_qlinear_operands(const Ctx& c, const std::string& x, const Const& w, Node& nd, bool transpose, const std::string& map,
                             const std::string& weights);
  // Gemm (alpha = beta = 1, A not transposed), MatMul and QLinearMatMul: x times a constant matrix.
  void fc(const Ctx& c);
  void relu(const Ctx& c);
  void pool(const Ctx& c, bool max);
  void global_pool(const Ctx& c);
  void add(const Ctx& c);
  // Clip after a Conv or Gemm (ReLU6: min 0, max 6): the layer's ReLU, and QUAN saturates at the
  // quantized max, floor(max * 2^e_y) (a clamp at max before flooring gives the same).
  void clip(const Ctx& c);
  // Squeeze (axes as an attribute or, from opset 13, an input) that leaves [1,N] or [N], as x.squeeze() after
  // a global pooling writes it: a flattening.
  void squeeze(const Ctx& c);
  // Flatten, or a Reshape to [1,N] or [N]: the map read in [C][H][W] order, which is how the hardware
  // stores it, so nothing moves. A Reshape to [1,g,C/g,H,W] or back is a channel shuffle's (shuffle()).
  void flatten(const Ctx& c, bool reshape);

  // ---------------------------------------------------------------- element-wise operations, layouts (elementwise.cpp)

  // Registers a node whose output is `out` (a Split's outputs, a reduction's pooling before its flattening).
  void add_node(const Ctx& c, Node nd, std::vector<std::string> in, const std::string& out, Act a, bool own_scale);
  // Sigmoid (not the graph's last node), HardSigmoid, HardSwish, Tanh, LeakyRelu, PRelu: a table on the ARM.
  void activation(const Ctx& c);
  // Mul of two maps of one shape, of a map and a [1,C,1,1] map (channel), or of a map x and a table of the
  // same x (x * f(x): SiLU, HardSwish as exported; the walk makes it one table when f(x) has no other reader).
  void mul(const Ctx& c);
  // BatchNormalization that no convolution absorbs: an affine per channel (docs/real_networks.md).
  void affine(const Ctx& c, const std::vector<const Const*>& p, double eps);
  // Concat of feature maps along channels: a layout; all its inputs and its output share one exponent.
  void concat(const Ctx& c);
  // Split (sizes as an input, an attribute, or equal) and Slice of channels: one Slice node per output.
  void split(const Ctx& c);
  void slice(const Ctx& c);
  // SplitToSequence of channels (torch.onnx's chunk with sizes it computes) and SequenceAt of it: a Slice.
  void split_to_sequence(const Ctx& c);
  void sequence_at(const Ctx& c);
  // ShuffleNet's channel shuffle: Reshape to [1,g,C/g,H,W], Transpose [0,2,1,3,4], Reshape to [1,C,H,W];
  // `stage` is which of the three `c` is (the parts between are kept in shuffle_parts_, not as maps).
  void shuffle(const Ctx& c, int stage);
  // A Reshape's target shape with 0 (copy, unless allowzero) and -1 (what is left of n values) resolved.
  std::vector<std::int64_t> reshape_target(const Ctx& c, const std::vector<std::int64_t>& d, std::int64_t n) const;
  // Split and SplitToSequence take channels only (axis 1, or -3 of a 4-D map).
  static void need_channel_split(const Ctx& c, const Act& in, std::int64_t axis);
  // ReduceMean / ReduceMax over H and W: a global pooling; keepdims=0 a flattening after it.
  void reduce(const Ctx& c, bool max);

  // ---------------------------------------------------------------- nodes folded into layers, scales (folds.cpp)

  void constant(const Ctx& c);
  void quantize_linear(const Ctx& c);
  // The scale each value of q takes: index into a per-axis scale of `scales` values along the node's axis (checked
  // to match q's dims), all 0 for one scale.
  std::vector<std::size_t> axis_index(const Ctx& c, const Attrs& a, const Const& q, std::size_t scales) const;
  void dequantize_linear(const Ctx& c);
  // The layer (a Conv or fully connected node) whose output `map` is, if it is the latest node and has
  // float weights: what a folding (a BatchNormalization, a bias added by an Add) may change.
  Node* foldable_layer(const Ctx& c, const std::string& map, const std::string& what);
  // The folded node's output stands for `c`'s; its old name (the map before the folding) may not be read.
  void folded_into(const Ctx& c, Node& n);
  // An Add of a constant to a float Conv's or MatMul's output: the layer's bias (PyTorch's Linear as
  // MatMul + Add, a bias written out).
  void add_bias(const Ctx& c);
  // BatchNormalization (inference) after a float Conv: folded into its weights and bias, per filter f,
  // s = scale / sqrt(var + epsilon): w' = w * s, b' = (b - mean) * s + B (docs/real_networks.md).
  void batch_norm(const Ctx& c);
  // Identity, and Dropout in inference (ratio ignored; training_mode, if given, a constant false): the
  // output is the input.
  void pass_through(const Ctx& c, bool dropout);
  // Pad (constant zeros, the same on every side of H and W, none on N and C) before a Conv or an
  // AveragePool: their own padding; a Pad of nothing passes its input on.
  void pad(const Ctx& c);
  // Shape arithmetic an exporter writes for a Reshape (x.view(x.size(0), -1) exported without constant
  // folding, or with a dynamic batch): Shape of a map, Gather, Unsqueeze and Concat of constants, evaluated
  // here on the maps' known shapes (the batch is 1) into constants.
  void shape_arithmetic(const Ctx& c);
  // A Softmax, LogSoftmax or Sigmoid that ends the graph: left to the host, which applies it to the int8 output read
  // at its exponent (run-net says so and its output record holds it).
  void final_activation(const Ctx& c);
  // Sub and Div: shape arithmetic on constants, refused on maps.
  void arithmetic(const Ctx& c);

  // ---------------------------------------------------------------- the walk (chain.cpp)

  int cls(const std::string& map) { return scales_.root(acts_.at(map).cls); }
  void merge(const Node& at, const std::string& a, const std::string& b, const std::string& calib);
  // A conv, fc or projection layer whose shift the quantization works out.
  struct Weighted {
    std::size_t layer;
    const Node* node;
    std::string in, out;  // its input and output maps (their classes give e_x and e_y)
  };

  // Takes the nodes in the graph's (topological) order and emits them as a layer list would have them: a map
  // read twice that begins a chain-like residual unit gives `residual begin` ... `residual end` as before; any
  // other layer names the maps it reads (`inputs`) where they are not the previous layer's output, and a map
  // read out of order names its layer (`name`).
  void walk();
  // x * f(x) where the table f(x) has no other reader: one table of x (fuse_tables, before the walk).
  void fuse_tables();
  // One node, reading the maps n.in (the previous layer's output, or `inputs`).
  void emit(Node& n);
  // Whether the two readers of `x` (the previous layer's output) begin a residual unit as a chain has it: two
  // paths of one-input nodes that meet in one Add, the shortcut none or a 1x1 convolution, the branch ending
  // with a Conv; `main` and `shortcut` its nodes.
  bool chain_unit(const std::string& x, std::vector<std::size_t>& main, std::vector<std::size_t>& shortcut,
                  std::size_t& add) const;
  // That unit: `residual begin`, the branch, `residual end`; then a Relu after the Add.
  void residual(const std::string& x, const std::vector<std::size_t>& main, const std::vector<std::size_t>& shortcut,
                std::size_t add);
  // Any other Add of two maps: a residual end that names its input X (a branch from X ending in the Conv just
  // emitted, plus X or a 1x1 convolution of X), or an element-wise Add.
  void graph_add(std::size_t k);
  // Whether map m is computed from map x.
  bool depends_on(const std::string& m, const std::string& x) const;
  // Appends a layer whose output is `out`, reading the maps `in` (none: a residual end's is the Conv before it).
  void push_layer(LayerSpec l, const std::vector<std::string>& in, const std::string& out, bool list_inputs);
  // A Relu that reads a residual or element-wise Add alone: its layer's (emitted right after it).
  void relu_after(const Node& add);
  // An identity residual unit's shortcut, branch end and sum share one exponent (MAT_ELE adds int8 at one
  // scale); it is calibrated over the shortcut and the sum (after its ReLU) alike, so that a sum larger than
  // its shortcut (a deep stage of identity units, each adding to the last) does not saturate
  // (docs/real_networks.md, "Post-training quantization").
  void calibrate_sum_too(const Node& add);
  // The name a layer reading map m gives it: "input", or its layer's (set on that layer).
  std::string map_name(const std::string& m);
  // The layer whose output `m` is, if it is the last one and nothing else reads m (a ReLU may join it).
  bool last_layer_out(const std::string& m) const;

  // ---------------------------------------------------------------- quantization (quantize.cpp)

  // docs/real_networks.md: the float model run on the calibration inputs; the largest |value| of each map
  // that calibrates an exponent.
  std::map<std::string, double> calibrate(const std::vector<std::vector<float>>& inputs);
  std::vector<double> eval(const Node& n, const std::map<std::string, std::vector<double>>& maps) const;
  void quantize(const std::vector<std::vector<float>>& calibration);
  // A layer's weight exponents, one per output channel (docs/real_networks.md, "Post-training quantization"): a
  // float layer's from each channel's max|w| (an all-zero channel takes the layer's per-tensor exponent), a channel
  // whose shift would pass 31 brought to shift 31 (counted in `capped`); a quantized layer's as its scales give them.
  std::vector<int> weight_exponents(const Node& n, std::optional<int> e_x, std::optional<int> e_y, int& capped) const;
  // A layer's QUAN shift(s) from its exponents: `shift` (the smallest, for display) and, where the weights'
  // exponents differ, `shifts` per output channel.
  void set_shifts(const Node& n, LayerSpec& l, int e_x, const std::vector<int>& e_w, int e_y) const;
  // QUAN shifts right, which floors; a layer with a bias rounds half up instead, for free: 2^(shift-1) of each
  // output channel goes into its bias (docs/real_networks.md, "Rounding"). A layer without one floors (a bias
  // only for the rounding would cost the ARM's bias add on every output).
  void round_in_bias(const Node& n, LayerSpec& l) const;
  // A layer's int32 bias at its sums' scale 2^-(e_x + e_w[c]) per channel c: a float one rounded half to even
  // (docs/real_networks.md), an int32 one as given, its scale checked. Without e_x (a float model without
  // calibration) the values are unknown: zeros, so that the ARM's clocks for the add are still counted.
  std::shared_ptr<const std::vector<std::int32_t>> quantized_bias(const Node& n, std::optional<int> e_x,
                                                                  const std::vector<int>& e_w) const;

  std::string path_;
  onnx::ModelProto model_;
  Network net_;
  std::map<std::string, Const> consts_;
  std::map<std::string, int> uses_;  // how many node inputs read each name: weights read once move into their node
  std::map<std::string, std::string> alias_;     // a Q / DQ output: the map it quantizes or dequantizes
  std::map<std::string, Act> acts_;              // feature maps by (canonical) name
  std::map<std::string, std::string> producer_;  // a map's node label, for messages
  std::vector<Node> nodes_;
  Scales scales_;
  bool quantized_ = false;
  std::string input_, output_, final_;
  // the walk
  std::map<std::string, std::vector<std::size_t>> readers_;
  std::vector<Weighted> weighted_;
  // the walk's layers and maps: each map's layer (-1: the input), each layer's output map, the previous one's
  std::map<std::string, int> map_layer_;
  std::vector<std::string> layer_out_;
  std::string chain_;
  std::vector<bool> seen_;
  std::set<std::size_t> projections_;  // 1x1 convolutions an Add may take as its projection (deferred)
  // element-wise layers, whose tables and parameters the quantization builds (their exponents known then)
  struct Elementwise {
    std::size_t layer;
    const Node* node;
    std::vector<std::string> in;
    std::string out;
    bool relu = false;
  };
  std::vector<Elementwise> elementwise_;
  void build_elementwise(const Elementwise& e, std::optional<int> ea, std::optional<int> eb, std::optional<int> ey);
  // a channel shuffle's parts between its Reshapes: the map it shuffles, its groups, 1 after the first Reshape
  // and 2 after the Transpose
  struct ShufflePart {
    std::string map;
    int groups = 1, stage = 1;
  };
  std::map<std::string, ShufflePart> shuffle_parts_;
  std::map<std::string, std::pair<std::string, std::vector<int>>> sequences_;  // a SplitToSequence's: map, sizes
  std::set<std::size_t> fused_;  // tables x * f(x) took in (fuse_tables)
  std::map<std::string, std::size_t> node_of_;  // a node's output: the node
  std::map<std::string, std::size_t> table_of_;  // a table node's output: its node (x * f(x))
  std::set<std::string> non_negative_;  // maps after a ReLU (padded max pooling may read them)
  std::map<std::size_t, double> clip_high_;  // a layer's Clip max (ReLU6: 6), by layer index
  std::string after_relu_map_;               // the map a layer's Relu just gave (a Clip may follow it)
  std::map<std::string, std::string> folded_;  // a map a BatchNormalization or bias was folded into, and by which node
  std::map<std::string, std::pair<std::string, int>> pads_;  // a Pad's output: its input and padding
  // s2cosim check
  bool collect_ = false;
  std::vector<std::string> problems_;
  std::vector<std::string> notes_;  // what the import folded, lowered or left to the host, per node
};

}  // namespace s2::mapper::onnx_reader
