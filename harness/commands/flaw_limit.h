// `s2cosim flaw-limit NAME`: finds where a flaw of the RTL starts, from outside, as a user of an unknown
// RTL would. Each probe is one task run on both backends; a probe "shows the flaw" when the comparators'
// status is not `pass` (hang, early stop, mismatch or deviation). Nothing here knows how a flaw is built.
//
// The search walks one family of tasks along the dimension the flaw is known to depend on (thesis 5.1.2):
//   neighbor_conv: convolution [40,5,D] x [3,3,D,4] on all PEs, operand A from neighbour shift 1;
//                  dimension weight_bytes = 3*3*D*4 (the thesis's filter family), searched over D
//   mm_wide_a:     matrix multiplication [W_A,4] x [32,W_A] on all PEs, operand A from neighbour shift 1;
//                  dimension W_A
// It checks that the smallest member passes and the largest that fits the SRAM budget shows the flaw,
// bisects between them, and confirms the first failing task passes with the flaw switched off. Then it
// samples the dimensions thesis 5.1.2 says the flaw does not depend on, just below and at the limit, and reports
// whether the status stays the same.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/check/check_policy.h"
#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

struct FlawProbe {
  std::string what;            // e.g. "weight_bytes 540 ([40,5,15]x[3,3,15,4])"
  Task task;
  std::string status;          // comparator status
  std::uint64_t dimension = 0;  // value of the searched dimension
};

struct IndependenceCheck {
  std::string dimension;  // what was varied (e.g. "ifmap Wi x Hi")
  std::string value;      // its value in this sample
  std::string below;      // status just below the limit
  std::string at;         // status at the limit
  bool holds = false;     // below passes and at shows the flaw, as on the search's own family
};

struct FlawLimitResult {
  std::string flaw;
  std::string dimension;     // "weight_bytes" | "W_A"
  bool found = false;
  std::string why_not;       // when not found
  std::uint64_t limit = 0;   // smallest value of `dimension` that shows the flaw
  std::uint64_t last_pass = 0;
  int simulations = 0;       // probes of the search itself (bounds and bisection)
  std::vector<FlawProbe> search;
  Task reproducer;           // the first failing task
  std::string reproducer_status;
  std::string control_status;  // the reproducer with the flaw off
  std::vector<IndependenceCheck> independence;
  bool independence_holds = false;
  int independence_simulations = 0;  // the control run and the independence samples
  int stopped_by_signal = 0;         // SIGINT / SIGTERM stopped the search after the probe in hand
  int resumed = 0;                   // probes taken from a journal, not run again
};

// Each probe's status as it finishes (journal lines), and the probes an interrupted search already ran
// (its journal, for --resume), by the configuration hash and the task's vector row.
struct ProbeLog {
  std::function<void(const std::string& config_hash, const Task& t, const std::string& status)> finished;
  std::map<std::pair<std::string, std::string>, std::string> done;  // (config hash, task row) -> status
  // why the search must stop before its next probe ("": go on), e.g. the journal could not be written
  std::function<std::string()> stop;
};

// Runs the search. `base` is the configuration without the flaw under test (other flaws, e.g. sram2clk, as
// the user asked); `progress` gets one line per probe (may be null).
// `log` (may be null) journals each probe and supplies the ones already run; SIGINT / SIGTERM (while a
// StopOnSignal lives) stop the search between probes. `policy` judges each probe (its deviation bound and
// watchdog budget).
FlawLimitResult find_flaw_limit(const std::string& flaw, const HwConfig& base, std::ostream* progress,
                                ProbeLog* log = nullptr, const CheckPolicy& policy = {});

std::string format_flaw_limit(const FlawLimitResult& r, const HwConfig& cfg, const CheckPolicy& policy);
// Contract 3: flaw, dimension, limit, simulations, reproducer (+ what else the search saw).
std::string flaw_limit_json(const FlawLimitResult& r, const HwConfig& cfg, const CheckPolicy& policy);

struct FlawLimitRequest {
  std::string flaw;
  std::string config_file;
  std::string mac_shape;
  std::vector<std::string> other_flaws;  // switched on for every probe (e.g. sram2clk)
  std::string json_out;
  std::string html_out, junit_out;  // the probes as results (harness/outputs/result.h); empty: none
  std::string journal;  // JSON Lines journal of finished probes (default: JSON report + ".jsonl")
  std::string resume;   // a journal of the same search: its probes are not run again
  CheckPolicy policy;   // what judges each probe: the deviation bound (--deviation-bound), the watchdog budget
};
// `s2cosim flaw-limit`: returns 0 when the limit was found, 1 when not, 2 on bad arguments, 128 + the
// signal when SIGINT or SIGTERM stopped it.
int flaw_limit(const FlawLimitRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
