#include "parser.h"

#include <map>
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
    case PrimitiveKind::Elementwise: return "element-wise operation";
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
    case BlockKind::Elementwise: return "element-wise block";
  }
  return "?";
}

const Operation* OperationBlock::fused_pool() const {
  if (kind != BlockKind::Convolution) return nullptr;
  for (const Operation& o : ops)
    if (o.kind == PrimitiveKind::Pooling) return &o;
  return nullptr;
}

const MapView* ParsedNetwork::find_view(const std::string& name) const {
  for (const MapView& v : views)
    if (v.name == name) return &v;
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
  // maps by the names layers gave them (`as=`): their shape and the block or view that holds them
  struct Named {
    Shape3 shape;
    std::string producer;
  };
  std::map<std::string, Named> named;
  // per layer, how many later layers read its output (readers_of): a layer whose output another layer reads
  // too cannot have a pooling or a residual addition fused into its block
  std::vector<int> readers;
  std::size_t index = 0;  // the layer in hand
  bool prev_read_elsewhere() const { return index > 0 && readers[index - 1] > 1; }

  [[noreturn]] void fail(const LayerSpec& l, const std::string& layer, const std::string& field,
                         const std::string& what) const {
    throw NetworkError(net.source + ":" + std::to_string(l.line) + ": layer " + layer + ", field " + field + ": " + what);
  }
  std::string source_of_cur() const {
    return producer == "input" ? "the network input " + to_string(cur) : "the output of " + producer + " " + to_string(cur);
  }
  // The map `name` (an earlier layer's `as=`, or "input").
  Named map_named(const LayerSpec& l, const std::string& layer, const std::string& name) const {
    if (name == "input") return {net.input, "input"};
    const auto it = named.find(name);
    if (it == named.end())
      fail(l, layer, "in", "no earlier layer writes a map named '" + name + "' (name one with as=NAME, or read 'input')");
    return it->second;
  }
  // The layer reads its first input (`in=`) instead of the previous layer's output.
  void read_input(const LayerSpec& l, const std::string& layer) {
    if (l.inputs.empty()) return;
    const Named m = map_named(l, layer, l.inputs[0]);
    cur = m.shape;
    producer = m.producer;
  }
  // After the layer: its output is the current tensor and, if it has a name, a named map.
  void name_output(const LayerSpec& l) {
    if (l.name.empty()) return;
    if (l.name == "input" || named.count(l.name))
      throw NetworkError(net.source + ":" + std::to_string(l.line) + ": field as: the name '" + l.name + "' is " +
                         (l.name == "input" ? "the network input's" : "already taken by an earlier layer"));
    named[l.name] = {cur, producer};
  }
  // The channels of map `producer` (a block's output, the input, or a view: resolved to its sources).
  std::vector<ChannelSource> channels_of(const std::string& source, const Shape3& shape) const {
    if (const MapView* v = out.find_view(source)) return v->channels;
    std::vector<ChannelSource> c;
    for (int d = 0; d < shape.D; ++d) c.push_back({source, d});
    return c;
  }
  // A layout: a view named NAME_n over `channels`, the current tensor.
  void view(const LayerSpec& l, const std::string& prefix, Shape3 shape, std::vector<ChannelSource> channels) {
    MapView v;
    v.name = prefix + "_" + std::to_string(++counter);
    v.shape = shape;
    v.channels = std::move(channels);
    v.line = l.line;
    bounded(l, v.name, shape);
    out.views.push_back(v);
    cur = shape;
    producer = v.name;
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
    const Shape3 padded{cur.W + 2 * l.pad + l.pad_end, cur.H + 2 * l.pad + l.pad_end, cur.D};
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
  // a layer's per-channel shifts, if it has them: one per output channel, each 0..31
  std::shared_ptr<const std::vector<std::uint8_t>> shifts_of(const LayerSpec& l, const std::string& name, int outputs) const {
    if (!l.shifts) return nullptr;
    if (static_cast<std::int64_t>(l.shifts->size()) != outputs)
      fail(l, name, "shifts", "expected " + std::to_string(outputs) + " values (one per output channel), got " +
                                  std::to_string(l.shifts->size()));
    for (std::uint8_t s : *l.shifts)
      if (s > 31) fail(l, name, "shifts", "expected shifts of 0 to 31, got " + std::to_string(s));
    return l.shifts;
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
    q.shifts = shifts_of(l, name, static_cast<int>(o.elements() / (b.kind == BlockKind::MatMul ? 1 : std::max(1, o.W * o.H))));
    q.saturate_high = l.clamp_high;
    b.ops.push_back(q);
    out.blocks.push_back(std::move(b));
    producer = name;
    cur = o;
  }

  void conv(const LayerSpec& l) {
    const int n = ++counter;
    const std::string name = "CONV_" + std::to_string(n);
    read_input(l, name);
    if (l.D != cur.D)
      fail(l, name, "D", "expected " + std::to_string(cur.D) + " (the channels of " + source_of_cur() + "), got " +
                             std::to_string(l.D));
    if (l.groups > 1 && (l.D % l.groups != 0 || l.C % l.groups != 0))
      fail(l, name, "groups", "expected a divisor of the input channels D = " + std::to_string(l.D) +
                                  " and of the filters C = " + std::to_string(l.C) + ", got " + std::to_string(l.groups));
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
    c.groups = l.groups;
    c.weights = weights_of(l, name, std::int64_t(l.C) * (l.D / l.groups) * l.Hf * l.Wf);
    c.bias = bias_of(l, name, l.C, l.D / l.groups * l.Hf * l.Wf);
    b.core = b.ops.size();
    b.ops.push_back(c);
    close_layer_block(std::move(b), l, n, name, o);
  }

  void pool(const LayerSpec& l) {
    const int n = ++counter;
    const std::string name = "POOL_" + std::to_string(n);
    read_input(l, name);
    if (l.pad_end > 0 && l.pool != PoolType::Max)
      fail(l, name, "padend", "end padding (a ceil-mode window) is for max pooling only: an average's divisor would differ");
    const auto [padded, o] = window(l, name, cur.D);
    Operation p = op("POOL", n, PrimitiveKind::Pooling, padded, o);
    p.Wf = l.Wf;
    p.Hf = l.Hf;
    p.stride = l.stride;
    p.pool = l.pool;
    p.pad_end = l.pad_end;
    // thesis 4.1: a pooling whose stride equals its window joins the convolution block before it. A max
    // pooling only (the thesis's networks have no other): the PE pools its int8 results in place by their
    // maximum; an average (a global average pooling after a convolution) stays a pooling block of its own
    const bool fusable = l.pool == PoolType::Max && l.Wf == l.Hf && l.stride == l.Wf && l.pad == 0 && l.pad_end == 0 &&
                         last == LayerKind::Conv && l.inputs.empty() && !prev_read_elsewhere() &&
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
      if (l.pad > 0 || l.pad_end > 0) {
        b.ops.push_back(padding(n, l.pad, padded));
        b.ops.back().pad_end = l.pad_end;
      }
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
    read_input(l, name);
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
    read_input(l, "residual begin");
    if (residual)
      throw NetworkError(net.source + ":" + std::to_string(l.line) + ": residual blocks cannot nest (one began at line " +
                         std::to_string(residual->line) + ")");
    residual = Open{cur, producer, l.line, layers_seen};
  }

  void residual_end(const LayerSpec& l) {
    const std::string where = net.source + ":" + std::to_string(l.line) + ": ";
    if (!l.inputs.empty()) {  // the unit's input named: no `residual begin` needed
      if (l.inputs.size() != 1) throw NetworkError(where + "field in: a residual end names one map, the unit's input");
      const Named m = map_named(l, "residual end", l.inputs[0]);
      residual = Open{m.shape, m.producer, l.line, layers_seen - 1};
    }
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
      q.shifts = shifts_of(l, name, o.D);
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
      if (prev_read_elsewhere()) {
        // the last convolution's output is read by another layer too, so the addition cannot change it in
        // place: an element-wise Add block of the two (no shifts: MAT_ELE's saturating addition)
        ElementwiseSpec e;
        e.op = EltOp::Add;
        e.relu = l.relu;
        add_elementwise(l, e, {producer, residual->producer}, {cur, residual->in});
        residual.reset();
        return;
      }
      OperationBlock& b = out.blocks.back();
      b.inputs.push_back(residual->producer);
      b.ops.push_back(op("MAT_ELE", n, PrimitiveKind::ElementwiseAdd, cur, cur));
      if (l.relu) b.ops.push_back(op("ACTI", n, PrimitiveKind::ReLU, cur, cur));
    }
    residual.reset();
  }

  void concat(const LayerSpec& l) {
    const std::string name = "CAT_" + std::to_string(counter + 1);
    if (l.inputs.size() < 2) fail(l, name, "in", "a concatenation reads two or more maps (in=A,B,...)");
    Shape3 shape;
    std::vector<ChannelSource> channels;
    for (const std::string& in : l.inputs) {
      const Named m = map_named(l, name, in);
      if (channels.empty()) shape = {m.shape.W, m.shape.H, 0};
      else if (m.shape.W != shape.W || m.shape.H != shape.H)
        fail(l, name, "in", "map '" + in + "' " + to_string(m.shape) + " differs in width or height from the first, " +
                                l.inputs[0] + " [" + std::to_string(shape.W) + "," + std::to_string(shape.H) + ",...]");
      shape.D += m.shape.D;
      if (shape.D > kMaxChannels) fail(l, name, "in", "expected at most " + std::to_string(kMaxChannels) + " channels");
      for (const ChannelSource& c : channels_of(m.producer, m.shape)) channels.push_back(c);
    }
    view(l, "CAT", shape, std::move(channels));
  }

  void slice(const LayerSpec& l) {
    const std::string name = "SLICE_" + std::to_string(counter + 1);
    read_input(l, name);
    if (l.count < 1 || l.first < 0 || l.first + l.count > cur.D)
      fail(l, name, "COUNT", "channels [" + std::to_string(l.first) + ", " + std::to_string(l.first + l.count) + ") are not within " +
                                 source_of_cur());
    const std::vector<ChannelSource> all = channels_of(producer, cur);
    view(l, "SLICE", {cur.W, cur.H, l.count}, {all.begin() + l.first, all.begin() + l.first + l.count});
  }

  void shuffle(const LayerSpec& l) {
    const std::string name = "SHUFFLE_" + std::to_string(counter + 1);
    read_input(l, name);
    if (l.groups < 1 || cur.D % l.groups != 0)
      fail(l, name, "G", "expected a divisor of the channels of " + source_of_cur() + ", got " + std::to_string(l.groups));
    const std::vector<ChannelSource> all = channels_of(producer, cur);
    std::vector<ChannelSource> c(all.size());
    const int per = cur.D / l.groups;
    for (int i = 0; i < l.groups; ++i)
      for (int j = 0; j < per; ++j) c[std::size_t(j) * l.groups + i] = all[std::size_t(i) * per + j];
    view(l, "SHUFFLE", cur, std::move(c));
  }

  // An element-wise block over maps `in` (their producers) of shapes `shapes`; its output is the first's shape.
  void add_elementwise(const LayerSpec& l, ElementwiseSpec e, std::vector<std::string> in, std::vector<Shape3> shapes) {
    const int n = ++counter;
    const char* prefix = e.op == EltOp::Table ? "LUT" : e.op == EltOp::Affine ? "AFFINE" : e.op == EltOp::Add ? "ADD" : "MUL";
    const std::string name = std::string(prefix) + "_" + std::to_string(n);
    const bool binary = e.op == EltOp::Add || e.op == EltOp::Mul || e.op == EltOp::ChannelMul;
    if (in.size() != (binary ? 2u : 1u))
      fail(l, name, "in", std::string("expected ") + (binary ? "two maps (in=A,B)" : "one map") + ", got " + std::to_string(in.size()));
    const Shape3 a = shapes[0];
    if (binary) {
      const Shape3 b = shapes[1];
      const bool per_channel = b.W == 1 && b.H == 1 && b.D == a.D;
      if (e.op == EltOp::Mul && per_channel && !(a == b)) e.op = EltOp::ChannelMul;  // a map times a [1,1,C] vector
      if (e.op == EltOp::ChannelMul && !per_channel)
        fail(l, name, "in", "a channel multiply's second map must be [1,1," + std::to_string(a.D) + "], got " + to_string(b));
      if (e.op != EltOp::ChannelMul && !(a == b))
        fail(l, name, "in", "the two maps differ in shape: " + to_string(a) + " and " + to_string(b));
    }
    if (e.op == EltOp::Table && (e.table.empty() || e.table.size() % 256 != 0 || (e.tables() != 1 && e.tables() != a.D)))
      fail(l, name, "table", "expected 256 entries, or 256 per channel (" + std::to_string(a.D) + " channels), got " +
                                 std::to_string(e.table.size()));
    if (e.op == EltOp::Affine && (e.scale.size() != std::size_t(a.D) || e.offset.size() != std::size_t(a.D)))
      fail(l, name, "scale", "expected one scale and offset per channel (" + std::to_string(a.D) + "), got " +
                                 std::to_string(e.scale.size()) + " and " + std::to_string(e.offset.size()));
    if (e.shift < 0 || e.shift > 31) fail(l, name, "shift", "expected 0 to 31, got " + std::to_string(e.shift));
    // (128 << 21) twice and the rounding term stay within 32 bits
    if (e.shift_a < 0 || e.shift_a > 21 || e.shift_b < 0 || e.shift_b > 21)
      fail(l, name, "shifta", "expected operand shifts of 0 to 21, got " + std::to_string(e.shift_a) + " and " + std::to_string(e.shift_b));
    OperationBlock b;
    b.kind = BlockKind::Elementwise;
    b.inputs = std::move(in);
    b.workers = l.workers;
    Operation o = op(prefix, n, PrimitiveKind::Elementwise, a, a);
    o.elementwise = std::make_shared<const ElementwiseSpec>(std::move(e));
    b.ops.push_back(o);
    out.blocks.push_back(std::move(b));
    producer = name;
    cur = a;
  }

  void elementwise(const LayerSpec& l) {
    if (!l.elementwise) fail(l, "layer " + std::to_string(l.line), "operation", "an element-wise layer without its operation");
    const std::string name = "ELT_" + std::to_string(counter + 1);
    read_input(l, name);
    std::vector<std::string> in{producer};
    std::vector<Shape3> shapes{cur};
    for (std::size_t k = 1; k < l.inputs.size(); ++k) {
      const Named m = map_named(l, name, l.inputs[k]);
      in.push_back(m.producer);
      shapes.push_back(m.shape);
    }
    ElementwiseSpec e = *l.elementwise;
    // thesis 4.1's operator fusion: an activation table right after a convolution, which nothing else reads,
    // joins its block (the ARM applies it to the int8 results in the PE, as it does a ReLU)
    if (e.op == EltOp::Table && e.tables() == 1 && l.inputs.empty() && last == LayerKind::Conv && !prev_read_elsewhere() &&
        !out.blocks.empty() && out.blocks.back().kind == BlockKind::Convolution && producer == out.blocks.back().name() &&
        out.blocks.back().fused_pool() == nullptr && find_op(out.blocks.back(), PrimitiveKind::Elementwise) == nullptr &&
        (l.workers == 0 || l.workers == out.blocks.back().workers)) {
      Operation o = op("LUT", ++counter, PrimitiveKind::Elementwise, cur, cur);
      o.elementwise = std::make_shared<const ElementwiseSpec>(std::move(e));
      out.blocks.back().ops.push_back(o);
      return;
    }
    if (e.op == EltOp::Affine && e.scale.empty() && e.function == "drawn") draw_affine(l.line, cur.D, e);
    add_elementwise(l, std::move(e), std::move(in), std::move(shapes));
  }
};

