// Reports of a regression run: a human-readable table in the style of the thesis's Tables 5.1-5.4 with a
// summary, the JSON report (contract 2) and a CSV with one row per task.
// Wall-clock seconds (summary.rtl_wall_s, summary.model_wall_s) are the only fields of the JSON report
// that differ between two runs of the same vectors and configuration.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/runner.h"

namespace s2 {

// The tool's version, stamped into reports.
const char* tool_version();

struct RunSummary {
  std::size_t tasks = 0;
  std::map<Status, std::size_t> counts;  // every status, zero included
  std::optional<double> max_abs_delta;   // over tasks with a delta
  std::optional<double> median_abs_delta;
  double rtl_wall_s = 0.0, model_wall_s = 0.0;
  std::optional<double> speed_ratio;  // rtl_wall_s / model_wall_s (how many times faster the model is)
  bool all_passed() const { return tasks > 0 && counts.at(Status::Pass) == tasks; }
};
RunSummary summarize(const RunResult& r);

// "MAC 16x4, 29-bit accumulators, SRAM 128 KB (96 KB for MLA data), flaws: sram2clk"
std::string hw_config_line(const HwConfig& cfg);
// The data column of the table: "ok", "-" (no backend returned data), or the first mismatch in short:
// "rtl PE 0 tile 1 (0,16): got unwritten, want -32711; 720 differ" ((row,column) as result_position gives them).
std::string data_cell(const TaskComparison& c);

// The table, then per non-passing task its flags and first mismatch.
std::string format_table(const RunResult& r);
// Counts per status, |delta| statistics, wall times, speed ratio, hardware line and config hash.
std::string format_summary(const RunResult& r);

// For tasks that carry the thesis's measured clocks (hdl_clocks column): RTL and model against the HDL
// prototype, and the thesis's own simulator against it; empty if no task has them.
std::string format_thesis_comparison(const RunResult& r);
// Tasks that differ only in operand A's neighbour shift, as thesis Tables 5.3/5.4: clocks per shift on RTL
// and model, each shift's error against shift 0, the model's deviation from the RTL. Empty if no such group.
std::string format_neighbour_tables(const RunResult& r);

// Contract 2 (keys in a readable order: id and status first; converts to nlohmann::json).
nlohmann::ordered_json task_json(const TaskComparison& c);
// A task's journal record: task_json plus the wall seconds each backend took ("wall_s": {"rtl", "model"}).
nlohmann::ordered_json task_journal_json(const TaskComparison& c);
// The comparison a task_json / task_journal_json record holds, for task `t` (regress --resume): what the
// reports read. Throws (nlohmann::json::exception, std::invalid_argument, std::runtime_error) if the record is
// malformed.
TaskComparison task_comparison_from_json(const nlohmann::ordered_json& j, const Task& t);
nlohmann::ordered_json report_json(const RunResult& r);
// One row per task: id, op, pe, shape, a_src, seed, data, status, rtl_cycles, model_cycles, delta,
// data_match, model_data_match, first_mismatch, flags, error.
std::string report_csv(const RunResult& r);

// Writes `text` to `path`; throws std::runtime_error naming the file on failure.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace s2
