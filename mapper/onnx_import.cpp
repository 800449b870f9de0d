#include "onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <type_traits>

namespace s2::mapper {

namespace {

static_assert(std::endian::native == std::endian::little, "ONNX's raw_data is little-endian; it is copied as it is");

// values in one initializer: as many int8 values as the file cap holds; bounds what a forged dims field
// makes the reader allocate (the data's size is checked against the dims before anything is)
constexpr std::int64_t kMaxTensorValues = std::int64_t(1) << 26;

// the ops the import takes, in the order its messages list them
const char* const kOps[] = {
    "Conv",     "Gemm",    "MatMul",  "Relu",           "MaxPool",          "AveragePool", "GlobalAveragePool",
    "Add",      "Flatten", "Reshape", "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
    "Constant", "BatchNormalization", "Identity", "Dropout", "Clip", "Pad", "Softmax", "Sigmoid", "Squeeze"};

std::string supported_ops() {
  std::string s;
  for (const char* op : kOps) {
    if (!s.empty()) s += ", ";
    s += op;
  }
  return s;
}

std::string dims_str(const std::vector<std::int64_t>& d) {
  std::string s = "[";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "," + std::string
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(d[i]);
  }
  s += "]";
  return s;
}

// bytes of one element of the types the import reads; 0: another type
std::size_t element_bytes(int dtype) {
  switch (dtype) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
      return 4;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
      return 8;
  }
  return 0;
}

template <class T>
double load(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return static_cast<double>(x);
}

// one element of raw_data (little-endian, as the host)
double raw_value(int dtype, const char* p) {
  switch (dtype) {
    case onnx::TensorProto::INT8:
      return load<std::int8_t>(p);
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return load<std::uint8_t>(p);
    case onnx::TensorProto::FLOAT:
      return load<float>(p);
    case onnx::TensorProto::INT32:
      return load<std::int32_t>(p);
    case onnx::TensorProto::DOUBLE:
      return load<double>(p);
    case onnx::TensorProto::INT64:
      return load<std::int64_t>(p);
  }
  return 0;
}

std::string in_quotes(const std::string& name) { return "'" + name + "'"; }

// 2^-e as a text ("2^-5"), for messages about scales
std::string scale_str(int e) { return "2^" + std::to_string(-e); }

// A constant tensor (an initializer, a Constant node's value, or one of those quantized / dequantized).
struct Const {
  int dtype = 0;  // onnx::TensorProto::DataType
  std::vector<std::int64_t> dims;
  std::vector<double> v;  // every type the import reads is exact in a double (int64 up to 2^53)
  // an integer tensor a DequantizeLinear gave a scale: real value = v * scale
  std::optional<double> scale;
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
  int make(const std::string& calib_tensor) {
    parent.push_back(static_cast<int>(parent.size()));
    e.emplace_back();
    by.emplace_back();
    calib.push_back(calib_tensor);
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
  std::string merge(int a, int b, const std::string& calib_tensor) {
    a = root(a);
    b = root(b);
    if (a != b && e[a] && e[b] && *e[a] != *e[b])
      return "maps at scales " + scale_str(*e[a]) + " (" + by[a] + ") and " + scale_str(*e[b]) + " (" + by[b] +
             ") meet here, and the hardware has one exponent for them";
    if (a != b) {
      parent[b] = a;
      if (!e[a] && e[b]) {
        e[a] = e[b];
        by[a] = by[b];
      }
    }
    calib[a] = calib_tensor;
    return "";
  }
};

enum class Op { Conv, Fc, Relu, Clip, MaxPool, AvgPool, Flatten, Add };

// A node that computes (the Q/DQ nodes and constants are gone: they only give scales and weights).
struct Node {
  Op op = Op::Conv;
  int index = 0;  // 1-based, in the graph's node list
  std::string label;
  std::vector<std::string> in;  // feature maps (canonical names): one, two for Add
  std::string out;
  int kW = 1, kH = 1, stride = 1, pad = 0;  // conv, pools
  int C = 0, D = 0;                         // conv: filters, channels; fc: outputs, inputs
  // conv and fc weights in the hardware's order (conv [C][D][Hf][Wf], fc [OUT][IN]): float (to quantize)
  // or int8 with their exponent (a quantized model)
  std::vector<double> wf;
  std::vector<std::int8_t> wq;
  std::optional<int> e_w;
  bool float_weights = false;
  // conv and fc: a bias per output (none, or all zero: empty): float (a float model, bf) or int32 (bq) with
  // its scale (a DequantizeLinear's; none for QLinearConv's, whose scale is x_scale * w_scale by definition)
  std::vector<double> bf, bq;
  std::optional<double> bias_scale;
  std::string bias_name;
  bool has_bias() const { return !bf.empty() || !bq.empty(); }
  // conv: its groups, lowered to block-diagonal weights (group > 1)
  int groups = 1;
  // clip: the bounds (a Clip after a Conv or Gemm: low 0 and a high, as ReLU6)
  double lo = 0, hi = 0;
};

// The exponent e of a power-of-two scale 2^-e, or nullopt.
std::optional<int> exponent_of_scale(double s) {
  if (!(s > 0) || !std::isfinite(s)) return std::nullopt;
  int ex = 0;
  const double m = std::frexp(s, &ex);  // s = m * 2^ex, m in [0.5, 1)
  if (m != 0.5) return std::nullopt;
  return 1 - ex;
}

// docs/real_networks.md: e = floor(log2(127 / max)), exactly: the largest e with max * 2^e <= 127 (scaling a
// double by a power of two is exact, so no rounding of log2 decides it). max > 0 and finite.
int exponent_for_max(double max) {
  int ex = 0;
  std::frexp(max, &ex);  // max = m * 2^ex, m in [0.5, 1): 127 / max is in (127, 254] * 2^-ex
  int e = 7 - ex;
  while (std::ldexp(max, e + 1) <= 127.0) ++e;
  while (std::ldexp(max, e) > 127.0) --e;
  return e;
}

// What to change in the model or its export, for an op the import does not take.
std::string hint_for(const std::string& op) {
  if (op == "Sigmoid" || op == "Softmax" || op == "LogSoftmax")
    return "keep it as the network's last node (the host applies it), or end the exported model before it";
  if (op == "Concat" || op == "Split" || op == "Slice")
    return "the hardware runs a chain with residual units: export one branch, or rewrite the concatenation as a convolution";
  if (op == "Resize" || op == "Upsample" || op == "ConvTranspose")
    return "upsampling has no counterpart on the MAC array: run it on the host";
  if (op == "Mul" || op == "Sub" || op == "Div")
    return "fold a constant scaling into the preceding layer's weights before export";
  if (op == "LSTM" || op == "GRU" || op == "RNN" || op == "Gather" || op == "Shape")
    return "not a CNN layer: the import takes the ops listed; export with fixed shapes (constant folding on) so that "
           "Shape arithmetic disappears";
  if (op == "LeakyRelu" || op == "PRelu" || op == "HardSigmoid" || op == "HardSwish" || op == "Elu" || op == "Tanh" ||
      op == "Gelu")
    return "the ARM applies only ReLU (and ReLU6 as Clip(0, 6)) in a layer: retrain with ReLU";
  return "the import takes " + supported_ops();
}

class Importer {
 public:
  explicit Importer(std::string path) : path_(std::move(path)) {}

  // s2cosim check: every node that will not map, each with why and what to change; then (if none) the
  // rest of the import's checks. The notes say what the import changed (folded, lowered, left to the host).
  OnnxCheck check(const std::string& bytes) {
    OnnxCheck r;
    collect_ = true;
    try {
      parse(bytes);
      read_graph();
    } catch (const NetworkError& e) {
      problems_.push_back(e.what());
    }
    if (problems_.empty()) {
      try {
        walk();
        quantize({});
        net_.notes = notes_;
        r.network = std::move(net_);
      } catch (const NetworkError& e) {
        problems_.push_back(e.what());
      }
    }
    r.problems = problems_;
    r.notes = notes_;
    return r;
  }

  Network run(const std::vector<std::vector<float>>& calibration) { return run(read_file(), calibration); }
  Network run(const std::string& bytes, const std::vector<std::vector<float>>& calibration) {
    parse(bytes);
    read_graph();
    walk();
    quantize(calibration);
    net_.notes = notes_;
    return std::move(net_);
  }

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
    const std::string& out() const { return n.output(0); }
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

