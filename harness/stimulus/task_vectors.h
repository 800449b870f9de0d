// Reads task vectors (contract 1: CSV, version 1) into tasks, validating every row before anything runs.
//
// Columns are found by header name, in any order; unknown columns are ignored; lines whose first
// non-blank character is '#' and blank lines are skipped (line numbers still count them).
//   id      required, unique
//   op      required: conv | mm
//   pe      all | 0..3               (column or cell absent: all)
//   Wi,Hi,D,Wf,Hf,C                  positive integers, required on conv rows
//   stride  1 only                   (column or cell absent: 1)
//   W_A,H_A,W_B,H_B                  positive integers, required on mm rows, W_A = H_B
//   a_src   local | neighbor:S, S in 0..3   (absent: local)
//   seed    non-negative integer     (absent: 1)
//   data    random | min | max | minmax     (absent: random; our extension)
// Cells are trimmed of blanks and may be double-quoted; keywords (op, pe, a_src, data) are case-insensitive.
// Cells a row's op does not use are ignored. Every problem is collected; then one VectorError lists them,
// one per line, as "FILE:LINE: field 'NAME': expected ..., got '...'".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/task.h"

namespace s2 {

struct VectorProblem {
  std::string file;
  int line = 0;         // 1-based line in the file; 0 = the file as a whole
  bool header = false;  // the problem is in the header line
  std::string field;    // column name, empty if the problem is not one field's
  std::string message;  // the whole "FILE:LINE: ..." text
};

class VectorError : public std::runtime_error {
 public:
  explicit VectorError(std::vector<VectorProblem> problems);
  const std::vector<VectorProblem>& problems() const { return problems_; }

 private:
  std::vector<VectorProblem> problems_;
};

// Reads and validates `path` against `cfg` (SRAM budget and MAC rows for the alignment).
// Throws VectorError listing every problem; returns the tasks in file order otherwise.
// Bounds on a task-vector file, checked before anything is allocated for it.
inline constexpr std::uintmax_t kMaxTaskFileBytes = 32u << 20;
inline constexpr std::size_t kMaxTasks = 1000000;
inline constexpr std::size_t kMaxTaskIdBytes = 256;
std::vector<Task> read_task_vectors(const std::string& path, const HwConfig& cfg);
// The same for CSV text already in memory; `name` stands for the file name in messages.
std::vector<Task> parse_task_vectors(const std::string& text, const std::string& name, const HwConfig& cfg);

// Checks one task (shape rules, stride, SRAM footprint) as the reader does; returns the problems
// (empty if the task is fine). Used for tasks that do not come from a file (e.g. the mapper).
std::vector<VectorProblem> validate_task(const Task& t, const HwConfig& cfg);

// The SRAM bytes `t` occupies in one PE after alignment (sram_layout), computed in 64 bits so that absurd
// shapes cannot wrap around.
std::uint64_t sram_footprint_bytes(const Task& t, const HwConfig& cfg);

// "[Wi,Hi,D]x[Wf,Hf,D,C]" or "[W_A,H_A]x[W_B,H_B]"
std::string shape_string(const Task& t);

// One task as a contract-1 row, and the header that goes with it (for reproducers and exports).
std::string task_vector_header();
std::string task_vector_row(const Task& t);

}  // namespace s2
