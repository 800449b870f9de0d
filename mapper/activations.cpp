#include "activations.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace s2::mapper {

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names{"relu", "relu6", "sigmoid", "hardsigmoid", "hardswish", "silu", "tanh", "leakyrelu"};
  return names;
}

Activation default_activation(const std::string& function) {
  Activation a{function, 0, 0};
  if (function == "leakyrelu") a.alpha = 0.01;
  else if (function == "hardsigmoid") a = {function, 0.2, 0.5};
  else if (function == "hardswish") a = {function, 1.0 / 6, 0.5};
  else if (std::find(activation_names().begin(), activation_names().end(), function) == activation_names().end()) {
    std::string known;
    for (const std::string& n : activation_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown activation '" + function + "' (expected one of " + known + ")");
  }
  return a;
}

double activation_value(const Activation& a, double x) {
  const std::string& f = a.function;
  if (f == "relu") return std::max(0.0, x);
  if (f == "relu6") return std::clamp(x, 0.0, 6.0);
  if (f == "sigmoid") return 1 / (1 + std::exp(-x));
  if (f == "hardsigmoid") return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
  // x * HardSigmoid(alpha, beta): ONNX's HardSwish has alpha 1/6 and beta 1/2; PyTorch's nn.Hardswish exported at
  // opset 13 is a HardSigmoid with alpha float32(1/6) times x, which the import takes with that alpha as it is
  if (f == "hardswish") return x * std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
  if (f == "silu") return x / (1 + std::exp(-x));
  if (f == "tanh") return std::tanh(x);
  if (f == "leakyrelu") return x >= 0 ? x : a.alpha * x;
  throw std::invalid_argument("unknown activation '" + f + "'");
}

std::vector<std::int8_t> activation_table(const Activation& a, int e_in, int e_out) {
  std::vector<std::int8_t> t(256);
  for (int x = -128; x < 128; ++x) {
    // scaling by a power of two is exact; nearbyint rounds half to even in the default rounding mode
    const double y = std::nearbyint(std::ldexp(activation_value(a, std::ldexp(double(x), -e_in)), e_out));
    t[static_cast<std::size_t>(x + 128)] = static_cast<std::int8_t>(std::clamp(y, -128.0, 127.0));
  }
  return t;
}

std::string to_string(const Activation& a) {
  if (a.function == "leakyrelu") return fmt::format("leakyrelu(alpha={:g})", a.alpha);
  if (a.function == "hardsigmoid") return fmt::format("hardsigmoid(alpha={:g}, beta={:g})", a.alpha, a.beta);
  if (a.function == "hardswish" && !(a == default_activation("hardswish")))
    return fmt::format("hardswish(alpha={:.17g}, beta={:g})", a.alpha, a.beta);
  return a.function;
}

}  // namespace s2::mapper
