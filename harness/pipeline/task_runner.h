// Runs a task list on the selected backends (model first, so that its estimate sets the RTL's watchdog
// budget), compares each task as soon as both ran, and keeps going when a backend throws.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/check/comparators.h"
#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

enum class BackendSelection { Both, Model, Rtl };
const char* to_string(BackendSelection b);  // "both" | "model" | "rtl"
// Parses "both", "model" or "rtl"; throws std::invalid_argument otherwise.
BackendSelection parse_backend_selection(const std::string& s);

struct BudgetOptions {
  // with a model estimate: max(min_cycles, model_factor x model cycles)
  std::uint64_t min_cycles = 10000;
  double model_factor = 4.0;
  // RTL alone (or the model failed): rtl_only_factor x MLA work + rtl_only_base (see mla_work_cycles)
  double rtl_only_factor = 8.0;
  std::uint64_t rtl_only_base = 100000;
};

// The RTL's watchdog budget for `t`: from the model's cycles when there are any, else from mla_work_cycles.
std::uint64_t rtl_budget_cycles(const Task& t, const HwConfig& cfg, std::optional<std::uint64_t> model_cycles,
                                const BudgetOptions& opt = {});

struct RunnerOptions {
  BackendSelection backends = BackendSelection::Both;
  BudgetOptions budget;
  CompareOptions compare;
  // called after each task with its index (0-based), the number of tasks and its comparison
  std::function<void(std::size_t index, std::size_t total, const TaskComparison&)> progress;
  // asked before each task: true stops the run there (the tasks done so far are the result)
  std::function<bool()> stop;
  // asked before each task (--resume): a comparison to take as it is instead of running the task
  std::function<std::optional<TaskComparison>(std::size_t index, const Task&)> resumed;
};

struct RunResult {
  HwConfig cfg;
  BackendSelection backends = BackendSelection::Both;
  std::string vectors_path;  // where the tasks came from (for reports); may be empty
  std::vector<TaskComparison> tasks;
  double rtl_wall_s = 0.0;  // sum of TaskTrace::wall_s
  double model_wall_s = 0.0;
};

// Runs with backends the caller made; a null backend is not run. Never throws for what a backend does.
RunResult run_tasks(const std::vector<Task>& tasks, const HwConfig& cfg, Backend* rtl, Backend* model,
                    const RunnerOptions& opt = {});
// Makes the selected backends (make_rtl_backend / make_model_backend). A backend that cannot be made
// marks every task `error` with its message; the other backend still runs.
RunResult run_tasks(const std::vector<Task>& tasks, const HwConfig& cfg, const RunnerOptions& opt = {});

}  // namespace s2
