// Nothing finished is lost: the journal keeps every finished task whole when the run is killed, and a run
// stopped by SIGINT or SIGTERM writes what finished and exits 128 + the signal.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "harness/commands/bench.h"
#include "harness/commands/flaw_limit.h"
#include "harness/session/journal.h"
#include "harness/commands/net_runner.h"
#include "harness/commands/regress.h"
#include "test_networks.h"
#include "test_support.h"

using namespace s2;

namespace {

using test::run_and_signal;

// The random suite on both backends (about 15 s: far longer than the tests wait), signalled with `sig` once
// its journal holds `after` tasks.
int run_suite_and_signal(const std::string& json, const std::string& journal, int sig, std::size_t after) {
  RegressRequest req;
  req.vectors = test::source_path("vectors/random_suite.csv");
  req.backends = BackendSelection::Both;
  req.json_out = json;
  req.journal = journal;
  req.quiet = true;
  return run_and_signal([&](std::ostream& o, std::ostream& e) { return regress(req, o, e); }, journal, after + 1, sig);
}

// A finished journal at `path`: its header and one record, id "b" with fingerprint "fingerprint".
void write_header_and_one_record(const std::string& path) {
  Journal j(path);
  j.start(nlohmann::ordered_json{{"journal", "test"}});
  j.append(nlohmann::ordered_json{{"id", "b"}}, "fingerprint");
}

}  // namespace

TEST(Journal, ACutLastLineIsDroppedAndAMalformedLineIsNamed) {
  const test::TempDir dir;
  const std::string path = dir.path("j.jsonl");
  write_header_and_one_record(path);
  std::ofstream(path, std::ios::app) << "{\"id\": \"c\", \"n";  // killed while writing
  int cut = 0;
  const auto records = read_journal(path, &cut);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["id"], "b");
  // every line carries its checksum, and a record its fingerprint
  EXPECT_EQ(records[1]["checksum"], record_checksum(records[1]));
  EXPECT_EQ(records[1]["fingerprint"], "fingerprint");
  EXPECT_EQ(cut, 1);
  std::ofstream(path) << "{\"id\": 1}\nnot json\n{\"id\": 2}\n";
  try {
    read_journal(path);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2:"), std::string::npos) << e.what();
  }
  EXPECT_EQ(journal_path("out.json", ""), "out.json.jsonl");
  EXPECT_EQ(journal_path("out.json", "mine.jsonl"), "mine.jsonl");
  EXPECT_EQ(journal_path("", ""), "");
}

// A resumed run continuing a journal whose last record a kill cut (a record longer than a page is written in
// steps) cuts that partial record off before it appends: the journal stays whole, every line a record.
TEST(Journal, AContinuedJournalCutsOffAKilledRecordBeforeItAppends) {
  const test::TempDir dir;
  const std::string path = dir.path("j.jsonl");
  write_header_and_one_record(path);
  const std::string whole = test::read_text(path);
  std::ofstream(path, std::ios::app) << "{\"id\": \"c\", \"long\": \"" << std::string(5000, 'x');  // killed while writing
  {
    Journal j(path, path);  // resumed from itself: it continues
    ASSERT_TRUE(j.continues());
    j.start(nlohmann::ordered_json{{"journal", "test"}});
    EXPECT_EQ(test::read_text(path), whole);
    j.append(nlohmann::ordered_json{{"id", "c"}}, "fingerprint");
  }
  int cut = 0;
  const auto records = read_journal(path, &cut);  // the strict reader: a damaged line would throw
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2]["id"], "c");
  EXPECT_EQ(cut, 0);
}

TEST(Journal, AKilledRunLeavesEveryFinishedTaskWhole) {
  const test::TempDir dir;
  const std::string journal = dir.path("r.jsonl");
  const int status = run_suite_and_signal(dir.path("r.json"), journal, SIGKILL, 20);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before 20 tasks were in its journal";
  int cut = 0;
  const auto records = read_journal(journal, &cut);
  ASSERT_GE(records.size(), 21u);
  EXPECT_EQ(records[0]["journal"], "regress");  // the first record names the run
  // every record is flushed whole, newline included, as its task finishes (a buffered journal would hold some
  // back: fewer than 21 records); the kill can cut only the record being written when it came (a write of more
  // than a page stops between pages on SIGKILL), which the reader drops
  EXPECT_LE(cut, 1);
  const std::string text = test::read_text(journal);
  ASSERT_FALSE(text.empty());
  if (cut == 0) {
    EXPECT_EQ(text.back(), '\n');
  }
  // the tasks in the suite's order, each whole
  for (std::size_t i = 1; i < records.size(); ++i) {
    EXPECT_TRUE(records[i].contains("id"));
    EXPECT_TRUE(records[i].contains("status"));
    EXPECT_EQ(records[i]["status"], "pass") << records[i]["id"];
  }
}

TEST(Journal, SigintAndSigtermStopTheRunAndItReportsWhatFinished) {
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    const test::TempDir dir;
    const std::string json = dir.path("r.json"), journal = dir.path("r.jsonl");
    const int status = run_suite_and_signal(json, journal, sig, 10);
    ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping";
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    const auto records = read_journal(journal);
    const nlohmann::json report = test::read_json(json);
    EXPECT_EQ(report["summary"]["tasks"], records.size() - 1);  // and the run's own first record
    EXPECT_LT(records.size(), 241u);
  }
}

