// libFuzzer target: the network layer-list reader and the parser that checks its shapes. Any input must
// end in a parsed network or a NetworkError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "mapper/network.h"
#include "mapper/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const s2::mapper::Network n = s2::mapper::parse_layer_list(text, "fuzz.net");
    (void)s2::mapper::parse_network(n);
  } catch (const s2::mapper::NetworkError&) {
  }
  return 0;
}
