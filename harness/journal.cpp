#include "harness/journal.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace s2 {

Journal::Journal(const std::string& path) : path_(path) {
  if (path_.empty()) return;
  file_.open(path_, std::ios::out | std::ios::trunc);
  if (!file_) throw std::runtime_error("cannot write the journal " + path_);
}

void Journal::append_line(const std::string& line) {
  if (!on()) return;
  file_ << line << '\n';
  file_.flush();
  if (!file_) throw std::runtime_error("cannot write the journal " + path_);
}

std::string journal_path(const std::string& json_out, const std::string& journal) {
  if (!journal.empty()) return journal;
  return json_out.empty() ? "" : json_out + ".jsonl";
}

std::vector<nlohmann::ordered_json> read_journal(const std::string& path, int* cut) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the journal " + path);
  std::error_code ec;
  if (const std::uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxJournalBytes)
    throw std::runtime_error(path + ": expected a journal of at most " + std::to_string(kMaxJournalBytes) +
                             " bytes, got " + std::to_string(size));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_journal(text.str(), path, cut);
}

std::vector<nlohmann::ordered_json> read_journal_of_run(const std::string& path, const nlohmann::ordered_json& header) {
  std::vector<nlohmann::ordered_json> records = read_journal(path);
  const nlohmann::ordered_json& command = header.at("journal");
  const std::string name = command.get<std::string>();
  if (records.empty() || !records.front().contains("journal") || records.front().at("journal") != command)
    throw std::runtime_error(path + ": not a " + name + " journal (its first record names no " + name + " run)");
  for (const auto& [key, value] : header.items()) {
    const nlohmann::ordered_json theirs = records.front().contains(key) ? records.front().at(key) : nlohmann::ordered_json();
    if (theirs != value)
      throw std::runtime_error(path + ": a journal of another run: its " + key + " is " + theirs.dump() + ", this run's " +
                               value.dump());
  }
  records.erase(records.begin());
  return records;
}

std::vector<nlohmann::ordered_json> parse_journal(const std::string& text, const std::string& path, int* cut) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // a file that does not end in a newline was cut while its last line was being written
  const bool ends_cut = !text.empty() && text.back() != '\n';
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

namespace {
volatile std::sig_atomic_t g_signal = 0;
std::atomic<int> g_installed{0};
void (*g_previous_int)(int) = SIG_DFL;
void (*g_previous_term)(int) = SIG_DFL;

extern "C" void remember(int sig) {
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
  g_previous_int = std::signal(SIGINT, remember);
  g_previous_term = std::signal(SIGTERM, remember);
}

StopOnSignal::~StopOnSignal() {
  if (--g_installed > 0) return;
  std::signal(SIGINT, g_previous_int);
  std::signal(SIGTERM, g_previous_term);
}

int StopOnSignal::signal() { return static_cast<int>(g_signal); }

}  // namespace s2
