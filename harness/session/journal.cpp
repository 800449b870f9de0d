#include "harness/session/journal.h"

#include "harness/outputs/output_files.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/hw_config.h"
#include "model/text_file.h"

namespace s2 {

namespace {

// Whether two paths name the same file (device and inode); false if either cannot be looked up.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (a.empty() || b.empty() || ::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot write the journal " + path + " (" + std::strerror(n < 0 ? errno : EIO) + ")");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

Journal::Journal(const std::string& path, const std::string& resumed) : path_(path) {
  if (path_.empty()) return;
  // not emptied before the lock is held: a second run must not destroy the journal the first is writing
  // read and write: a continued journal's cut last line is found by reading it (start)
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot write the journal " + path_ + " (" + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK)
      throw std::runtime_error("the journal " + path_ + " is in use by another run (it holds its lock); wait for that run "
                               "or give this one another --json or --journal");
    throw std::runtime_error("cannot lock the journal " + path_ + " (" + std::strerror(e) + ")");
  }
  continues_ = same_file(path_, resumed);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

Journal::Journal(Journal&& other) noexcept { *this = std::move(other); }

Journal& Journal::operator=(Journal&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    continues_ = other.continues_;
    error_ = std::move(other.error_);
    other.fd_ = -1;
    other.path_.clear();
  }
  return *this;
}

void Journal::truncate_cut_line(std::int64_t size) {
  char buf[4096];
  std::int64_t end = size;  // the file's bytes [0, end) hold no newline after `keep`
  while (end > 0) {
    const std::int64_t from = end > std::int64_t(sizeof buf) ? end - std::int64_t(sizeof buf) : 0;
    const ssize_t n = ::pread(fd_, buf, static_cast<std::size_t>(end - from), from);
    if (n != end - from) throw std::runtime_error("cannot read the journal " + path_ + " (" + std::strerror(n < 0 ? errno : EIO) + ")");
    for (std::int64_t i = end - from; i > 0; --i)
      if (buf[i - 1] == '\n') {
        if (from + i == size) return;  // it ends with a whole line
        if (::ftruncate(fd_, from + i) != 0)
          throw std::runtime_error("cannot write the journal " + path_ + " (" + std::strerror(errno) + ")");
        return;
      }
    end = from;
  }
  // no newline at all: not even the first record is whole
  if (::ftruncate(fd_, 0) != 0) throw std::runtime_error("cannot write the journal " + path_ + " (" + std::strerror(errno) + ")");
}

void Journal::start(const nlohmann::ordered_json& header) {
  if (!on()) return;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw std::runtime_error("cannot write the journal " + path_ + " (" + std::strerror(errno) + ")");
  if (continues_) {
    // a run killed while writing left its last line cut (a record longer than a page is written in several
    // steps, and SIGKILL can stop it between them): that partial record is cut off, so the next record starts
    // on a line of its own and the journal stays whole
    if (S_ISREG(st.st_mode) && st.st_size > 0) truncate_cut_line(st.st_size);
    return;
  }
  if (S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0)
    throw std::runtime_error("cannot write the journal " + path_ + " (" + std::strerror(errno) + ")");
  write_line(header);
}

void Journal::append(const nlohmann::ordered_json& record, const std::string& fingerprint) {
  if (!on() || failed()) return;
  nlohmann::ordered_json r = record;
  r.erase("checksum");
  r["fingerprint"] = fingerprint;
  try {
    write_line(std::move(r));
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void Journal::append(const nlohmann::json& record, const std::string& fingerprint) {
  append(nlohmann::ordered_json::parse(record.dump()), fingerprint);
}

void Journal::write_line(nlohmann::ordered_json record) {
  record.erase("checksum");
  record["checksum"] = record_checksum(record);
  // one write(2) per line, no buffer in between: a kill leaves every earlier line whole
  write_all(fd_, record.dump() + "\n", path_);
}

std::string journal_path(const std::string& json_out, const std::string& journal) {
  if (!journal.empty()) return journal;
  return json_out.empty() ? "" : json_out + ".jsonl";
}

std::string journal_fingerprint(const std::string& definition, const std::string& config_hash) {
  return text_hash(definition + "\n" + config_hash + "\n" + tool_version());
}

std::string record_checksum(const nlohmann::ordered_json& record) {
  if (!record.contains("checksum")) return text_hash(record.dump());
  nlohmann::ordered_json r = record;
  r.erase("checksum");
  return text_hash(r.dump());
}

std::vector<nlohmann::ordered_json> read_journal(const std::string& path, int* cut) {
  return parse_journal(read_file_bounded(path, kMaxJournalBytes, "journal", true), path, cut);
}

namespace {

// A journal's lines, and whether the last was cut (no newline after it).
std::vector<std::string> journal_lines(const std::string& text, bool* ends_cut) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  *ends_cut = !text.empty() && text.back() != '\n';
  return lines;
}

}  // namespace

ResumedJournal read_journal_of_run(const std::string& path, const nlohmann::ordered_json& header, const Journal* own) {
  // a journal another run is writing is not read half written: its lock is asked for, shared
  int lock_fd = -1;
  if (!(own && own->on() && same_file(own->path(), path))) {
    lock_fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (lock_fd >= 0 && ::flock(lock_fd, LOCK_SH | LOCK_NB) != 0) {
      ::close(lock_fd);
      throw std::runtime_error(path + ": in use by another run (it holds the journal's lock); resume it when that run has stopped");
    }
  }
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);
    }
  } unlock{lock_fd};
  return verify_journal(read_file_bounded(path, kMaxJournalBytes, "journal", true), path, header);
}

