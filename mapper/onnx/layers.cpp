#include <cmath>
#include <limits>
#include <type_traits>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

void Importer::take_weights(const Ctx& c, const Const& w, const std::string& name, Node& nd, bool transpose) {
  const std::size_t rows = w.dims.size() == 2 ? static_cast<std::size_t>(w.dims[0]) : 0;
  const std::size_t cols = w.dims.size() == 2 ? static_cast<std::size_t>(w.dims[1]) : 0;
  auto at = [&](std::size_t i) {
    if (!transpose) return w.v[i];
    // [IN][OUT] read as [OUT][IN]
    const std::size_t out = i / rows, in = i % rows;
    return w.v[in * cols + out];
  };
  // weights only this node reads leave consts_ for the node: a copy would double the network's weights
  // (VGG-16's are 1.1 GB as doubles)
  const auto own = consts_.find(name);
  const bool last_reader = own != consts_.end() && &own->second == &w && uses_[name] == 1;
  if (w.is_float()) {
    nd.float_weights = true;
    if (last_reader && !transpose) {
      nd.wf = std::move(own->second.v);
    } else {
      nd.wf.resize(w.v.size());
      for (std::size_t i = 0; i < w.v.size(); ++i) nd.wf[i] = at(i);
      if (last_reader) std::vector<double>().swap(own->second.v);
    }
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
  if (!w.scales.empty()) {
    // per output channel: the output axis is the first ([C][D][Hf][Wf], [OUT][IN]) or a MatMul's second ([IN][OUT])
    const int out_axis = transpose ? 1 : 0;
    if (w.axis != out_axis)
      c.fail("weights " + in_quotes(name) + ": per-channel scales along axis " + std::to_string(w.axis) +
             " of " + dims_str(w.dims) + "; expected axis " + std::to_string(out_axis) +
             ", the output channels' (QUAN shifts each output channel by its own)");
    for (const double s : w.scales) nd.e_wc.push_back(*exponent_of_scale(s));
  }
}

void Importer::take_bias(const Ctx& c, int k, Node& nd, bool qlinear) const {
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
  if (!qlinear) nd.bias_scales = b.scales;
  nd.bq = std::move(v);
}

void Importer::conv(const Ctx& c, bool qlinear) {
  const Attrs a(c, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  // QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point[, B]
  c.inputs(qlinear ? 8 : 2, qlinear ? 9 : 3);
  const int wk = qlinear ? 3 : 1;
  const auto [x_in, in] = act_in(c, 0, true);
  if (in.rank != 4)
    c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
  // a Pad before it: the convolution reads the Pad's input with both paddings
  const auto [x, extra_pad] = unpadded(x_in);
  // groups: a grouped convolution, its pieces per-group MLA tasks (docs/real_networks.md, "Grouped convolutions")
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
  if (!win.alike()) frame_kernel(c, nd, win.pads, extra_pad);
  if (g > 1) {
    nd.groups = static_cast<int>(g);
    notes_.push_back(c.label + ": group=" + std::to_string(g) + (g == in.shape.D ? " (depthwise)" : "") +
                     ": runs as per-group tasks, each over its group's " + std::to_string(in.shape.D / g) +
                     " input channels (a task's filters fill " + std::to_string(w.dims[0] / g) +
                     " MAC-array rows at most: a group's filters)");
  }
  if (nd.has_bias()) notes_.push_back(c.label + ": bias " + in_quotes(nd.bias_name) + " added by the ARM before the ReLU and QUAN's shift");
  const std::string o = finish(c, std::move(nd), {x}, Act{win.out, 4, 0}, true);
  if (qlinear) set_scale(c, o, scale_exponent(c, 6, "y_scale"));
}

void Importer::frame_kernel(const Ctx& c, Node& nd, const std::array<int, 4>& pads, int extra_pad) {
  // output (y, x) reads input rows y*s - top + i, i < kH; at one pad P = max(pads) the same rows are
  // y*s - P + i' with i' = i + (P - top): the kernel framed by P - top zero rows above, P - bottom below (and
  // columns alike) gives the same sums over the same output size
  const int P = *std::max_element(pads.begin(), pads.end());
  const int top = P - pads[0], left = P - pads[1];
  const int kH = nd.kH + top + (P - pads[2]), kW = nd.kW + left + (P - pads[3]);
  if (kH > kMaxSide || kW > kMaxSide)
    c.fail("pads " + dims_str(std::vector<std::int64_t>(pads.begin(), pads.end())) + " differ per side; framed to one pad " +
           std::to_string(P) + ", the kernel would be " + std::to_string(kH) + "x" + std::to_string(kW) +
           ", beyond " + std::to_string(kMaxSide));
  const std::size_t filters = nd.float_weights ? nd.wf.size() : nd.wq.size();
  const std::size_t planes = filters / (std::size_t(nd.kH) * std::size_t(nd.kW));  // C * D/groups
  auto frame = [&](auto& v) {
    std::remove_reference_t<decltype(v)> f(planes * std::size_t(kH) * std::size_t(kW));
    for (std::size_t q = 0; q < planes; ++q)
      for (int i = 0; i < nd.kH; ++i)
        for (int j = 0; j < nd.kW; ++j)
          f[(q * std::size_t(kH) + std::size_t(i + top)) * std::size_t(kW) + std::size_t(j + left)] =
              v[(q * std::size_t(nd.kH) + std::size_t(i)) * std::size_t(nd.kW) + std::size_t(j)];
    v = std::move(f);
  };
  if (nd.float_weights)
    frame(nd.wf);
  else
    frame(nd.wq);
  notes_.push_back(c.label + ": pads " + dims_str(std::vector<std::int64_t>(pads.begin(), pads.end())) +
                   " (top, left, bottom, right) differ; runs at one pad " + std::to_string(P) + " with its " +
                   std::to_string(nd.kH) + "x" + std::to_string(nd.kW) + " kernel framed by zeros to " +
                   std::to_string(kH) + "x" + std::to_string(kW) + " (the same sums at " +
                   std::to_string(kH * kW) + "/" + std::to_string(nd.kH * nd.kW) + " times its MACs)");
  nd.kH = kH;
  nd.kW = kW;
  nd.pad = P + extra_pad;
}

void Importer::take_qlinear_operands(const Ctx& c, const std::string& x, const Const& w, Node& nd, bool transpose,
                                     const std::string& map, const std::string& weights) {
  set_scale(c, x, scale_exponent(c, 1, map + "_scale"));
  zero_point(c, 2, true, map + "_zero_point");
  zero_point(c, 5, true, weights + "_zero_point");
  zero_point(c, 7, true, "y_zero_point");
  Const wq = w;
  if (wq.dtype != onnx::TensorProto::INT8) c.fail("weights " + in_quotes(c.in(3)) + " are not int8");
  // a 1-D scale is per output channel by definition (QLinearConv's filters, QLinearMatMul's columns)
  const std::vector<int> e = scale_exponents(c, 4, weights + "_scale");
  wq.scale = std::ldexp(1.0, -e[0]);
  if (std::any_of(e.begin(), e.end(), [&](int x) { return x != e[0]; })) {
    for (const int x : e) wq.scales.push_back(std::ldexp(1.0, -x));
    wq.axis = transpose ? 1 : 0;
    if (wq.dims.size() < 2 || wq.dims[static_cast<std::size_t>(wq.axis)] != static_cast<std::int64_t>(e.size()))
      c.fail(weights + "_scale " + in_quotes(c.in(4)) + " has " + std::to_string(e.size()) +
             " values, not one per output channel of " + dims_str(wq.dims));
  }
  take_weights(c, wq, c.in(3), nd, transpose);
  quantized_ = true;
}

void Importer::fc(const Ctx& c) {
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

void Importer::relu(const Ctx& c) {
  const Attrs a(c, {});
  c.inputs(1, 1);
  const auto [x, in] = act_in(c, 0);
  Node nd;
  nd.op = Op::Relu;
  finish(c, std::move(nd), {x}, Act{in.shape, in.rank, 0}, true);
}

void Importer::pool(const Ctx& c, bool max) {
  const Attrs a =
      max ? Attrs(c, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"})
          : Attrs(c, {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  c.inputs(1, 1);
  // an average pooling may read a Pad's zeros (nn.AvgPool2d's default count_include_pad=True exports as Pad
  // + AveragePool): the hardware pads with zeros and divides by the whole window, as that pair does
  const auto [x_in, in] = act_in(c, 0, !max);
  if (in.rank != 4)
    c.fail("input " + in_quotes(c.in(0)) + " is flattened " + dims_str(in.dims()) + "; expected [1,C,H,W]");
  const auto [x, extra_pad] = unpadded(x_in);
  const auto ks = a.ints("kernel_shape");
  if (!ks || ks->size() != 2) c.fail("kernel_shape must be given with 2 values");
  Node nd;
  nd.op = max ? Op::MaxPool : Op::AvgPool;
  nd.kH = static_cast<int>(std::clamp<std::int64_t>((*ks)[0], 0, kMaxSide + 1));
  nd.kW = static_cast<int>(std::clamp<std::int64_t>((*ks)[1], 0, kMaxSide + 1));
  const Window win = window(c, a, in.shape, nd.kH, nd.kW, true);
  nd.stride = win.stride;
  nd.pad = win.pad + extra_pad;
  nd.pad_end = win.pad_end;
  // an average pooling's last window would divide by fewer values than the hardware's (the whole window)
  if (!max && win.pad_end > 0)
    c.fail("ceil_mode=1 gives a " + std::to_string(win.out.H) + "x" + std::to_string(win.out.W) +
           " output where the hardware's average pooling gives " + std::to_string(win.floor_out.H) + "x" +
           std::to_string(win.floor_out.W) + " (it rounds down; its last window's divisor would differ)");
  if (win.pad_end > 0)
    notes_.push_back(c.label + ": ceil_mode=1: " + std::to_string(win.pad_end) +
                     " more zero row(s) and column(s) at the end give its last window (pad_end)");
  if (!max && win.pad > 0 && a.i("count_include_pad", 0) == 0)
    c.fail(
        "padded average pooling with count_include_pad=0: the hardware divides by the whole window, padding included "
        "(docs/real_networks.md)");
  if (nd.kH == 1 && nd.kW == 1 && nd.stride == 1 && nd.pad == 0) {
    // an identity (torchvision's AdaptiveAvgPool2d((7, 7)) on VGG's 7x7 map exports as one): a block of its
    // own would only cost clocks
    alias_[new_output(c)] = x;
    notes_.push_back(c.label + ": a 1x1 pooling of stride 1 without padding passes its input on");
    return;
  }
  finish(c, std::move(nd), {x}, Act{win.out, 4, 0}, false);
}

void Importer::global_pool(const Ctx& c) {
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

void Importer::add(const Ctx& c) {
  const Attrs a(c, {});
  c.inputs(2, 2);
  if (consts_.count(c.in(0)) && consts_.count(c.in(1))) {
    shape_arithmetic(c);
    return;
  }
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

void Importer::clip(const Ctx& c) {
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

void Importer::squeeze(const Ctx& c) {
  const Attrs a(c, {"axes"});
  c.inputs(1, 2);
  const auto [x, in] = act_in(c, 0);
  const std::vector<std::int64_t> d = in.dims();
  std::vector<std::int64_t> axes;
  if (const auto at = a.ints("axes")) axes = *at;
  else if (c.has(1))
    for (const double v : const_in(c, 1, "axes").v) axes.push_back(to_i64(v));
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

void Importer::flatten(const Ctx& c, bool reshape) {
  const Attrs a = reshape ? Attrs(c, {"allowzero"}) : Attrs(c, {"axis"});
  c.inputs(reshape ? 2 : 1, reshape ? 2 : 1);
  const auto [x, in] = act_in(c, 0);
  const std::vector<std::int64_t> d = in.dims();
  const std::int64_t n = in.shape.elements();
  int rank = 2;
  if (reshape) {
    const std::vector<std::int64_t> to = reshape_target(c, d, n);
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

}  // namespace s2::mapper::onnx_reader
