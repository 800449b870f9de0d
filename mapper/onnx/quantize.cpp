#include <cmath>
#include <limits>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

std::optional<int> exponent_of_scale(double s) {
  if (!(s > 0) || !std::isfinite(s)) return std::nullopt;
  int ex = 0;
  const double m = std::frexp(s, &ex);  // s = m * 2^ex, m in [0.5, 1)
  if (m != 0.5) return std::nullopt;
  return 1 - ex;
}

int exponent_for_max(double max) {
  int ex = 0;
  std::frexp(max, &ex);  // max = m * 2^ex, m in [0.5, 1): 127 / max is in (127, 254] * 2^-ex
  int e = 7 - ex;
  while (std::ldexp(max, e + 1) <= 127.0) ++e;
  while (std::ldexp(max, e) > 127.0) --e;
  return e;
}

std::map<std::string, double> Importer::calibrate(const std::vector<std::vector<float>>& inputs) {
  std::set<std::string> wanted;
  for (std::size_t c = 0; c < scales_.parent.size(); ++c) {
    const int r = scales_.root(static_cast<int>(c));
    wanted.insert(scales_.calib[r]);
    wanted.insert(scales_.also[r].begin(), scales_.also[r].end());
  }
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
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = nodes_[i];
      if (fused_.count(i)) continue;  // a table a product took in: nothing reads it
      std::vector<double> out = eval(n, maps);
      for (const std::string& m : n.in)
        if (--left[m] == 0) maps.erase(m);
      note(n.out, out);
      maps[n.out] = std::move(out);
    }
  }
  return max;
}

std::vector<double> Importer::eval(const Node& n, const std::map<std::string, std::vector<double>>& maps) const {
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
            // filter c reads its group's D / groups channels, from channel d0
            const int Dg = D / n.groups, d0 = c / (n.C / n.groups) * Dg;
            for (int d = 0; d < Dg; ++d)
              for (int ky = 0; ky < n.kH; ++ky) {
                const int r = yo * n.stride + ky - n.pad;
                if (r < 0 || r >= H) continue;
                for (int kx = 0; kx < n.kW; ++kx) {
                  const int col = xo * n.stride + kx - n.pad;
                  if (col < 0 || col >= W) continue;
                  acc += n.wf[((static_cast<std::size_t>(c) * Dg + d) * n.kH + ky) * n.kW + kx] * at(d0 + d, r, col);
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
    case Op::Concat: {
      y.clear();
      for (const std::string& m : n.in) y.insert(y.end(), maps.at(m).begin(), maps.at(m).end());
      break;
    }
    case Op::Slice:
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n.first) * H * W), y.size(), y.begin());
      break;
    case Op::Shuffle: {
      // output channel j * g + i is input channel i * (D / g) + j
      const std::size_t plane = static_cast<std::size_t>(H) * W, per = static_cast<std::size_t>(D / n.groups);
      for (std::size_t i = 0; i < static_cast<std::size_t>(n.groups); ++i)
        for (std::size_t j = 0; j < per; ++j)
          std::copy_n(x.begin() + static_cast<std::ptrdiff_t>((i * per + j) * plane), plane,
                      y.begin() + static_cast<std::ptrdiff_t>((j * n.groups + i) * plane));
      break;
    }
    case Op::Table:
    case Op::Affine: {
      // per channel c (a flattened map's values each count as one plane)
      const std::size_t plane = in.rank == 4 ? static_cast<std::size_t>(H) * W : 1;
      for (std::size_t i = 0; i < y.size(); ++i) {
        const std::size_t ch = i / plane;
        y[i] = n.op == Op::Table ? n.table_value(x[i], ch) : x[i] * n.s[ch] + n.b[ch];
      }
      break;
    }
    case Op::Mul: {
      const std::vector<double>& b = maps.at(n.in[1]);
      const std::size_t plane = static_cast<std::size_t>(H) * W;
      for (std::size_t i = 0; i < y.size(); ++i) y[i] = x[i] * (n.channel ? b[i / plane] : b[i]);
      break;
    }
  }
  return y;
}

