// The one interface both the reference model and the RTL implement: run one task, return a trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "model/hw_config.h"
#include "model/task.h"
#include "model/trace.h"

namespace s2 {

struct RunOptions {
  std::uint64_t watchdog_cycles = 0;  // stop after this many PE clocks from the start (0 = no limit)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Loads the task's data (make_operands) into SRAM, runs it, and reads the results back.
  virtual TaskTrace run(const Task& task, const RunOptions& options) = 0;
  virtual const HwConfig& config() const = 0;
};

std::unique_ptr<Backend> make_model_backend(const HwConfig& cfg);
// Throws std::runtime_error if no RTL build matches cfg (MAC shape, or parameters the RTL fixes).
std::unique_ptr<Backend> make_rtl_backend(const HwConfig& cfg);

}  // namespace s2
