// What a backend returns for one task: per PE when it started and finished (in PE clocks), cycles per
// phase where the backend knows them, and the results it left in SRAM.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/activity.h"

namespace s2 {

struct PhaseCycles {
  std::uint64_t compute = 0;  // CONV/MM stage, including stalls
  std::uint64_t output = 0;   // OUTPUT stage: results into SRAM
  std::uint64_t a_wait = 0;   // compute clocks stalled on operand A
  std::uint64_t b_wait = 0;   // compute clocks stalled on operand B
  std::uint64_t setup = 0;    // per-tile setup clocks
};

struct PeTrace {
  int pe = 0;
  bool started = false;
  bool done = false;                 // the MLA raised its done interrupt
  std::uint64_t start_cycle = 0;     // first PE clock of the task on this PE
  std::uint64_t end_cycle = 0;       // first PE clock after its last result write completed
  PhaseCycles phases;
  bool phases_known = false;
  std::uint64_t tiles = 0;
  std::uint64_t steps = 0;
  std::string state;                 // where the PE was when the backend stopped (e.g. "done", "compute")
  std::vector<std::int32_t> results; // logical order (see golden.h); empty if not read back
  Activity activity;                 // what this PE's MLA, SRAM and ARM did (model/activity.h)
  std::uint64_t cycles() const { return end_cycle - start_cycle; }
};

struct TaskTrace {
  std::string task_id;
  std::string backend;
  bool completed = false;            // every PE raised done within the budget
  std::uint64_t cycles = 0;          // first start to last end over the PEs (the thesis's clock count)
  std::uint64_t budget_cycles = 0;   // watchdog budget the run had (0 = none)
  std::uint64_t elapsed_cycles = 0;  // PE clocks simulated from the first start until the backend stopped
  std::vector<PeTrace> pes;
  Activity activity;                 // the whole task's counts (the PEs' and the QPE's)
  // counts this backend cannot observe (a user's RTL without the counters): reported "not available"
  std::vector<std::string> activity_unavailable;
  double wall_s = 0.0;               // wall seconds spent in the backend for this task
};

// A task's activity once each PE's counts are in (its pe_busy_cycles among them): each PE's idle clocks,
// from the task's first start to the PE's end without a command under way, then the task's total, its PEs'
// counts and `outside` (those of PEs not running it, e.g. an SRAM that served operand A). Both backends.
inline void sum_task_activity(TaskTrace& tr, const Activity& outside) {
  std::uint64_t first_start = ~0ull;
  for (const PeTrace& pt : tr.pes) first_start = std::min(first_start, pt.start_cycle);
  tr.activity = outside;
  for (PeTrace& pt : tr.pes) {
    const std::uint64_t span = pt.end_cycle > first_start ? pt.end_cycle - first_start : 0;
    pt.activity.pe_idle_cycles = Activity::idle_cycles(span, pt.activity.pe_busy_cycles);
    tr.activity += pt.activity;
  }
}

}  // namespace s2