void Importer::quantize(const std::vector<std::vector<float>>& calibration) {
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
    double m = max.at(t);
    for (const std::string& a : scales_.also[c]) m = std::max(m, max.at(a));  // a concatenation's group
    if (!(m > 0))
      fail(producer_.at(t) + ": the calibration gives all zeros in " + in_quotes(t) +
           ", whose exponent floor(log2(127 / max|a|)) is then undefined");
    return exponent_for_max(m);
  };
  for (const Weighted& w : weighted_) {
    const Node& n = *w.node;
    LayerSpec& l = net_.layers[w.layer];
    if (n.float_weights && quantized_)
      fail_at(n, "has float weights in a quantized model (expected int8 through a DequantizeLinear)");
    const auto e_x = exponent(w.in, n.label), e_y = exponent(w.out, n.label);
    int capped = 0;
    const std::vector<int> e_w = weight_exponents(n, e_x, e_y, capped);
    std::vector<std::int8_t> q;
    if (n.float_weights) {
      // docs/real_networks.md: at each output channel's exponent, round half to even (the default rounding
      // mode), clamp to +-127; conv [C][D][Hf][Wf] and fc [OUT][IN] hold a channel's weights together
      const std::size_t per = n.wf.size() / static_cast<std::size_t>(n.C);
      q.reserve(n.wf.size());
      for (std::size_t i = 0; i < n.wf.size(); ++i)
        q.push_back(static_cast<std::int8_t>(
            std::clamp(std::nearbyint(std::ldexp(n.wf[i], e_w[i / per])), -127.0, 127.0)));
    } else {
      q = n.wq;
    }
    l.weights = std::make_shared<const std::vector<std::int8_t>>(std::move(q));
    const auto [lo, hi] = std::minmax_element(e_w.begin(), e_w.end());
    if (*lo != *hi || capped)
      notes_.push_back(n.label + ": weights per output channel, exponents " + std::to_string(*lo) + ".." +
                       std::to_string(*hi) +
                       (capped ? " (" + std::to_string(capped) + " channel(s) with tiny weights taken at shift 31, their " +
                                     "exponent e_y - e_x + 31 = " + std::to_string(*hi) + ")"
                               : std::string()));
    if (n.has_bias()) l.bias = quantized_bias(n, e_x, e_w);
    if (const auto hc = clip_high_.find(w.layer); hc != clip_high_.end() && e_y)
      l.clamp_high = static_cast<int>(std::min(127.0, std::floor(std::ldexp(hc->second, *e_y))));
    if (!e_x || !e_y) continue;  // shift -1: the distributor's rule
    set_shifts(n, l, *e_x, e_w, *e_y);
    if (l.bias) round_in_bias(n, l);
  }
  bool placeholder = false;
  for (const Elementwise& e : elementwise_) {
    const auto ea = exponent(e.in[0], e.node->label);
    const auto eb = e.in.size() > 1 ? exponent(e.in[1], e.node->label) : ea;
    const auto ey = exponent(e.out, e.node->label);
    placeholder = placeholder || !ea || !eb || !ey;
    build_elementwise(e, ea, eb, ey);
  }
  if (placeholder)
    notes_.push_back("the maps' exponents are unknown (a float model without calibration): the element-wise layers' "
                     "tables and parameters are built at a placeholder exponent " + std::to_string(kPlaceholderExponent) +
                     " for every map they read and write, so that they map and their clocks count; calibrate the model "
                     "for the real ones");
  net_.input_exponent = exponent(input_, producer_.at(input_));
  net_.output_exponent = exponent(final_, producer_.at(final_));
}

