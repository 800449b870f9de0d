#include <cmath>
#include <numeric>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

void Importer::add_node(const Ctx& c, Node nd, std::vector<std::string> in, const std::string& out, Act a, bool own_scale) {
  if (out.empty()) c.fail("has an output without a name");
  if (consts_.count(out) || acts_.count(out) || alias_.count(out)) c.fail("output " + in_quotes(out) + " is defined twice");
  nd.index = c.index;
  nd.label = c.label;
  nd.in = std::move(in);
  nd.out = out;
  a.cls = own_scale ? scales_.make(out) : acts_.at(nd.in[0]).cls;
  add_act(c, out, a);
  nodes_.push_back(std::move(nd));
}

void Importer::activation(const Ctx& c) {
  const std::string& t = c.n.op_type();
  const bool prelu = t == "PRelu";
  const Attrs a = t == "HardSigmoid" ? Attrs(c, {"alpha", "beta"}) : t == "LeakyRelu" ? Attrs(c, {"alpha"}) : Attrs(c, {});
  c.inputs(prelu ? 2 : 1, prelu ? 2 : 1);
  const auto [x, in] = act_in(c, 0);
  Node nd;
  nd.op = Op::Table;
  if (t == "Sigmoid") nd.acts = {default_activation("sigmoid")};
  else if (t == "Tanh") nd.acts = {default_activation("tanh")};
  else if (t == "HardSwish") nd.acts = {default_activation("hardswish")};
  else if (t == "HardSigmoid") nd.acts = {{"hardsigmoid", a.f("alpha", 0.2f), a.f("beta", 0.5f)}};
  else if (t == "LeakyRelu") nd.acts = {{"leakyrelu", a.f("alpha", 0.01f), 0}};
  else {
    // PRelu: a slope per channel ([C], [C,1,1], [1,C,1,1]) or one: LeakyRelu's with that slope
    const Const& s = const_in(c, 1, "slope");
    const std::size_t channels = in.rank == 4 ? static_cast<std::size_t>(in.shape.D) : 1;
    if (s.v.size() != 1 && (s.v.size() != channels || in.rank != 4))
      c.fail("slope " + in_quotes(c.in(1)) + " has shape " + dims_str(s.dims) + "; expected one value or one per channel of " +
             dims_str(in.dims()));
    for (const double v : s.v) {
      if (!std::isfinite(v)) c.fail("slope " + in_quotes(c.in(1)) + " holds a value that is not finite");
      nd.acts.push_back({"leakyrelu", v, 0});
    }
  }
  finish(c, std::move(nd), {x}, Act{in.shape, in.rank, 0}, true);
  table_of_[nodes_.back().out] = nodes_.size() - 1;
}

void Importer::mul(const Ctx& c) {
  const Attrs a(c, {});
  c.inputs(2, 2);
  const bool k0 = consts_.count(c.in(0)) != 0, k1 = consts_.count(c.in(1)) != 0;
  if (k0 && k1) {
    shape_arithmetic(c);
    return;
  }
  if (k0 || k1)
    c.fail("multiplies a feature map by a constant: " + hint_for("Mul"));
  const auto [x0, a0] = act_in(c, 0);
  const auto [x1, a1] = act_in(c, 1);
  auto vector_of = [](const Act& v, const Act& m) {
    return v.rank == 4 && m.rank == 4 && v.shape.W == 1 && v.shape.H == 1 && v.shape.D == m.shape.D;
  };
  Node nd;
  nd.op = Op::Mul;
  std::vector<std::string> in{x0, x1};
  Act out = a0;
  if (a0.shape == a1.shape && a0.rank == a1.rank) {
  } else if (vector_of(a1, a0) || vector_of(a0, a1)) {
    // the map first, the per-channel factors second
    nd.channel = true;
    if (vector_of(a0, a1)) {
      in = {x1, x0};
      out = a1;
    }
  } else {
    c.fail("operands " + dims_str(a0.dims()) + " and " + dims_str(a1.dims()) +
           " are neither of one shape nor a map and one value per channel ([1,C,1,1])");
  }
  finish(c, std::move(nd), std::move(in), Act{out.shape, out.rank, 0}, true);
}

