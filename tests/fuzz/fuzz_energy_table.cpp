// libFuzzer target: an energy table's JSON (model/energy_table.h; the --energy option's file). Any input must
// end in a table or a std::runtime_error naming the file; anything else is a finding. A table read is hashed,
// as every report stamps it, and charged for an activity of every count at its largest.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/energy_table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const s2::EnergyTable t = s2::parse_energy_table(text, "fuzz.json");
    (void)s2::energy_table_hash(t);
    s2::Activity a;
    for (const auto& f : s2::Activity::fields()) a.*f.member = std::numeric_limits<std::uint64_t>::max();
    (void)s2::to_json(s2::energy_of(a, t, 1.0, 152)).dump();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
