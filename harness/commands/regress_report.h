// Reports of a regression run: a human-readable table in the style of the thesis's Tables 5.1-5.4 with a
// summary, the JSON report (contract 2) and a CSV with one row per task.
// Wall-clock seconds (summary.rtl_wall_s, summary.model_wall_s) are the only fields of the JSON report
// that differ between two runs of the same vectors and configuration.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/commands/regress.h"
#include "harness/outputs/output_files.h"
#include "harness/outputs/result.h"

namespace s2 {

// The run as result records (harness/outputs/result.h): one check per task, labelled with its op, shape, PEs,
// operand A's source, seed and data; `replay` gives each its rerun line (none if empty).
ResultSet results_of(const RunResult& r, const std::function<std::string(const TaskComparison&)>& replay = {});
RunSummary summarize(const RunResult& r);  // summarize(results_of(r))

// The data column of the table: "ok", "-" (no backend returned data), or the first mismatch in short:
// "rtl PE 0 tile 1 (0,16): got unwritten, want -32711; 720 differ" ((row,column) as result_position gives them).
std::string data_cell(const TaskComparison& c);

// The table, then per non-passing task its flags and first mismatch.
std::string format_table(const RunResult& r);
// Counts per status, |delta| statistics, wall times, speed ratio, hardware line, config hash and policy line.
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
// Contract 2 with the run's "results" (harness/outputs/result.h) and the summary made from them.
nlohmann::ordered_json report_json(const RunResult& r, const ResultSet& results);
nlohmann::ordered_json report_json(const RunResult& r);  // with results_of(r)
// The same from the parts a merge of shards has: the tasks[] records and the merged results (which carry the
// configuration).
nlohmann::ordered_json regress_report_json(const nlohmann::ordered_json& tasks, const ResultSet& results,
                                           const std::string& vectors, const std::string& backends);

}  // namespace s2