void Importer::affine(const Ctx& c, const std::vector<const Const*>& p, double eps) {
  const auto [x, in] = act_in(c, 0);
  if (in.rank != 4) c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
  const std::size_t C = static_cast<std::size_t>(in.shape.D);
  Node nd;
  nd.op = Op::Affine;
  for (std::size_t f = 0; f < C; ++f) {
    const double var = p[3]->v[f] + eps;
    if (!(var > 0) || !std::isfinite(var)) c.fail("var + epsilon of channel " + std::to_string(f) + " is not positive");
    const double s = p[0]->v[f] / std::sqrt(var), b = p[1]->v[f] - p[2]->v[f] * s;
    if (!std::isfinite(s) || !std::isfinite(b)) c.fail("channel " + std::to_string(f) + " holds a value that is not finite");
    nd.s.push_back(s);
    nd.b.push_back(b);
  }
  notes_.push_back(c.label + ": no float convolution right before it to fold into: an affine per channel on the ARM");
  finish(c, std::move(nd), {x}, Act{in.shape, 4, 0}, true);
}

void Importer::concat(const Ctx& c) {
  const Attrs a(c, {"axis"});
  c.inputs(1, 1 << 16);
  const std::int64_t axis = a.i("axis", 1);
  if (c.n.input_size() == 1) {  // torch.cat of one map (DenseNet's first layer of a block): the map itself
    const auto [x, m] = act_in(c, 0);
    alias_[new_output(c)] = x;
    notes_.push_back(c.label + ": concatenates one map: passes it on");
    return;
  }
  std::vector<std::string> in;
  Shape3 out;
  for (int k = 0; k < c.n.input_size(); ++k) {
    const auto [x, m] = act_in(c, k);
    if (m.rank != 4) c.fail("input " + in_quotes(c.in(k)) + " is flattened " + dims_str(m.dims()) + "; expected [1,C,H,W]");
    if (axis != 1 && axis != -3)
      c.fail("axis " + std::to_string(axis) + ": only a concatenation of channels (axis 1) is a layout the hardware reads");
    if (k > 0 && (m.shape.W != out.W || m.shape.H != out.H))
      c.fail("input " + in_quotes(c.in(k)) + " is " + dims_str(m.dims()) + ", the first " + to_string(out) +
             ": the maps concatenated must have one height and width");
    out.W = m.shape.W;
    out.H = m.shape.H;
    out.D += m.shape.D;
    if (out.D > kMaxChannels) c.fail("more than " + std::to_string(kMaxChannels) + " channels");
    in.push_back(x);
  }
  Node nd;
  nd.op = Op::Concat;
  const std::string o = finish(c, std::move(nd), in, Act{out, 4, 0}, true);
  // one exponent for all (the hardware has no rescaling there), calibrated on the concatenation
  for (const std::string& m : in) {
    const std::string why = scales_.merge(acts_.at(o).cls, acts_.at(m).cls, o, true);
    if (!why.empty()) c.fail("map " + in_quotes(m) + ": " + why);
  }
}

void Importer::need_channel_split(const Ctx& c, const Act& in, std::int64_t axis) {
  if (in.rank != 4 || (axis != 1 && axis != -3))
    c.fail("axis " + std::to_string(axis) + " of " + dims_str(in.dims()) + ": only a split of channels (axis 1) is taken");
}

void Importer::split(const Ctx& c) {
  const Attrs a(c, {"axis", "split"});
  c.inputs(1, 2);
  const auto [x, in] = act_in(c, 0);
  need_channel_split(c, in, a.i("axis", 0));
  std::vector<std::int64_t> sizes;
  if (c.has(1))
    for (const double v : const_in(c, 1, "split").v) sizes.push_back(to_i64(v));
  else if (const auto s = a.ints("split"))
    sizes = *s;
  const int n = c.n.output_size();
  if (sizes.empty()) {
    if (n < 1 || in.shape.D % n != 0)
      c.fail(std::to_string(n) + " outputs do not split " + std::to_string(in.shape.D) + " channels equally");
    sizes.assign(static_cast<std::size_t>(n), in.shape.D / n);
  }
  if (static_cast<int>(sizes.size()) != n ||
      std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != in.shape.D ||
      std::any_of(sizes.begin(), sizes.end(), [](std::int64_t v) { return v < 1; }))
    c.fail("split " + dims_str(sizes) + " into " + std::to_string(n) + " outputs: expected positive sizes adding up to its " +
           std::to_string(in.shape.D) + " channels");
  int first = 0;
  for (int k = 0; k < n; ++k) {
    Node nd;
    nd.op = Op::Slice;
    nd.first = first;
    nd.count = static_cast<int>(sizes[static_cast<std::size_t>(k)]);
    first += nd.count;
    add_node(c, nd, {x}, c.n.output(k), Act{{in.shape.W, in.shape.H, nd.count}, 4, 0}, false);
  }
}

