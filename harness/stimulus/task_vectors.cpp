#include "harness/stimulus/task_vectors.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "model/text_file.h"

// fccp reads ahead on a second thread unless told not to; vector files are small.
// Its error classes copy file names with strncpy, which GCC's middle end warns about once inlined here.
#define CSV_IO_NO_THREAD
#if defined(__clang__)
#include <libfccp/csv.h>
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop
#endif

#include "model/sram_layout.h"

namespace s2 {

namespace {

// Lines whose first non-blank character is '#', and blank lines, are comments. fccp still counts them,
// so get_file_line() is the true line number.
struct HashOrBlankLineComment {
  static bool is_comment(const char* line) {
    while (*line == ' ' || *line == '\t') ++line;
    return *line == '#' || *line == '\0';
  }
};

// The columns of contract 1, plus our optional `data` (test-data pattern) and the thesis's measured clocks
// `hdl_clocks` / `thesis_sim_clocks` (reference figures for the RTL). The order here is read_row's order.
enum Col {
  kId, kOp, kPe, kWi, kHi, kD, kWf, kHf, kC, kStride, kWA, kHA, kWB, kHB, kASrc, kSeed, kData, kHdl, kSim, kNumCols
};
constexpr std::array<const char*, kNumCols> kColNames = {
    "id",  "op",  "pe",  "Wi",    "Hi",   "D",    "Wf",   "Hf",         "C",  "stride",
    "W_A", "H_A", "W_B", "H_B",   "a_src", "seed", "data", "hdl_clocks", "thesis_sim_clocks"};
constexpr std::array<Col, 6> kConvCols = {kWi, kHi, kD, kWf, kHf, kC};
constexpr std::array<Col, 4> kMmCols = {kWA, kHA, kWB, kHB};

using Reader = io::CSVReader<kNumCols, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>,
                             io::throw_on_overflow, HashOrBlankLineComment>;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string where(const std::string& file, int line) {
  if (file.empty()) return "";
  if (line <= 0) return file + ": ";
  return fmt::format("{}:{}: ", file, line);
}

VectorProblem problem(const std::string& file, int line, const std::string& field, const std::string& text) {
  VectorProblem p;
  p.file = file;
  p.line = line;
  p.field = field;
  p.message = where(file, line) + text;
  return p;
}

VectorProblem field_problem(const std::string& file, int line, const std::string& field, const std::string& expected,
                            const std::string& got) {
  // a long cell is shown by its start, so that one bad cell cannot flood the terminal
  std::size_t cut = std::min<std::size_t>(got.size(), 48);
  while (cut > 0 && cut < got.size() && (static_cast<unsigned char>(got[cut]) & 0xC0) == 0x80) --cut;  // whole characters
  std::string shown;
  for (char c : got.size() <= 64 ? got : got.substr(0, cut))  // control characters as escapes
    shown += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", static_cast<unsigned char>(c)) : std::string(1, c);
  if (got.size() > 64) shown += fmt::format("...' ({} bytes)", got.size());
  return problem(file, line, field,
                 fmt::format("field '{}': expected {}, got '{}", field, expected, shown) + (got.size() <= 64 ? "'" : ""));
}

// Digits only, no sign; false on anything else or on overflow of uint64.
bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

// One data row read into a task, field by field, every problem collected (a field's problem makes the row's
// task invalid; the other fields are still read, so that every problem of the row is reported).
class RowParser {
 public:
  RowParser(const std::string& file, int line, const std::array<std::string, kNumCols>& cells,
            std::vector<VectorProblem>& problems)
      : file_(file), line_(line), cells_(cells), problems_(problems) {}

  bool ok() const { return ok_; }

