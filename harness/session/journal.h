// Nothing finished is lost, nothing taken back blindly: a JSON Lines journal that takes one record per
// finished task, block run or probe as it finishes (written at once, so a run killed at any point leaves every
// finished record whole), each record sealed with a checksum of its content and a fingerprint of what made it;
// one run per journal (flock); a resumed journal is continued, never emptied; and a stop on SIGINT, SIGTERM,
// SIGHUP or SIGPIPE after the task or block in hand, so that the run still writes what finished.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace s2 {

class Journal {
 public:
  Journal() = default;
  // Opens the journal at `path` for this run and locks it (flock) against every other run: a journal another
  // run holds is refused (std::runtime_error naming it). Nothing is written yet (start() does). If `resumed`
  // is the same file as `path` (--resume of the journal the run writes), the journal is continued: its
  // records stay, new ones are appended after them. An empty path keeps the journal off.
  explicit Journal(const std::string& path, const std::string& resumed = "");
  ~Journal();
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  bool on() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // true when this run appends to the journal it resumed (its header and records are already there)
  bool continues() const { return continues_; }
  // The run's first record: empties a journal this run does not continue and writes `header`; a continued
  // journal keeps its own (read_journal_of_run checked that it names this run).
  void start(const nlohmann::ordered_json& header);
  // One record, one line, written at once, with `fingerprint` (what produced it: journal_fingerprint) and
  // a checksum of the line. A write that fails (a full disk, a file-size limit) is remembered: failed() and
  // error() say so, later records are not written, and the run stops after the task in hand (exit 3).
  void append(const nlohmann::ordered_json& record, const std::string& fingerprint);
  void append(const nlohmann::json& record, const std::string& fingerprint);
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void write_line(nlohmann::ordered_json record);
  // cuts a last line without its newline (a record a kill stopped) off the `size`-byte journal
  void truncate_cut_line(std::int64_t size);
  std::string path_;
  int fd_ = -1;
  bool continues_ = false;
  std::string error_;
};

// Where the journal goes: `journal` if given, else beside the JSON report (F.jsonl for --json F), else
// nowhere ("").
std::string journal_path(const std::string& json_out, const std::string& journal);

// What produced a record: a hash of `definition` (the task's contract-1 row, the block's operations and split,
// the probe's task, with every setting its result depends on), the configuration's hash and the tool's
// version. A record whose fingerprint is not the one the run computes for the same task is run again.
std::string journal_fingerprint(const std::string& definition, const std::string& config_hash);
// The checksum a record's line carries ("checksum"): a hash of the record without it.
std::string record_checksum(const nlohmann::ordered_json& record);

// The records of a journal, in order, as they stand (checksums not checked). A last line cut short (a run
// killed while writing it) is dropped and counted in `*cut` if given; a malformed line elsewhere is an error
// naming the file and line. Journals are regular files of at most kMaxJournalBytes.
inline constexpr std::uintmax_t kMaxJournalBytes = 1ull << 30;
std::vector<nlohmann::ordered_json> read_journal(const std::string& path, int* cut = nullptr);
// The same for a journal's text; `path` names it in messages. Every record must be a JSON object.
std::vector<nlohmann::ordered_json> parse_journal(const std::string& text, const std::string& path, int* cut = nullptr);

// A record a resumed journal holds, whole (its checksum holds), without its checksum and fingerprint.
struct JournalRecord {
  nlohmann::ordered_json record;
  std::string fingerprint;
  std::size_t line = 0;  // in the file, 1-based
};
struct ResumedJournal {
  std::vector<JournalRecord> records;
  std::size_t damaged = 0;  // lines after the first that are cut, not JSON, or fail their checksum: ignored
};
// The verified records of `path` after its first, which must name the same run as `header` (the record the run
// writes first): the same "journal" (the command) and the same value of every other field of `header`.
// Unless `path` is the file `own` writes (which `own` has locked), the journal is locked for reading: a
// journal another run is writing is refused. Throws std::runtime_error naming the file, and for a journal of
// another run the field that differs.
ResumedJournal read_journal_of_run(const std::string& path, const nlohmann::ordered_json& header,
                                   const Journal* own = nullptr);
// The same for a journal's text; `path` names it in messages (the fuzz target calls it).
ResumedJournal verify_journal(const std::string& text, const std::string& path, const nlohmann::ordered_json& header);

struct ResumeTally;
// A run's journal and what it resumes: opens `path` for the run into `journal` (locked, nothing written yet),
// and with `resume` given reads that journal verified (read_journal_of_run), noting it and its damaged lines
// in `tally`. Throws as they do.
ResumedJournal open_run_journal(Journal& journal, const std::string& path, const std::string& resume,
                                const nlohmann::ordered_json& header, ResumeTally& tally);

// How a resume went, for the console and the report ("resume" in the JSON reports of a resumed run).
struct ResumeTally {
  std::string journal;       // the journal resumed ("" if none)
  std::size_t taken = 0;     // records taken instead of running their task
  std::size_t damaged = 0;   // lines ignored: cut, not JSON, or failing their checksum (their tasks run again)
  std::size_t changed = 0;   // records made by another definition, configuration or version (run again)
  std::size_t unknown = 0;   // whole records of tasks this run does not have (ignored)
  bool on() const { return !journal.empty(); }
  // "resumed: 5 tasks from J are not run again; 2 records run again: 1 line damaged (cut or checksum), ..."
  std::string line(const std::string& what) const;
  nlohmann::ordered_json json() const;
};

// While one lives, SIGINT, SIGTERM, SIGHUP and SIGPIPE do not kill the process: they are remembered, and the
// run asks `signal()` between tasks or blocks and stops. A second SIGINT, SIGTERM or SIGHUP kills as usual;
// SIGPIPE (every write to a closed pipe raises it again) never does: the writes fail instead. SIGXFSZ is
// ignored for good, so that a write beyond the file-size limit fails with EFBIG instead of killing the run.
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  static int signal();  // the signal received, 0 if none
  // what a run stopped by `sig` exits with (128 + sig: 129 SIGHUP, 130 SIGINT, 141 SIGPIPE, 143 SIGTERM)
  static int exit_code(int sig) { return 128 + sig; }
};

// The exit code of a run whose reports have been written (README.md, "Exit codes"): 128 + the signal that
// stopped it; 3 if its journal failed or an output was not written (said on `err`; `what` is "run", "bench",
// ...); else 0 if every check passed, 1 if not.
int finished_run_exit_code(int signal, const Journal& journal, bool outputs_written, bool passed, const std::string& what,
                           std::ostream& err);

}  // namespace s2