void Importer::build_elementwise(const Elementwise& e, std::optional<int> ea, std::optional<int> eb, std::optional<int> ey) {
  const Node& n = *e.node;
  const bool known = ea && eb && ey;
  const int x = ea.value_or(kPlaceholderExponent), b = eb.value_or(kPlaceholderExponent), y = ey.value_or(kPlaceholderExponent);
  auto spec = std::make_shared<ElementwiseSpec>();
  spec->relu = e.relu;
  auto rne = [](double v) { return std::nearbyint(v); };  // round half to even in the default rounding mode
  switch (n.op) {
    case Op::Table:
      spec->op = EltOp::Table;
      spec->function = n.times_x ? "x * " + to_string(n.acts[0]) + "(x)" : to_string(n.acts[0]);
      if (n.acts.size() > 1) spec->function += ", one table per channel";
      for (std::size_t ch = 0; ch < n.acts.size(); ++ch) {
        std::vector<std::int8_t> t = activation_table(n.acts[ch], x, y);
        if (n.times_x)  // the same rule as activation_table, for x * f(x)
          for (int v = -128; v < 128; ++v)
            t[static_cast<std::size_t>(v + 128)] = static_cast<std::int8_t>(
                std::clamp(rne(std::ldexp(n.table_value(std::ldexp(double(v), -x), ch), y)), -128.0, 127.0));
        spec->table.insert(spec->table.end(), t.begin(), t.end());
      }
      break;
    case Op::Affine: {
      // docs/real_networks.md: m_c = rne(s_c * 2^(S + e_y - e_x)), S = 16 lowered until every |m_c| < 2^23, so that
      // x * m_c + o_c stays in 32 bits; o_c = rne(b_c * 2^(S + e_y)) + 2^(S-1), the rounding term
      spec->op = EltOp::Affine;
      int S = 16;
      auto too_big = [&](int s) {
        return std::any_of(n.s.begin(), n.s.end(), [&](double v) { return std::fabs(rne(std::ldexp(v, s + y - x))) >= 8388608.0; });
      };
      while (S > 0 && too_big(S)) --S;
      if (too_big(S)) fail_at(n, "a scale of its affine is 2^23 or more at its exponents e_x = " + std::to_string(x) + ", e_y = " + std::to_string(y));
      spec->shift = S;
      for (std::size_t ch = 0; ch < n.s.size(); ++ch) {
        const double o = rne(std::ldexp(n.b[ch], S + y)) + (S > 0 ? std::ldexp(1.0, S - 1) : 0.0);
        if (std::fabs(o) >= 1073741824.0 && known)
          fail_at(n, "the offset of channel " + std::to_string(ch) + " is " + std::to_string(o) +
                         ", 2^30 or more: x * m + o could leave 32 bits (its map's exponent " + std::to_string(y) + " is too fine for it)");
        spec->scale.push_back(static_cast<std::int32_t>(rne(std::ldexp(n.s[ch], S + y - x))));
        spec->offset.push_back(static_cast<std::int32_t>(std::clamp(o, -1073741823.0, 1073741823.0)));
      }
      break;
    }
    case Op::Add: {
      // both operands brought to the finest exponent, the sum shifted to the output's (rounding half up)
      spec->op = EltOp::Add;
      const int E = std::max({x, b, y});
      spec->shift_a = E - x;
      spec->shift_b = E - b;
      spec->shift = E - y;
      break;
    }
    case Op::Mul: {
      spec->op = n.channel ? EltOp::ChannelMul : EltOp::Mul;
      const int s = x + b - y;
      if (s < 0)
        fail_at(n, "shift = e_a + e_b - e_y = " + std::to_string(x) + " + " + std::to_string(b) + " - " + std::to_string(y) + " = " +
                       std::to_string(s) + " is negative: its output's scale is finer than its product's, and the ARM only shifts right");
      spec->shift = s;
      break;
    }
    default:
      fail_at(n, "is not an element-wise operation");
  }
  net_.layers[e.layer].elementwise = std::move(spec);
}

std::vector<int> Importer::weight_exponents(const Node& n, std::optional<int> e_x, std::optional<int> e_y, int& capped) const {
  const std::size_t C = static_cast<std::size_t>(n.C);
  if (!n.float_weights) return n.e_wc.empty() ? std::vector<int>(C, *n.e_w) : n.e_wc;
  const std::size_t per = n.wf.size() / C;
  std::vector<double> m(C, 0);
  for (std::size_t i = 0; i < n.wf.size(); ++i) m[i / per] = std::max(m[i / per], std::fabs(n.wf[i]));
  const double all = *std::max_element(m.begin(), m.end());
  if (all == 0) fail_at(n, "all its weights are zero: e_w = floor(log2(127 / max|w|)) is undefined");
  const int e_t = exponent_for_max(all);
  std::vector<int> e(C);
  for (std::size_t c = 0; c < C; ++c) e[c] = m[c] == 0 ? e_t : exponent_for_max(m[c]);
  // per tensor where every channel's exponent is the same: no per-channel shifts, as before
  if (std::all_of(e.begin(), e.end(), [&](int x) { return x == e_t; }) || !e_x || !e_y) return e;
  // a channel of tiny weights whose shift would pass 31 (QUAN shifts a 32-bit sum) takes shift 31
  const int cap = *e_y - *e_x + 31;
  for (int& x : e)
    if (x > cap) {
      x = cap;
      ++capped;
    }
  return e;
}