ResumedJournal verify_journal(const std::string& text, const std::string& path, const nlohmann::ordered_json& header) {
  bool ends_cut = false;
  const std::vector<std::string> lines = journal_lines(text, &ends_cut);
  const nlohmann::ordered_json& command = header.at("journal");
  const std::string name = command.get<std::string>();
  std::size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  nlohmann::ordered_json head;
  if (first < lines.size()) {
    try {
      head = nlohmann::ordered_json::parse(lines[first]);
    } catch (const nlohmann::json::exception&) {
    }
  }
  if (!head.is_object() || !head.contains("journal") || head.at("journal") != command)
    throw std::runtime_error(path + ": not a " + name + " journal (its first record names no " + name + " run)");
  if (!head.contains("checksum") || head.at("checksum") != record_checksum(head))
    throw std::runtime_error(path + ":" + std::to_string(first + 1) +
                             ": the first record fails its checksum (edited, or written by an older version)");
  head.erase("checksum");
  for (const auto& [key, value] : header.items()) {
    const nlohmann::ordered_json theirs = head.contains(key) ? head.at(key) : nlohmann::ordered_json();
    if (theirs != value)
      throw std::runtime_error(path + ": a journal of another run: its " + key + " is " + theirs.dump() + ", this run's " +
                               value.dump());
  }
  ResumedJournal r;
  for (std::size_t i = first + 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    nlohmann::ordered_json rec;
    try {
      rec = nlohmann::ordered_json::parse(lines[i]);
    } catch (const nlohmann::json::exception&) {  // cut by a kill, or edited
      ++r.damaged;
      continue;
    }
    if (!rec.is_object() || !rec.contains("checksum") || rec.at("checksum") != record_checksum(rec) ||
        !rec.contains("fingerprint") || !rec.at("fingerprint").is_string()) {
      ++r.damaged;
      continue;
    }
    JournalRecord jr;
    jr.fingerprint = rec.at("fingerprint").get<std::string>();
    rec.erase("checksum");
    rec.erase("fingerprint");
    jr.record = std::move(rec);
    jr.line = i + 1;
    r.records.push_back(std::move(jr));
  }
  (void)ends_cut;  // a cut last line is one of the damaged lines
  return r;
}

