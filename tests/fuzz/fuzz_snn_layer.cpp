// libFuzzer target: an SNN layer's two .npy files as s2cosim snn --weights and --spikes read them
// (harness/stimulus/snn_files.h, npy_file.h's header reader behind it). The input is both files: its first two
// bytes (little-endian) the weights file's length, cut to what follows, then the weights file, then the spikes
// file. Any input must end in a layer or a std::runtime_error naming what is wrong; anything else is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/stimulus/snn_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t weights_bytes = std::min<std::size_t>(data[0] | std::size_t(data[1]) << 8, rest.size());
  try {
    s2::parse_snn_layer(rest.substr(0, weights_bytes), "weights.npy", rest.substr(weights_bytes), "spikes.npy");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
