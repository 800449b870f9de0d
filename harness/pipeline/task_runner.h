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

// The RTL's watchdog budget for `t`: from the model's cycles when there are any, else from mla_work_cycles.
std::uint64_t rtl_budget_cycles(const Task& t, const HwConfig& cfg, std::optional<std::uint64_t> model_cycles,
                                const TaskBudget& budget = {});

struct RunnerOptions {
  BackendSelection backends = BackendSelection::Both;
  CheckPolicy policy;  // the deviation bound the comparators classify by, the watchdog budget
  // called after each task with its index (0-based), the number of tasks and its comparison
  std::function<void(std::size_t index, std::size_t total, const TaskComparison&)> progress;
  // asked before each task: true stops the run there (the tasks done so far are the result)
  std::function<bool()> stop;
  // asked before each task (--resume): a comparison to take as it is instead of running the task
  std::function<std::optional<TaskComparison>(std::size_t index, const Task&)> resumed;
};

struct RunResult {
  HwConfig cfg;
  CheckPolicy policy;  // what the tasks were judged by (RunnerOptions::policy), stamped into the reports
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