  std::string read_file() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path_, ec);
    if (ec) fail("cannot read the ONNX model: " + ec.message());
    if (size > kMaxOnnxFileBytes)
      fail("expected an ONNX model of at most " + std::to_string(kMaxOnnxFileBytes) + " bytes, got " +
           std::to_string(size));
    std::ifstream f(path_, std::ios::binary);
    if (!f) fail("cannot open the ONNX model");
    std::string bytes(static_cast<std::size_t>(size), '\0');
    f.read(bytes.data(), static_cast<std::streamsize>(size));
    if (f.gcount() != static_cast<std::streamsize>(size)) fail("cannot read the ONNX model (it changed while read)");
    return bytes;
  }

  void parse(const std::string& bytes) {
    if (bytes.size() > kMaxOnnxFileBytes)
      fail("expected an ONNX model of at most " + std::to_string(kMaxOnnxFileBytes) + " bytes, got " +
           std::to_string(bytes.size()));
    if (!model_.ParseFromString(bytes))
      fail("not an ONNX model: the protobuf does not parse (a truncated file, or another format)");
    if (!model_.has_graph() || model_.graph().node_size() == 0)
      fail("not an ONNX model: it has no graph, or a graph without nodes (a truncated file?)");
  }

  // A TensorProto's values; `what` names it in messages.
  Const read_tensor(const onnx::TensorProto& t, const std::string& what) const {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      fail(what +
           ": its data is in an external file, which the import does not read (save the model with its data inside)");
    if (t.has_segment()) fail(what + ": a segmented tensor is not supported");
    Const c;
    c.dtype = t.data_type();
    c.what = what;
    std::int64_t n = 1;
    for (const std::int64_t d : t.dims()) {
      if (d < 0) fail(what + ": negative dimension in " + dims_str({t.dims().begin(), t.dims().end()}));
      if (d > 0 && n > kMaxTensorValues / d)
        fail(what + ": " + dims_str({t.dims().begin(), t.dims().end()}) + " is more than " +
             std::to_string(kMaxTensorValues) + " values");
      n *= d;
      c.dims.push_back(d);
    }
    const std::size_t bytes = element_bytes(t.data_type());
    if (bytes == 0)
      fail(what + ": data type " + std::to_string(t.data_type()) +
           " is not supported (float, double, int8, uint8, int32, int64, bool are)");
    const auto count = static_cast<std::size_t>(n);
    if (t.has_raw_data()) {
      const std::string& raw = t.raw_data();
      if (raw.size() != count * bytes)
        fail(what + ": holds " + std::to_string(raw.size()) + " bytes, its dims " + dims_str(c.dims) + " need " +
             std::to_string(count * bytes));
      c.v.resize(count);
      for (std::size_t i = 0; i < count; ++i) c.v[i] = raw_value(t.data_type(), raw.data() + i * bytes);
      return c;
    }
    auto take = [&](const auto& field) {
      if (static_cast<std::size_t>(field.size()) != count)
        fail(what + ": holds " + std::to_string(field.size()) + " values, its dims " + dims_str(c.dims) + " say " +
             std::to_string(count));
      c.v.resize(count);
      std::size_t i = 0;
      for (const auto x : field) c.v[i++] = static_cast<double>(x);
    };
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        take(t.float_data());
        break;
      case onnx::TensorProto::DOUBLE:
        take(t.double_data());
        break;
      case onnx::TensorProto::INT64:
        take(t.int64_data());
        break;
      default:  // int8, uint8, bool and int32 are stored as int32
        take(t.int32_data());
        break;
    }
    if (t.data_type() == onnx::TensorProto::INT8 || t.data_type() == onnx::TensorProto::UINT8) {
      const double lo = t.data_type() == onnx::TensorProto::INT8 ? -128 : 0;
      for (const double x : c.v)
        if (x < lo || x > lo + 255) fail(what + ": value " + std::to_string(x) + " is out of its 8-bit type's range");
    }
    return c;
  }

  // The graph: initializers, its one input and output, then every node in order (ONNX keeps them in
  // topological order, so each node's inputs are known when it comes).
  // One node; collecting (s2cosim check), a refusal is recorded and its outputs stand in as copies of its
  // first map input, so that the nodes after it are checked too.
  void visit(const Ctx& c) {
    if (!collect_) {
      node(c);
      return;
    }
    try {
      node(c);
    } catch (const NetworkError& e) {
      std::string why = e.what();
      if (why.find(" is not supported (the import takes") != std::string::npos)
        why = path_ + ": " + c.label + ": op type " + in_quotes(c.n.op_type()) + " is not supported: " + hint_for(c.n.op_type());
      problems_.push_back(why);
      std::optional<Act> like;
      for (int k = 0; k < c.n.input_size() && !like; ++k)
        if (const auto it = acts_.find(canon(c.n.input(k))); it != acts_.end()) like = it->second;
      for (int k = 0; k < c.n.output_size(); ++k) {
        const std::string& o = c.n.output(k);
        if (o.empty() || acts_.count(o) || consts_.count(o) || alias_.count(o)) continue;
        if (like) {
          Act a = *like;
          a.cls = scales_.make(o);
          acts_[o] = a;
          producer_[o] = c.label;
        }
      }
    }
  }

  void read_graph() {
    const onnx::GraphProto& g = model_.graph();
    if (g.sparse_initializer_size() > 0) fail("sparse initializers are not supported");
    for (const onnx::TensorProto& t : g.initializer()) {
      if (t.name().empty()) fail("an initializer has no name");
      if (consts_.count(t.name())) fail("initializer " + in_quotes(t.name()) + " is defined twice");
      consts_[t.name()] = read_tensor(t, "initializer " + in_quotes(t.name()));
    }
    std::vector<const onnx::ValueInfoProto*> inputs;
    for (const onnx::ValueInfoProto& v : g.input())
      if (!consts_.count(v.name())) inputs.push_back(&v);  // older exporters list initializers as inputs too
    if (inputs.size() != 1) {
      std::string names;
      for (const auto* v : inputs) names += (names.empty() ? "" : ", ") + in_quotes(v->name());
      fail("the graph has " + std::to_string(inputs.size()) + " inputs" + (names.empty() ? "" : " (" + names + ")") +
           "; the hardware runs a network with one");
    }
    if (g.output_size() != 1) {
      std::string names;
      for (const auto& v : g.output()) names += (names.empty() ? "" : ", ") + in_quotes(v.name());
      fail("the graph has " + std::to_string(g.output_size()) + " outputs" + (names.empty() ? "" : " (" + names + ")") +
           "; the hardware runs a network with one");
    }
    // an op the hardware has no counterpart for is the first thing to say, before any shape
    if (!collect_)
      for (int i = 0; i < g.node_size(); ++i) supported(ctx(g.node(i), i + 1));
    read_input(*inputs[0]);
    for (int i = 0; i < g.node_size(); ++i) visit(ctx(g.node(i), i + 1));
    if (!problems_.empty()) return;
    const std::string& out = g.output(0).name();
    if (consts_.count(out)) fail("the graph's output " + in_quotes(out) + " is a constant");
    if (!alias_.count(out) && !acts_.count(out))
      fail("the graph's output " + in_quotes(out) + " is not computed by any node (a dangling name)");
    output_ = canon(out);
  }

  void read_input(const onnx::ValueInfoProto& v) {
    const std::string what = "the graph's input " + in_quotes(v.name());
    if (v.name().empty()) fail("the graph's input has no name");
    if (!v.type().has_tensor_type()) fail(what + " is not a tensor");
    const auto& tt = v.type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto::FLOAT)
      fail(what + " has element type " + std::to_string(tt.elem_type()) +
           "; expected float (1), quantized inside the model");
    if (!tt.has_shape()) fail(what + " has no shape; expected [1,C,H,W] or [1,N]");
    std::vector<std::int64_t> d;
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& dim = tt.shape().dim(k);
      if (!dim.has_dim_value())
        fail(what + ": dimension " + std::to_string(k) + " is symbolic" +
             (dim.has_dim_param() ? " (" + in_quotes(dim.dim_param()) + ")" : std::string()) +
             "; the import needs a fixed shape, batch 1");
      if (dim.dim_value() < 1)
        fail(what + ": dimension " + std::to_string(k) + " is " + std::to_string(dim.dim_value()));
      d.push_back(dim.dim_value());
    }
    if (d.size() != 4 && d.size() != 2) fail(what + " has shape " + dims_str(d) + "; expected [1,C,H,W] or [1,N]");
    if (d[0] != 1)
      fail(what + " has batch " + std::to_string(d[0]) + " " + dims_str(d) + "; the hardware runs one image (batch 1)");
    Act a;
    a.rank = static_cast<int>(d.size());
    if (a.rank == 4) {
      if (d[1] > kMaxChannels || d[2] > kMaxSide || d[3] > kMaxSide)
        fail(what + " has shape " + dims_str(d) + ": more than " + std::to_string(kMaxChannels) +
             " channels or sides over " + std::to_string(kMaxSide));
      a.shape = {static_cast<int>(d[3]), static_cast<int>(d[2]), static_cast<int>(d[1])};
    } else {
      if (d[1] > kMaxMapValues)
        fail(what + " has shape " + dims_str(d) + ": more than " + std::to_string(kMaxMapValues) + " values");
      a.shape = {static_cast<int>(d[1]), 1, 1};
    }
    if (a.shape.elements() > kMaxMapValues)
      fail(what + " has " + std::to_string(a.shape.elements()) + " values; expected at most " +
           std::to_string(kMaxMapValues));
    a.cls = scales_.make(v.name());
    input_ = v.name();
    acts_[input_] = a;
    producer_[input_] = what;
    net_.input = a.shape;
  }

  std::string canon(const std::string& name) const {
    const auto it = alias_.find(name);
    return it == alias_.end() ? name : it->second;
  }

  // A feature-map input of a node.
  std::pair<std::string, Act> act_in(const Ctx& c, int k, bool padded_ok = false) const {
    const std::string name = c.in(k);
    if (consts_.count(name))
      c.fail("input " + std::to_string(k + 1) + " " + in_quotes(name) + " is a constant; expected a feature map here");
    if (const auto f = folded_.find(name); f != folded_.end())
      c.fail("reads " + in_quotes(name) + ", the map before " + f->second +
             " folded into its layer; only that node may read it (the hardware computes the folded map alone)");
    const std::string cn = canon(name);
    if (!padded_ok && pads_.count(cn))
      c.fail("reads " + in_quotes(name) + ", the output of " + producer_.at(cn) +
             "; a Pad is taken only right before a Conv (the hardware pads inside the convolution's block)");
    const auto it = acts_.find(cn);
    if (it == acts_.end())
      c.fail("input " + in_quotes(name) +
             " is not the graph's input, an initializer or an earlier node's output (a dangling name)");
    return {cn, it->second};
  }

  // A constant input of a node (weights, scales, zero points, shapes).
  const Const& const_in(const Ctx& c, int k, const std::string& role) const {
    const std::string name = c.in(k);
    const auto it = consts_.find(name);
    if (it != consts_.end()) return it->second;
    if (alias_.count(name) || acts_.count(name))
      c.fail("input " + in_quotes(name) + " (" + role + ") is a feature map; expected an initializer");
    c.fail("input " + in_quotes(name) + " (" + role +
           ") is not an initializer or an earlier node's output (a missing initializer)");
  }

  // The output name of a node, checked to be new.
  std::string new_output(const Ctx& c) const {
    if (c.n.output_size() < 1 || c.out().empty()) c.fail("has no output");
    for (int k = 1; k < c.n.output_size(); ++k)
      if (!c.n.output(k).empty())
        c.fail("output " + std::to_string(k + 1) + " " + in_quotes(c.n.output(k)) + " is not supported");
    const std::string& o = c.out();
    if (consts_.count(o) || acts_.count(o) || alias_.count(o)) c.fail("output " + in_quotes(o) + " is defined twice");
    return o;
  }

  void add_act(const Ctx& c, const std::string& name, const Act& a) {
    if (a.shape.elements() > kMaxMapValues)
      c.fail("output " + to_string(a.shape) + " has more than " + std::to_string(kMaxMapValues) + " values");
    acts_[name] = a;
    producer_[name] = c.label;
  }

  // A scale input: one positive power of two (a per-axis scale with all values equal counts as one).
  int scale_exponent(const Ctx& c, int k, const std::string& role) const {
    const Const& s = const_in(c, k, role);
    if (s.v.empty()) c.fail(role + " " + in_quotes(c.in(k)) + " is empty");
    if (!std::all_of(s.v.begin(), s.v.end(), [&](double x) { return x == s.v[0]; }))
      c.fail(role + " " + in_quotes(c.in(k)) + " has " + std::to_string(s.v.size()) +
             " different values (per-channel scales); the hardware has one shift per layer");
    const auto e = exponent_of_scale(s.v[0]);
    if (!e)
      c.fail(role + " " + in_quotes(c.in(k)) + " is " + std::to_string(s.v[0]) +
             ", not a power of two (the hardware requantizes by shifting right)");
    return *e;
  }

  // A zero point: absent (where the op allows it) or int8 zeros.
  void zero_point(const Ctx& c, int k, bool required, const std::string& role) const {
    if (!c.has(k)) {
      if (required) c.fail(role + " is missing");
      return;
    }
    const Const& z = const_in(c, k, role);
    if (z.dtype == onnx::TensorProto::UINT8)
      c.fail(role + " " + in_quotes(c.in(k)) + " is uint8; the hardware's maps and weights are int8");
    if (z.dtype != onnx::TensorProto::INT8 && z.dtype != onnx::TensorProto::INT32)
      c.fail(role + " " + in_quotes(c.in(k)) + " has type " + std::to_string(z.dtype) + "; expected int8");
    if (!z.all_zero()) c.fail(role + " " + in_quotes(c.in(k)) + " is not 0 (the hardware quantizes symmetrically)");
  }

  void set_scale(const Ctx& c, const std::string& map, int e) {
    const std::string why = scales_.set(acts_.at(map).cls, e, c.label);
    if (!why.empty()) c.fail("map " + in_quotes(map) + ": " + why);
  }

  // A convolution's or pooling's window on `in`: one stride for both directions, the same padding on every side.
  struct Window {
    int stride = 1, pad = 0;
    Shape3 out;
  };
  Window window(const Ctx& c, const Attrs& a, const Shape3& in, int kH, int kW, bool pool) const {
    if (kH < 1 || kW < 1 || kH > kMaxSide || kW > kMaxSide)
      c.fail("kernel " + std::to_string(kH) + "x" + std::to_string(kW) + " is out of range 1.." +
             std::to_string(kMaxSide));
    const auto strides = a.ints("strides").value_or(std::vector<std::int64_t>{1, 1});
    if (strides.size() != 2) c.fail("strides " + dims_str(strides) + ": expected 2 values (a 2-D window)");
    if (strides[0] != strides[1])
      c.fail("strides " + dims_str(strides) + " differ: the hardware's window moves by one stride in both directions");
    if (strides[0] < 1 || strides[0] > kMaxSide) c.fail("stride " + std::to_string(strides[0]) + " is out of range");
    if (const auto dil = a.ints("dilations"))
      if (dil->size() != 2 || (*dil)[0] != 1 || (*dil)[1] != 1)
        c.fail("dilations " + dims_str(*dil) +
               ": a dilated window is not supported (the MAC array's filters are dense)");
    const std::string auto_pad = a.s("auto_pad", "NOTSET");
    std::vector<std::int64_t> pads = a.ints("pads").value_or(std::vector<std::int64_t>{0, 0, 0, 0});
    if (pads.size() != 4) c.fail("pads " + dims_str(pads) + ": expected 4 values");
    const std::int64_t s = strides[0];
    if (auto_pad == "VALID") {
      pads = {0, 0, 0, 0};
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // the output is ceil(in / stride); the extra padding goes to the end (UPPER) or the beginning (LOWER)
      const std::int64_t side[2] = {in.H, in.W}, k[2] = {kH, kW};
      for (int ax = 0; ax < 2; ++ax) {
        const std::int64_t total = std::max<std::int64_t>(((side[ax] + s - 1) / s - 1) * s + k[ax] - side[ax], 0);
        const std::int64_t small = total / 2, big = total - small;
        pads[ax] = auto_pad == "SAME_UPPER" ? small : big;
        pads[ax + 2] = auto_pad == "SAME_UPPER" ? big : small;
      }
    } else if (auto_pad != "NOTSET") {
      c.fail("auto_pad " + in_quotes(auto_pad) + " is not supported");
    }
    if (!(pads[0] == pads[1] && pads[1] == pads[2] && pads[2] == pads[3]))
      c.fail("asymmetric pads " + dims_str(pads) + " (top, left, bottom, right): the hardware pads every side alike");
    if (pads[0] < 0 || pads[0] > kMaxSide) c.fail("pads " + dims_str(pads) + " are out of range");
    Window w;
    w.stride = static_cast<int>(s);
    w.pad = static_cast<int>(pads[0]);
    const std::int64_t pw = in.W + 2 * pads[0], ph = in.H + 2 * pads[0];
    if (kW > pw || kH > ph)
      c.fail("window " + std::to_string(kH) + "x" + std::to_string(kW) + " is larger than the padded input " +
             std::to_string(ph) + "x" + std::to_string(pw));
    w.out = {static_cast<int>((pw - kW) / s + 1), static_cast<int>((ph - kH) / s + 1), in.D};
    if (pool && a.i("ceil_mode", 0) != 0) {
      const std::int64_t cw = (pw - kW + s - 1) / s + 1, ch = (ph - kH + s - 1) / s + 1;
      if (cw != w.out.W || ch != w.out.H)
        c.fail("ceil_mode=1 gives a " + std::to_string(ch) + "x" + std::to_string(cw) +
               " output where the hardware's " + "pooling gives " + std::to_string(w.out.H) + "x" +
               std::to_string(w.out.W) + " (it rounds down)");
    }
    return w;
  }

  // ---------------------------------------------------------------- nodes

  Ctx ctx(const onnx::NodeProto& n, int index) const {
    return Ctx{*this, n, index,
               "node " + (n.name().empty() ? "#" + std::to_string(index) : n.name()) + " (" + n.op_type() + ")"};
  }

  void supported(const Ctx& c) const {
    if (!c.n.domain().empty() && c.n.domain() != "ai.onnx")
      c.fail("op domain " + in_quotes(c.n.domain()) +
             " is not supported (the import takes these standard ONNX ops: " + supported_ops() + ")");
    const std::string& t = c.n.op_type();
    for (const char* op : kOps)
      if (t == op) return;
    c.fail("op type " + in_quotes(t) + " is not supported (the import takes " + supported_ops() + ")");
  }

  void node(const Ctx& c) {
    const std::string& t = c.n.op_type();
    if (t == "Constant")
      constant(c);
    else if (t == "QuantizeLinear")
      quantize_linear(c);
    else if (t == "DequantizeLinear")
      dequantize_linear(c);
    else if (t == "Conv" || t == "QLinearConv")
      conv(c, t == "QLinearConv");
    else if (t == "Gemm" || t == "MatMul" || t == "QLinearMatMul")
      fc(c);
    else if (t == "Relu")
      relu(c);
    else if (t == "MaxPool" || t == "AveragePool")
      pool(c, t == "MaxPool");
    else if (t == "GlobalAveragePool")
      global_pool(c);
    else if (t == "Add")
      add(c);
    else if (t == "Flatten" || t == "Reshape")
      flatten(c, t == "Reshape");
    else if (t == "Squeeze")
      squeeze(c);
    else if (t == "BatchNormalization")
      batch_norm(c);
    else if (t == "Identity" || t == "Dropout")
      pass_through(c, t == "Dropout");
    else if (t == "Clip")
      clip(c);
    else if (t == "Pad")
      pad(c);
    else if (t == "Softmax" || t == "Sigmoid")
      final_activation(c);
    else
      supported(c);
  }

  void constant(const Ctx& c) {
    const Attrs a(c, {"value"});
    c.inputs(0, 0);
    const onnx::TensorProto* t = a.t("value");
    if (!t) c.fail("only a Constant with a tensor 'value' is supported");
    const std::string o = new_output(c);
    consts_[o] = read_tensor(*t, c.label + " output " + in_quotes(o));
  }

  void quantize_linear(const Ctx& c) {
    const Attrs a(c, {"axis"});
    c.inputs(2, 3);
    const int e = scale_exponent(c, 1, "scale");
    if (!c.has(2)) c.fail("has no zero point, so its output is uint8; the hardware's maps are int8");
    zero_point(c, 2, true, "zero point");
    if (consts_.at(c.in(2)).dtype != onnx::TensorProto::INT8)
      c.fail("zero point is not int8; the hardware's maps are int8");
    const std::string o = new_output(c);
    quantized_ = true;
    if (const auto it = consts_.find(c.in(0)); it != consts_.end()) {
      // float weights quantized in the graph: round half to even, as QuantizeLinear does
      Const q = it->second;
      if (!q.is_float()) c.fail("quantizes " + q.what + ", which is not float");
      for (double& x : q.v) {
        if (!std::isfinite(x)) c.fail("quantizes " + q.what + ", which holds a value that is not finite");
        x = std::clamp(std::nearbyint(std::ldexp(x, e)), -128.0, 127.0);
      }
      q.dtype = onnx::TensorProto::INT8;
      q.what = c.label + " output " + in_quotes(o);
      consts_[o] = std::move(q);
      return;
    }
    const auto [x, act] = act_in(c, 0);
    set_scale(c, x, e);
    alias_[o] = x;
  }

  void dequantize_linear(const Ctx& c) {
    const Attrs a(c, {"axis"});
    c.inputs(2, 3);
    const std::string o = new_output(c);
    quantized_ = true;
    if (const auto it = consts_.find(c.in(0)); it != consts_.end()) {
      Const q = it->second;
      if (q.dtype != onnx::TensorProto::INT8 && q.dtype != onnx::TensorProto::INT32)
        c.fail("dequantizes " + q.what + " of type " + std::to_string(q.dtype) +
               "; expected int8 weights (or an int32 bias)");
      zero_point(c, 2, false, "zero point");
      if (q.dtype == onnx::TensorProto::INT8) {
        q.scale = std::ldexp(1.0, -scale_exponent(c, 1, "scale"));
      } else {
        // a bias: refused later unless all zero, when its scale does not matter
        const Const& s = const_in(c, 1, "scale");
        if (s.v.empty()) c.fail("scale " + in_quotes(c.in(1)) + " is empty");
        q.scale = s.v[0];
      }
      q.what = c.label + " output " + in_quotes(o);
      consts_[o] = std::move(q);
      return;
    }
    const auto [x, act] = act_in(c, 0);
    zero_point(c, 2, false, "zero point");
    set_scale(c, x, scale_exponent(c, 1, "scale"));
    alias_[o] = x;
  }

  // Weights as the layer takes them: float (a float model) or int8 with a power-of-two scale.
  void take_weights(const Ctx& c, const Const& w, const std::string& name, Node& nd, bool transpose) {
    const std::size_t rows = w.dims.size() == 2 ? static_cast<std::size_t>(w.dims[0]) : 0;
    const std::size_t cols = w.dims.size() == 2 ? static_cast<std::size_t>(w.dims[1]) : 0;
    auto at = [&](std::size_t i) {
      if (!transpose) return w.v[i];
      // [IN][OUT] read as [OUT][IN]
      const std::size_t out = i / rows, in = i % rows;
      return w.v[in * cols + out];
    };
    if (w.is_float()) {
      nd.float_weights = true;
      nd.wf.resize(w.v.size());
      for (std::size_t i = 0; i < w.v.size(); ++i) nd.wf[i] = at(i);
      for (const double x : nd.wf)
        if (!std::isfinite(x)) c.fail("weights " + in_quotes(name) + " hold a value that is not finite");
      return;
    }
    if (w.dtype != onnx::TensorProto::INT8)
      c.fail("weights " + in_quotes(name) + " (" + w.what + ") have type " + std::to_string(w.dtype) +
             "; expected float or int8");
    if (!w.scale)
      c.fail("weights " + in_quotes(name) +
             " are int8 without a scale (a DequantizeLinear, or QLinearConv / QLinearMatMul's)");
    nd.e_w = exponent_of_scale(*w.scale);
    if (!nd.e_w)
      c.fail("weights " + in_quotes(name) + ": scale " + std::to_string(*w.scale) + " is not a power of two");
    nd.wq.resize(w.v.size());
    for (std::size_t i = 0; i < w.v.size(); ++i) nd.wq[i] = static_cast<std::int8_t>(at(i));
  }

  // A Conv's or Gemm's bias (input k): one value per output ([C]; Gemm's C also [1,C] or one value for all).
  // All zero: none, as before biases were taken. Float in a float model (quantized with the layer, at the
  // sums' scale 2^-(e_x + e_w)); int32 through a DequantizeLinear in a QDQ model, or QLinearConv's int32 B.
  void take_bias(const Ctx& c, int k, Node& nd, bool qlinear) const {
    if (!c.has(k)) return;
    const std::string name = c.in(k);
    const Const& b = const_in(c, k, "bias");
    const std::size_t n = static_cast<std::size_t>(nd.C);
    const bool shape_ok = (b.dims.size() == 1 && (b.dims[0] == nd.C || b.dims[0] == 1)) ||
                          (b.dims.size() == 2 && b.dims[0] == 1 && (b.dims[1] == nd.C || b.dims[1] == 1)) ||
                          (b.dims.empty() && b.v.size() == 1);
    if (!shape_ok || b.v.empty())
      c.fail("bias " + in_quotes(name) + " has shape " + dims_str(b.dims) + "; expected [" + std::to_string(nd.C) +
             "] (one value per output channel)");
    if (b.all_zero()) return;
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = b.v.size() == 1 ? b.v[0] : b.v[i];
    nd.bias_name = name;
    if (b.is_float()) {
      for (const double x : v)
        if (!std::isfinite(x)) c.fail("bias " + in_quotes(name) + " holds a value that is not finite");
      nd.bf = std::move(v);
      return;
    }
    if (b.dtype != onnx::TensorProto::INT32)
      c.fail("bias " + in_quotes(name) + " (" + b.what + ") has type " + std::to_string(b.dtype) +
             "; expected float, or int32 at the scale x_scale * w_scale");
    if (!qlinear && !b.scale)
      c.fail("bias " + in_quotes(name) + " is int32 without a scale; expected it through a DequantizeLinear at x_scale * w_scale");
    nd.bias_scale = qlinear ? std::nullopt : b.scale;
    nd.bq = std::move(v);
  }

  void conv(const Ctx& c, bool qlinear) {
    const Attrs a(c, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
    // QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point[, B]
    c.inputs(qlinear ? 8 : 2, qlinear ? 9 : 3);
    const int wk = qlinear ? 3 : 1;
    const auto [x_in, in] = act_in(c, 0, true);
    if (in.rank != 4)
      c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
    // a Pad before it: the convolution reads the Pad's input with both paddings
    const auto padded = pads_.find(x_in);
    const std::string x = padded == pads_.end() ? x_in : padded->second.first;
    const int extra_pad = padded == pads_.end() ? 0 : padded->second.second;
    // groups: lowered to one convolution over every input channel, its filters zero outside their group
    // (block-diagonal weights): the MAC array then multiplies `group` times the products the grouped
    // convolution needs (docs/real_networks.md, "Grouped convolutions")
    const std::int64_t g = a.i("group", 1);
    const Const& w = const_in(c, wk, "weights");
    if (w.dims.size() != 4)
      c.fail("weights " + in_quotes(c.in(wk)) + " have shape " + dims_str(w.dims) + "; expected [C,D,Hf,Wf]");
    if (g < 1 || g > in.shape.D || in.shape.D % g != 0 || w.dims[0] % g != 0)
      c.fail("group=" + std::to_string(g) + ": expected a divisor of the input's " + std::to_string(in.shape.D) +
             " channels and of the " + std::to_string(w.dims[0]) + " filters");
    if (w.dims[1] * g != in.shape.D)
      c.fail("weights " + in_quotes(c.in(wk)) + " have shape " + dims_str(w.dims) + ", for " +
             std::to_string(w.dims[1]) + " input channels per group (group=" + std::to_string(g) + "); the input " +
             dims_str(in.dims()) + " has " + std::to_string(in.shape.D));
    if (g > 1 && w.dims[0] * in.shape.D * w.dims[2] * w.dims[3] > kMaxTensorValues)
      c.fail("group=" + std::to_string(g) + ": its block-diagonal weights would be more than " +
             std::to_string(kMaxTensorValues) + " values");
    if (w.dims[0] < 1 || w.dims[0] > kMaxChannels)
      c.fail("weights " + in_quotes(c.in(wk)) + " have shape " + dims_str(w.dims) + ": filters out of range 1.." +
             std::to_string(kMaxChannels));
    if (const auto ks = a.ints("kernel_shape");
        ks && (ks->size() != 2 || (*ks)[0] != w.dims[2] || (*ks)[1] != w.dims[3]))
      c.fail("kernel_shape " + dims_str(*ks) + " does not match the weights' shape " + dims_str(w.dims));
    Node nd;
    nd.op = Op::Conv;
    nd.kH = static_cast<int>(std::min<std::int64_t>(w.dims[2], kMaxSide + 1));
    nd.kW = static_cast<int>(std::min<std::int64_t>(w.dims[3], kMaxSide + 1));
    Window win = window(c, a, in.shape, nd.kH, nd.kW, false);
    nd.stride = win.stride;
    nd.pad = win.pad + extra_pad;
    nd.C = static_cast<int>(w.dims[0]);
    win.out.D = nd.C;
    nd.D = in.shape.D;
    if (qlinear) {
      take_qlinear_operands(c, x, w, nd, false, "x", "w");
      take_bias(c, 8, nd, true);
    } else {
      take_weights(c, w, c.in(1), nd, false);
      take_bias(c, 2, nd, false);
    }
    if (g > 1) {
      block_diagonal(nd, static_cast<int>(g));
      notes_.push_back(c.label + ": group=" + std::to_string(g) + (g == in.shape.D ? " (depthwise)" : "") +
                       ": lowered to one convolution over all " + std::to_string(in.shape.D) +
                       " channels with block-diagonal weights (zeros outside each group): the MAC array does " +
                       std::to_string(g) + " times the grouped convolution's multiplications and loads " +
                       std::to_string(g) + " times its weights");
    }
    if (nd.has_bias()) notes_.push_back(c.label + ": bias " + in_quotes(nd.bias_name) + " added by the ARM before the ReLU and QUAN's shift");
    const std::string o = finish(c, std::move(nd), {x}, Act{win.out, 4, 0}, true);
    if (qlinear) set_scale(c, o, scale_exponent(c, 6, "y_scale"));
  }

  // A grouped convolution's weights [C][D/g][Hf][Wf] as one convolution's [C][D][Hf][Wf]: filter f reads
  // only the channels of its group (f / (C/g)), the rest of its weights are zero.
  static void block_diagonal(Node& nd, int g) {
    nd.groups = g;
    const std::size_t C = static_cast<std::size_t>(nd.C), D = static_cast<std::size_t>(nd.D), Dg = D / g,
                      Cg = C / g, k = static_cast<std::size_t>(nd.kH) * nd.kW;
    auto expand = [&](auto& w) {
      std::remove_reference_t<decltype(w)> full(C * D * k, 0);
      for (std::size_t f = 0; f < C; ++f)
        for (std::size_t d = 0; d < Dg; ++d)
          std::copy_n(w.begin() + static_cast<std::ptrdiff_t>((f * Dg + d) * k), k,
                      full.begin() + static_cast<std::ptrdiff_t>((f * D + (f / Cg) * Dg + d) * k));
      w = std::move(full);
    };
    if (nd.float_weights) expand(nd.wf);
    else expand(nd.wq);
  }

  // QLinearConv and QLinearMatMul lay out their operands alike: the map, its scale and zero point, the
  // weights, their scale and zero point, the output's scale and zero point (`x`/`a` and `w`/`b` name them).
  void take_qlinear_operands(const Ctx& c, const std::string& x, const Const& w, Node& nd, bool transpose, const std::string& map,
                             const std::string& weights) {
    set_scale(c, x, scale_exponent(c, 1, map + "_scale"));
    zero_point(c, 2, true, map + "_zero_point");
    zero_point(c, 5, true, weights + "_zero_point");
    zero_point(c, 7, true, "y_zero_point");
    Const wq = w;
    if (wq.dtype != onnx::TensorProto::INT8) c.fail("weights " + in_quotes(c.in(3)) + " are not int8");
    wq.scale = std::ldexp(1.0, -scale_exponent(c, 4, weights + "_scale"));
    take_weights(c, wq, c.in(3), nd, transpose);
    quantized_ = true;
  }

  // Gemm (alpha = beta = 1, A not transposed), MatMul and QLinearMatMul: x times a constant matrix.
  void fc(const Ctx& c) {
    const std::string& t = c.n.op_type();
    const bool gemm = t == "Gemm", qlinear = t == "QLinearMatMul";
    const Attrs a = gemm ? Attrs(c, {"alpha", "beta", "transA", "transB"}) : Attrs(c, {});
    // QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
    c.inputs(qlinear ? 8 : 2, qlinear ? 8 : gemm ? 3 : 2);
    const int wk = qlinear ? 3 : 1;
    if (!consts_.count(c.in(wk)) && consts_.count(c.in(0)))
      c.fail("the weights must be the second operand (x times W), with the feature map first");
    const auto [x, in] = act_in(c, 0);
    if (in.rank == 4)
      c.fail("input " + in_quotes(c.in(0)) + " is " + dims_str(in.dims()) +
             "; a Flatten or Reshape to [1,N] must come before it");
    bool transB = false;
    if (gemm) {
      if (a.f("alpha", 1) != 1)
        c.fail("alpha=" + std::to_string(a.f("alpha", 1)) + "; expected 1 (the hardware has no scaling)");
      if (a.f("beta", 1) != 1 && c.has(2)) c.fail("beta=" + std::to_string(a.f("beta", 1)) + "; expected 1");
      if (a.i("transA", 0) != 0) c.fail("transA=1: the input must be [1,N], not transposed");
      transB = a.i("transB", 0) != 0;
      if (in.rank != 2) c.fail("input " + in_quotes(c.in(0)) + " is " + dims_str(in.dims()) + "; Gemm takes [1,N]");
    }
    const Const& w = const_in(c, wk, "weights");
    const std::int64_t n_in = in.shape.W;
    if (w.dims.size() != 2 || w.dims[transB ? 1 : 0] != n_in)
      c.fail("weights " + in_quotes(c.in(wk)) + " have shape " + dims_str(w.dims) + "; expected " +
             (transB ? "[OUT," + std::to_string(n_in) + "]" : "[" + std::to_string(n_in) + ",OUT]") +
             " for the input " + dims_str(in.dims()));
    const std::int64_t n_out = w.dims[transB ? 0 : 1];
    if (n_out < 1 || n_out > kMaxChannels)
      c.fail("weights " + in_quotes(c.in(wk)) + " have shape " + dims_str(w.dims) + ": outputs out of range 1.." +
             std::to_string(kMaxChannels));
    Node nd;
    nd.op = Op::Fc;
    nd.C = static_cast<int>(n_out);
    nd.D = static_cast<int>(n_in);
    if (qlinear) {
      take_qlinear_operands(c, x, w, nd, true, "a", "b");
    } else {
      take_weights(c, w, c.in(1), nd, !transB);
      if (gemm) take_bias(c, 2, nd, false);
    }
    if (nd.has_bias()) notes_.push_back(c.label + ": bias " + in_quotes(nd.bias_name) + " added by the ARM before the ReLU and QUAN's shift");
    const Act out{{nd.C, 1, 1}, in.rank, 0};
    const std::string o = finish(c, std::move(nd), {x}, out, true);
    if (qlinear) set_scale(c, o, scale_exponent(c, 6, "y_scale"));
  }

  void relu(const Ctx& c) {
    const Attrs a(c, {});
    c.inputs(1, 1);
    const auto [x, in] = act_in(c, 0);
    Node nd;
    nd.op = Op::Relu;
    finish(c, std::move(nd), {x}, Act{in.shape, in.rank, 0}, true);
  }

  void pool(const Ctx& c, bool max) {
    const Attrs a =
        max ? Attrs(c, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"})
            : Attrs(c, {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
    c.inputs(1, 1);
    const auto [x, in] = act_in(c, 0);
    if (in.rank != 4)
      c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
    const auto ks = a.ints("kernel_shape");
    if (!ks || ks->size() != 2) c.fail("kernel_shape must be given with 2 values");
    Node nd;
    nd.op = max ? Op::MaxPool : Op::AvgPool;
    nd.kH = static_cast<int>(std::clamp<std::int64_t>((*ks)[0], 0, kMaxSide + 1));
    nd.kW = static_cast<int>(std::clamp<std::int64_t>((*ks)[1], 0, kMaxSide + 1));
    const Window win = window(c, a, in.shape, nd.kH, nd.kW, true);
    nd.stride = win.stride;
    nd.pad = win.pad;
    if (!max && nd.pad > 0 && a.i("count_include_pad", 0) == 0)
      c.fail(
          "padded average pooling with count_include_pad=0: the hardware divides by the whole window, padding included "
          "(docs/real_networks.md)");
    finish(c, std::move(nd), {x}, Act{win.out, 4, 0}, false);
  }

  void global_pool(const Ctx& c) {
    const Attrs a(c, {});
    c.inputs(1, 1);
    const auto [x, in] = act_in(c, 0);
    if (in.rank != 4)
      c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
    Node nd;
    nd.op = Op::AvgPool;
    nd.kW = in.shape.W;
    nd.kH = in.shape.H;
    // `pool avg W H`: the stride is the window's, as a layer list's default (any stride gives one value)
    nd.stride = nd.kW;
    finish(c, std::move(nd), {x}, Act{{1, 1, in.shape.D}, 4, 0}, false);
  }

  void add(const Ctx& c) {
    const Attrs a(c, {});
    c.inputs(2, 2);
    if (consts_.count(c.in(0)) || consts_.count(c.in(1))) {
      add_bias(c);
      return;
    }
    const auto [x0, a0] = act_in(c, 0);
    const auto [x1, a1] = act_in(c, 1);
    if (!(a0.shape == a1.shape) || a0.rank != a1.rank)
      c.fail("operands " + dims_str(a0.dims()) + " and " + dims_str(a1.dims()) +
             " differ (broadcasting is not supported)");
    Node nd;
    nd.op = Op::Add;
    finish(c, std::move(nd), {x0, x1}, Act{a0.shape, a0.rank, 0}, true);
  }

  // The layer (a Conv or fully connected node) whose output `map` is, if it is the latest node and has
  // float weights: what a folding (a BatchNormalization, a bias added by an Add) may change.
  Node* foldable_layer(const Ctx& c, const std::string& map, const std::string& what) {
    if (nodes_.empty() || nodes_.back().out != map || (nodes_.back().op != Op::Conv && nodes_.back().op != Op::Fc))
      c.fail(what + " must come right after the Conv, Gemm or MatMul it is folded into (here it reads " +
             in_quotes(map) + ", the output of " + producer_.at(map) + ")");
    Node& n = nodes_.back();
    if (!n.float_weights)
      c.fail(what + " after " + n.label + " in a quantized model: fold it into the float weights before quantizing");
    return &n;
  }
  // The folded node's output stands for `c`'s; its old name (the map before the folding) may not be read.
  void folded_into(const Ctx& c, Node& n) {
    const std::string o = new_output(c);
    folded_[n.out] = c.label;
    alias_[o] = n.out;
    n.label += " + " + c.label;
  }

  // An Add of a constant to a float Conv's or MatMul's output: the layer's bias (PyTorch's Linear as
  // MatMul + Add, a bias written out).
  void add_bias(const Ctx& c) {
    const bool first = consts_.count(c.in(0)) != 0;
    if (first && consts_.count(c.in(1))) c.fail("adds two constants");
    const Const& b = consts_.at(c.in(first ? 0 : 1));
    const std::string x = canon(c.in(first ? 1 : 0));
    if (!acts_.count(x) || nodes_.empty() || nodes_.back().out != x)
      c.fail("adds a constant to a map that is not a Conv's, Gemm's or MatMul's output: the hardware adds a bias "
             "only to a layer's sums; an Add must otherwise join a residual unit's two branches");
    Node& n = *foldable_layer(c, x, "an Add of a constant (a bias)");
    if (!b.is_float()) c.fail("adds " + b.what + ", which is not float, to the float " + n.label);
    // [C], [1,C], [C,1,1], [1,C,1,1] or one value
    std::int64_t count = 1;
    for (const std::int64_t d : b.dims) count *= d;
    if (count != n.C && count != 1)
      c.fail("adds " + b.what + " of shape " + dims_str(b.dims) + "; expected one value per output channel (" +
             std::to_string(n.C) + ")");
    if (n.op == Op::Conv && b.dims.size() >= 2 && b.dims.back() != 1)
      c.fail("adds " + b.what + " of shape " + dims_str(b.dims) + " to a Conv's output; expected [C,1,1]");
    if (!n.bq.empty()) c.fail("adds a float bias to " + n.label + ", which has an int32 one");
    if (n.bf.empty()) n.bf.assign(static_cast<std::size_t>(n.C), 0.0);
    for (std::size_t i = 0; i < n.bf.size(); ++i) {
      const double v = b.v.size() == 1 ? b.v[0] : b.v[i];
      if (!std::isfinite(v)) c.fail("adds " + b.what + ", which holds a value that is not finite");
      n.bf[i] += v;
    }
    if (n.bias_name.empty()) n.bias_name = c.in(first ? 0 : 1);
    notes_.push_back(c.label + ": the constant it adds is " + n.label + "'s bias (added by the ARM before the ReLU and QUAN's shift)");
    folded_into(c, n);
  }

  // BatchNormalization (inference) after a float Conv: folded into its weights and bias, per filter f,
  // s = scale / sqrt(var + epsilon): w' = w * s, b' = (b - mean) * s + B (docs/real_networks.md).
  void batch_norm(const Ctx& c) {
    const Attrs a(c, {"epsilon", "momentum", "spatial", "training_mode"});
    c.inputs(5, 5);
    if (a.i("training_mode", 0) != 0) c.fail("training_mode=1: only inference (running statistics) is supported");
    if (a.i("spatial", 1) != 1) c.fail("spatial=0 is not supported");
    for (int k = 1; k < c.n.output_size(); ++k)
      if (!c.n.output(k).empty()) c.fail("output " + std::to_string(k + 1) + " (training statistics) is not supported");
    const std::string x = canon(c.in(0));
    if (!acts_.count(x)) c.fail("input " + in_quotes(c.in(0)) + " is not a feature map");
    Node& n = *foldable_layer(c, x, "a BatchNormalization");
    if (n.op != Op::Conv) c.fail("follows " + n.label + "; only a BatchNormalization after a Conv is folded");
    const char* roles[] = {"scale", "B", "mean", "var"};
    std::vector<const Const*> p;
    for (int k = 1; k <= 4; ++k) {
      const Const& t = const_in(c, k, roles[k - 1]);
      if (!t.is_float() || t.v.size() != static_cast<std::size_t>(n.C))
        c.fail(std::string(roles[k - 1]) + " " + in_quotes(c.in(k)) + " has shape " + dims_str(t.dims) + "; expected [" +
               std::to_string(n.C) + "] float");
      p.push_back(&t);
    }
    if (!n.bq.empty()) c.fail("follows " + n.label + ", whose bias is int32; expected a float model");
    const double eps = a.f("epsilon", 1e-5f);
    const std::size_t per_filter = n.wf.size() / static_cast<std::size_t>(n.C);
    if (n.bf.empty()) n.bf.assign(static_cast<std::size_t>(n.C), 0.0);
    for (std::size_t f = 0; f < static_cast<std::size_t>(n.C); ++f) {
      const double var = p[3]->v[f] + eps;
      if (!(var > 0) || !std::isfinite(var)) c.fail("var + epsilon of channel " + std::to_string(f) + " is not positive");
      const double k = p[0]->v[f] / std::sqrt(var);
      if (!std::isfinite(k) || !std::isfinite(p[1]->v[f]) || !std::isfinite(p[2]->v[f]))
        c.fail("channel " + std::to_string(f) + " holds a value that is not finite");
      for (std::size_t i = 0; i < per_filter; ++i) n.wf[f * per_filter + i] *= k;
      n.bf[f] = (n.bf[f] - p[2]->v[f]) * k + p[1]->v[f];
    }
    if (n.bias_name.empty()) n.bias_name = c.label;
    notes_.push_back(c.label + ": folded into " + n.label + "'s weights and bias (w * s, (b - mean) * s + B, s = scale / sqrt(var + epsilon))");
    folded_into(c, n);
  }

  // Identity, and Dropout in inference (ratio ignored; training_mode, if given, a constant false): the
  // output is the input.
  void pass_through(const Ctx& c, bool dropout) {
    const Attrs a = dropout ? Attrs(c, {"seed", "is_test", "ratio"}) : Attrs(c, {});
    c.inputs(1, dropout ? 3 : 1);
    if (dropout && c.has(2)) {
      const Const& t = const_in(c, 2, "training_mode");
      if (!t.all_zero()) c.fail("training_mode is true: a Dropout runs only in inference here");
    }
    const std::string o = c.n.output_size() >= 1 ? c.out() : std::string();
    if (o.empty()) c.fail("has no output");
    for (int k = 1; k < c.n.output_size(); ++k)
      if (!c.n.output(k).empty() && dropout)
        c.fail("its mask output " + in_quotes(c.n.output(k)) + " is not supported (export the model in eval mode)");
    if (consts_.count(c.in(0))) {
      consts_[new_output(c)] = consts_.at(c.in(0));
      return;
    }
    const auto [x, act] = act_in(c, 0);
    alias_[new_output(c)] = x;
    notes_.push_back(c.label + ": passes its input on (inference)");
  }

  // Clip after a Conv or Gemm (ReLU6: min 0, max 6): the layer's ReLU, and QUAN saturates at the
  // quantized max, floor(max * 2^e_y) (a clamp at max before flooring gives the same).
  void clip(const Ctx& c) {
    const Attrs a(c, {"min", "max"});
    c.inputs(1, 3);
    auto bound = [&](int k, const char* attr, double def) {
      if (a.has(attr)) return static_cast<double>(a.f(attr, 0));
      if (!c.has(k)) return def;
      const Const& t = const_in(c, k, attr);
      if (t.v.size() != 1) c.fail(std::string(attr) + " " + in_quotes(c.in(k)) + " is not one value");
      return t.v[0];
    };
    const double inf = std::numeric_limits<double>::infinity();
    const double lo = bound(1, "min", -inf), hi = bound(2, "max", inf);
    if (lo != 0)
      c.fail("min " + std::to_string(lo) + ": only min 0 is supported (a ReLU that the hardware applies to the sums)");
    if (!(hi > 0)) c.fail("max " + std::to_string(hi) + ": expected a positive bound");
    const auto [x, in] = act_in(c, 0);
    Node nd;
    nd.op = Op::Clip;
    nd.lo = lo;
    nd.hi = hi;
    notes_.push_back(c.label + ": a ReLU, and QUAN saturates at floor(" + std::to_string(hi) + " * 2^e_y), the quantized max");
    finish(c, std::move(nd), {x}, Act{in.shape, in.rank, 0}, true);
  }

  // Pad (constant zeros, the same on every side of H and W, none on N and C) before a Conv: the
  // convolution's own padding.
  void pad(const Ctx& c) {
    const Attrs a(c, {"mode", "pads", "value"});
    c.inputs(1, 3);
    if (a.s("mode", "constant") != "constant")
      c.fail("mode " + in_quotes(a.s("mode", "constant")) + ": only constant (zero) padding is supported");
    std::vector<std::int64_t> pads;
    if (const auto p = a.ints("pads")) {
      pads = *p;
    } else {
      if (!c.has(1)) c.fail("has no pads");
      for (const double v : const_in(c, 1, "pads").v) pads.push_back(static_cast<std::int64_t>(v));
    }
    double value = a.f("value", 0);
    if (c.has(2)) {
      const Const& v = const_in(c, 2, "constant_value");
      value = v.v.empty() ? 0 : v.v[0];
    }
    if (value != 0) c.fail("pads with " + std::to_string(value) + "; the hardware pads with zeros");
    const auto [x, in] = act_in(c, 0);
    if (in.rank != 4 || pads.size() != 8)
      c.fail("pads " + dims_str(pads) + " on " + dims_str(in.dims()) + "; expected 8 values for [1,C,H,W]");
    const std::int64_t p = pads[2];
    if (pads[0] || pads[1] || pads[4] || pads[5] || pads[3] != p || pads[6] != p || pads[7] != p || p < 0 || p > kMaxSide)
      c.fail("pads " + dims_str(pads) + ": expected the same padding on every side of H and W, none on N and C");
    const std::string o = new_output(c);
    Act out = in;
    out.shape.W += static_cast<int>(2 * p);
    out.shape.H += static_cast<int>(2 * p);
    add_act(c, o, out);
    pads_[o] = {x, static_cast<int>(p)};
    notes_.push_back(c.label + ": its zero padding of " + std::to_string(p) + " is the next Conv's");
  }

  // A Softmax or Sigmoid that ends the graph: left to the host, which applies it to the int8 output read
  // at its exponent (run-net says so and its output record holds it).
  void final_activation(const Ctx& c) {
    const Attrs a(c, {"axis"});
    c.inputs(1, 1);
    const std::string& graph_out = model_.graph().output(0).name();
    if (c.out() != graph_out)
      c.fail("is not the graph's last node: a " + c.n.op_type() +
             " runs only at the end, on the host (the hardware has no exponential)");
    const auto [x, in] = act_in(c, 0);
    if (c.n.op_type() == "Softmax") {
      const std::int64_t axis = a.i("axis", -1);
      if (in.rank == 4 || (axis != -1 && axis != in.rank - 1))
        c.fail("axis " + std::to_string(axis) + " on " + dims_str(in.dims()) + ": expected the classes of a [1,N] output");
    }
    alias_[new_output(c)] = x;
    net_.host_activation = c.n.op_type();
    notes_.push_back(c.label + ": the network's final " + c.n.op_type() + " is left to the host: the hardware's output is its input");
  }

  // Squeeze (axes as an attribute or, from opset 13, an input) that leaves [1,N] or [N], as x.squeeze() after
  // a global pooling writes it: a flattening.
  void squeeze(const Ctx& c) {
    const Attrs a(c, {"axes"});
    c.inputs(1, 2);
    const auto [x, in] = act_in(c, 0);
    const std::vector<std::int64_t> d = in.dims();
    std::vector<std::int64_t> axes;
    if (const auto at = a.ints("axes")) axes = *at;
    else if (c.has(1))
      for (const double v : const_in(c, 1, "axes").v) axes.push_back(static_cast<std::int64_t>(v));
    std::vector<bool> drop(d.size(), axes.empty());
    for (std::int64_t ax : axes) {
      if (ax < 0) ax += static_cast<std::int64_t>(d.size());
      if (ax < 0 || ax >= static_cast<std::int64_t>(d.size()) || d[static_cast<std::size_t>(ax)] != 1)
        c.fail("axes " + dims_str(axes) + " on " + dims_str(d) + ": expected axes of size 1");
      drop[static_cast<std::size_t>(ax)] = true;
    }
    std::vector<std::int64_t> to;
    for (std::size_t k = 0; k < d.size(); ++k)
      if (!(drop[k] && d[k] == 1)) to.push_back(d[k]);
    const std::int64_t n = in.shape.elements();
    if (!((to.size() == 2 && to[0] == 1 && to[1] == n) || (to.size() == 1 && to[0] == n)))
      c.fail("squeezes " + dims_str(d) + " to " + dims_str(to) +
             "; only a flattening to [1,N] or [N] before a fully connected layer is supported");
    Node nd;
    nd.op = Op::Flatten;
    finish(c, std::move(nd), {x}, Act{{static_cast<int>(n), 1, 1}, static_cast<int>(to.size()), 0}, false);
  }

  // Flatten, or a Reshape to [1,N] or [N]: the map read in [C][H][W] order, which is how the hardware
  // stores it, so nothing moves.
  void flatten(const Ctx& c, bool reshape) {
    const Attrs a = reshape ? Attrs(c, {"allowzero"}) : Attrs(c, {"axis"});
    c.inputs(reshape ? 2 : 1, reshape ? 2 : 1);
    const auto [x, in] = act_in(c, 0);
    const std::vector<std::int64_t> d = in.dims();
    const std::int64_t n = in.shape.elements();
    int rank = 2;
    if (reshape) {
      const Const& s = const_in(c, 1, "shape");
      if (s.dtype != onnx::TensorProto::INT64 || s.dims.size() != 1)
        c.fail("shape " + in_quotes(c.in(1)) + " is not a 1-D int64 tensor");
      std::vector<std::int64_t> to;
      for (const double v : s.v) {
        if (v < -1 || v > static_cast<double>(kMaxMapValues))
          c.fail("shape " + in_quotes(c.in(1)) + " holds " + std::to_string(v));
        to.push_back(static_cast<std::int64_t>(v));
      }
      // 0 copies the input's dimension (unless allowzero), -1 is what is left
      std::int64_t known = 1;
      int free = -1;
      for (std::size_t k = 0; k < to.size(); ++k) {
        if (to[k] == 0 && a.i("allowzero", 0) == 0 && k < d.size()) to[k] = d[k];
        if (to[k] == -1 && free < 0)
          free = static_cast<int>(k);
        else if (to[k] > 0 && known <= n)
          known *= std::min<std::int64_t>(to[k], n + 1);  // no overflow: both <= 2^27 + 1
      }
      if (free >= 0 && known > 0 && n % known == 0) to[static_cast<std::size_t>(free)] = n / known;
      const bool ok = (to.size() == 2 && to[0] == 1 && to[1] == n) || (to.size() == 1 && to[0] == n);
      if (!ok)
        c.fail("reshapes " + dims_str(d) + " to " + dims_str(to) +
               "; only a flattening to [1,-1] or [N] before a fully connected layer is supported");
      rank = static_cast<int>(to.size());
    } else {
      std::int64_t axis = a.i("axis", 1);
      if (axis < 0) axis += static_cast<std::int64_t>(d.size());
      if (axis < 0 || axis > static_cast<std::int64_t>(d.size()))
        c.fail("axis " + std::to_string(a.i("axis", 1)) + " is out of range");
      std::int64_t outer = 1;
      for (std::int64_t k = 0; k < axis; ++k) outer *= d[static_cast<std::size_t>(k)];
      if (outer != 1)
        c.fail("axis " + std::to_string(axis) + " flattens " + dims_str(d) + " to [" + std::to_string(outer) + "," +
               std::to_string(n / outer) + "]; only a flattening to [1,N] before a fully connected layer is supported");
    }
    Node nd;
    nd.op = Op::Flatten;
    finish(c, std::move(nd), {x}, Act{{static_cast<int>(n), 1, 1}, rank, 0}, false);
  }

  // Registers a computing node; its output (returned) is a map of its own exponent (own_scale) or its input's.
  std::string finish(const Ctx& c, Node nd, std::vector<std::string> in, Act out, bool own_scale) {
    nd.index = c.index;
    nd.label = c.label;
    nd.in = std::move(in);
    nd.out = new_output(c);
    out.cls = own_scale ? scales_.make(nd.out) : acts_.at(nd.in[0]).cls;
    add_act(c, nd.out, out);
    nodes_.push_back(std::move(nd));
    return nodes_.back().out;
  }

  // ---------------------------------------------------------------- the chain

  [[noreturn]] void fail_at(const Node& n, const std::string& why) const {
    throw NetworkError(path_ + ": " + n.label + ": " + why);
  }

  int cls(const std::string& map) { return scales_.root(acts_.at(map).cls); }

  void merge(const Node& at, const std::string& a, const std::string& b, const std::string& calib) {
    const std::string why = scales_.merge(acts_.at(a).cls, acts_.at(b).cls, calib);
    if (!why.empty()) fail_at(at, why);
  }

  // A conv, fc or projection layer whose shift the quantization works out.
  struct Weighted {
    std::size_t layer;
    const Node* node;
    std::string in, out;  // its input and output maps (their classes give e_x and e_y)
  };

  // Follows the graph from its input: a chain of nodes, where a map read twice begins a residual unit that
  // an Add ends. Emits the layers as a layer list would have them.
  void walk() {
    for (std::size_t k = 0; k < nodes_.size(); ++k)
      for (const std::string& m : nodes_[k].in) readers_[m].push_back(k);
    std::string cur = input_;
    std::set<std::size_t> seen;
    for (std::size_t guard = 0; guard <= nodes_.size(); ++guard) {
      const auto& r = readers_[cur];
      if (cur == output_) {
        if (!r.empty())
          fail_at(nodes_[r[0]], "reads the graph's output " + in_quotes(cur) + ", which must be the chain's end");
        break;
      }
      if (r.empty())
        fail(producer_.at(cur) + ": its output " + in_quotes(cur) +
             " is not used and is not the graph's output (the graph is not a chain)");
      if (r.size() == 1) {
        const Node& n = nodes_[r[0]];
        if (n.op == Op::Add)
          fail_at(n, "adds " + in_quotes(n.in[0]) + " and " + in_quotes(n.in[1]) +
                         ", which are not a residual unit's input and its branch (the graph is not a chain with "
                         "residual units)");
        seen.insert(r[0]);
        cur = emit(n, cur);
      } else if (r.size() == 2) {
        cur = residual(cur, seen);
      } else {
        fail(producer_.at(cur) + ": its output " + in_quotes(cur) + " is read by " + std::to_string(r.size()) +
             " nodes; the hardware runs a chain whose residual units fork in two");
      }
    }
    if (cur != output_) fail("the walk from the graph's input never reached its output " + in_quotes(output_));
    for (std::size_t k = 0; k < nodes_.size(); ++k)
      if (!seen.count(k)) fail_at(nodes_[k], "is not on the chain from the graph's input to its output");
    if (net_.layers.empty()) fail("the model has no layers");
    if (net_.layers.size() > kMaxLayers) fail("expected at most " + std::to_string(kMaxLayers) + " layers");
    final_ = cur;
  }

  // One node of the chain, reading `cur`; returns the map after it.
  std::string emit(const Node& n, const std::string& cur) {
    LayerSpec l;
    l.line = n.index;
    switch (n.op) {
      case Op::Conv:
      case Op::Fc:
        l.kind = n.op == Op::Conv ? LayerKind::Conv : LayerKind::Fc;
        l.Wf = n.kW;
        l.Hf = n.kH;
        l.D = n.D;
        l.C = n.C;
        l.stride = n.stride;
        l.pad = n.pad;
        l.relu = false;
        weighted_.push_back({net_.layers.size(), &n, cur, n.out});
        relu_layer_ = net_.layers.size();
        relu_map_ = n.out;
        net_.layers.push_back(l);
        return n.out;
      case Op::Relu:
      case Op::Clip:
        // a Clip right after a layer's Relu (F.relu6 exports as Relu, then Clip(0, 6)): the same layer
        if (n.op == Op::Clip && relu_map_ != cur && !after_relu_map_.empty() && after_relu_map_ == cur) {
          relu_map_ = cur;
          relu_layer_ = after_relu_layer_;
        }
        if (relu_map_ != cur || relu_layer_ >= net_.layers.size())
          fail_at(
              n,
              "follows no Conv, Gemm, MatMul or residual Add directly; the hardware applies a ReLU only inside such a "
              "layer, before its QUAN");
        if (n.op == Op::Clip) {
          if (net_.layers[relu_layer_].kind != LayerKind::Conv && net_.layers[relu_layer_].kind != LayerKind::Fc)
            fail_at(n, "follows a residual Add: a Clip's bound is applied by a Conv's or Gemm's QUAN only");
          clip_high_[relu_layer_] = n.hi;
        }
        net_.layers[relu_layer_].relu = true;
        // the layer's map is the one after its ReLU; an identity unit's keeps the shortcut's exponent
        merge(n, cur, n.out, scales_.calib[cls(cur)] == cur ? n.out : scales_.calib[cls(cur)]);
        for (Weighted& w : weighted_)
          if (w.out == cur) w.out = n.out;
        relu_map_.clear();
        non_negative_.insert(n.out);
        after_relu_map_ = n.op == Op::Relu ? n.out : std::string();
        after_relu_layer_ = relu_layer_;
        return n.out;
      case Op::MaxPool:
      case Op::AvgPool:
        if (n.op == Op::MaxPool && n.pad > 0 && !non_negative_.count(cur))
          fail_at(n,
                  "padded max pooling of a map that may be negative: the hardware pads with zeros, ONNX with minus "
                  "infinity; they agree only after a ReLU (docs/real_networks.md)");
        l.kind = LayerKind::Pool;
        l.pool = n.op == Op::MaxPool ? PoolType::Max : PoolType::Avg;
        l.Wf = n.kW;
        l.Hf = n.kH;
        l.stride = n.stride;
        l.pad = n.pad;
        net_.layers.push_back(l);
        relu_map_.clear();
        if (non_negative_.count(cur)) non_negative_.insert(n.out);
        return n.out;
      case Op::Flatten: {
        const auto& r = readers_[n.out];
        if (r.size() != 1 || nodes_[r[0]].op != Op::Fc)
          fail_at(n, "flattens a map that no fully connected layer reads next; the hardware flattens only into one");
        relu_map_.clear();
        return n.out;
      }
      case Op::Add:
        break;  // the walk's residual()
    }
    fail_at(n, "is not a layer of a chain");
  }

  // A residual unit from `x`, the map both its branches read: returns the map after its Add (and ReLU).
  std::string residual(const std::string& x, std::set<std::size_t>& seen) {
    // each branch: the nodes from x to the Add that joins them, each read by the next alone
    auto branch = [&](std::size_t first, std::vector<std::size_t>& path) -> std::size_t {
      std::size_t k = first;
      for (std::size_t guard = 0; guard <= nodes_.size(); ++guard) {
        if (nodes_[k].op == Op::Add) return k;
        path.push_back(k);
        const std::string& o = nodes_[k].out;
        const auto& r = readers_[o];
        if (o == output_)
          fail_at(nodes_[k],
                  "ends a branch of the residual unit from " + in_quotes(x) + " at the graph's output, without an Add");
        if (r.size() != 1)
          fail_at(nodes_[k], r.empty() ? "its output " + in_quotes(o) +
                                             " is not used (the graph is not a chain with residual units)"
                                       : "its output " + in_quotes(o) + " is read by " + std::to_string(r.size()) +
                                             " nodes inside a residual unit; residual units cannot nest");
        k = r[0];
      }
      fail_at(nodes_[first], "a residual branch that does not end");
    };
    const auto& r = readers_[x];
    std::vector<std::size_t> p0, p1;
    const std::size_t j0 = branch(r[0], p0), j1 = branch(r[1], p1);
    const Node& add = nodes_[j0];
    if (j0 != j1)
      fail_at(add, "adds a branch of the residual unit from " + in_quotes(x) + " that " + nodes_[j1].label +
                       " adds too: the two branches must meet in one Add");
    if (p0.empty() && p1.empty()) fail_at(add, "adds " + in_quotes(x) + " to itself; expected a residual unit");
    // the shortcut: x itself, or a 1x1 convolution of it without padding (when both branches are one such
    // convolution, the Add's second operand, as PyTorch's ResNet writes out + shortcut)
    auto projection = [&](const std::vector<std::size_t>& p) {
      if (p.size() != 1) return false;
      const Node& n = nodes_[p[0]];
      return n.op == Op::Conv && n.kW == 1 && n.kH == 1 && n.pad == 0;
    };
    const std::vector<std::size_t>* main = nullptr;
    const std::vector<std::size_t>* shortcut = nullptr;
    if (p0.empty() || p1.empty()) {
      main = p0.empty() ? &p1 : &p0;
      shortcut = p0.empty() ? &p0 : &p1;
    } else if (projection(p0) || projection(p1)) {
      const bool second_is_p1 = add.in[1] == nodes_[p1.back()].out;
      const bool sc1 = projection(p1) && (!projection(p0) || second_is_p1);
      main = sc1 ? &p0 : &p1;
      shortcut = sc1 ? &p1 : &p0;
    } else {
      fail_at(add, "a residual unit's shortcut must be its input " + in_quotes(x) +
                       " itself or a 1x1 Conv of it (no padding, no ReLU); here both branches compute more");
    }
    LayerSpec begin;
    begin.kind = LayerKind::ResidualBegin;
    begin.line = nodes_[main->front()].index;
    net_.layers.push_back(begin);
    relu_map_.clear();
    std::string cur = x;
    for (const std::size_t k : *main) {
      if (nodes_[k].op == Op::Flatten) fail_at(nodes_[k], "flattens inside a residual unit");
      seen.insert(k);
      cur = emit(nodes_[k], cur);
    }
    if (net_.layers.back().kind != LayerKind::Conv)
      fail_at(add,
              "the branch of a residual unit must end with a Conv (and its ReLU); the hardware adds the shortcut in "
              "the last convolution's block");
    seen.insert(j0);
    LayerSpec end;
    end.kind = LayerKind::ResidualEnd;
    end.line = add.index;
    end.relu = false;
    if (shortcut->empty()) {
      end.shortcut = Shortcut::Identity;
      // docs/real_networks.md: the branch's last convolution quantizes to the shortcut's exponent
      const std::string calib = scales_.calib[cls(x)];
      merge(add, x, cur, calib);
      merge(add, x, add.out, calib);
    } else {
      const Node& sc = nodes_[shortcut->front()];
      seen.insert(shortcut->front());
      end.shortcut = Shortcut::Projection;
      end.stride = sc.stride;
      weighted_.push_back({net_.layers.size(), &sc, x, sc.out});
      // both quantize to the exponent calibrated for the sum (after its ReLU, set below)
      merge(add, sc.out, cur, add.out);
      merge(add, sc.out, add.out, add.out);
    }
    net_.layers.push_back(end);
    relu_layer_ = net_.layers.size() - 1;
    relu_map_ = add.out;
    const auto& ra = readers_[add.out];
    if (ra.size() == 1 && nodes_[ra[0]].op == Op::Relu && add.out != output_) {
      seen.insert(ra[0]);
      return emit(nodes_[ra[0]], add.out);
    }
    return add.out;
  }

  // ---------------------------------------------------------------- quantization

  // docs/real_networks.md: the float model run on the calibration inputs; the largest |value| of each map
  // that calibrates an exponent.
  std::map<std::string, double> calibrate(const std::vector<std::vector<float>>& inputs) {
    std::set<std::string> wanted;
    for (std::size_t c = 0; c < scales_.parent.size(); ++c)
      wanted.insert(scales_.calib[scales_.root(static_cast<int>(c))]);
    std::map<std::string, double> max;
    for (const std::string& w : wanted) max[w] = 0;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (static_cast<long long>(inputs[k].size()) != net_.input.elements())
        fail("calibration input " + std::to_string(k + 1) + " has " + std::to_string(inputs[k].size()) +
             " values; the model's input " + to_string(net_.input) + " has " + std::to_string(net_.input.elements()));
      std::map<std::string, std::vector<double>> maps;
      std::map<std::string, std::size_t> left;  // readers still to come, to free a map after its last
      for (const auto& [m, r] : readers_) left[m] = r.size();
      auto note = [&](const std::string& m, const std::vector<double>& v) {
        if (!wanted.count(m)) return;
        for (const double x : v) {
          if (!std::isfinite(x))
            fail("calibration input " + std::to_string(k + 1) + " gives a value that is not finite in " + in_quotes(m));
          max[m] = std::max(max[m], std::fabs(x));
        }
      };
      maps[input_].assign(inputs[k].begin(), inputs[k].end());
      note(input_, maps[input_]);
      for (const Node& n : nodes_) {
        std::vector<double> out = eval(n, maps);
        for (const std::string& m : n.in)
          if (--left[m] == 0) maps.erase(m);
        note(n.out, out);
        maps[n.out] = std::move(out);
      }
    }
    return max;
  }

  std::vector<double> eval(const Node& n, const std::map<std::string, std::vector<double>>& maps) const {
    const std::vector<double>& x = maps.at(n.in[0]);
    const Act& in = acts_.at(n.in[0]);
    const Act& o = acts_.at(n.out);
    const int W = in.shape.W, H = in.shape.H, D = in.shape.D, Wo = o.shape.W, Ho = o.shape.H;
    std::vector<double> y(static_cast<std::size_t>(o.shape.elements()));
    auto at = [&](int d, int r, int col) { return x[(static_cast<std::size_t>(d) * H + r) * W + col]; };
    switch (n.op) {
      case Op::Conv:
        for (int c = 0; c < n.C; ++c)
          for (int yo = 0; yo < Ho; ++yo)
            for (int xo = 0; xo < Wo; ++xo) {
              double acc = 0;
              for (int d = 0; d < D; ++d)
                for (int ky = 0; ky < n.kH; ++ky) {
                  const int r = yo * n.stride + ky - n.pad;
                  if (r < 0 || r >= H) continue;
                  for (int kx = 0; kx < n.kW; ++kx) {
                    const int col = xo * n.stride + kx - n.pad;
                    if (col < 0 || col >= W) continue;
                    acc += n.wf[((static_cast<std::size_t>(c) * D + d) * n.kH + ky) * n.kW + kx] * at(d, r, col);
                  }
                }
              y[(static_cast<std::size_t>(c) * Ho + yo) * Wo + xo] = acc + (n.bf.empty() ? 0.0 : n.bf[c]);
            }
        break;
      case Op::Fc:
        for (int c = 0; c < n.C; ++c) {
          double acc = 0;
          for (int i = 0; i < n.D; ++i)
            acc += n.wf[static_cast<std::size_t>(c) * n.D + i] * x[static_cast<std::size_t>(i)];
          y[static_cast<std::size_t>(c)] = acc + (n.bf.empty() ? 0.0 : n.bf[static_cast<std::size_t>(c)]);
        }
        break;
      case Op::Relu:
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::max(x[i], 0.0);
        break;
      case Op::Clip:
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::clamp(x[i], n.lo, n.hi);
        break;
      case Op::MaxPool:
      case Op::AvgPool:
        // ONNX's semantics: max pooling pads with minus infinity, average pooling counts the padding
        for (int d = 0; d < D; ++d)
          for (int yo = 0; yo < Ho; ++yo)
            for (int xo = 0; xo < Wo; ++xo) {
              double m = -std::numeric_limits<double>::infinity(), sum = 0;
              for (int ky = 0; ky < n.kH; ++ky)
                for (int kx = 0; kx < n.kW; ++kx) {
                  const int r = yo * n.stride + ky - n.pad, col = xo * n.stride + kx - n.pad;
                  if (r < 0 || r >= H || col < 0 || col >= W) continue;
                  m = std::max(m, at(d, r, col));
                  sum += at(d, r, col);
                }
              y[(static_cast<std::size_t>(d) * Ho + yo) * Wo + xo] = n.op == Op::MaxPool ? m : sum / (n.kW * n.kH);
            }
        break;
      case Op::Flatten:
        y = x;
        break;
      case Op::Add: {
        const std::vector<double>& b = maps.at(n.in[1]);
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = x[i] + b[i];
        break;
      }
    }
    return y;
  }

  void quantize(const std::vector<std::vector<float>>& calibration) {
    std::map<std::string, double> max;
    const bool calibrated = !quantized_ && !calibration.empty();
    if (calibrated) max = calibrate(calibration);
    // the exponent of a map: its class's, from the file or the calibration; nullopt: none (a float model
    // without calibration)
    auto exponent = [&](const std::string& map, const std::string& who) -> std::optional<int> {
      const int c = cls(map);
      if (quantized_) {
        if (!scales_.e[c])
          fail(who + ": map " + in_quotes(map) +
               " has no scale; a quantized model needs a QuantizeLinear / DequantizeLinear "
               "(or a QLinear op's scale) on every map a layer reads or writes");
        return scales_.e[c];
      }
      if (!calibrated) return std::nullopt;
      const std::string& t = scales_.calib[c];
      if (!(max.at(t) > 0))
        fail(producer_.at(t) + ": the calibration gives all zeros in " + in_quotes(t) +
             ", whose exponent floor(log2(127 / max|a|)) is then undefined");
      return exponent_for_max(max.at(t));
    };
    for (const Weighted& w : weighted_) {
      const Node& n = *w.node;
      LayerSpec& l = net_.layers[w.layer];
      int e_w = 0;
      std::vector<std::int8_t> q;
      if (n.float_weights) {
        if (quantized_) fail_at(n, "has float weights in a quantized model (expected int8 through a DequantizeLinear)");
        double m = 0;
        for (const double x : n.wf) m = std::max(m, std::fabs(x));
        if (m == 0) fail_at(n, "all its weights are zero: e_w = floor(log2(127 / max|w|)) is undefined");
        // docs/real_networks.md: per tensor, round half to even (the default rounding mode), clamp to +-127
        e_w = exponent_for_max(m);
        q.reserve(n.wf.size());
        for (const double x : n.wf)
          q.push_back(static_cast<std::int8_t>(std::clamp(std::nearbyint(std::ldexp(x, e_w)), -127.0, 127.0)));
      } else {
        e_w = *n.e_w;
        q = n.wq;
      }
      l.weights = std::make_shared<const std::vector<std::int8_t>>(std::move(q));
      const auto e_x = exponent(w.in, n.label), e_y = exponent(w.out, n.label);
      if (n.has_bias()) l.bias = quantized_bias(n, e_x, e_w);
      if (const auto hc = clip_high_.find(w.layer); hc != clip_high_.end() && e_y)
        l.clamp_high = static_cast<int>(std::min(127.0, std::floor(std::ldexp(hc->second, *e_y))));
      if (!e_x || !e_y) continue;  // shift -1: the distributor's rule
      const long long shift = static_cast<long long>(*e_x) + e_w - *e_y;
      const std::string how = "shift = e_x + e_w - e_y = " + std::to_string(*e_x) + " + " + std::to_string(e_w) +
                              " - " + std::to_string(*e_y) + " = " + std::to_string(shift);
      if (shift < 0)
        fail_at(n, how + " is negative: its output's scale is finer than its product's, and QUAN only shifts right");
      if (shift > 31) fail_at(n, how + " is more than 31 (QUAN shifts a 32-bit sum)");
      l.shift = static_cast<int>(shift);
    }
    net_.input_exponent = exponent(input_, producer_.at(input_));
    net_.output_exponent = exponent(final_, producer_.at(final_));
  }

  // A layer's int32 bias at its sums' scale 2^-(e_x + e_w): a float one rounded half to even (docs/real_networks.md),
  // an int32 one as given, its scale checked. Without e_x (a float model without calibration) the values are
  // unknown: zeros, so that the ARM's clocks for the add are still counted.
  std::shared_ptr<const std::vector<std::int32_t>> quantized_bias(const Node& n, std::optional<int> e_x, int e_w) const {
    std::vector<std::int32_t> b(static_cast<std::size_t>(n.C), 0);
    const std::string what = "bias " + in_quotes(n.bias_name);
    if (!n.bf.empty()) {
      if (quantized_)
        fail_at(n, what + " is float in a quantized model (expected int32 through a DequantizeLinear at x_scale * w_scale)");
      if (e_x) {
        for (std::size_t i = 0; i < b.size(); ++i) {
          const double v = std::nearbyint(std::ldexp(n.bf[i], *e_x + e_w));
          if (std::fabs(v) > 2147483647.0)
            fail_at(n, what + ": value " + std::to_string(n.bf[i]) + " at the sums' scale " + scale_str(*e_x + e_w) +
                           " is beyond int32");
          b[i] = static_cast<std::int32_t>(v);
        }
      }
    } else {
      if (n.bias_scale && e_x) {
        const auto e_b = exponent_of_scale(*n.bias_scale);
        if (!e_b || *e_b != *e_x + e_w)
          fail_at(n, what + ": scale " + std::to_string(*n.bias_scale) + " is not x_scale * w_scale = " +
                         scale_str(*e_x + e_w) + " (the ARM adds the bias to the sums at their scale)");
      }
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::int32_t>(n.bq[i]);
    }
    return std::make_shared<const std::vector<std::int32_t>>(std::move(b));
  }

  std::string path_;
  onnx::ModelProto model_;
  Network net_;
  std::map<std::string, Const> consts_;
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
  std::size_t relu_layer_ = 0;  // the layer a ReLU reading relu_map_ joins
  std::string relu_map_;
  std::set<std::string> non_negative_;  // maps after a ReLU (padded max pooling may read them)
  std::map<std::size_t, double> clip_high_;  // a layer's Clip max (ReLU6: 6), by layer index
  std::string after_relu_map_;               // the map a layer's Relu just gave (a Clip may follow it)
  std::size_t after_relu_layer_ = 0;
  std::map<std::string, std::string> folded_;  // a map a BatchNormalization or bias was folded into, and by which node
  std::map<std::string, std::pair<std::string, int>> pads_;  // a Pad's output: its input and padding
  // s2cosim check
  bool collect_ = false;
  std::vector<std::string> problems_;
  std::vector<std::string> notes_;  // what the import folded, lowered or left to the host, per node
};

}  // namespace

OnnxCheck check_onnx(const std::string& path) {
  std::string bytes;
  {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) return OnnxCheck{{path + ": cannot read the ONNX model: " + ec.message()}, {}, std::nullopt};
    if (size > kMaxOnnxFileBytes)
      return OnnxCheck{{path + ": expected an ONNX model of at most " + std::to_string(kMaxOnnxFileBytes) + " bytes, got " +
                        std::to_string(size)},
                       {},
                       std::nullopt};
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return check_onnx_bytes(bytes, path);
}

OnnxCheck check_onnx_bytes(const std::string& bytes, const std::string& path) {
  OnnxCheck r = Importer(path).check(bytes);
  if (r.network) {
    r.network->source = path;
    r.network->name = std::filesystem::path(path).stem().string();
  }
  return r;
}

Network import_onnx(const std::string& path, const std::vector<std::vector<float>>& calibration) {
  Network net = Importer(path).run(calibration);
  net.source = path;
  net.name = std::filesystem::path(path).stem().string();
  return net;
}

Network parse_onnx(const std::string& bytes, const std::string& path, const std::vector<std::vector<float>>& calibration) {
  Network net = Importer(path).run(bytes, calibration);
  net.source = path;
  net.name = std::filesystem::path(path).stem().string();
  return net;
}

}  // namespace s2::mapper