// Per layer, how many later layers read its output: the next one in a chain, those that name it (`in=`),
// and a residual end its unit's input.
std::vector<int> readers_of(const Network& net) {
  std::vector<int> r(net.layers.size(), 0);
  std::map<std::string, int> names;  // by `as=`; absent (and "input"): the network input, -1
  auto id = [&](const std::string& n) {
    const auto it = names.find(n);
    return it == names.end() ? -1 : it->second;
  };
  auto read = [&](int j) {
    if (j >= 0) ++r[static_cast<std::size_t>(j)];
  };
  int cur = -1, open = -1;
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const LayerSpec& l = net.layers[i];
    if (l.kind == LayerKind::ResidualBegin) {
      if (!l.inputs.empty()) cur = id(l.inputs[0]);
      open = cur;
      continue;
    }
    if (l.kind == LayerKind::ResidualEnd) {
      read(cur);
      read(l.inputs.empty() ? open : id(l.inputs[0]));
    } else if (l.inputs.empty()) {
      read(cur);
    } else {
      for (const std::string& n : l.inputs) read(id(n));
    }
    cur = static_cast<int>(i);
    if (!l.name.empty()) names[l.name] = cur;
  }
  return r;
}

}  // namespace

ParsedNetwork parse_network(const Network& net) {
  Chain c(net);
  c.out.name = net.name;
  c.out.input = net.input;
  c.readers = readers_of(net);
  for (const LayerSpec& l : net.layers) {
    switch (l.kind) {
      case LayerKind::Conv: c.conv(l); ++c.layers_seen; break;
      case LayerKind::Pool: c.pool(l); ++c.layers_seen; break;
      case LayerKind::Fc: c.fc(l); ++c.layers_seen; break;
      case LayerKind::ResidualBegin: c.residual_begin(l); break;
      case LayerKind::ResidualEnd: c.residual_end(l); ++c.layers_seen; break;
      case LayerKind::Concat: c.concat(l); ++c.layers_seen; break;
      case LayerKind::Slice: c.slice(l); ++c.layers_seen; break;
      case LayerKind::Shuffle: c.shuffle(l); ++c.layers_seen; break;
      case LayerKind::Elementwise: c.elementwise(l); ++c.layers_seen; break;
    }
    if (l.kind != LayerKind::ResidualBegin) c.name_output(l);
    c.last = l.kind;
    ++c.index;
  }
  if (c.residual)
    throw NetworkError(net.source + ":" + std::to_string(c.residual->line) + ": residual block never ended");
  if (c.out.blocks.empty()) throw NetworkError(net.source + ": the network has no layers");
  if (c.producer != c.out.blocks.back().name())
    throw NetworkError(net.source + ": the network ends in " + c.producer +
                       ", a layout (concatenation, slice or shuffle) of maps: its output must be a computing layer's");
  return c.out;
}

}  // namespace s2::mapper