ResumedJournal open_run_journal(Journal& journal, const std::string& path, const std::string& resume,
                                const nlohmann::ordered_json& header, ResumeTally& tally) {
  journal = Journal(path, resume);
  if (resume.empty()) return {};
  tally.journal = resume;
  ResumedJournal r = read_journal_of_run(resume, header, &journal);
  tally.damaged = r.damaged;
  return r;
}

std::vector<nlohmann::ordered_json> parse_journal(const std::string& text, const std::string& path, int* cut) {
  bool ends_cut = false;
  const std::vector<std::string> lines = journal_lines(text, &ends_cut);
  if (cut) *cut = 0;
  std::vector<nlohmann::ordered_json> records;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const std::string where = path + ":" + std::to_string(i + 1) + ": ";
    try {
      records.push_back(nlohmann::ordered_json::parse(lines[i]));
    } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond a double
      if (i + 1 == lines.size() && ends_cut) {
        if (cut) ++*cut;
        continue;
      }
      throw std::runtime_error(where + "not a JSON record (" + e.what() + ")");
    }
    if (!records.back().is_object()) throw std::runtime_error(where + "expected a JSON object, got " + records.back().type_name());
  }
  return records;
}

std::string ResumeTally::line(const std::string& what) const {
  std::string s = fmt::format("resumed: {} {} from {} are not run again", taken, what, journal);
  std::vector<std::string> why;
  if (damaged) why.push_back(fmt::format("{} damaged line{} (cut, not JSON or failing its checksum)", damaged, damaged == 1 ? "" : "s"));
  if (changed)
    why.push_back(fmt::format("{} record{} made by another definition, configuration or version (fingerprint differs)", changed,
                              changed == 1 ? "" : "s"));
  if (!why.empty()) {
    s += "; run again instead of";
    for (std::size_t i = 0; i < why.size(); ++i) s += (i ? ", " : " ") + why[i];
  }
  if (unknown) s += fmt::format("; {} record{} of {} this run does not have ignored", unknown, unknown == 1 ? "" : "s", what);
  return s;
}

nlohmann::ordered_json ResumeTally::json() const {
  return {{"journal", journal}, {"taken", taken}, {"damaged", damaged}, {"changed", changed}, {"unknown", unknown}};
}

namespace {
volatile std::sig_atomic_t g_signal = 0;
int g_installed = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
struct sigaction g_previous[4];

extern "C" void remember(int sig) {
  if (sig == SIGPIPE) {  // every write to the closed pipe raises it again: remembered once, never fatal
    if (g_signal == 0) g_signal = sig;
    return;
  }
  if (g_signal == sig) {  // asked twice: go
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
}
}  // namespace

StopOnSignal::StopOnSignal() {
  if (g_installed++ > 0) return;
  g_signal = 0;
  std::signal(SIGXFSZ, SIG_IGN);  // a file-size limit fails the write (EFBIG) instead of killing the run
  struct sigaction sa {};
  sa.sa_handler = remember;
  sa.sa_flags = SA_RESTART;  // as std::signal: reads and writes in hand go on
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) ::sigaction(kStopSignals[i], &sa, &g_previous[i]);
}

StopOnSignal::~StopOnSignal() {
  if (--g_installed > 0) return;
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) ::sigaction(kStopSignals[i], &g_previous[i], nullptr);
}

int StopOnSignal::signal() { return static_cast<int>(g_signal); }

int finished_run_exit_code(int signal, const Journal& journal, bool outputs_written, bool passed, const std::string& what,
                           std::ostream& err) {
  if (signal) return StopOnSignal::exit_code(signal);
  if (journal.failed()) {
    err << "s2cosim: " << journal.error() << ": the " << what << " stopped after the task in hand; the reports hold what finished\n";
    return kExitOutput;
  }
  if (!outputs_written) {
    err << "s2cosim: some outputs could not be written" << (journal.on() ? "; every finished task is in " + journal.path() : "")
        << "\n";
    return kExitOutput;
  }
  return passed ? kExitPass : kExitFail;
}

}  // namespace s2
