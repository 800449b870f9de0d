// `s2cosim regress`: a task-vector file on the selected backends (harness/pipeline/task_runner.h), its
// reports, journal, waveforms of failing tasks and rerun lines.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/check/check_policy.h"
#include "harness/check/comparators.h"
#include "harness/pipeline/task_runner.h"
#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

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
  CheckPolicy policy;  // the deviation bound (--deviation-bound) and the watchdog budget
  bool quiet = false;  // no table: the summary only
  std::string energy;  // --energy: "default" or an energy table's JSON file ("": no energy)
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
// Exit code (harness/outputs/output_files.h): 0 every task passed, 1 otherwise, 2 bad input (nothing run), 3 an output
// could not be written (the others are; every finished task is in the journal), 128 + the signal when SIGINT,
// SIGTERM, SIGHUP or SIGPIPE stopped it (after the task in hand; what finished is reported and in the journal).
int regress(const RegressRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
