// Compares what the backends returned for one task: cycles (equation 5.1, per task, per PE, per phase),
// data against the golden results (bit-exact, first differing element), and the task's status
// (contract 2). Comparators collect; they never throw for what a backend did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/activity_comparator.h"
#include "harness/check/check_policy.h"
#include "model/hw_config.h"
#include "model/task.h"
#include "model/task_stream.h"
#include "model/trace.h"

namespace s2 {

// Contract 2 statuses, in order of precedence (the first that applies wins).
enum class Status { Error, Hang, EarlyStop, Mismatch, Deviation, Pass };
inline constexpr Status kAllStatuses[] = {Status::Pass,      Status::Mismatch,  Status::Hang,
                                          Status::EarlyStop, Status::Deviation, Status::Error};
// "pass", "mismatch", "hang", "early_stop", "deviation", "error"
const char* to_string(Status s);

// What a check found, each finding the status it leads to; classify takes the first by precedence. Every
// comparator (a task, a network's block run, a chip stream) says its findings and leaves the status to it.
struct Findings {
  bool error = false;       // a backend threw, or none ran
  bool hang = false;        // a backend did not finish within its watchdog budget
  bool early_stop = false;  // the RTL raised done before writing every result
  bool mismatch = false;    // data differ from the golden results, or the backends disagree on finishing
  std::optional<double> delta;  // equation 5.1, if both backends finished
  // an activity count of the model beyond the activity bound from the RTL's, or a backend's count below what
  // the work implies (activity_comparator.h)
  bool activity_deviation = false;
};
// Error, Hang, EarlyStop, Mismatch, then Deviation when |delta| > deviation_bound (CheckPolicy) or the
// activity deviates, else Pass.
Status classify(const Findings& f, double deviation_bound);

// What one backend did with one task.
struct BackendResult {
  bool ran = false;                // the backend was asked to run the task
  std::optional<TaskTrace> trace;  // absent if it threw
  std::string error;               // what it threw (ran && !trace)
  bool ok() const { return ran && trace.has_value(); }
};

// equation 5.1: (model - rtl) / rtl; nullopt if rtl is 0
std::optional<double> cycle_delta(std::uint64_t rtl_cycles, std::uint64_t model_cycles);

// The first element of one PE's results that differs from the golden results.
struct Mismatch {
  std::string backend;  // "rtl" | "model"
  int pe = 0;
  std::size_t index = 0;    // flat logical index (golden.h order)
  std::uint64_t tile = 0;   // result_tile
  int row = 0, column = 0;  // result_position
  std::int32_t expected = 0;
  std::int32_t got = 0;
  bool unwritten = false;     // got == kUnwrittenResult: the hardware never wrote it
  bool missing = false;       // the backend returned no results (or the wrong number) for this PE
  std::size_t differing = 0;  // differing elements on this PE (all of them if missing)
};

// One backend's results against the golden results.
struct DataCheck {
  bool checked = false;                // the backend returned a trace
  bool match = false;                  // every result of every PE equals the golden result
  std::size_t differing = 0;           // over all PEs
  std::size_t unwritten = 0;           // of those, never written
  std::vector<int> bad_pes;            // PEs with any difference
  std::optional<Mismatch> first;       // in PE order, then element order
  std::vector<Mismatch> first_per_pe;  // one per bad PE
};

// One PE's results against its golden results (both in logical order).
std::optional<Mismatch> compare_pe_results(const Task& t, const HwConfig& cfg, int pe,
                                           const std::vector<std::int32_t>& golden,
                                           const std::vector<std::int32_t>& got, const std::string& backend);
DataCheck check_data(const Task& t, const HwConfig& cfg, const std::vector<std::vector<std::int32_t>>& golden,
                     const TaskTrace& trace, const std::string& backend);

// Golden results for every PE of the QPE, indexed by PE (empty for PEs the task does not run on).
std::vector<std::vector<std::int32_t>> golden_for_task(const Task& t, const HwConfig& cfg);

struct PhaseDelta {
  std::string phase;  // compute, output, a_wait, b_wait, setup
  std::uint64_t rtl = 0;
  std::uint64_t model = 0;
  std::optional<double> delta;
};

struct PeComparison {
  int pe = 0;
  std::optional<std::uint64_t> rtl_cycles, model_cycles;  // PeTrace::cycles()
  std::optional<double> delta;
  std::string rtl_state, model_state;
  bool rtl_done = false, model_done = false;
  std::optional<PhaseCycles> rtl_phases, model_phases;  // where the backend knows them
  std::vector<PhaseDelta> phase_deltas;                 // where both know them
  std::optional<bool> rtl_data_ok, model_data_ok;
  std::size_t rtl_differing = 0, model_differing = 0;
  std::size_t rtl_unwritten = 0;
  bool long_run = false;  // RTL cycles > CheckPolicy::long_run_factor x model cycles
};

struct TaskComparison {
  Task task;
  Status status = Status::Pass;
  bool rtl_ran = false, model_ran = false;
  std::optional<std::uint64_t> rtl_cycles, model_cycles;  // TaskTrace::cycles; nullopt where none
  std::optional<double> delta;
  std::optional<bool> rtl_completed, model_completed;
  std::uint64_t rtl_budget_cycles = 0;  // the RTL's watchdog budget
  std::uint64_t rtl_elapsed_cycles = 0;
  DataCheck rtl_data, model_data;
  std::optional<bool> data_match() const {  // contract 2: RTL results equal golden
    return rtl_data.checked ? std::optional<bool>(rtl_data.match) : std::nullopt;
  }
  std::optional<bool> model_data_match() const {
    return model_data.checked ? std::optional<bool>(model_data.match) : std::nullopt;
  }
  std::vector<PeComparison> pes;
  std::vector<int> hung_pes;        // RTL PEs not done within the budget
  std::vector<int> early_stop_pes;  // RTL PEs that raised done with wrong or missing results
  std::vector<int> long_run_pes;
  std::vector<std::string> flags;  // one line each, for humans and the JSON report
  std::string rtl_error, model_error;
  std::string error;  // what made the status `error` (backend name: message)
  double rtl_wall_s = 0.0, model_wall_s = 0.0;
  // what each backend counted (TaskTrace::activity), where it ran; counts it could not observe
  BackendActivity activity;
  ActivityComparison activity_delta;       // model against RTL, when both finished
  std::vector<std::string> activity_floor; // "rtl: mac_ops 100 < 128 ...": counts below what the task implies
};

// Compares the backends' results for `t`. `golden` as golden_for_task returns it.
TaskComparison compare_task(const Task& t, const HwConfig& cfg, const std::vector<std::vector<std::int32_t>>& golden,
                            const BackendResult& rtl, const BackendResult& model, const CheckPolicy& policy = {});
// The same, computing the golden results itself.
TaskComparison compare_task(const Task& t, const HwConfig& cfg, const BackendResult& rtl, const BackendResult& model,
                            const CheckPolicy& policy = {});

// Where a task's RTL run first parts from the model's, in PE clocks from the first start: the earliest end of
// a PE whose clocks differ (the earlier of its two ends); with every PE's clocks equal, the task's end (its
// results differ, and were all written by then). nullopt if the RTL has no clocks.
std::optional<std::uint64_t> first_divergence_cycle(const TaskComparison& c);

// "PE 2 tile 5 row 3 col 7: expected 123, got 0x7fffffff (never written); 41 differ"
std::string describe(const Mismatch& m);

// Where two runs of one task stream part: for each command kind and operation, the model's clocks minus
// the RTL's, summed over the PEs (a command's clocks: its end minus the previous command's end, from the
// StreamResults' command_end_cycle; the wait for the engines after the last command counts as "drain").
// Largest |clocks| first; empty if either run is incomplete.
struct CommandDeviation {
  std::string what;          // "mla CONV_43", "dma_load CONV_43", "drain" ...
  std::int64_t clocks = 0;   // model - RTL
  std::uint64_t commands = 0;
};
std::vector<CommandDeviation> command_deviation(const TaskStream& s, const StreamResult& model, const StreamResult& rtl);
// The largest `n` as one line: "mla CONV_43 -12345 clocks (512), dma_load CONV_43 +678 clocks (1024)".
std::string describe_command_deviation(const std::vector<CommandDeviation>& d, std::size_t n = 3);

// The same differences of the DMA commands, summed per place on the chip their packets use: the far end
// ("DRAM 1", "PE 17's SRAM") and every mesh link of the route out and back ("QPE(0,0)->QPE(1,0)"). A
// place's sum is over the commands that use it, so a link many transfers share collects all of theirs: it
// points at where to look, it does not divide the difference among the places. Largest |clocks| first.
std::vector<CommandDeviation> place_deviation(const TaskStream& s, const StreamResult& model, const StreamResult& rtl,
                                              const HwConfig& cfg);
// "far ends: DRAM 1 +1500 clocks (20), ...; links: QPE(0,0)->QPE(1,0) -800 clocks (14), ..." (`n` of each).
std::string describe_place_deviation(const std::vector<CommandDeviation>& d, std::size_t n = 2);

}  // namespace s2