  // id: required, printable, unique in the file (`id_lines`: each id's line so far)
  void id(Task& t, std::map<std::string, int>& id_lines) {
    t.id = cells_[kId];
    if (t.id.empty()) {
      fail(kId, "a task name");
    } else if (t.id.size() > kMaxTaskIdBytes) {
      fail(kId, fmt::format("a task id of at most {} bytes", kMaxTaskIdBytes));
    } else if (std::any_of(t.id.begin(), t.id.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      fail(kId, "a task id without control characters");
    } else if (auto it = id_lines.find(t.id); it != id_lines.end()) {
      fail(kId, fmt::format("a unique task id (this one is already used at line {})", it->second));
    } else {
      id_lines.emplace(t.id, line_);
    }
  }
  // op: conv | mm; false if it is neither
  bool op(Task& t) {
    const std::string op = lower(cells_[kOp]);
    if (op == "conv") {
      t.op = Op::Conv;
    } else if (op == "mm") {
      t.op = Op::Mm;
    } else {
      fail(kOp, "conv or mm");
      return false;
    }
    return true;
  }
  // The optional cells that say where and on what the task runs: pe, a_src, seed, data, and the thesis's
  // reference clocks.
  void options(Task& t) {
    if (!empty(kPe)) {
      const std::string pe = lower(cells_[kPe]);
      if (pe == "all") t.pe = -1;
      else if (pe.size() == 1 && pe[0] >= '0' && pe[0] < '0' + kPesPerQpe) t.pe = pe[0] - '0';
      else fail(kPe, "all or 0..3");
    }
    if (!empty(kASrc)) {
      const std::string a = lower(cells_[kASrc]);
      const std::string prefix = "neighbor:";
      if (a == "local")
        t.a_src_shift = -1;
      else if (a.size() == prefix.size() + 1 && a.compare(0, prefix.size(), prefix) == 0 && a.back() >= '0' &&
               a.back() < '0' + kPesPerQpe)
        t.a_src_shift = a.back() - '0';
      else
        fail(kASrc, "local or neighbor:S with S in 0..3");
    }
    if (!empty(kSeed)) {
      std::uint64_t seed = 0;
      if (parse_u64(cells_[kSeed], seed)) t.seed = seed;
      else fail(kSeed, fmt::format("a non-negative integer of at most {}", std::numeric_limits<std::uint64_t>::max()));
    }
    if (!empty(kData)) {
      const std::string d = lower(cells_[kData]);
      if (d == "random") t.data = DataPattern::Random;
      else if (d == "min") t.data = DataPattern::AllMin;
      else if (d == "max") t.data = DataPattern::AllMax;
      else if (d == "minmax") t.data = DataPattern::MinMax;
      else fail(kData, "random, min, max or minmax");
    }
    for (auto [col, dst] : {std::pair{kHdl, &t.thesis_hdl_clocks}, std::pair{kSim, &t.thesis_sim_clocks}}) {
      if (empty(col)) continue;
      if (!parse_u64(cells_[col], *dst) || *dst == 0) fail(col, "a positive number of PE clocks");
    }
  }
  // The shape cells of t.op (`present`: the header's columns); false if the shape is incomplete or a dimension
  // is not a positive int (a shape column the header lacks is reported once, at the header). A stride other
  // than 1 is a problem of the row, but the shape's checks still run.
  bool shape(Task& t, const std::array<bool, kNumCols>& present) {
    bool shape_ok = true;
    auto dimensions = [&](const auto& cols, const auto& dst) {
      for (std::size_t i = 0; i < cols.size(); ++i)
        if (present[cols[i]])
          shape_ok = positive(cols[i], *dst[i]) && shape_ok;
        else
          shape_ok = false;
    };
    if (t.op == Op::Conv) {
      dimensions(kConvCols, std::array{&t.conv.Wi, &t.conv.Hi, &t.conv.D, &t.conv.Wf, &t.conv.Hf, &t.conv.C});
      t.conv.stride = 1;
      if (!empty(kStride)) {
        std::uint64_t s = 0;
        if (!parse_u64(cells_[kStride], s) || s != 1)
          fail(kStride, "1 (the MLA runs stride 1 only; a stride-2 layer runs at stride 1 and keeps every second result)");
      }
    } else {
      dimensions(kMmCols, std::array{&t.mm.W_A, &t.mm.H_A, &t.mm.W_B, &t.mm.H_B});
    }
    return shape_ok;
  }
  // Problems found across the row's fields (validate_task), in their order.
  void add(std::vector<VectorProblem> more) {
    if (!more.empty()) ok_ = false;
    for (auto& p : more) problems_.push_back(std::move(p));
  }

 private:
  bool empty(Col c) const { return cells_[c].empty(); }
  // A positive integer that fits an int.
  bool positive(Col c, int& out) {
    std::uint64_t v = 0;
    const std::string& s = cells_[c];
    if (!parse_u64(s, v) || v == 0) {
      fail(c, "a positive integer");
      return false;
    }
    if (v > static_cast<std::uint64_t>(INT_MAX)) {
      fail(c, fmt::format("a positive integer of at most {}", INT_MAX));
      return false;
    }
    out = static_cast<int>(v);
    return true;
  }
  void fail(Col c, const std::string& expected) {
    problems_.push_back(field_problem(file_, line_, kColNames[c], expected, cells_[c]));
    ok_ = false;
  }

  const std::string& file_;
  int line_;
  const std::array<std::string, kNumCols>& cells_;
  std::vector<VectorProblem>& problems_;
  bool ok_ = true;
};

std::uint64_t align64(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

VectorError::VectorError(std::vector<VectorProblem> problems)
    : std::runtime_error([&] {
        std::string text;
        for (std::size_t i = 0; i < problems.size(); ++i) {
          if (i) text += '\n';
          text += problems[i].message;
        }
        return text;
      }()),
      problems_(std::move(problems)) {}

std::string shape_string(const Task& t) {
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    return fmt::format("[{},{},{}]x[{},{},{},{}]", s.Wi, s.Hi, s.D, s.Wf, s.Hf, s.D, s.C);
  }
  const MmShape& s = t.mm;
  return fmt::format("[{},{}]x[{},{}]", s.W_A, s.H_A, s.W_B, s.H_B);
}

std::uint64_t sram_footprint_bytes(const Task& t, const HwConfig& cfg) {
  const std::uint64_t rows = static_cast<std::uint64_t>(std::max(cfg.mac_rows, 1));
  auto u = [](int v) { return static_cast<std::uint64_t>(std::max(v, 0)); };
  // the same placement as sram_layout(), in 64 bits: B, then A, then results, each on a 16-byte boundary
  std::uint64_t b = 0, a = 0, o = 0;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    const std::uint64_t groups = (u(s.C) + rows - 1) / rows;
    b = align64(u(s.Wi), 16) * u(s.Hi) * u(s.D);
    a = align64(u(s.D) * u(s.Hf) * u(s.Wf) * rows, 16) * groups;
    const std::uint64_t wo = s.Wi >= s.Wf ? u(s.Wi - s.Wf + 1) : 0, ho = s.Hi >= s.Hf ? u(s.Hi - s.Hf + 1) : 0;
    o = align64(wo, 4) * ho * groups * rows * 4;
  } else {
    const MmShape& s = t.mm;
    const std::uint64_t groups = (u(s.H_A) + rows - 1) / rows;
    b = align64(u(s.W_B), 16) * align64(u(s.H_B), 4);
    a = align64(u(s.W_A) * rows, 16) * groups;
    o = align64(u(s.W_B), 16) * groups * rows * 4;
  }
  const std::uint64_t total = align64(align64(b, 16) + a, 16) + o;
  // Within 32 bits the layout itself is the authority (and must agree).
  if (total < (std::uint64_t(1) << 31)) return sram_layout(t, cfg).total_bytes();
  return total;
}

std::vector<VectorProblem> validate_task(const Task& t, const HwConfig& cfg) {
  std::vector<VectorProblem> out;
  const std::string& f = t.source_file;
  const int line = t.source_line;
  // from a file: "FILE:LINE: field ..."; otherwise "task 'ID': field ..."
  const std::string who = f.empty() ? fmt::format("task '{}': ", t.id) : std::string();
  auto field = [&](const char* name, const std::string& expected, long long got) {
    out.push_back(problem(f, line, name, who + fmt::format("field '{}': expected {}, got '{}'", name, expected, got)));
  };
  if (t.pe < -1 || t.pe >= kPesPerQpe) field("pe", "all or 0..3", t.pe);
  if (t.a_src_shift < -1 || t.a_src_shift >= kPesPerQpe)
    out.push_back(problem(
        f, line, "a_src",
        who + fmt::format("field 'a_src': expected local or neighbor:S with S in 0..3, got '{}'", a_src_string(t))));
  bool shape_ok = true;
  auto positive = [&](const char* name, int v) {
    if (v <= 0) {
      field(name, "a positive integer", v);
      shape_ok = false;
    }
  };
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    positive("Wi", s.Wi);
    positive("Hi", s.Hi);
    positive("D", s.D);
    positive("Wf", s.Wf);
    positive("Hf", s.Hf);
    positive("C", s.C);
    if (s.stride != 1) {
      field("stride", "1 (the MLA runs stride 1 only; a stride-2 layer runs at stride 1 and keeps every second result)",
            s.stride);
      shape_ok = false;
    }
    const bool dims_ok = shape_ok;
    if (dims_ok && s.Wf > s.Wi) {
      field("Wf", fmt::format("at most Wi = {} (the filter must fit the input)", s.Wi), s.Wf);
      shape_ok = false;
    }
    if (dims_ok && s.Hf > s.Hi) {
      field("Hf", fmt::format("at most Hi = {} (the filter must fit the input)", s.Hi), s.Hf);
      shape_ok = false;
    }
  } else {
    const MmShape& s = t.mm;
    positive("W_A", s.W_A);
    positive("H_A", s.H_A);
    positive("W_B", s.W_B);
    positive("H_B", s.H_B);
    if (shape_ok && s.W_A != s.H_B) {
      field("H_B", fmt::format("H_B = W_A = {} (A's width must equal B's height)", s.W_A), s.H_B);
      shape_ok = false;
    }
  }
  if (shape_ok) {
    const std::uint64_t bytes = sram_footprint_bytes(t, cfg);
    const std::uint64_t budget = static_cast<std::uint64_t>(std::max(cfg.sram_mla_budget_bytes, 0));
    if (bytes > budget) {
      std::string parts;
      if (bytes < (std::uint64_t(1) << 31)) {
        const SramLayout l = sram_layout(t, cfg);
        parts = fmt::format(" (operand B {} + operand A {} + results {}, each 16-byte aligned)", l.b_bytes, l.a_bytes,
                            l.o_bytes);
      }
      out.push_back(problem(f, line, "",
                            fmt::format("task '{}' ({} {}, {} MAC rows): SRAM footprint {} bytes after alignment{} "
                                        "exceeds the MLA budget of {} bytes",
                                        t.id, to_string(t.op), shape_string(t), cfg.mac_rows, bytes, parts, budget)));
    }
  }
  return out;
}

namespace {

// A task-vector file read row by row: the header (which columns there are), each data row into a task, then
// what only the whole file shows (shape columns a row's op needs, no tasks at all). Problems are collected
// and reported together, header first; a problem that leaves nothing after it to trust throws at once.
class TaskVectorFile {
 public:
  TaskVectorFile(const std::string& text, const std::string& name, const HwConfig& cfg)
      : name_(name), cfg_(cfg), in_(name, text.data(), text.data() + text.size()) {}

