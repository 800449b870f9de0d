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
#include <iosfwd>
#include <string>
#include <vector>

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
};

// Runs the search. `base` is the configuration without the flaw under test (other flaws, e.g. sram2clk, as
// the user asked); `progress` gets one line per probe (may be null).
FlawLimitResult find_flaw_limit(const std::string& flaw, const HwConfig& base, std::ostream* progress);

std::string format_flaw_limit(const FlawLimitResult& r, const HwConfig& cfg);
// Contract 3: flaw, dimension, limit, simulations, reproducer (+ what else the search saw).
std::string flaw_limit_json(const FlawLimitResult& r, const HwConfig& cfg);

struct FlawLimitRequest {
  std::string flaw;
  std::string config_file;
  std::string mac_shape;
  std::vector<std::string> other_flaws;  // switched on for every probe (e.g. sram2clk)
  std::string json_out;
};
// `s2cosim flaw-limit`: returns 0 when the limit was found, 1 when not, 2 on bad arguments.
int flaw_limit(const FlawLimitRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
