// libFuzzer target: design-report's inputs, a run-net --whole --energy JSON report and tools/synth.sh's JSON
// (harness/commands/design_report.h). Any input must end in design points, areas, or a std::runtime_error
// naming the file; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/commands/design_report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const s2::DesignReportFile f = s2::read_design_report_file(text, "fuzz.json", "16x4");
    for (const s2::DesignPoint& d : f.points) (void)s2::to_json(d.energy).dump();
  } catch (const std::runtime_error&) {
  }
  try {
    (void)s2::parse_synth_areas(text, "fuzz.json");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
