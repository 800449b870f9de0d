// libFuzzer target: an ONNX model as --net FILE.onnx reads it (mapper/onnx/import.h, Debian's libonnx
// protobuf behind it), then, if it imports, once more calibrated on an input of its size (the float
// evaluator), and parsed into blocks; and as s2cosim check reads it (every node checked, refusals
// collected). Any input must end in a network, a NetworkError or a list of problems naming what is wrong;
// anything else is a finding. The corpus holds models with biases, folded and unfolded BatchNorm, Pad,
// Identity, Dropout, ReLU6, grouped convolutions and a final Softmax.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mapper/onnx/import.h"
#include "mapper/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const s2::mapper::OnnxCheck check = s2::mapper::check_onnx_bytes(bytes, "fuzz.onnx");
  if (check.network && !check.problems.empty()) __builtin_trap();  // a network is given only when nothing is refused
  try {
    const s2::mapper::Network net = s2::mapper::parse_onnx(bytes, "fuzz.onnx");
    s2::mapper::parse_network(net);
    if (net.input.elements() > (1 << 16)) return 0;  // a calibration input of a bounded size
    const std::vector<float> input(static_cast<std::size_t>(net.input.elements()), 0.5f);
    s2::mapper::parse_network(s2::mapper::parse_onnx(bytes, "fuzz.onnx", {input}));
  } catch (const s2::mapper::NetworkError&) {
  }
  return 0;
}