void Importer::set_shifts(const Node& n, LayerSpec& l, int e_x, const std::vector<int>& e_w, int e_y) const {
  std::vector<std::uint8_t> shifts;
  for (std::size_t c = 0; c < e_w.size(); ++c) {
    const long long shift = static_cast<long long>(e_x) + e_w[c] - e_y;
    const std::string how = "shift = e_x + e_w - e_y = " + std::to_string(e_x) + " + " + std::to_string(e_w[c]) +
                            " - " + std::to_string(e_y) + " = " + std::to_string(shift) +
                            (e_w.size() > 1 && e_w[c] != e_w[0] ? " (output channel " + std::to_string(c) + ")" : "");
    if (shift < 0)
      fail_at(n, how + " is negative: its output's scale is finer than its product's, and QUAN only shifts right");
    if (shift > 31) fail_at(n, how + " is more than 31 (QUAN shifts a 32-bit sum)");
    shifts.push_back(static_cast<std::uint8_t>(shift));
  }
  l.shift = *std::min_element(shifts.begin(), shifts.end());
  if (std::any_of(shifts.begin(), shifts.end(), [&](std::uint8_t s) { return s != shifts[0]; }))
    l.shifts = std::make_shared<const std::vector<std::uint8_t>>(std::move(shifts));
}

void Importer::round_in_bias(const Node& n, LayerSpec& l) const {
  std::vector<std::int32_t> b = *l.bias;
  for (std::size_t c = 0; c < b.size(); ++c) {
    const int shift = l.shifts ? (*l.shifts)[c] : l.shift;
    if (shift <= 0) continue;
    const std::int64_t v = std::int64_t(b[c]) + (std::int64_t(1) << (shift - 1));
    if (v > 2147483647)
      fail_at(n, "bias " + in_quotes(n.bias_name) + ": output channel " + std::to_string(c) + "'s " +
                     std::to_string(b[c]) + " plus QUAN's rounding term 2^" + std::to_string(shift - 1) +
                     " is beyond int32");
    b[c] = static_cast<std::int32_t>(v);
  }
  l.bias = std::make_shared<const std::vector<std::int32_t>>(std::move(b));
}

std::shared_ptr<const std::vector<std::int32_t>> Importer::quantized_bias(const Node& n, std::optional<int> e_x,
                                                                         const std::vector<int>& e_w) const {
  std::vector<std::int32_t> b(static_cast<std::size_t>(n.C), 0);
  const std::string what = "bias " + in_quotes(n.bias_name);
  if (!n.bf.empty()) {
    if (quantized_)
      fail_at(n, what + " is float in a quantized model (expected int32 through a DequantizeLinear at x_scale * w_scale)");
    if (e_x) {
      for (std::size_t i = 0; i < b.size(); ++i) {
        const double v = std::nearbyint(std::ldexp(n.bf[i], *e_x + e_w[i]));
        if (std::fabs(v) > 2147483647.0)
          fail_at(n, what + ": value " + std::to_string(n.bf[i]) + " at the sums' scale " + scale_str(*e_x + e_w[i]) +
                         " is beyond int32");
        b[i] = static_cast<std::int32_t>(v);
      }
    }
  } else {
    if (n.bias_scale && e_x) {
      const bool per_channel = std::any_of(e_w.begin(), e_w.end(), [&](int x) { return x != e_w[0]; });
      for (std::size_t i = 0; i < b.size(); ++i) {
        const double s = n.bias_scales.empty() ? *n.bias_scale : n.bias_scales[i];
        const auto e_b = exponent_of_scale(s);
        if (!e_b || *e_b != *e_x + e_w[i])
          fail_at(n, what + ": scale " + std::to_string(s) +
                         (per_channel ? std::string(n.bias_scales.empty() ? " (one for every channel)" : "") +
                                            " of output channel " + std::to_string(i)
                                      : std::string()) +
                         " is not x_scale * w_scale = " + scale_str(*e_x + e_w[i]) +
                         " (the ARM adds the bias to the sums at their scale" +
                         (per_channel ? ", each channel's at its weights' scale)" : ")"));
      }
    }
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::int32_t>(n.bq[i]);
  }
  return std::make_shared<const std::vector<std::int32_t>>(std::move(b));
}

}  // namespace s2::mapper::onnx_reader
