// Where a run's outputs go, checked before anything runs, and how they are written: atomically (a temporary
// file beside the target, synced, renamed over it), each whatever became of the others. The exit codes every
// command shares (README.md, "Exit codes"; docs/contracts.md).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "model/hw_config.h"

namespace s2 {

inline constexpr int kExitPass = 0;        // every check passed
inline constexpr int kExitFail = 1;        // a check failed
inline constexpr int kExitBadInput = 2;    // bad input: nothing was run
inline constexpr int kExitOutput = 3;      // an output could not be written (what finished is in the journal)
// stopped by signal n: 128 + n (StopOnSignal::exit_code)

// A file a command names on its command line: the option ("--json", "vectors") and the path ("" if not given).
struct NamedPath {
  std::string option;
  std::string path;
};

// Why `path` cannot be a report target, "" if it can: a name that is not UTF-8 or cannot be looked up (a
// symlink loop, a name too long, a directory without permission, a missing directory), a directory, a FIFO,
// a device or a socket, a file or directory that cannot be written.
std::string output_path_problem(const std::string& path);

// Checks every output before anything runs: each one a possible target (output_path_problem), no two the same
// file (by name after resolving links, or device and inode), none the same file as an input, every input's
// name UTF-8 (it reaches the reports). `resume` (an
// input) may be the journal (an output): the run then continues it. Says the first problem on `err` as
// "s2cosim: OPTION PATH: REASON" and returns false.
bool check_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs, std::ostream& err,
                 const std::string& journal = "", const std::string& resume = "");

// Writes each (path, text maker) pair whose path is not empty, atomically, going on after one fails; every
// failure is said on `err` ("s2cosim: cannot write PATH: reason"). Returns false if one failed.
bool write_outputs(const std::vector<std::pair<std::string, std::function<std::string()>>>& outputs, std::ostream& err);

// The tool's version, stamped into reports.
const char* tool_version();
// The switched-on flaws, "sram2clk,neighbor_conv", or "none".
std::string flaws_string(const HwConfig& cfg);
// The configuration in one line for reports: "MAC 16x4 (columns x rows), 29-bit accumulators, SRAM 128 KB
// (96 KB for MLA data), PE 250 MHz, NoC 500 MHz, flaws: none".
std::string hw_config_line(const HwConfig& cfg);

// True if `path` is empty or can be a report target (output_path_problem); else says so on `err` (commands
// check before long runs).
bool check_writable(const std::string& path, std::ostream& err);

// Writes `text` to `path` atomically (a temporary file beside it, synced, renamed over it: a run stopped while
// writing leaves the file as it was); throws std::runtime_error naming the file on failure
// (harness/outputs/output_files.cpp).
void write_text_file(const std::string& path, const std::string& text);

}  // namespace s2
