// libFuzzer target: the task-vector CSV reader (contract 1). Any input must end in tasks or a VectorError;
// anything else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/stimulus/task_vectors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const s2::HwConfig cfg;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<s2::Task> tasks = s2::parse_task_vectors(text, "fuzz.csv", cfg);
    for (const s2::Task& t : tasks) (void)s2::task_vector_row(t);  // what the reports write back
  } catch (const s2::VectorError&) {
  }
  return 0;
}
