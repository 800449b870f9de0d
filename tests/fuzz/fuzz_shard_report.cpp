// libFuzzer target: a shard's --json report as `s2cosim merge` reads it (harness/commands/merge.h), and the result
// records in it. Any input must end in a report or a std::runtime_error / std::invalid_argument naming what
// is wrong; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/commands/merge.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    s2::check_shard_report_text(text, "fuzz.json");
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