void Importer::split_to_sequence(const Ctx& c) {
  const Attrs a(c, {"axis", "keepdims"});
  c.inputs(2, 2);
  const auto [x, in] = act_in(c, 0);
  need_channel_split(c, in, a.i("axis", 0));
  std::vector<int> sizes;
  const Const& s = const_in(c, 1, "split");
  if (s.dims.empty() && s.v.size() == 1) {  // chunks of one size, the last what is left
    if (!(s.v[0] >= 1)) c.fail("split " + std::to_string(s.v[0]) + ": expected a positive size");
    const int size = static_cast<int>(std::min<double>(s.v[0], in.shape.D));
    for (int left = in.shape.D; left > 0; left -= std::min(left, size)) sizes.push_back(std::min(left, size));
  } else {
    for (const double v : s.v) {
      if (!(v >= 1) || v > in.shape.D) c.fail("split " + dims_str(s.dims) + ": expected positive sizes");
      sizes.push_back(static_cast<int>(v));
    }
  }
  if (std::accumulate(sizes.begin(), sizes.end(), 0) != in.shape.D)
    c.fail("split sizes add up to " + std::to_string(std::accumulate(sizes.begin(), sizes.end(), 0)) + ", not its " +
           std::to_string(in.shape.D) + " channels");
  sequences_[new_output(c)] = {x, sizes};
}

void Importer::sequence_at(const Ctx& c) {
  const Attrs a(c, {});
  c.inputs(2, 2);
  const auto q = sequences_.find(c.in(0));
  if (q == sequences_.end()) c.fail("reads " + in_quotes(c.in(0)) + ", which is not a SplitToSequence's output");
  const Const& p = const_in(c, 1, "position");
  const auto n = static_cast<std::int64_t>(q->second.second.size());
  std::int64_t k = p.v.size() == 1 ? to_i64(p.v[0]) : n;
  if (k < 0) k += n;
  if (k < 0 || k >= n) c.fail("position " + dims_str(p.dims) + " is outside the sequence of " + std::to_string(n));
  const Act& in = acts_.at(q->second.first);
  Node nd;
  nd.op = Op::Slice;
  for (std::int64_t i = 0; i < k; ++i) nd.first += q->second.second[static_cast<std::size_t>(i)];
  nd.count = q->second.second[static_cast<std::size_t>(k)];
  finish(c, std::move(nd), {q->second.first}, Act{{in.shape.W, in.shape.H, nd.count}, 4, 0}, false);
}

void Importer::slice(const Ctx& c) {
  const Attrs a(c, {});
  c.inputs(3, 5);
  const auto [x, in] = act_in(c, 0);
  if (in.rank != 4) c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
  auto ints = [&](int k, const char* role) {
    std::vector<std::int64_t> v;
    for (const double d : const_in(c, k, role).v) v.push_back(static_cast<std::int64_t>(std::clamp(d, -9.0e18, 9.0e18)));
    return v;
  };
  const std::vector<std::int64_t> starts = ints(1, "starts"), ends = ints(2, "ends");
  std::vector<std::int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (c.has(3)) axes = ints(3, "axes");
  if (c.has(4)) steps = ints(4, "steps");
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  const std::vector<std::int64_t> d = in.dims();
  std::int64_t first = 0, last = in.shape.D;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t ax = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (ax < 0 || ax > 3) c.fail("axis " + std::to_string(axes[i]) + " is out of range");
    const std::int64_t n = d[static_cast<std::size_t>(ax)];
    auto at = [&](std::int64_t v) { return std::clamp(v < 0 ? v + n : v, std::int64_t{0}, n); };
    const std::int64_t b = at(starts[i]), e = at(ends[i]);
    if (steps[i] != 1) c.fail("step " + std::to_string(steps[i]) + ": only a range of channels (step 1) is taken");
    if (ax != 1) {
      if (b != 0 || e != n) c.fail("slices axis " + std::to_string(ax) + ": only a range of channels (axis 1) is taken");
      continue;
    }
    first = b;
    last = e;
  }
  if (last <= first) c.fail("slices no channel (" + std::to_string(first) + " to " + std::to_string(last) + ")");
  Node nd;
  nd.op = Op::Slice;
  nd.first = static_cast<int>(first);
  nd.count = static_cast<int>(last - first);
  finish(c, std::move(nd), {x}, Act{{in.shape.W, in.shape.H, nd.count}, 4, 0}, false);
}