  std::vector<Task> read() {
    read_header();
    std::array<std::string, kNumCols> cells;
    for (;;) {
      int line = 0;
      const Cells got = read_cells(cells, line);
      if (got == Cells::End) break;
      if (got == Cells::Broken) continue;
      if (std::optional<Task> t = task_of_row(cells, line)) tasks_.push_back(std::move(*t));
      if (tasks_.size() > kMaxTasks) {
        problems_.push_back(problem(name_, line, "", fmt::format("expected at most {} tasks in one file", kMaxTasks)));
        break;
      }
    }
    check_whole_file();
    return std::move(tasks_);
  }

 private:
  enum class Cells { Row, Broken, End };

  // The header: which of the columns are there. A header that cannot be read throws.
  void read_header() {
    try {
      in_.read_header(io::ignore_extra_column | io::ignore_missing_column, kColNames[kId], kColNames[kOp], kColNames[kPe],
                      kColNames[kWi], kColNames[kHi], kColNames[kD], kColNames[kWf], kColNames[kHf], kColNames[kC],
                      kColNames[kStride], kColNames[kWA], kColNames[kHA], kColNames[kWB], kColNames[kHB], kColNames[kASrc],
                      kColNames[kSeed], kColNames[kData], kColNames[kHdl], kColNames[kSim]);
      header_line_ = static_cast<int>(in_.get_file_line());
    } catch (const io::error::header_missing&) {
      throw VectorError({problem(name_, 0, "", "no header line (expected a line naming the columns, e.g. id,op,pe,...)")});
    } catch (const io::error::duplicated_column_in_header& e) {
      VectorProblem p;
      p.file = name_;
      p.line = static_cast<int>(in_.get_file_line());
      p.header = true;
      p.field = e.column_name;
      p.message = fmt::format("{}:{}(header): column '{}' appears twice", name_, p.line, e.column_name);
      throw VectorError({std::move(p)});
    } catch (const io::error::base& e) {
      throw VectorError({problem(name_, static_cast<int>(in_.get_file_line()), "", e.what())});
    }
    for (int c = 0; c < kNumCols; ++c) present_[c] = in_.has_column(kColNames[c]);
    if (!present_[kId]) missing_column(kId, "every task needs an id");
    if (!present_[kOp]) missing_column(kOp, "every task needs an op: conv or mm");
  }

