// Nothing finished is lost: a JSON Lines journal that takes one record per finished task or block as it
// finishes (flushed at once, so a run killed at any point leaves every finished record whole), and a stop
// on SIGINT / SIGTERM after the task or block in hand, so that the run still writes what finished.
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace s2 {

class Journal {
 public:
  Journal() = default;
  // Starts the journal at `path`, emptying it; an empty path keeps the journal off. Throws
  // std::runtime_error if the file cannot be written.
  explicit Journal(const std::string& path);
  bool on() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // One record, one line, flushed; throws std::runtime_error if the write fails.
  void append(const nlohmann::ordered_json& record) { append_line(record.dump()); }
  void append(const nlohmann::json& record) { append_line(record.dump()); }

 private:
  void append_line(const std::string& line);
  std::string path_;
  std::ofstream file_;
};

// Where the journal goes: `journal` if given, else beside the JSON report (F.jsonl for --json F), else
// nowhere ("").
std::string journal_path(const std::string& json_out, const std::string& journal);

// The records of a journal, in order. A last line cut short (a run killed while writing it) is dropped and
// counted in `*cut` if given; a malformed line elsewhere is an error naming the file and line.
inline constexpr std::uintmax_t kMaxJournalBytes = 1ull << 30;
std::vector<nlohmann::ordered_json> read_journal(const std::string& path, int* cut = nullptr);
// The records of `path` after its first, which must name the same run as `header` (the record the run
// writes first): the same "journal" (the command) and the same value of every other field of `header`.
// Throws std::runtime_error naming the file, and for a journal of another run the field that differs.
std::vector<nlohmann::ordered_json> read_journal_of_run(const std::string& path, const nlohmann::ordered_json& header);
// The same for a journal's text; `path` names it in messages. Every record must be a JSON object.
std::vector<nlohmann::ordered_json> parse_journal(const std::string& text, const std::string& path, int* cut = nullptr);

// While one lives, SIGINT and SIGTERM do not kill the process: they are remembered, and the run asks
// `signal()` between tasks or blocks and stops. A second signal of the same kind kills as usual.
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  static int signal();  // the signal received, 0 if none
  // what a run stopped by `sig` exits with (128 + sig: 130 for SIGINT, 143 for SIGTERM)
  static int exit_code(int sig) { return 128 + sig; }
};

}  // namespace s2
