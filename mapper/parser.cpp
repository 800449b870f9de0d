#include "parser.h"

#include <optional>

namespace s2::mapper {

const char* to_string(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::Padding: return "padding";
    case PrimitiveKind::Convolution: return "convolution";
    case PrimitiveKind::MatMul: return "matrix multiplication";
    case PrimitiveKind::ReLU: return "relu";
    case PrimitiveKind::Quantization: return "quantization";
    case PrimitiveKind::Pooling: return "pooling";
    case PrimitiveKind::ElementwiseAdd: return "element-wise addition";
  }
  return "?";
}

int test_data_shift(int K) {
  int bits = 0;  // ceil(log2(K))
  while ((std::uint64_t(1) << bits) < static_cast<std::uint64_t>(K)) ++bits;
  return 7 + (bits + 1) / 2;
}

const Operation* find_op(const OperationBlock& b, PrimitiveKind k) {
  for (const Operation& o : b.ops)
    if (o.kind == k) return &o;
  return nullptr;
}

const char* to_string(BlockKind k) {
  switch (k) {
    case BlockKind::Convolution: return "convolution block";
    case BlockKind::Pooling: return "pooling block";
    case BlockKind::MatMul: return "matrix multiplication block";
  }
  return "?";
}

const Operation* OperationBlock::fused_pool() const {
  if (kind != BlockKind::Convolution) return nullptr;
  for (const Operation& o : ops)
    if (o.kind == PrimitiveKind::Pooling) return &o;
  return nullptr;
}

const OperationBlock* ParsedNetwork::find(const std::string& core_name) const {
  for (const OperationBlock& b : blocks)
    if (b.name() == core_name) return &b;
  return nullptr;
}

namespace {

struct Chain {
  explicit Chain(const Network& n) : net(n), cur(n.input) {}
  const Network& net;
  ParsedNetwork out;
  Shape3 cur;                     // the tensor the next layer reads
  std::string producer = "input"; // the block that wrote it
  int counter = 0;                // thesis numbering: convolution, pooling and fc layers
  LayerKind last = LayerKind::ResidualBegin;  // the previous layer line's kind (none yet)
  struct Open {
    Shape3 in;
    std::string producer;
    int line = 0;
    std::size_t layers_before = 0;
  };
  std::optional<Open> residual;
  std::size_t layers_seen = 0;

  [[noreturn]] void fail(const LayerSpec& l, const std::string& layer, const std::string& field,
                         const std::string& what) const {
    throw NetworkError(net.source + ":" + std::to_string(l.line) + ": layer " + layer + ", field " + field + ": " + what);
  }
  std::string source_of_cur() const {
    return producer == "input" ? "the network input " + to_string(cur) : "the output of " + producer + " " + to_string(cur);
  }
  // PADD_n: `pad` zeros on every side of the current tensor, giving `padded`
  Operation padding(int n, int pad, Shape3 padded) const {
    Operation p = op("PADD", n, PrimitiveKind::Padding, cur, padded);
    p.pad = pad;
    return p;
  }
  static Operation op(std::string prefix, int n, PrimitiveKind k, Shape3 in, Shape3 o) {
    Operation x;
    x.name = std::move(prefix) + "_" + std::to_string(n);
    x.kind = k;
    x.layer = n;
    x.in = in;
    x.out = o;
    return x;
  }
  // the padded input and the output of a window of Wf x Hf at `stride`, or an error naming the field
  std::pair<Shape3, Shape3> window(const LayerSpec& l, const std::string& name, int out_d) const {
    const Shape3 padded{cur.W + 2 * l.pad, cur.H + 2 * l.pad, cur.D};
    if (l.Wf > padded.W)
      fail(l, name, "Wf", "expected at most " + std::to_string(padded.W) + " (the padded input width; " + source_of_cur() +
                              ", pad " + std::to_string(l.pad) + "), got " + std::to_string(l.Wf));
    if (l.Hf > padded.H)
      fail(l, name, "Hf", "expected at most " + std::to_string(padded.H) + " (the padded input height; " +
                              source_of_cur() + ", pad " + std::to_string(l.pad) + "), got " + std::to_string(l.Hf));
    const Shape3 o{(padded.W - l.Wf) / l.stride + 1, (padded.H - l.Hf) / l.stride + 1, out_d};
    bounded(l, name, padded);
    bounded(l, name, o);
    return {padded, o};
  }
  // a layer's trained weights, if it has any: as many as its filter (or matrix) has values
  std::shared_ptr<const std::vector<std::int8_t>> weights_of(const LayerSpec& l, const std::string& name,
                                                             std::int64_t expected) const {
    if (l.weights && static_cast<std::int64_t>(l.weights->size()) != expected)
      fail(l, name, "weights", "expected " + std::to_string(expected) + " values, got " + std::to_string(l.weights->size()));
    return l.weights;
  }
  // a layer's bias, if it has one: one per output channel; `bias=seed` drawn at the layer's shift (K: the
  // products in a sum, for the test-data shift)
  std::shared_ptr<const std::vector<std::int32_t>> bias_of(const LayerSpec& l, const std::string& name, int outputs,
                                                           int K) const {
    if (l.bias_drawn)
      return std::make_shared<const std::vector<std::int32_t>>(drawn_bias(l.line, outputs, l.shift >= 0 ? l.shift : test_data_shift(K)));
    if (l.bias && static_cast<std::int64_t>(l.bias->size()) != outputs)
      fail(l, name, "bias", "expected " + std::to_string(outputs) + " values (one per output channel), got " +
                                std::to_string(l.bias->size()));
    return l.bias;
  }
  // a feature map the model can hold (network.h, kMaxMapValues)
  void bounded(const LayerSpec& l, const std::string& name, const Shape3& s) const {
    if (s.elements() > kMaxMapValues)
      fail(l, name, "size", "expected feature maps of at most " + std::to_string(kMaxMapValues) + " values, got " + to_string(s) +
                                " (" + std::to_string(s.elements()) + ")");
  }

