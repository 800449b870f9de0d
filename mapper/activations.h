// Element-wise activations as the hardware runs them: an int8-in, int8-out function is exactly a table of
// 256 entries, built from the float function and the two maps' power-of-two scales (docs/real_networks.md,
// "Element-wise operations"). The ONNX import and the layer list build their tables here, and the float
// evaluation of a model (calibration) uses the same functions, so the three cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace s2::mapper {

// A float activation: `function` one of activation_names(); `alpha` and `beta` its parameters where it has
// them (LeakyRelu's slope alpha; HardSigmoid's max(0, min(1, alpha * x + beta)), ONNX's defaults 0.2 and 0.5,
// PyTorch's 1/6 and 1/2; HardSwish's x * HardSigmoid(alpha, beta), 1/6 and 1/2 unless an exported graph's
// float32 alpha says otherwise).
struct Activation {
  std::string function;
  double alpha = 0, beta = 0;
  bool operator==(const Activation&) const = default;
};
// "relu, relu6, sigmoid, hardsigmoid, hardswish, silu, tanh, leakyrelu"
const std::vector<std::string>& activation_names();
// The activation with its default parameters (ONNX's), or std::invalid_argument naming the known ones.
Activation default_activation(const std::string& function);
// f(x) in double precision.
double activation_value(const Activation& a, double x);
// t[x + 128] = clamp(round_half_even(f(x * 2^-e_in) * 2^e_out), -128, 127) for every int8 x.
std::vector<std::int8_t> activation_table(const Activation& a, int e_in, int e_out);
// "silu" or "leakyrelu(alpha=0.1)": for notes and reports.
std::string to_string(const Activation& a);

}  // namespace s2::mapper
