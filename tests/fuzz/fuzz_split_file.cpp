// libFuzzer target: the split-file reader (map / run-net --split). Any input must end in split choices or
// a std::invalid_argument naming the file, line and field; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "mapper/splitter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)s2::mapper::parse_split_file(text, "fuzz.split");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