  // The next data row's cells (and its line): Row, Broken (a problem recorded, go on with the next line) or
  // End (the end of the file, or a problem after which nothing can be trusted).
  Cells read_cells(std::array<std::string, kNumCols>& cells, int& line) {
    for (auto& c : cells) c.clear();
    try {
      if (!in_.read_row(cells[kId], cells[kOp], cells[kPe], cells[kWi], cells[kHi], cells[kD], cells[kWf], cells[kHf],
                        cells[kC], cells[kStride], cells[kWA], cells[kHA], cells[kWB], cells[kHB], cells[kASrc],
                        cells[kSeed], cells[kData], cells[kHdl], cells[kSim]))
        return Cells::End;
      line = static_cast<int>(in_.get_file_line());
      return Cells::Row;
    } catch (const io::error::too_few_columns&) {
      row_problem("expected as many comma-separated cells as the header has, got fewer");
    } catch (const io::error::too_many_columns&) {
      row_problem("expected as many comma-separated cells as the header has, got more");
    } catch (const io::error::escaped_string_not_closed&) {
      row_problem("expected a closing '\"' for a quoted cell, got the end of the line");
    } catch (const io::error::base& e) {
      // e.g. a line over fccp's length limit: nothing after it can be trusted
      row_problem(e.what());
      return Cells::End;
    }
    return Cells::Broken;
  }
  void row_problem(const std::string& text) {
    problems_.push_back(problem(name_, static_cast<int>(in_.get_file_line()), "", text));
  }