  // A convolution or FC layer's block ends with its ReLU (if any) and quantization; its output `o`
  // becomes the current tensor.
  void close_layer_block(OperationBlock b, const LayerSpec& l, int n, const std::string& name, const Shape3& o) {
    if (l.relu) b.ops.push_back(op("ACTI", n, PrimitiveKind::ReLU, o, o));
    Operation q = op("QUAN", n, PrimitiveKind::Quantization, o, o);
    q.shift = l.shift;
    q.saturate_high = l.clamp_high;
    b.ops.push_back(q);
    out.blocks.push_back(std::move(b));
    producer = name;
    cur = o;
  }

  void conv(const LayerSpec& l) {
    const int n = ++counter;
    const std::string name = "CONV_" + std::to_string(n);
    if (l.D != cur.D)
      fail(l, name, "D", "expected " + std::to_string(cur.D) + " (the channels of " + source_of_cur() + "), got " +
                             std::to_string(l.D));
    const auto [padded, o] = window(l, name, l.C);
    OperationBlock b;
    b.kind = BlockKind::Convolution;
    b.inputs = {producer};
    b.workers = l.workers;
    if (l.pad > 0) b.ops.push_back(padding(n, l.pad, padded));
    Operation c = op("CONV", n, PrimitiveKind::Convolution, padded, o);
    c.Wf = l.Wf;
    c.Hf = l.Hf;
    c.stride = l.stride;
    c.weights = weights_of(l, name, std::int64_t(l.C) * l.D * l.Hf * l.Wf);
    c.bias = bias_of(l, name, l.C, l.D * l.Hf * l.Wf);
    b.core = b.ops.size();
    b.ops.push_back(c);
    close_layer_block(std::move(b), l, n, name, o);
  }

  void pool(const LayerSpec& l) {
    const int n = ++counter;
    const std::string name = "POOL_" + std::to_string(n);
    const auto [padded, o] = window(l, name, cur.D);
    Operation p = op("POOL", n, PrimitiveKind::Pooling, padded, o);
    p.Wf = l.Wf;
    p.Hf = l.Hf;
    p.stride = l.stride;
    p.pool = l.pool;
    // thesis 4.1: a pooling whose stride equals its window joins the convolution block before it. A max
    // pooling only (the thesis's networks have no other): the PE pools its int8 results in place by their
    // maximum; an average (a global average pooling after a convolution) stays a pooling block of its own
    const bool fusable = l.pool == PoolType::Max && l.Wf == l.Hf && l.stride == l.Wf && l.pad == 0 && last == LayerKind::Conv &&
                         !out.blocks.empty() && out.blocks.back().kind == BlockKind::Convolution &&
                         out.blocks.back().fused_pool() == nullptr &&
                         (l.workers == 0 || l.workers == out.blocks.back().workers);
    if (fusable) {
      out.blocks.back().ops.push_back(p);
    } else {
      OperationBlock b;
      b.kind = BlockKind::Pooling;
      b.inputs = {producer};
      b.workers = l.workers;
      if (l.pad > 0) b.ops.push_back(padding(n, l.pad, padded));
      b.core = b.ops.size();
      b.ops.push_back(p);
      out.blocks.push_back(std::move(b));
      producer = name;
    }
    cur = o;
  }

