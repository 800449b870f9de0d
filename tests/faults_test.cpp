// Nothing lost, nothing trusted blindly (issue 32): journals under signals at every point of a resume, records
// edited or made by another task, two runs on one journal, outputs that are inputs or cannot be looked up,
// a full disk (a file-size limit), a closed pipe, SIGHUP, a stopped shard through merge, extreme
// configurations, and the command line's refusals.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "harness/commands/bench.h"
#include "harness/commands/flaw_limit.h"
#include "harness/session/journal.h"
#include "harness/commands/map_report.h"
#include "harness/commands/merge.h"
#include "harness/commands/net_runner.h"
#include "harness/outputs/output_files.h"
#include "harness/outputs/result.h"
#include "harness/commands/regress.h"
#include "model/hw_config.h"
#include "test_networks.h"
#include "test_support.h"

#ifndef S2COSIM_BIN
#error "S2COSIM_BIN must name the s2cosim binary (tests/CMakeLists.txt defines it)"
#endif

using namespace s2;
namespace fs = std::filesystem;

namespace {

// The smoke tasks on the model only: quick, and enough of them to be interrupted.
RegressRequest smoke(const std::string& json) {
  RegressRequest req;
  req.vectors = test::source_path("vectors/smoke.csv");
  req.backends = BackendSelection::Model;
  req.json_out = json;
  req.quiet = true;
  return req;
}

int run_regress(const RegressRequest& req, std::string* out = nullptr, std::string* err = nullptr) {
  std::ostringstream o, e;
  const int rc = regress(req, o, e);
  if (out) *out = o.str();
  if (err) *err = e.str();
  return rc;
}

// The whole records of a journal (checksums holding), after its first.
std::size_t whole_records(const std::string& journal, const nlohmann::ordered_json& header) {
  return read_journal_of_run(journal, header).records.size();
}

nlohmann::ordered_json smoke_header(const RegressRequest& req) {
  return {{"journal", "regress"},
          {"vectors", req.vectors},
          {"backends", to_string(req.backends)},
          {"config_hash", config_hash(HwConfig{})}};
}

// Runs `run` in a child process and signals it with `sig` after `delay`; returns its wait status.
// Runs `run` in a child and sends it `sig` after `delay`, counted from when `after_file` exists (if given: a
// loaded machine or a sanitized build may take longer than the delay to start; up to 60 s).
template <typename Run>
int run_and_signal_after(Run run, std::chrono::microseconds delay, int sig, const std::string& after_file = "") {
  const pid_t child = fork();
  if (child == 0) _exit(run());
  for (int waited_ms = 0; !after_file.empty() && !fs::exists(after_file) && waited_ms < 60000; waited_ms += 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(delay);
  kill(child, sig);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

using test::Ran;
using test::shell;

std::string bin() { return shell_quote(S2COSIM_BIN); }

}  // namespace

// The resume that emptied its own journal: a signal at every point of a resume (delays from 0 on) never
// leaves fewer whole records than the journal had, and the last resume gives the uninterrupted run's report.
TEST(Faults, ASignalAtAnyPointOfAResumeLosesNoRecord) {
  const test::TempDir dir;
  RegressRequest whole = smoke(dir.path("whole.json"));
  whole.backends = BackendSelection::Both;  // about 50 ms a task: long enough to be stopped in the middle
  ASSERT_EQ(run_regress(whole), 0);
  RegressRequest req = whole;
  req.json_out = dir.path("r.json");
  const std::string journal = req.json_out + ".jsonl";
  const nlohmann::ordered_json header = smoke_header(req);
  // a first run stopped early, its journal then resumed into itself again and again, each stopped after a
  // longer delay, by SIGTERM and SIGKILL in turn
  run_and_signal_after([&] { return run_regress(req); }, std::chrono::milliseconds(30), SIGKILL, journal);
  ASSERT_TRUE(fs::exists(journal));
  req.resume = journal;
  std::size_t had = whole_records(journal, header);
  int delay_us = 0;
  for (int round = 0; round < 24 && had < 8; ++round, delay_us = delay_us * 3 / 2 + 500) {
    SCOPED_TRACE("delay " + std::to_string(delay_us) + " us");
    const int status = run_and_signal_after([&] { return run_regress(req); }, std::chrono::microseconds(delay_us),
                                            round % 2 ? SIGKILL : SIGTERM);
    if (WIFEXITED(status)) {
      EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 143) << WEXITSTATUS(status);
    }
    const std::size_t now = whole_records(journal, header);
    EXPECT_GE(now, had) << "the resume lost records of the journal it read";
    had = now;
  }
  std::string out;
  ASSERT_EQ(run_regress(req, &out), 0) << out;
  EXPECT_EQ(test::without_wall_times(test::read_json(whole.json_out)), test::without_wall_times(test::read_json(req.json_out)));
}

// An edited record fails its checksum and is run again; a record of a task whose shape changed fails its
// fingerprint and is run again: the report is a fresh run's, and says what was taken and why not.
TEST(Faults, EditedRecordsAndChangedTasksAreRunAgain) {
  const test::TempDir dir;
  RegressRequest req = smoke(dir.path("r.json"));
  ASSERT_EQ(run_regress(req), 0);
  const std::string journal = req.json_out + ".jsonl";
  const nlohmann::json fresh = test::without_wall_times(test::read_json(req.json_out));
  // rtl_cycles / model_cycles edited in the second task's line, its checksum left as it was
  std::vector<std::string> lines;
  {
    std::ifstream in(journal);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_GE(lines.size(), 3u);
  nlohmann::ordered_json edited = nlohmann::ordered_json::parse(lines[2]);
  ASSERT_TRUE(edited.contains("model_cycles"));
  edited["model_cycles"] = 1020;
  lines[2] = edited.dump();
  {
    std::ofstream o(journal);
    for (const std::string& l : lines) o << l << "\n";
  }
  req.resume = journal;
  std::string out;
  ASSERT_EQ(run_regress(req, &out), 0) << out;
  EXPECT_NE(out.find("resumed: 7 tasks"), std::string::npos) << out;
  EXPECT_NE(out.find("1 damaged line"), std::string::npos) << out;
  const nlohmann::json again = test::read_json(req.json_out);
  EXPECT_EQ(again["resume"]["taken"], 7);
  EXPECT_EQ(again["resume"]["damaged"], 1);
  EXPECT_EQ(fresh, test::without_wall_times(again));

  // the first conv task's shape changed in the vectors (its id kept): its record is not taken
  std::string csv = test::read_text(test::source_path("vectors/smoke.csv"));
  const std::string row = "smoke_conv_local,conv,all,34,6,8,3,3,4,1";
  ASSERT_NE(csv.find(row), std::string::npos);
  csv.replace(csv.find(row), row.size(), "smoke_conv_local,conv,all,18,6,8,3,3,4,1");
  RegressRequest changed = smoke(dir.path("c.json"));
  changed.vectors = dir.path("changed.csv");
  std::ofstream(changed.vectors) << csv;
  ASSERT_EQ(run_regress(changed), 0);
  const nlohmann::json changed_fresh = test::without_wall_times(test::read_json(changed.json_out));
  // a journal of the old file's run, renamed to the new file (as if the file had been edited in place)
  RegressRequest resumed = changed;
  resumed.json_out = dir.path("c2.json");
  resumed.resume = dir.path("old.jsonl");
  {
    // the old run's records under the new run's header: a run of the edited file that had got that far
    std::ifstream in(journal);
    std::ofstream o(resumed.resume);
    std::string l;
    std::getline(in, l);
    nlohmann::ordered_json head = nlohmann::ordered_json::parse(l);
    head["vectors"] = changed.vectors;
    head.erase("checksum");
    head["checksum"] = record_checksum(head);
    o << head.dump() << "\n";
    while (std::getline(in, l)) o << l << "\n";
  }
  ASSERT_EQ(run_regress(resumed, &out), 0) << out;
  EXPECT_NE(out.find("1 record made by another definition"), std::string::npos) << out;
  nlohmann::json got = test::without_wall_times(test::read_json(resumed.json_out));
  EXPECT_EQ(got["tasks"][0]["model_cycles"], changed_fresh["tasks"][0]["model_cycles"]);
  EXPECT_NE(got["tasks"][0]["model_cycles"], fresh["tasks"][0]["model_cycles"]);
}

// One run per journal: a journal another run holds is refused at the start, and left as it was.
TEST(Faults, TwoRunsOnOneJournalAreRefused) {
  const test::TempDir dir;
  const std::string path = dir.path("r.json.jsonl");
  Journal first(path);
  first.start(nlohmann::ordered_json{{"journal", "regress"}});
  first.append(nlohmann::ordered_json{{"id", "x"}}, "f");
  EXPECT_THROW(Journal second(path), std::runtime_error);
  RegressRequest req = smoke(dir.path("r.json"));
  std::string err;
  EXPECT_EQ(run_regress(req, nullptr, &err), 2);
  EXPECT_NE(err.find("in use by another run"), std::string::npos) << err;
  // the first run's journal is whole
  EXPECT_EQ(read_journal(path).size(), 2u);
  // and resuming a journal another run writes is refused too
  req.json_out = dir.path("s.json");
  req.resume = path;
  EXPECT_EQ(run_regress(req, nullptr, &err), 2);
}

// Outputs that are inputs, or each other, or cannot be looked up: exit 2 before anything runs, nothing
// overwritten, never an abort.
TEST(Faults, OutputPathsAreCheckedBeforeAnythingRuns) {
  const test::TempDir dir;
  const std::string vectors = dir.path("v.csv");
  fs::copy_file(test::source_path("vectors/smoke.csv"), vectors);
  const std::string before = test::read_text(vectors);
  RegressRequest req = smoke("");
  req.vectors = vectors;
  std::string err;
  req.csv_out = vectors;  // the CSV report over the vectors it reads
  EXPECT_EQ(run_regress(req, nullptr, &err), 2);
  EXPECT_NE(err.find("--csv " + vectors + ": the same file as vectors"), std::string::npos) << err;
  EXPECT_EQ(test::read_text(vectors), before);
  req.csv_out = "";
  req.json_out = dir.path("r.json");
  req.journal = req.json_out;  // the report over the journal
  EXPECT_EQ(run_regress(req, nullptr, &err), 2);
  EXPECT_NE(err.find("the same file as --json"), std::string::npos) << err;
  req.journal = "";
  req.csv_out = req.json_out + ".jsonl";  // the CSV over the journal of --json
  EXPECT_EQ(run_regress(req, nullptr, &err), 2);
  // a symlink loop, a name longer than a file system takes, a FIFO, a device
  fs::create_symlink(dir.path("loop"), dir.path("loop"));
  const std::string fifo = dir.path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& bad : {dir.path("loop") + "/r.json", dir.path(std::string(300, 'x')), fifo, std::string("/dev/full"),
                                 dir.path("no/such/dir/r.json")}) {
    SCOPED_TRACE(bad);
    RegressRequest r = smoke(bad);
    EXPECT_EQ(run_regress(r, nullptr, &err), 2);
    EXPECT_NE(err.find(bad), std::string::npos) << err;
    BenchRequest b;
    b.suites = {test::source_path("vectors/smoke.csv")};
    b.json_out = bad;
    std::ostringstream o, e;
    EXPECT_EQ(bench(b, o, e), 2) << e.str();
    FlawLimitRequest f;
    f.flaw = "mm_wide_a";
    f.html_out = bad;
    EXPECT_EQ(flaw_limit(f, o, e), 2);
  }
  // a name that is not UTF-8, as an output and as an input (it reaches the report's rerun lines)
  EXPECT_NE(output_path_problem(dir.path("r\xff.json")), "");
  const std::string latin1 = dir.path("c\xe9.json");
  std::ofstream(latin1) << "{}";
  RegressRequest c = smoke(dir.path("c.json"));
  c.config_file = latin1;
  EXPECT_EQ(run_regress(c, nullptr, &err), 2);
  EXPECT_NE(err.find("not UTF-8"), std::string::npos) << err;
  // the command line: exit 2, no abort, for the paths that aborted regress, bench and flaw-limit
  for (const char* cmd : {" regress vectors/smoke.csv --backend model --json ", " bench vectors/smoke.csv --json ",
                                 " flaw-limit mm_wide_a --json "}) {
    const Ran r = shell(bin() + std::string(cmd) + shell_quote(dir.path("loop") + "/r.json"));
    EXPECT_EQ(r.exit_code, 2) << cmd << r.out;
    EXPECT_NE(r.out.find("cannot be looked up"), std::string::npos) << r.out;
  }
}

// A full disk, as a file-size limit: the journal's records stay whole and the run stops with exit 3 after the
// task in hand; a report that cannot be written leaves the file as it was and does not stop the others.
TEST(Faults, AFileSizeLimitStopsTheRunWithEveryFinishedRecordWhole) {
  const test::TempDir dir;
  RegressRequest req = smoke(dir.path("r.json"));
  const std::string journal = req.json_out + ".jsonl";
  std::ofstream(req.json_out) << "the previous report\n";
  const pid_t child = fork();
  if (child == 0) {
    const rlimit limit{6000, 6000};  // the header and a few records; not the report
    setrlimit(RLIMIT_FSIZE, &limit);
    _exit(run_regress(req));
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 3);
  const std::size_t whole = whole_records(journal, smoke_header(req));
  EXPECT_GE(whole, 1u);
  EXPECT_LT(whole, 8u);
  EXPECT_EQ(test::read_text(req.json_out), "the previous report\n");  // not cut: written whole or not at all
  // the journal resumes to the whole run's report
  req.resume = journal;
  std::string out;
  ASSERT_EQ(run_regress(req, &out), 0) << out;
  EXPECT_NE(out.find("resumed: " + std::to_string(whole) + " tasks"), std::string::npos) << out;

  // one output too big for the limit, the others written; exit 3
  RegressRequest two = smoke(dir.path("big.json"));
  two.resume = "";
  two.journal = dir.path("other.jsonl");
  two.csv_out = dir.path("small.csv");
  two.junit_out = dir.path("small.xml");
  const pid_t c2 = fork();
  if (c2 == 0) {
    const rlimit limit{9000, 9000};
    setrlimit(RLIMIT_FSIZE, &limit);
    _exit(run_regress(two));
  }
  waitpid(c2, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_FALSE(fs::exists(two.json_out));
  EXPECT_TRUE(fs::exists(two.csv_out));
  EXPECT_TRUE(fs::exists(two.junit_out));
}

// SIGPIPE (the reader of standard output gone) and SIGHUP are handled like SIGTERM: the reports hold what
// finished; write errors on standard output are errors (exit 3), never a silent 0.
TEST(Faults, AClosedPipeAndAHangupStillWriteTheReports) {
  const test::TempDir dir;
  const std::string json = dir.path("r.json");
  // regress prints at the end: its writes fail, the report is whole, exit 3
  Ran r = shell("bash -c " + shell_quote(bin() + " regress vectors/smoke.csv --backend model --json " + shell_quote(json) +
                                     " | true; exit ${PIPESTATUS[0]}"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(test::read_json(json)["summary"]["tasks"], 8);
  // run-net prints as it goes: the closed pipe stops it after the block in hand (141), report written
  const std::string net = dir.path("small.net");
  std::ofstream(net) << test_networks::kSmall;
  r = shell("bash -c " + shell_quote(bin() + " run-net --net " + shell_quote(net) + " --json " + shell_quote(json) +
                                     " | true; exit ${PIPESTATUS[0]}"));
  EXPECT_EQ(r.exit_code, 141) << r.out;
  EXPECT_EQ(test::read_json(json)["stopped_by_signal"], SIGPIPE);
  // a full standard output
  r = shell(bin() + " vectors random --count 5 > /dev/full");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  // a closed standard output: exit 3, and no console text in the journal (which would have been descriptor 1)
  const std::string closed = dir.path("closed.json");
  r = shell("sh -c " + shell_quote(bin() + " regress vectors/smoke.csv --backend model -q --json " + shell_quote(closed) +
                                   " 2> /dev/null >&-"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NO_THROW(read_journal(closed + ".jsonl"));
  EXPECT_EQ(read_journal(closed + ".jsonl").size(), 9u);
  // SIGHUP once two tasks of the random suite (about 15 s in all) are in the journal
  RegressRequest req = smoke(dir.path("h.json"));
  req.vectors = test::source_path("vectors/random_suite.csv");
  req.backends = BackendSelection::Both;
  const std::string journal = req.json_out + ".jsonl";
  const pid_t child = fork();
  if (child == 0) _exit(run_regress(req));
  int status = 0;
  for (;;) {
    if (waitpid(child, &status, WNOHANG) == child) break;  // finished first: the checks below fail
    if (fs::exists(journal) && read_journal(journal).size() >= 3) {
      kill(child, SIGHUP);
      waitpid(child, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_LT(test::read_json(req.json_out)["summary"]["tasks"], 240) << "the run finished before the signal";
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGHUP);
  EXPECT_EQ(test::read_json(req.json_out)["results"]["stopped_by_signal"], SIGHUP);
}

// A shard a signal stopped is refused by merge, or with --allow-partial merged with its missing checks as
// errors "not run" (JUnit <error>), never as passing.
TEST(Faults, MergeRefusesAStoppedShard) {
  const test::TempDir dir;
  std::vector<std::string> shards;
  for (int i = 1; i <= 2; ++i) {
    RegressRequest req = smoke(dir.path("s" + std::to_string(i) + ".json"));
    req.shard = std::to_string(i) + "/2";
    ASSERT_EQ(run_regress(req), 0);
    shards.push_back(req.json_out);
  }
  // shard 1 as a signal leaves it: its last check not run
  nlohmann::ordered_json s1 = nlohmann::ordered_json::parse(test::read_text(shards[0]));
  s1["tasks"].erase(s1["tasks"].size() - 1);
  s1["results"]["checks"].erase(s1["results"]["checks"].size() - 1);
  s1["results"]["stopped_by_signal"] = SIGTERM;
  std::ofstream(shards[0]) << s1.dump(2);
  MergeRequest m;
  m.inputs = shards;
  m.json_out = dir.path("m.json");
  m.junit_out = dir.path("m.xml");
  std::ostringstream out, err;
  EXPECT_EQ(merge(m, out, err), 2);
  EXPECT_NE(err.str().find("stopped by signal 15"), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(m.json_out));
  m.allow_partial = true;
  std::ostringstream out2, err2;
  EXPECT_EQ(merge(m, out2, err2), 1) << err2.str();
  const nlohmann::json merged = test::read_json(m.json_out);
  EXPECT_EQ(merged["results"]["checks"].size(), 8u);
  EXPECT_EQ(merged["results"]["counts"]["pass"], 7);
  EXPECT_EQ(merged["results"]["counts"]["error"], 1);
  EXPECT_NE(test::read_text(m.junit_out).find("<error"), std::string::npos);
  // a report that is not a regular file is not read at all
  EXPECT_THROW(check_shard_report("/dev/zero"), std::runtime_error);
  EXPECT_THROW(read_journal("/dev/zero"), std::runtime_error);
}

// A configuration no hardware could have is refused before anything runs; the watchdog names what each
// PE waited for.
TEST(Faults, ExtremeConfigurationsAreRefused) {
  for (const char* field : {R"({"dram_latency_cycles": 1000000000})", R"({"host_latency_cycles": 1000000000})",
                            R"({"pe_clock_mhz": 1e300, "noc_clock_mhz": 2e300})", R"({"dram_cycles_per_op": 100000})",
                            R"({"model_resolve_window_cycles": 1000000000000})"}) {
    SCOPED_TRACE(field);
    EXPECT_THROW(parse_hw_config(field, "c.json"), std::exception);
  }
  HwConfig cfg;
  cfg.arm.quantization_per_pixel = 1e20;
  EXPECT_THROW(validate(cfg), std::invalid_argument);
}

// The command line refuses a negative seed and a strategy given twice.
TEST(Faults, NegativeSeedsAndRepeatedStrategiesAreRefused) {
  Ran r = shell(bin() + " vectors random --seed -5 --count 3");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = shell(bin() + " run-net --net vectors/mini_chip.net --seed -5 --layers CONV_1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  RunNetRequest req;
  req.net = test::source_path("vectors/mini_chip.net");
  req.layers = {"CONV_1"};
  req.strategies = {"fuse_reuse", "fuse_reuse"};
  std::ostringstream out, err;
  EXPECT_EQ(run_net(req, out, err), 2);
  EXPECT_NE(err.str().find("given twice"), std::string::npos) << err.str();
}

// map --verify distributes every block in every strategy as the run would and checks its streams as the
// backends do. A padding larger than the map was what it caught (the pieces wholly in the padding read beyond
// the block's DRAM image); those pieces now load nothing, so it has nothing to refuse, and the run is exact
// (tests/chip_distributor_test.cpp, APieceWhoseInputIsAllPaddingLoadsNothingAndIsExact).
TEST(Faults, MapVerifyChecksEveryStrategysStreamsAsTheRunWould) {
  const test::TempDir dir;
  MapRequest req;
  req.net = dir.path("pad.net");
  std::ofstream(req.net) << "network padnet\ninput 8 8 4\nconv 3 3 4 8 pad=10\n";
  req.target = "s2";
  req.verify = true;
  std::ostringstream out, err;
  EXPECT_EQ(map_network(req, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("0 of 3 block runs would be refused by run-net on the chip 'prototype'"), std::string::npos) << out.str();
  req.net = test::source_path("vectors/mini_chip.net");
  std::ostringstream out2, err2;
  EXPECT_EQ(map_network(req, out2, err2), 0) << out2.str() << err2.str();
}