  // The row's task, if every field is right and the task passes validate_task.
  std::optional<Task> task_of_row(const std::array<std::string, kNumCols>& cells, int line) {
    RowParser row(name_, line, cells, problems_);
    Task t;
    t.source_file = name_;
    t.source_line = line;
    if (present_[kId]) row.id(t, id_lines_);
    const bool op_known = present_[kOp] && row.op(t);
    if (op_known) {
      int& first = t.op == Op::Conv ? first_conv_line_ : first_mm_line_;
      if (!first) first = line;
    }
    row.options(t);
    if (!op_known || !row.shape(t, present_)) return std::nullopt;
    row.add(validate_task(t, cfg_));
    if (!row.ok()) return std::nullopt;
    return t;
  }

  // What only the whole file shows; then every problem, header problems first, then in line order (stable: a
  // row's problems keep their column order).
  void check_whole_file() {
    if (first_conv_line_)
      for (Col c : kConvCols)
        if (!present_[c]) missing_column(c, fmt::format("needed for op=conv, first at line {}", first_conv_line_));
    if (first_mm_line_)
      for (Col c : kMmCols)
        if (!present_[c]) missing_column(c, fmt::format("needed for op=mm, first at line {}", first_mm_line_));
    if (problems_.empty() && tasks_.empty() && present_[kId] && present_[kOp])
      problems_.push_back(problem(name_, 0, "", "no tasks (only a header, comments and blank lines)"));
    if (problems_.empty()) return;
    std::stable_sort(problems_.begin(), problems_.end(), [](const VectorProblem& a, const VectorProblem& b) {
      if (a.header != b.header) return a.header;
      return a.line < b.line;
    });
    throw VectorError(std::move(problems_));
  }

