// libFuzzer target: an ONNX model as --net FILE.onnx reads it (mapper/onnx/import.h, Debian's libonnx
// protobuf behind it), then, if it imports, once more calibrated on an input of its size (the float
// evaluator), and parsed into blocks; and as s2cosim check reads it (every node checked, refusals
// collected). Any input must end in a network, a NetworkError or a list of problems naming what is wrong;
// anything else is a finding. The corpus holds models with biases, folded and unfolded BatchNorm, Pad,
// Identity, Dropout, ReLU6, grouped convolutions and a final Softmax, and one with external data.
//
// External data: the input is written to a file, fuzz.onnx, in a directory of its own, and read from there,
// so a tensor whose data_location is EXTERNAL reads its bytes from a file the input gives: its location
// "fuzz.onnx" is the model file itself (external_data.onnx's data sits in its doc_string, at the offset its
// tensors name), and the fuzzer mutates the location, offset and length and the bytes behind them.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mapper/onnx/import.h"
#include "mapper/parser.h"

namespace {

// the directory the model is written to: made once per process, removed at its exit
struct ModelDir {
  std::string dir;
  ModelDir() {
    char d[] = "/tmp/fuzz_onnx.XXXXXX";
    if (!mkdtemp(d)) std::abort();
    dir = d;
  }
  ~ModelDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

const std::string& model_path() {
  static const ModelDir d;
  static const std::string path = d.dir + "/fuzz.onnx";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string& path = model_path();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) std::abort();
  }
  // the file is read as the CLI reads it (parsed from the file); the bytes as the same model given in memory
  const s2::mapper::OnnxCheck check = s2::mapper::check_onnx(path);
  if (check.network && !check.problems.empty()) __builtin_trap();  // a network is given only when nothing is refused
  if (s2::mapper::check_onnx_bytes(bytes, path).problems != check.problems) __builtin_trap();
  try {
    const s2::mapper::Network net = s2::mapper::import_onnx(path);
    s2::mapper::parse_network(net);
    if (net.input.elements() > (1 << 16)) return 0;  // a calibration input of a bounded size
    const std::vector<float> input(static_cast<std::size_t>(net.input.elements()), 0.5f);
    s2::mapper::parse_network(s2::mapper::parse_onnx(bytes, path, {input}));
  } catch (const s2::mapper::NetworkError&) {
  }
  return 0;
}
