// libFuzzer target: a .npy tensor as run-net --input reads it (harness/stimulus/npy_file.h, xtensor's header parser
// behind it). Any input must end in a tensor or a std::runtime_error naming what is wrong; anything else is a
// finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/stimulus/npy_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    s2::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
