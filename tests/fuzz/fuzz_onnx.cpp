// libFuzzer target: an ONNX model as --net FILE.onnx reads it (mapper/onnx_import.h, Debian's libonnx
// protobuf behind it), then, if it imports, once more calibrated on an input of its size (the float
// evaluator), and parsed into blocks. Any input must end in a network or a NetworkError naming what is
// wrong; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mapper/onnx_import.h"
#include "mapper/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
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