std::vector<std::int64_t> Importer::reshape_target(const Ctx& c, const std::vector<std::int64_t>& d, std::int64_t n) const {
  const Attrs a(c, {"allowzero"});
  const Const& s = const_in(c, 1, "shape");
  if (s.dtype != onnx::TensorProto::INT64 || s.dims.size() != 1)
    c.fail("shape " + in_quotes(c.in(1)) + " is not a 1-D int64 tensor");
  std::vector<std::int64_t> to;
  for (const double v : s.v) {
    if (v < -1 || v > static_cast<double>(kMaxMapValues)) c.fail("shape " + in_quotes(c.in(1)) + " holds " + std::to_string(v));
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
  return to;
}

void Importer::shuffle(const Ctx& c, int stage) {
  const char* form = "only ShuffleNet's channel shuffle is taken: Reshape to [1,g,C/g,H,W], Transpose [0,2,1,3,4], Reshape to [1,C,H,W]";
  if (stage == 2) {
    const Attrs a(c, {"perm"});
    c.inputs(1, 1);
    const auto part = shuffle_parts_.find(canon(c.in(0)));
    const auto perm = a.ints("perm");
    if (part == shuffle_parts_.end() || part->second.stage != 1)
      c.fail(std::string("transposes a feature map: ") + form);
    if (!perm || *perm != std::vector<std::int64_t>{0, 2, 1, 3, 4})
      c.fail("perm " + (perm ? dims_str(*perm) : std::string("(none)")) + ": " + form);
    ShufflePart p = part->second;
    p.stage = 2;
    shuffle_parts_[new_output(c)] = p;
    return;
  }
  c.inputs(2, 2);
  const std::string src = canon(c.in(0));
  if (stage == 3) {
    const ShufflePart p = shuffle_parts_.at(src);
    const Act& in = acts_.at(p.map);
    const std::int64_t C = in.shape.D, H = in.shape.H, W = in.shape.W;
    const std::vector<std::int64_t> to = reshape_target(c, {1, C / p.groups, p.groups, H, W}, in.shape.elements());
    if (to != std::vector<std::int64_t>{1, C, H, W})
      c.fail("reshapes the transposed [1," + std::to_string(C / p.groups) + "," + std::to_string(p.groups) + ",H,W] to " +
             dims_str(to) + ": " + form);
    Node nd;
    nd.op = Op::Shuffle;
    nd.groups = p.groups;
    finish(c, std::move(nd), {p.map}, Act{in.shape, 4, 0}, false);
    return;
  }
  const auto [x, in] = act_in(c, 0);
  const std::vector<std::int64_t> to = reshape_target(c, in.dims(), in.shape.elements());
  if (in.rank != 4 || to.size() != 5 || to[0] != 1 || to[1] < 1 || to[1] * to[2] != in.shape.D || to[3] != in.shape.H ||
      to[4] != in.shape.W)
    c.fail("reshapes " + dims_str(in.dims()) + " to " + dims_str(to) + ": " + form);
  shuffle_parts_[new_output(c)] = {x, static_cast<int>(to[1]), 1};
}

void Importer::reduce(const Ctx& c, bool max) {
  const Attrs a(c, {"axes", "keepdims"});
  c.inputs(1, 2);
  const auto [x, in] = act_in(c, 0);
  std::vector<std::int64_t> axes;
  if (const auto at = a.ints("axes")) axes = *at;
  else if (c.has(1))
    for (const double v : const_in(c, 1, "axes").v) axes.push_back(to_i64(v));
  for (std::int64_t& ax : axes)
    if (ax < 0) ax += in.rank;
  std::sort(axes.begin(), axes.end());
  if (in.rank != 4 || axes != std::vector<std::int64_t>{2, 3})
    c.fail("reduces axes " + dims_str(axes) + " of " + dims_str(in.dims()) +
           ": only over H and W (axes [2,3]: a global pooling) is taken");
  Node nd;
  nd.op = max ? Op::MaxPool : Op::AvgPool;
  nd.kW = in.shape.W;
  nd.kH = in.shape.H;
  nd.stride = nd.kW;  // `pool avg|max W H`: the stride is the window's
  const Act pooled{{1, 1, in.shape.D}, 4, 0};
  if (a.i("keepdims", 1) != 0) {
    finish(c, std::move(nd), {x}, pooled, false);
    return;
  }
  // keepdims=0: [1,C], a flattening of the pooled map
  const std::string mid = new_output(c) + "#pooled";
  add_node(c, std::move(nd), {x}, mid, pooled, false);
  Node f;
  f.op = Op::Flatten;
  add_node(c, std::move(f), {mid}, new_output(c), Act{{in.shape.D, 1, 1}, 2, 0}, false);
}

}  // namespace s2::mapper::onnx_reader
