// The figures the project promises (docs/figures.md, "QPE: the model against the RTL"), measured in one
// run: every suite on both backends, with the flaws off and with sram2clk; RTL against the thesis's HDL
// clocks; model against RTL; bit-exactness; and the speed ratio (RTL wall seconds / model wall seconds,
// summed over everything run).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/check_policy.h"

namespace s2 {

struct BenchRequest {
  std::vector<std::string> suites;  // task-vector files
  std::vector<std::string> mac_shapes = {"16x4"};
  std::string json_out;             // empty: none
  std::string html_out, junit_out;  // every task as a result (harness/outputs/result.h); empty: none
  std::string journal;              // JSON Lines journal of finished tasks (default: JSON report + ".jsonl")
  std::string resume;               // a journal of the same bench: its tasks are not run again
  std::string shard = "1/1";        // --shard I/N: the tasks k (over suites x MAC arrays x flaws) with k % N == I - 1
  CheckPolicy policy;               // the deviation bound (--deviation-bound), watchdog budget and the targets judged
  // s2cosim merge: the shards' task records (their --json reports' tasks[]), taken as they are
  std::vector<nlohmann::ordered_json> merged;
};
// Returns 0 when every target holds, 1 when one is missed (the printout says which), 2 on bad input, 128 +
// the signal when SIGINT or SIGTERM stopped it (after the task in hand; what finished is reported).
int bench(const BenchRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
