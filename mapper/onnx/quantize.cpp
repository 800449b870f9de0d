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

std::shared_ptr<const std::vector<std::int32_t>> Importer::quantized_bias(const Node& n, std::optional<int> e_x, int e_w) const {
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

}  // namespace s2::mapper::onnx_reader