  void missing_column(Col c, const std::string& why) {
    VectorProblem p;
    p.file = name_;
    p.line = header_line_;
    p.header = true;
    p.field = kColNames[c];
    p.message = fmt::format("{}:{}(header): missing column '{}' ({})", name_, header_line_, kColNames[c], why);
    problems_.push_back(std::move(p));
  }

  const std::string& name_;
  const HwConfig& cfg_;
  Reader in_;
  int header_line_ = 0;
  std::array<bool, kNumCols> present_{};
  // conv/mm shape columns are needed only if a row has that op: the first such row
  int first_conv_line_ = 0, first_mm_line_ = 0;
  std::map<std::string, int> id_lines_;
  std::vector<Task> tasks_;
  std::vector<VectorProblem> problems_;
};

}  // namespace

std::vector<Task> parse_task_vectors(const std::string& text, const std::string& name, const HwConfig& cfg) {
  if (const auto bad = first_invalid_utf8(text)) {
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n'));
    throw VectorError({problem(name, line, "",
                               fmt::format("expected UTF-8 text, got byte 0x{:02X}", static_cast<unsigned char>(text[*bad])))});
  }
  return TaskVectorFile(text, name, cfg).read();
}

std::vector<Task> read_task_vectors(const std::string& path, const HwConfig& cfg) {
  std::string text;
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw VectorError({problem(path, 0, "", "cannot open the task-vector file")});
  }
  try {
    text = read_text_file(path, kMaxTaskFileBytes, "task-vector file");
  } catch (const std::runtime_error& e) {
    // read_text_file's message names the file already
    VectorProblem p;
    p.file = path;
    p.message = e.what();
    throw VectorError({std::move(p)});
  }
  return parse_task_vectors(text, path, cfg);
}

std::string task_vector_header() { return "id,op,pe,Wi,Hi,D,Wf,Hf,C,stride,W_A,H_A,W_B,H_B,a_src,seed,data"; }

std::string task_vector_row(const Task& t) {
  std::string id = t.id;
  if (id.find_first_of(",\"\n") != std::string::npos) {
    std::string q = "\"";
    for (char c : id) {
      if (c == '"') q += '"';
      q += c;
    }
    id = q + "\"";
  }
  const std::string pe = t.all_pes() ? "all" : std::to_string(t.pe);
  std::string shape;
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    shape = fmt::format("{},{},{},{},{},{},{},,,,", s.Wi, s.Hi, s.D, s.Wf, s.Hf, s.C, s.stride);
  } else {
    const MmShape& s = t.mm;
    shape = fmt::format(",,,,,,,{},{},{},{}", s.W_A, s.H_A, s.W_B, s.H_B);
  }
  return fmt::format("{},{},{},{},{},{},{}", id, to_string(t.op), pe, shape, a_src_string(t), t.seed,
                     to_string(t.data));
}

}  // namespace s2
