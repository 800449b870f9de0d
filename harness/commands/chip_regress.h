// `s2cosim chip-regress`: a chip suite (harness/stimulus/chip_suite.h) on the model and/or the RTL. Each row's
// stream is generated again from its seed and system (and refused if it is not the stream the row was
// written with), runs from its seeded memory on each backend, and is compared: clocks (equation 5.1), every
// DRAM's and every PE's SRAM bytes after the run (bit-exact but for the bytes the contract leaves
// unspecified, chip_stream_unspecified, whose differences are counted apart), and on a deviation where the
// clocks part: per command kind (command_deviation), per DRAM, SRAM and mesh link (place_deviation), per PE.
// Every stream is a result record (harness/outputs/result.h), so JSON, JUnit and HTML reports and rerun lines work
// as for `regress`.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/check/check_policy.h"

namespace s2 {

struct ChipRegressRequest {
  std::string suite;
  std::string backend = "both";  // both | model | rtl
  RtlSimOptions rtl_sim;          // --threads, --rtl-eval
  std::vector<std::string> streams;  // ids to run (empty: all)
  CheckPolicy policy;  // the deviation bound (--deviation-bound) and the streams' watchdog
  std::string json_out, junit_out, html_out;
  bool quiet = false;  // the summary only
};

// Returns the exit code: 0 if every stream passed, 1 if not, 2 for bad input (nothing is run then).
int chip_regress(const ChipRegressRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
