// Compares what two backends counted for one run (model/activity.h), count by count, and checks each
// backend's counts against what the work it ran implies (issue 30, item 2). Like every comparator it
// collects findings and never throws for what a backend did; the caller folds them into the run's status
// (a count off by more than CheckPolicy::activity_deviation_bound, or below its floor, is a deviation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/check_policy.h"
#include "model/activity.h"
#include "model/task_stream.h"
#include "model/task.h"

namespace s2 {

// What each backend counted where it ran (TaskTrace / StreamResult::activity), and the counts it could not
// observe (its activity_unavailable).
struct BackendActivity {
  std::optional<Activity> rtl, model;
  std::vector<std::string> rtl_unavailable, model_unavailable;
};

// One count of both backends: the relative difference (model - rtl) / rtl, as equation 5.1 for clocks; a
// count the RTL has as 0 and the model not is infinitely far (delta nullopt, off true). The clock counts
// pe_busy_cycles and pe_idle_cycles are time, not events: their difference is taken against the RTL's span
// (pe_busy_cycles + pe_idle_cycles) and judged by the clocks' bound, as the run's clocks are (a small idle
// count would otherwise swing by tens of percent on a clock or two).
struct CountDelta {
  std::string count;  // Activity::fields()'s name
  std::uint64_t model = 0, rtl = 0;
  std::optional<double> delta;  // 0 when equal (zeros too); nullopt when rtl is 0 and model not (then off)
  bool off = false;             // beyond the bound
  bool time = false;            // a clock count: delta against the RTL's span, the clocks' bound
};

struct ActivityComparison {
  std::vector<CountDelta> counts;        // every count both backends observed, in Activity::fields() order
  std::vector<std::string> unavailable;  // counts either backend could not observe: not compared
  std::optional<double> max_abs_delta;   // over the counts with a delta
  bool deviates() const;
  // the largest |delta| over every count compared (a count the RTL has as 0 and the model not: infinity),
  // and which count it is; nullopt when nothing was compared. `time`: over the clock counts only (true) or
  // the event counts only (false)
  std::optional<double> worst(std::string* which = nullptr, std::optional<bool> time = std::nullopt) const;
  // "mac_ops model 1200 rtl 1100 (+9.09%); ..." for the counts that are off, or "" if none is
  std::string describe() const;
};

// Count by count, events by policy.activity_deviation_bound, clock counts by policy.deviation_bound; counts
// named in either `unavailable` list are left out and listed.
ActivityComparison compare_activity(const Activity& model, const Activity& rtl, const std::vector<std::string>& model_unavailable,
                                    const std::vector<std::string>& rtl_unavailable, const CheckPolicy& policy);
// The same for both backends' counts as a check holds them; nothing compared unless both have counts.
ActivityComparison compare_activity(const BackendActivity& a, const CheckPolicy& policy);
// The counts of the runs that finished (a stream's StreamResult::activity and its activity_unavailable).
BackendActivity finished_activity(const StreamResult* model, const StreamResult* rtl);

// What the work a backend ran implies about its counts: a lower bound per count (0: none). A backend that
// counts below one of them lost events (or the work did not run): every multiply-accumulate of the layer
// must be issued, every operand byte read at least once, every result byte written at least once, every byte
// that must come from (or go to) DRAM moved at least once.
struct ActivityFloor {
  std::uint64_t mac_ops = 0;
  std::uint64_t operand_a_read_bytes = 0;  // mla_a + dma reads (a neighbour's operand A is served at its DMA/NoC port)
  std::uint64_t operand_b_read_bytes = 0;  // mla_b
  std::uint64_t result_write_bytes = 0;    // mla_out
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
};
// A task of contract 1 on its PEs (operands in SRAM; no DRAM).
ActivityFloor activity_floor(const Task& t);
// The counts below their floor, one line each ("mac_ops 100 < 128 the layer implies"); empty if none is.
std::vector<std::string> activity_below_floor(const Activity& a, const ActivityFloor& f, const std::vector<std::string>& unavailable);

}  // namespace s2