  void fc(const LayerSpec& l) {
    const int n = ++counter;
    const std::string name = "FC_" + std::to_string(n);
    if (l.D != cur.elements())
      fail(l, name, "IN", "expected " + std::to_string(cur.elements()) + " (" + source_of_cur() + ", flattened), got " +
                              std::to_string(l.D));
    const Shape3 in{l.D, 1, 1}, o{l.C, 1, 1};  // a vector: W values
    OperationBlock b;
    b.kind = BlockKind::MatMul;
    b.inputs = {producer};
    b.workers = l.workers;
    Operation f = op("FC", n, PrimitiveKind::MatMul, in, o);
    f.weights = weights_of(l, name, std::int64_t(l.C) * l.D);
    f.bias = bias_of(l, name, l.C, l.D);
    b.ops.push_back(f);
    close_layer_block(std::move(b), l, n, name, o);
  }

  void residual_begin(const LayerSpec& l) {
    if (residual)
      throw NetworkError(net.source + ":" + std::to_string(l.line) + ": residual blocks cannot nest (one began at line " +
                         std::to_string(residual->line) + ")");
    residual = Open{cur, producer, l.line, layers_seen};
  }

  void residual_end(const LayerSpec& l) {
    const std::string where = net.source + ":" + std::to_string(l.line) + ": ";
    if (!residual) throw NetworkError(where + "'residual end' without 'residual begin'");
    if (last != LayerKind::Conv || layers_seen == residual->layers_before)
      throw NetworkError(where + "a residual block must end with a convolution");
    const int n = out.blocks.back().core_op().layer;
    if (l.shortcut == Shortcut::Projection) {
      // As the thesis's parser orders it: the block's last convolution first, then the projection CONV_SC_n,
      // whose block adds the last convolution's output (MAT_ELE_n) and applies the ReLU: the unit's output.
      const Shape3 in = residual->in;
      const Shape3 o{(in.W - 1) / l.stride + 1, (in.H - 1) / l.stride + 1, cur.D};
      const std::string name = "CONV_SC_" + std::to_string(n);
      if (o.W != cur.W || o.H != cur.H)
        fail(l, name, "stride", "a 1x1 projection of the block's input " + to_string(in) + " at stride " +
                                    std::to_string(l.stride) + " gives " + to_string(o) + ", but the block's output is " +
                                    to_string(cur));
      OperationBlock sc;
      sc.kind = BlockKind::Convolution;
      sc.inputs = {residual->producer, producer};
      Operation c = op("CONV_SC", n, PrimitiveKind::Convolution, in, o);
      c.stride = l.stride;
      c.weights = weights_of(l, name, std::int64_t(o.D) * in.D);
      c.bias = bias_of(l, name, o.D, in.D);
      sc.ops.push_back(c);
      Operation q = op("QUAN_SC", n, PrimitiveKind::Quantization, o, o);
      q.shift = l.shift;
      sc.ops.push_back(q);
      sc.ops.push_back(op("MAT_ELE", n, PrimitiveKind::ElementwiseAdd, o, o));
      if (l.relu) sc.ops.push_back(op("ACTI", n, PrimitiveKind::ReLU, o, o));
      out.blocks.push_back(std::move(sc));
      producer = name;
    } else {
      if (!(residual->in == cur))
        fail(l, "MAT_ELE_" + std::to_string(n), "shortcut",
             "identity needs the block's input " + to_string(residual->in) + " to equal its output " + to_string(cur) +
                 " (use shortcut=projection)");
      OperationBlock& b = out.blocks.back();
      b.inputs.push_back(residual->producer);
      b.ops.push_back(op("MAT_ELE", n, PrimitiveKind::ElementwiseAdd, cur, cur));
      if (l.relu) b.ops.push_back(op("ACTI", n, PrimitiveKind::ReLU, cur, cur));
    }
    residual.reset();
  }
};

}  // namespace

ParsedNetwork parse_network(const Network& net) {
  Chain c(net);
  c.out.name = net.name;
  c.out.input = net.input;
  for (const LayerSpec& l : net.layers) {
    switch (l.kind) {
      case LayerKind::Conv: c.conv(l); ++c.layers_seen; break;
      case LayerKind::Pool: c.pool(l); ++c.layers_seen; break;
      case LayerKind::Fc: c.fc(l); ++c.layers_seen; break;
      case LayerKind::ResidualBegin: c.residual_begin(l); break;
      case LayerKind::ResidualEnd: c.residual_end(l); break;
    }
    c.last = l.kind;
  }
  if (c.residual)
    throw NetworkError(net.source + ":" + std::to_string(c.residual->line) + ": residual block never ended");
  if (c.out.blocks.empty()) throw NetworkError(net.source + ": the network has no layers");
  return c.out;
}

}  // namespace s2::mapper
