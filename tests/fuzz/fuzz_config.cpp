// libFuzzer target: the hardware configuration JSON (--config). Any input must end in a configuration
// or a std::runtime_error naming the file; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "model/hw_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const s2::HwConfig cfg = s2::parse_hw_config(text, "fuzz.json");
    (void)s2::config_hash(cfg);  // what every report stamps
  } catch (const std::runtime_error&) {
  }
  return 0;
}
