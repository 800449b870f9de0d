#include <cmath>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

void Importer::constant(const Ctx& c) {
  const Attrs a(c, {"value"});
  c.inputs(0, 0);
  const onnx::TensorProto* t = a.t("value");
  if (!t) c.fail("only a Constant with a tensor 'value' is supported");
  const std::string o = new_output(c);
  consts_[o] = read_tensor(*t, c.label + " output " + in_quotes(o));
}

void Importer::quantize_linear(const Ctx& c) {
  const Attrs a(c, {"axis"});
  c.inputs(2, 3);
  const bool weights = consts_.count(c.in(0)) > 0;
  // float weights may be quantized per output channel (a per-axis scale); a map has one exponent
  const std::vector<int> es = weights ? scale_exponents(c, 1, "scale") : std::vector<int>{scale_exponent(c, 1, "scale")};
  const int e = es[0];
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
    const std::vector<std::size_t> index = axis_index(c, a, q, es.size());
    for (std::size_t i = 0; i < q.v.size(); ++i) {
      double& x = q.v[i];
      if (!std::isfinite(x)) c.fail("quantizes " + q.what + ", which holds a value that is not finite");
      x = std::clamp(std::nearbyint(std::ldexp(x, es[index[i]])), -128.0, 127.0);
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

std::vector<std::size_t> Importer::axis_index(const Ctx& c, const Attrs& a, const Const& q, std::size_t scales) const {
  std::vector<std::size_t> index(q.v.size(), 0);
  if (scales == 1) return index;
  const std::int64_t rank = static_cast<std::int64_t>(q.dims.size());
  std::int64_t axis = a.i("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || q.dims[static_cast<std::size_t>(axis)] != static_cast<std::int64_t>(scales))
    c.fail("scale " + in_quotes(c.in(1)) + " has " + std::to_string(scales) + " values, not one per index of axis " +
           std::to_string(a.i("axis", 1)) + " of " + dims_str(q.dims));
  std::size_t inner = 1;  // values per step along the axis ([d0][d1]...: row-major)
  for (std::int64_t d = axis + 1; d < rank; ++d) inner *= static_cast<std::size_t>(q.dims[static_cast<std::size_t>(d)]);
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = (i / inner) % scales;
  return index;
}

void Importer::dequantize_linear(const Ctx& c) {
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
    const Const& s = const_in(c, 1, "scale");
    if (s.v.empty()) c.fail("scale " + in_quotes(c.in(1)) + " is empty");
    const bool per_axis = std::any_of(s.v.begin(), s.v.end(), [&](double x) { return x != s.v[0]; });
    if (q.dtype == onnx::TensorProto::INT8) {
      // weights quantized per output channel: the layer checks the axis and gives each channel its shift
      const std::vector<int> e = scale_exponents(c, 1, "scale");
      q.scale = std::ldexp(1.0, -e[0]);
    } else {
      // a bias: refused later unless all zero, when its scale does not matter
      q.scale = s.v[0];
    }
    if (per_axis) {
      axis_index(c, a, q, s.v.size());
      q.scales = s.v;
      q.axis = static_cast<int>(a.i("axis", 1) < 0 ? a.i("axis", 1) + static_cast<std::int64_t>(q.dims.size()) : a.i("axis", 1));
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

Node* Importer::foldable_layer(const Ctx& c, const std::string& map, const std::string& what) {
  if (nodes_.empty() || nodes_.back().out != map || (nodes_.back().op != Op::Conv && nodes_.back().op != Op::Fc))
    c.fail(what + " must come right after the Conv, Gemm or MatMul it is folded into (here it reads " +
           in_quotes(map) + ", the output of " + producer_.at(map) + ")");
  Node& n = nodes_.back();
  if (!n.float_weights)
    c.fail(what + " after " + n.label + " in a quantized model: fold it into the float weights before quantizing");
  return &n;
}

void Importer::folded_into(const Ctx& c, Node& n) {
  const std::string o = new_output(c);
  folded_[n.out] = c.label;
  alias_[o] = n.out;
  n.label += " + " + c.label;
}

void Importer::add_bias(const Ctx& c) {
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

void Importer::batch_norm(const Ctx& c) {
  const Attrs a(c, {"epsilon", "momentum", "spatial", "training_mode"});
  c.inputs(5, 5);
  if (a.i("training_mode", 0) != 0) c.fail("training_mode=1: only inference (running statistics) is supported");
  if (a.i("spatial", 1) != 1) c.fail("spatial=0 is not supported");
  for (int k = 1; k < c.n.output_size(); ++k)
    if (!c.n.output(k).empty()) c.fail("output " + std::to_string(k + 1) + " (training statistics) is not supported");
  const std::string x = canon(c.in(0));
  if (!acts_.count(x)) c.fail("input " + in_quotes(c.in(0)) + " is not a feature map");
  const double eps = a.f("epsilon", 1e-5f);
  const char* roles[] = {"scale", "B", "mean", "var"};
  const std::size_t channels = acts_.at(x).rank == 4 ? static_cast<std::size_t>(acts_.at(x).shape.D) : 0;
  std::vector<const Const*> p;
  for (int k = 1; k <= 4; ++k) {
    const Const& t = const_in(c, k, roles[k - 1]);
    if (!t.is_float() || t.v.size() != channels)
      c.fail(std::string(roles[k - 1]) + " " + in_quotes(c.in(k)) + " has shape " + dims_str(t.dims) + "; expected [" +
             std::to_string(channels) + "] float");
    p.push_back(&t);
  }
  // right after a float Conv (its output read by nothing else yet): folded into its weights; elsewhere an affine
  if (nodes_.empty() || nodes_.back().out != x || nodes_.back().op != Op::Conv || !nodes_.back().float_weights ||
      !nodes_.back().bq.empty()) {
    affine(c, p, eps);
    return;
  }
  Node& n = nodes_.back();
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

void Importer::pass_through(const Ctx& c, bool dropout) {
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

void Importer::pad(const Ctx& c) {
  const Attrs a(c, {"mode", "pads", "value"});
  c.inputs(1, 3);
  if (a.s("mode", "constant") != "constant")
    c.fail("mode " + in_quotes(a.s("mode", "constant")) + ": only constant (zero) padding is supported");
  std::vector<std::int64_t> pads;
  if (const auto p = a.ints("pads")) {
    pads = *p;
  } else {
    if (!c.has(1)) c.fail("has no pads");
    for (const double v : const_in(c, 1, "pads").v) pads.push_back(to_i64(v));
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
  if (p == 0) {  // torch.onnx.export writes one before an nn.AvgPool2d of any padding
    alias_[o] = x;
    notes_.push_back(c.label + ": pads nothing: passes its input on");
    return;
  }
  Act out = in;
  out.shape.W += static_cast<int>(2 * p);
  out.shape.H += static_cast<int>(2 * p);
  add_act(c, o, out);
  pads_[o] = {x, static_cast<int>(p)};
  notes_.push_back(c.label + ": its zero padding of " + std::to_string(p) + " is the next Conv's or AveragePool's");
}

void Importer::shape_arithmetic(const Ctx& c) {
  const std::string& t = c.n.op_type();
  // a constant input, or the reason this op is not shape arithmetic
  auto constant_in = [&](int k) -> const Const& {
    if (!consts_.count(c.in(k)) && (alias_.count(c.in(k)) || acts_.count(c.in(k))))
      c.fail("input " + in_quotes(c.in(k)) + " is a feature map; only shape arithmetic on constants is evaluated");
    return const_in(c, k, "data");
  };
  auto whole = [&](double v) {
    if (v != std::floor(v) || std::fabs(v) > 1e15) c.fail("holds " + std::to_string(v) + "; expected an integer");
    return static_cast<std::int64_t>(v);
  };
  Const r;
  r.dtype = onnx::TensorProto::INT64;
  if (t == "Shape") {
    const Attrs a(c, {"start", "end"});
    c.inputs(1, 1);
    const auto [x, in] = act_in(c, 0, true);
    const std::vector<std::int64_t> d = in.dims();
    const auto n = static_cast<std::int64_t>(d.size());
    auto clampi = [&](std::int64_t i) { return std::clamp(i < 0 ? i + n : i, std::int64_t{0}, n); };
    const std::int64_t b = clampi(a.i("start", 0)), e = clampi(a.i("end", n));
    for (std::int64_t k = b; k < e; ++k) r.v.push_back(double(d[static_cast<std::size_t>(k)]));
    r.dims = {static_cast<std::int64_t>(r.v.size())};
  } else if (t == "Gather") {
    const Attrs a(c, {"axis"});
    c.inputs(2, 2);
    const Const& data = constant_in(0);
    const Const& idx = constant_in(1);
    if (a.i("axis", 0) != 0 || data.dims.size() != 1)
      c.fail("gathers from " + dims_str(data.dims) + " along axis " + std::to_string(a.i("axis", 0)) +
             "; only a Gather from a 1-D constant (a shape) along axis 0 is evaluated");
    const auto n = static_cast<std::int64_t>(data.v.size());
    for (const double v : idx.v) {
      std::int64_t k = whole(v);
      if (k < 0) k += n;
      if (k < 0 || k >= n) c.fail("index " + std::to_string(whole(v)) + " is outside " + dims_str(data.dims));
      r.v.push_back(data.v[static_cast<std::size_t>(k)]);
    }
    r.dtype = data.dtype;
    r.dims = idx.dims;
  } else if (t == "Unsqueeze") {
    const Attrs a(c, {"axes"});
    c.inputs(1, 2);
    const Const& x = constant_in(0);
    std::vector<std::int64_t> axes;
    if (const auto at = a.ints("axes")) axes = *at;
    else if (c.has(1))
      for (const double v : const_in(c, 1, "axes").v) axes.push_back(whole(v));
    const auto rank = static_cast<std::int64_t>(x.dims.size() + axes.size());
    std::vector<bool> one(static_cast<std::size_t>(rank), false);
    for (std::int64_t ax : axes) {
      if (ax < 0) ax += rank;
      if (ax < 0 || ax >= rank || one[static_cast<std::size_t>(ax)])
        c.fail("axes " + dims_str(axes) + " on " + dims_str(x.dims) + " are out of range or repeated");
      one[static_cast<std::size_t>(ax)] = true;
    }
    r = x;
    r.dims.clear();
    std::size_t from = 0;
    for (std::int64_t k = 0; k < rank; ++k) r.dims.push_back(one[static_cast<std::size_t>(k)] ? 1 : x.dims[from++]);
  } else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
    // integers of a shape (a channel count halved for a Split written as two Slices): one value, or two of one size
    const Attrs a(c, {});
    c.inputs(2, 2);
    const Const& x = constant_in(0);
    const Const& y = constant_in(1);
    if (x.v.size() != y.v.size() && x.v.size() != 1 && y.v.size() != 1)
      c.fail("operands " + dims_str(x.dims) + " and " + dims_str(y.dims) + ": only shape arithmetic on constants is evaluated");
    // the broadcast shape: the operand with more values, or more dimensions ([1] and a scalar give [1])
    r = x.v.size() > y.v.size() || (x.v.size() == y.v.size() && x.dims.size() >= y.dims.size()) ? x : y;
    for (std::size_t i = 0; i < r.v.size(); ++i) {
      const std::int64_t p = whole(x.v[x.v.size() == 1 ? 0 : i]), q = whole(y.v[y.v.size() == 1 ? 0 : i]);
      if (t == "Div" && q == 0) c.fail("divides by zero");
      // int64 division truncates toward zero, as ONNX's Div of integers
      r.v[i] = double(t == "Add" ? p + q : t == "Sub" ? p - q : t == "Mul" ? p * q : p / q);
    }
    if (!std::all_of(r.v.begin(), r.v.end(), [](double v) { return std::fabs(v) <= 1e15; }))
      c.fail("holds values beyond a shape's");
  } else if (t == "Cast") {
    const Attrs a(c, {"to"});
    c.inputs(1, 1);
    r = constant_in(0);
    r.dtype = static_cast<int>(a.i("to", onnx::TensorProto::FLOAT));
    if (element_bytes(r.dtype) == 0) c.fail("casts to type " + std::to_string(r.dtype) + ", which the import does not read");
    if (r.dtype != onnx::TensorProto::FLOAT && r.dtype != onnx::TensorProto::DOUBLE)
      for (double& v : r.v) v = std::trunc(v);  // to an integer type: toward zero
  } else if (t == "ConstantOfShape") {
    const Attrs a(c, {"value"});
    c.inputs(1, 1);
    const Const& shape = constant_in(0);
    Const fill;
    fill.v = {0.0};
    fill.dtype = onnx::TensorProto::FLOAT;
    if (const onnx::TensorProto* v = a.t("value")) fill = read_tensor(*v, c.label + " value");
    if (fill.v.size() != 1) c.fail("value is not one value");
    std::int64_t n = 1;
    for (const double d : shape.v) {
      if (d < 0 || d > 1 << 20 || n * whole(d) > 1 << 20) c.fail("shape " + dims_str(fill.dims) + " is not a small shape");
      r.dims.push_back(whole(d));
      n *= whole(d);
    }
    r.dtype = fill.dtype;
    r.v.assign(static_cast<std::size_t>(n), fill.v[0]);
  } else if (t == "Equal" || t == "Where" || t == "Expand") {
    // the rest of a chunk's sizes as torch.onnx writes them (SplitToSequence's split): one value, or a few of one size
    const Attrs a(c, {});
    c.inputs(t == "Where" ? 3 : 2, t == "Where" ? 3 : 2);
    std::vector<const Const*> x;
    for (int k = 0; k < c.n.input_size(); ++k) x.push_back(&constant_in(k));
    std::size_t n = 1;
    if (t == "Expand") {
      for (const double d : x[1]->v) {
        if (d < 1 || d > 1 << 20 || n * static_cast<std::size_t>(whole(d)) > 1 << 20) c.fail("expands to a shape that is not small");
        n *= static_cast<std::size_t>(whole(d));
      }
      if (x[0]->v.size() != 1 && x[0]->v.size() != n) c.fail("expands " + dims_str(x[0]->dims) + ": only one value, or as many");
      r.dtype = x[0]->dtype;
      r.dims.clear();
      for (const double d : x[1]->v) r.dims.push_back(whole(d));
      for (std::size_t i = 0; i < n; ++i) r.v.push_back(x[0]->v[x[0]->v.size() == 1 ? 0 : i]);
    } else {
      for (const Const* k : x) n = std::max(n, k->v.size());
      for (const Const* k : x)
        if (k->v.size() != 1 && k->v.size() != n) c.fail("operands " + dims_str(k->dims) + ": one value, or as many as the others");
      const Const& big = **std::max_element(x.begin(), x.end(), [](const Const* p, const Const* q) { return p->v.size() < q->v.size(); });
      r.dims = big.dims;
      auto at = [&](std::size_t k, std::size_t i) { return x[k]->v[x[k]->v.size() == 1 ? 0 : i]; };
      r.dtype = t == "Equal" ? onnx::TensorProto::BOOL : x[1]->dtype;
      for (std::size_t i = 0; i < n; ++i)
        r.v.push_back(t == "Equal" ? double(at(0, i) == at(1, i)) : at(0, i) != 0 ? at(1, i) : at(2, i));
    }
  } else {  // Concat
    const Attrs a(c, {"axis"});
    c.inputs(1, 64);
    for (int k = 0; k < c.n.input_size(); ++k) constant_in(k);  // feature maps first: the reason that matters
    if (a.i("axis", 0) != 0) c.fail("axis " + std::to_string(a.i("axis", 0)) + ": only a Concat of 1-D constants (shapes) is evaluated");
    for (int k = 0; k < c.n.input_size(); ++k) {
      const Const& x = constant_in(k);
      if (x.dims.size() != 1) c.fail("concatenates " + dims_str(x.dims) + "; only 1-D constants (shapes) are evaluated");
      if (k == 0) r.dtype = x.dtype;
      r.v.insert(r.v.end(), x.v.begin(), x.v.end());
    }
    r.dims = {static_cast<std::int64_t>(r.v.size())};
  }
  const std::string o = new_output(c);
  r.what = c.label + " output " + in_quotes(o);
  r.scale.reset();
  consts_[o] = std::move(r);
}

void Importer::arithmetic(const Ctx& c) {
  if (c.n.input_size() == 2 && consts_.count(c.in(0)) && consts_.count(c.in(1))) {
    shape_arithmetic(c);
    return;
  }
  c.fail("op type " + in_quotes(c.n.op_type()) + " of feature maps is not supported: " + hint_for(c.n.op_type()));
}

void Importer::final_activation(const Ctx& c) {
  const Attrs a(c, {"axis"});
  c.inputs(1, 1);
  const std::string& graph_out = model_.graph().output(0).name();
  if (c.out() != graph_out)
    c.fail("is not the graph's last node: a " + c.n.op_type() +
           " runs only at the end, on the host (the hardware has no exponential)");
  const auto [x, in] = act_in(c, 0);
  if (c.n.op_type() == "Softmax" || c.n.op_type() == "LogSoftmax") {
    const std::int64_t axis = a.i("axis", -1);
    if (in.rank == 4 || (axis != -1 && axis != in.rank - 1))
      c.fail("axis " + std::to_string(axis) + " on " + dims_str(in.dims()) + ": expected the classes of a [1,N] output");
  }
  alias_[new_output(c)] = x;
  net_.host_activation = c.n.op_type();
  notes_.push_back(c.label + ": the network's final " + c.n.op_type() + " is left to the host: the hardware's output is its input");
}

}  // namespace s2::mapper::onnx_reader