TEST(Journal, AKilledRegressResumesToTheReportOfAnUninterruptedOne) {
  const test::TempDir dir;
  RegressRequest req;
  req.vectors = test::source_path("vectors/thesis_qpe_validation.csv");
  req.quiet = true;
  req.json_out = dir.path("whole.json");
  std::ostringstream out, err;
  ASSERT_EQ(regress(req, out, err), 0) << err.str();
  // the same run SIGKILLed once three tasks are in its journal
  req.json_out = dir.path("cut.json");
  const std::string journal = req.json_out + ".jsonl";
  const int status =
      run_and_signal([&](std::ostream& o, std::ostream& e) { return regress(req, o, e); }, journal, 4, SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it was killed";
  const std::size_t done = read_journal(journal).size() - 1;
  ASSERT_LT(done, 9u);
  req.resume = journal;
  std::ostringstream out2, err2;
  ASSERT_EQ(regress(req, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("resumed: " + std::to_string(done) + " tasks"), std::string::npos) << out2.str();
  EXPECT_EQ(test::without_wall_times(test::read_json(dir.path("whole.json"))),
            test::without_wall_times(test::read_json(req.json_out)));
  // the new journal holds every task again, so it can itself be resumed
  EXPECT_EQ(read_journal(journal).size(), 10u);
  // a journal of another run is refused, naming what differs
  req.flaws = {"sram2clk"};
  std::ostringstream out3, err3;
  EXPECT_EQ(regress(req, out3, err3), 2);
  EXPECT_NE(err3.str().find("a journal of another run: its config_hash is"), std::string::npos) << err3.str();
}

TEST(Journal, AnInterruptedRunNetResumesToTheReportOfAnUninterruptedOne) {
  const test::TempDir dir;
  RunNetRequest req;
  // a small network on QPE-DRAM: 11 block runs, enough to be interrupted after 4, quick in the sanitized build
  req.net = dir.path("small.net");
  std::ofstream(req.net) << test_networks::kSmall;
  // the whole run, uninterrupted
  req.json_out = dir.path("whole.json");
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << err.str();
  // the same run stopped by SIGINT after three block runs, in a child process
  req.json_out = dir.path("cut.json");
  const std::string journal = req.json_out + ".jsonl";
  const int status =
      run_and_signal([&](std::ostream& o, std::ostream& e) { return run_net(req, o, e); }, journal, 4, SIGINT);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 130);
  const std::size_t done = read_journal(journal).size() - 1;
  ASSERT_LT(done, 15u);
  // resumed from its own journal, which the run continues
  req.resume = journal;
  std::ostringstream out2, err2;
  ASSERT_EQ(run_net(req, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("resumed: " + std::to_string(done) + " block runs"), std::string::npos);
  // equal apart from wall times
  EXPECT_EQ(test::without_wall_times(test::read_json(dir.path("whole.json"))),
            test::without_wall_times(test::read_json(req.json_out)));
  // a journal of another run is refused, naming what differs
  req.seed = 2;
  std::ostringstream out3, err3;
  EXPECT_EQ(run_net(req, out3, err3), 2);
  EXPECT_NE(err3.str().find("a journal of another run: its seed is 1, this run's 2"), std::string::npos) << err3.str();
}

TEST(Journal, AStoppedFlawLimitSearchResumesToTheSameResult) {
  const test::TempDir dir;
  FlawLimitRequest req;
  req.flaw = "mm_wide_a";
  req.json_out = dir.path("whole.json");
  std::ostringstream out, err;
  ASSERT_EQ(flaw_limit(req, out, err), 0) << err.str();
  const std::size_t probes = read_journal(req.json_out + ".jsonl").size() - 1;
  ASSERT_GE(probes, 10u);
  // SIGTERM once four probes are in the journal
  req.json_out = dir.path("cut.json");
  const std::string journal = req.json_out + ".jsonl";
  const int status =
      run_and_signal([&](std::ostream& o, std::ostream& e) { return flaw_limit(req, o, e); }, journal, 5, SIGTERM);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 143);
  EXPECT_EQ(test::read_json(req.json_out)["stopped_by_signal"], SIGTERM);
  const std::size_t done = read_journal(journal).size() - 1;
  ASSERT_LT(done, probes);
  req.resume = journal;
  std::ostringstream out2, err2;
  ASSERT_EQ(flaw_limit(req, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("resumed: " + std::to_string(done) + " probes"), std::string::npos) << out2.str();
  EXPECT_EQ(test::read_json(dir.path("whole.json")), test::read_json(req.json_out));
}

TEST(Journal, AStoppedBenchResumesToTheSameFigures) {
  const test::TempDir dir;
  BenchRequest req;
  req.suites = {test::source_path("vectors/smoke.csv")};  // small tasks: the test runs the bench three times
  req.json_out = dir.path("whole.json");
  std::ostringstream out, err;
  bench(req, out, err);
  req.json_out = dir.path("cut.json");
  const std::string journal = req.json_out + ".jsonl";
  const int status =
      run_and_signal([&](std::ostream& o, std::ostream& e) { return bench(req, o, e); }, journal, 11, SIGINT);  // into sram2clk
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 130);
  const std::size_t done = read_journal(journal).size() - 1;
  ASSERT_LT(done, 16u);
  req.resume = journal;
  std::ostringstream out2, err2;
  bench(req, out2, err2);
  // equal apart from the wall times and the speed ratios made of them
  EXPECT_EQ(test::without_wall_times(test::read_json(dir.path("whole.json"))),
            test::without_wall_times(test::read_json(req.json_out)));
  EXPECT_EQ(read_journal(journal).size(), 17u);
}
