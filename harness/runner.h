// Runs a task list on the selected backends (model first, so that its estimate sets the RTL's watchdog
// budget), compares each task as soon as both ran, and keeps going when a backend throws.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/comparators.h"
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

// The hardware configuration the CLI builds: defaults, then the JSON file (if any), then the MAC shape
// (if any), then the flaws. Throws std::invalid_argument / std::runtime_error with a message for the user.
HwConfig build_hw_config(const std::string& config_file, const std::string& mac_shape,
                         const std::vector<std::string>& flaws);

// True if `path` is empty or can be a report target (output_path_problem); else says so on `err` (commands
// check before long runs; harness/output_files.cpp).
bool check_writable(const std::string& path, std::ostream& err);

// `s2cosim regress`: everything but the argument parsing. Returns the exit code:
// 0 every task passed, 1 some task did not, 2 bad input (configuration, vectors, output files).
struct RegressRequest {
  std::string vectors;
  std::string config_file;
  std::string mac_shape;
  std::vector<std::string> flaws;
  std::string json_out;  // empty: none
  std::string csv_out;   // empty: none
  std::string html_out;  // the HTML report (empty: none)
  std::string junit_out; // JUnit XML (empty: none)
  std::vector<std::string> task_ids;  // run only these tasks (--task; empty: all)
  std::string shard = "1/1";          // --shard I/N: the tasks k with k % N == I - 1
  std::string expect_hash;            // refuse to run unless the configuration has this hash (replay lines)
  std::string waves_dir;              // --waves: an FST waveform of every failing task's RTL run here
  std::uint64_t waves_window = 2000;  // PE clocks around the first divergence, or before the watchdog fired
  std::string journal;   // JSON Lines journal of finished tasks (default: JSON report + ".jsonl")
  std::string resume;    // a journal of the same run: its tasks are taken, not run again
  BackendSelection backends = BackendSelection::Both;
  double deviation_threshold = 0.02;
  bool quiet = false;  // no table: the summary only
};
// The command line that reruns exactly task `id` of this request, with its configuration's hash.
std::string regress_replay(const RegressRequest& req, const std::string& id, const std::string& hash);
// The waveform of a failing task (--waves): its RTL run again on a traced model, with the same data and
// watchdog budget, dumping `window` PE clocks around first_divergence_cycle (a hang: the last `window` before
// the watchdog fired) to `path`. Returns "" on success, else why no waveform was written (or why it may
// not show the failure: a rerun that does not reproduce the clocks).
std::string write_task_waves(const Task& t, const HwConfig& cfg, const TaskComparison& c, const std::string& path,
                             std::uint64_t window);
// Refuses (std::invalid_argument) a configuration whose hash is not `expect` (when `expect` is not empty).
void check_expected_hash(const HwConfig& cfg, const std::string& expect);
// Exit code (harness/output_files.h): 0 every task passed, 1 otherwise, 2 bad input (nothing run), 3 an output
// could not be written (the others are; every finished task is in the journal), 128 + the signal when SIGINT,
// SIGTERM, SIGHUP or SIGPIPE stopped it (after the task in hand; what finished is reported and in the journal).
int regress(const RegressRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
