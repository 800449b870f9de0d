// The outputs every command writes from its result records (harness/outputs/result.h): JUnit against its schema,
// the HTML report rendered in a real browser, rerun lines that reproduce a failure from the command line,
// shards merged into the unsharded run's report, run-net's worker processes (--jobs), and progress on a terminal only.
// The binary tests run build/s2cosim (S2COSIM_BIN) as a user would, from the source tree.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <sstream>
#include <string>

#include <sys/wait.h>

#include <fmt/format.h>

#include "harness/backends/backend.h"
#include "harness/commands/bench.h"
#include "harness/commands/merge.h"
#include "harness/commands/net_runner.h"
#include "harness/session/progress.h"
#include "harness/outputs/result.h"
#include "harness/commands/regress.h"
#include "test_support.h"

#ifndef S2COSIM_BIN
#error "S2COSIM_BIN must name the s2cosim binary (tests/CMakeLists.txt defines it)"
#endif

namespace s2 {
namespace {

using namespace s2::test;

std::string bin() { return shell_quote(S2COSIM_BIN); }

// Vectors with tasks that pass and tasks that show the neighbor_conv flaw, and a task whose id is markup.
std::string flaw_vectors(const TempDir& dir) {
  const std::string path = dir.path("flaw_mix.csv");
  std::ofstream f(path);
  f << "id,op,pe,Wi,Hi,D,Wf,Hf,C,stride,a_src,seed\n"
       "below_limit,conv,all,40,5,14,3,3,4,1,neighbor:1,1\n"
       "at_limit,conv,all,40,5,15,3,3,4,1,neighbor:1,1\n"
       "<script>alert(1)</script>,conv,all,20,5,3,3,3,4,1,local,2\n";
  return path;
}

TEST(Shard, ParsesAndDealsRoundRobin) {
  const Shard s = parse_shard("2/3");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  EXPECT_FALSE(s.takes(0));
  EXPECT_TRUE(s.takes(1));
  EXPECT_TRUE(s.takes(4));
  for (const char* bad : {"0/3", "4/3", "3", "/3", "1/", "a/b", "1/0", "-1/2", "1/100001"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

TEST(Progress, LineSaysDoneTotalAndTimeLeft) {
  EXPECT_EQ(Progress::line(0, 8, 0.0, ""), "[0/8] 0.0%, ? left");
  EXPECT_EQ(Progress::line(2, 8, 10.0, "t1 pass"), "[2/8] 25.0%, 30s left: t1 pass");
  EXPECT_EQ(Progress::line(1, 100, 60.0, "x"), "[1/100] 1.0%, 1h39m left: x");
}

// A sharded regression merged equals the unsharded run's report, wall times aside; so do its JUnit and CSV.
TEST(Merge, ShardedRegressEqualsUnsharded) {
  const TempDir dir;
  auto run = [&](const std::string& shard, const std::string& name) {
    RegressRequest req;
    req.vectors = smoke_csv();
    req.shard = shard;
    req.json_out = dir.path("") + name + ".json";
    req.csv_out = dir.path("") + name + ".csv";
    req.quiet = true;
    std::ostringstream out, err;
    EXPECT_EQ(regress(req, out, err), 0) << err.str();
    return req.json_out;
  };
  const std::string whole = run("1/1", "whole");
  MergeRequest m;
  for (const char* s : {"3/3", "1/3", "2/3"}) m.inputs.push_back(run(s, std::string("shard") + s[0]));
  m.json_out = dir.path("merged.json");
  m.csv_out = dir.path("merged.csv");
  std::ostringstream out, err;
  ASSERT_EQ(merge(m, out, err), 0) << err.str();
  EXPECT_EQ(without_wall_times(read_json(m.json_out)), without_wall_times(read_json(whole)));
  EXPECT_EQ(read_json(m.inputs[1])["results"]["checks"].size(), 3u);  // shard 1/3 of 8 tasks: 0, 3, 6
  EXPECT_EQ(read_text(m.csv_out), read_text(dir.path("whole.csv")));
  // the task records keep the keys' order a run writes (contract 2: id and status first)
  auto keys = [](const std::string& path) {
    std::vector<std::string> k;
    const auto report = nlohmann::ordered_json::parse(read_text(path));  // named: items() must not outlive it
    for (const auto& [key, v] : report["tasks"][0].items()) k.push_back(key);
    return k;
  };
  EXPECT_EQ(keys(m.json_out), keys(whole));
}

TEST(Merge, ShardedRunNetEqualsUnsharded) {
  const TempDir dir;
  auto run = [&](const std::string& shard, const std::string& name) {
    RunNetRequest req;
    req.net = source_path("vectors/mini_chip.net");
    req.split_file = source_path("vectors/mini_chip_split.txt");
    req.target = "s2";
    req.preset = "mini";
    req.whole = true;  // the Table 5.10 sums are made again from the shards' block runs
    req.strategies = {"fuse_reuse", "nofuse_noreuse"};
    req.shard = shard;
    req.json_out = dir.path("") + name + ".json";
    std::ostringstream out, err;
    EXPECT_EQ(run_net(req, out, err), 0) << err.str();
    return req.json_out;
  };
  const std::string whole = run("1/1", "whole");
  MergeRequest m{{run("2/2", "b"), run("1/2", "a")}, dir.path("merged.json"), "", "", ""};
  std::ostringstream out, err;
  ASSERT_EQ(merge(m, out, err), 0) << err.str();
  const nlohmann::json merged = read_json(m.json_out), unsharded = read_json(whole);
  EXPECT_EQ(without_wall_times(merged), without_wall_times(unsharded));
  EXPECT_EQ(unsharded["operations"].size(), 8u);
  EXPECT_GT(unsharded["category_cycles"]["fuse_reuse"]["sum"].get<double>(), 0.0);
}

// run-net --jobs: the block runs in worker processes of s2cosim (each a shard), reported as one process reports
// them: the console line for line and the JSON report field for field, wall times and speeds aside; every block
// run once, in the run's own journal; the combinations a worker cannot take refused.
TEST(Jobs, RunNetInWorkersGivesTheReportOfOneProcess) {
  const TempDir dir;
  const std::string base = bin() + " run-net --net vectors/mini_chip.net --split vectors/mini_chip_split.txt --target s2 "
                                   "--preset mini --whole --backend both --threads 1";
  const Ran one = shell(base + " --json " + shell_quote(dir.path("one.json")));
  const Ran two = shell(base + " --jobs 2 --json " + shell_quote(dir.path("two.json")));
  ASSERT_EQ(one.exit_code, 0) << one.out;
  ASSERT_EQ(two.exit_code, 0) << two.out;
  const auto timeless = [](const std::string& text) {  // the lines without wall times or speeds
    std::istringstream in(text);
    std::string kept;
    for (std::string line; std::getline(in, line);)
      if (line.find("wall") == std::string::npos && line.find("speed:") == std::string::npos && !line.starts_with("jobs:"))
        kept += line + "\n";
    return kept;
  };
  EXPECT_EQ(timeless(one.out), timeless(two.out));
  const std::size_t runs = read_json(dir.path("one.json"))["operations"].size();
  EXPECT_GT(runs, 1u);
  // every block run came from a worker, none was run again here
  EXPECT_NE(two.out.find(fmt::format("jobs: {0} of {0} block runs ran in 2 worker processes at once", runs)), std::string::npos) << two.out;
  nlohmann::json a = without_wall_times(read_json(dir.path("one.json"))), b = without_wall_times(read_json(dir.path("two.json")));
  EXPECT_EQ(b["jobs"], 2);
  for (nlohmann::json* j : {&a, &b}) j->erase("jobs"), j->erase("model_clocks_per_s"), j->erase("rtl_clocks_per_s");
  EXPECT_EQ(a, b);
  EXPECT_EQ(lines_in(dir.path("two.json.jsonl")), runs + 1);  // the header, then each block run once
  EXPECT_EQ(shell(base + " --jobs 2 --shard 1/2").exit_code, 2);
  EXPECT_EQ(shell(base + " --jobs 2 --resume " + shell_quote(dir.path("one.json.jsonl"))).exit_code, 2);
}

// tune --jobs: the candidates judged in worker processes (tune --shard I/J), taken from their journals into the
// search's own: the same mapping file and the same table as --jobs 1, each candidate judged once, the whole
// network's runs in run-net's workers; a worker given --jobs is refused.
TEST(Jobs, TuneInWorkersFindsTheMappingOfOneProcess) {
  const TempDir dir;
  const std::string net = dir.path("tiny.net");
  std::ofstream(net) << "network jobs_tiny\ninput 14 14 16\nconv 3 3 16 32 pad=same act=relu\nconv 1 1 32 32 act=none\n";
  const std::string base = bin() + " tune --net " + shell_quote(net) + " --target s2 --preset mini --candidates 3";
  const Ran one = shell(base + " --out " + shell_quote(dir.path("one.mapping")) + " --json " + shell_quote(dir.path("one.json")));
  const Ran two = shell(base + " --jobs 2 --out " + shell_quote(dir.path("two.mapping")) + " --json " + shell_quote(dir.path("two.json")));
  ASSERT_EQ(one.exit_code, 0) << one.out;
  ASSERT_EQ(two.exit_code, 0) << two.out;
  const auto text = [](const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  EXPECT_EQ(text(dir.path("one.mapping")), text(dir.path("two.mapping")));
  nlohmann::json a = read_json(dir.path("one.json")), b = read_json(dir.path("two.json"));
  a.erase("mapping"), b.erase("mapping");
  EXPECT_EQ(a, b);
  std::size_t judged = 0;
  for (const auto& row : a["blocks"]) judged += row["candidates_run"].get<std::size_t>();
  EXPECT_GT(judged, 2u);
  EXPECT_EQ(lines_in(dir.path("two.mapping.jsonl")), judged + 1);  // the header, then each candidate once
  EXPECT_NE(two.out.find("2 processes"), std::string::npos) << two.out;
  EXPECT_EQ(shell(base + " --jobs 2 --shard 1/2 --out " + shell_quote(dir.path("three.mapping"))).exit_code, 2);
}

// A sharded bench merged: every task's record taken from the shards, none run again, the bench's figures as
// the unsharded run gives them (its wall times and speed ratios aside).
TEST(Merge, ShardedBenchEqualsUnsharded) {
  const TempDir dir;
  auto run = [&](const std::string& shard, const std::string& name) {
    BenchRequest req;
    req.suites = {smoke_csv()};
    req.shard = shard;
    req.json_out = dir.path(name + ".json");
    std::ostringstream out, err;
    EXPECT_NE(bench(req, out, err), 2) << err.str();
    return req.json_out;
  };
  const std::string whole = run("1/1", "whole");
  MergeRequest m{{run("2/3", "b"), run("3/3", "c"), run("1/3", "a")}, dir.path("merged.json"), "", "", ""};
  std::ostringstream out, err;
  EXPECT_NE(merge(m, out, err), 2) << err.str();
  const nlohmann::json merged = read_json(m.json_out), unsharded = read_json(whole);
  EXPECT_EQ(without_wall_times(merged), without_wall_times(unsharded));
  EXPECT_EQ(unsharded["results"]["checks"].size(), 16u);  // 8 tasks, flaws off and sram2clk
  EXPECT_EQ(read_json(m.inputs[0])["results"]["checks"].size(), 5u);  // shard 2/3 of 16: 1, 4, 7, 10, 13
}

TEST(Merge, RefusesMissingDuplicateAndForeignShards) {
  const TempDir dir;
  auto run = [&](const std::string& vectors, const std::string& shard, const std::string& name) {
    RegressRequest req;
    req.vectors = vectors;
    req.shard = shard;
    req.backends = BackendSelection::Model;
    req.json_out = dir.path("") + name + ".json";
    req.quiet = true;
    std::ostringstream out, err;
    regress(req, out, err);
    return req.json_out;
  };
  const std::string a = run(smoke_csv(), "1/2", "a"), b = run(smoke_csv(), "2/2", "b");
  const std::string other = run(source_path("vectors/thesis_qpe_validation.csv"), "2/2", "other");
  auto refused = [&](std::vector<std::string> inputs, const std::string& says) {
    MergeRequest m{std::move(inputs), dir.path("merged.json"), "", "", ""};
    std::ostringstream out, err;
    EXPECT_EQ(merge(m, out, err), 2);
    EXPECT_NE(err.str().find(says), std::string::npos) << err.str();
    EXPECT_FALSE(std::filesystem::exists(m.json_out));
  };
  refused({a}, "shards missing: 2/2");
  refused({a, a}, "shard 1/2 is given twice");
  refused({a, other}, "shards of different runs");
  refused({dir.path("none.json")}, "cannot open");
}

// JUnit against the schema CI dashboards read (the Jenkins xUnit plugin's layout, tests/junit/junit.xsd),
// with the failures carrying the comparator's message and the rerun line.
TEST(JUnit, ValidatesAgainstTheSchemaAndCarriesFailures) {
  const TempDir dir;
  const std::string xml = dir.path("r.xml");
  const Ran r = shell(bin() + " regress " + shell_quote(flaw_vectors(dir)) + " --flaw neighbor_conv -q --junit " + shell_quote(xml));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const Ran lint = shell("xmllint --noout --schema tests/junit/junit.xsd " + shell_quote(xml));
  EXPECT_EQ(lint.exit_code, 0) << lint.out;
  const std::string text = read_text(xml);
  EXPECT_NE(text.find("tests=\"3\" failures=\"1\" errors=\"0\""), std::string::npos) << text;
  EXPECT_NE(text.find("<failure type=\"hang\" message=\"long run: RTL PE 0 ran 10000 cycles"), std::string::npos) << text;
  EXPECT_NE(text.find("rerun: " + std::string(S2COSIM_BIN) + " regress"), std::string::npos) << text;
  EXPECT_NE(text.find("name=\"&lt;script&gt;alert(1)&lt;/script&gt;\""), std::string::npos) << text;
  // and a schema violation is caught: the check can fail
  std::ofstream(dir.path("bad.xml")) << "<testsuites><testsuite name=\"x\"><testcase/></testsuite></testsuites>\n";
  EXPECT_NE(shell("xmllint --noout --schema tests/junit/junit.xsd " + shell_quote(dir.path("bad.xml"))).exit_code, 0);
}

// flaw-limit's probes as results: JUnit that validates, an HTML report, and a failing probe's rerun line (its
// contract-1 row fed to regress on standard input) that shows the flaw again.
TEST(Replay, FlawLimitProbeRerunsFromItsRow) {
  const TempDir dir;
  const std::string xml = dir.path("f.xml"), html = dir.path("f.html");
  const Ran r = shell(bin() + " flaw-limit mm_wide_a --junit " + shell_quote(xml) + " --html " + shell_quote(html));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(shell("xmllint --noout --schema tests/junit/junit.xsd " + shell_quote(xml)).exit_code, 0);
  EXPECT_NE(read_text(html).find("control: the reproducer with the flaw off"), std::string::npos);
  const std::string text = read_text(xml);
  const std::size_t at = text.find("rerun: printf");
  ASSERT_NE(at, std::string::npos) << text;
  // the line as XML escaped it, &apos; back to ' (built anew: GCC 12's -Wrestrict misfires on replace in a loop)
  const std::string escaped = text.substr(at + 7, text.find("</failure>", at) - at - 7);
  std::string line;
  for (std::size_t i = 0; i < escaped.size();) {
    if (escaped.compare(i, 6, "&apos;") == 0) line += '\'', i += 6;
    else line += escaped[i++];
  }
  const Ran again = shell(line + " -q");
  EXPECT_EQ(again.exit_code, 1) << line << "\n" << again.out;
  EXPECT_NE(again.out.find("(0 pass"), std::string::npos) << again.out;
}

// Every failure's rerun line, run as it stands from the source tree, reruns exactly that task with the same
// result; a changed configuration is refused by its hash.
TEST(Replay, RerunLineReproducesTheFailure) {
  const TempDir dir;
  const std::string json = dir.path("r.json");
  ASSERT_EQ(shell(bin() + " regress " + shell_quote(flaw_vectors(dir)) + " --flaw neighbor_conv -q --json " + shell_quote(json)).exit_code, 1);
  const nlohmann::json j = read_json(json);
  const nlohmann::json& failed = j["results"]["checks"][1];
  ASSERT_EQ(failed["name"], "at_limit");
  ASSERT_EQ(failed["status"], "hang");
  const std::string replay = failed["replay"].get<std::string>();
  const Ran again = shell(replay + " --json " + shell_quote(dir.path("again.json")));
  EXPECT_EQ(again.exit_code, 1) << replay << "\n" << again.out;
  const nlohmann::json a = read_json(dir.path("again.json"));
  ASSERT_EQ(a["tasks"].size(), 1u);
  EXPECT_EQ(without_wall_times(a["tasks"][0]), without_wall_times(j["tasks"][1]));
  // the same line without the flaw is another configuration: refused, nothing run
  std::string no_flaw = replay;
  no_flaw.erase(no_flaw.find(" --flaw neighbor_conv"), std::string(" --flaw neighbor_conv").size());
  const Ran refused = shell(no_flaw);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("the configuration differs from the run being replayed"), std::string::npos) << refused.out;
}

TEST(Replay, RunNetRerunLineNamesTheBlockAndStrategy) {
  const TempDir dir;
  const std::string json = dir.path("n.json");
  const Ran r = shell(bin() + " run-net --net vectors/mini_chip.net --split vectors/mini_chip_split.txt --target s2 "
                              "--preset mini --layers CONV_4 --strategy fuse_noreuse --json " + shell_quote(json));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string replay = read_json(json)["results"]["checks"][0]["replay"].get<std::string>();
  EXPECT_NE(replay.find("--layers CONV_4 --strategy fuse_noreuse"), std::string::npos) << replay;
  const Ran again = shell(replay + " --json " + shell_quote(dir.path("again.json")));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(without_wall_times(read_json(dir.path("again.json"))["operations"]), without_wall_times(read_json(json)["operations"]));
}

// --waves: every failing task's RTL run again on a traced model, an FST file GTKWave's tools read, with the
// QPE's signals and the window asked for (PE clocks of 4 ns); the reports link it.
TEST(Waves, FailingTaskGetsAnFstWindowGtkwaveReads) {
  const TempDir dir;
  const std::string waves = dir.path("waves"), json = dir.path("r.json"), html = dir.path("r.html");
  const Ran r = shell(bin() + " regress " + shell_quote(flaw_vectors(dir)) + " --flaw neighbor_conv -q --waves " +
                      shell_quote(waves) + " --waves-window 500 --json " + shell_quote(json) + " --html " + shell_quote(html));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const nlohmann::json checks = read_json(json)["results"]["checks"];
  EXPECT_EQ(checks[0]["waves"], "");  // passing tasks get none
  EXPECT_EQ(checks[2]["waves"], "");
  const std::string fst = checks[1]["waves"].get<std::string>();
  ASSERT_EQ(fst, waves + "/1_at_limit.fst");
  EXPECT_NE(read_text(html).find("<a href=\"" + fst + "\">"), std::string::npos);
  EXPECT_NE(r.out.find("waves: " + fst), std::string::npos) << r.out;
  const Ran vcd = shell("fst2vcd " + shell_quote(fst));
  ASSERT_EQ(vcd.exit_code, 0) << vcd.out.substr(0, 2000);
  for (const char* signal : {" clk $end", " pe_irq_done [3:0] $end", "$scope module u_mla $end", " host_valid $end"})
    EXPECT_NE(vcd.out.find(signal), std::string::npos) << signal;
  // a hang: the last 500 PE clocks (2 ns per NoC half-period edge pair: 4 ns a PE clock) before the watchdog
  std::uint64_t first = 0, last = 0;
  bool any = false;
  std::istringstream in(vcd.out);
  for (std::string line; std::getline(in, line);)
    if (line.size() > 1 && line[0] == '#') {
      const std::uint64_t t = std::stoull(line.substr(1));
      if (!any) first = t;
      last = t;
      any = true;
    }
  ASSERT_TRUE(any);
  EXPECT_NEAR(double(last - first), 500.0 * 4, 8.0) << first << " " << last;
}

// The project's RTL, with one byte of what the core stream stored changed afterwards: a block that
// mismatches, for run-net's waveforms.
class CorruptingRtl final : public StreamBackend {
 public:
  explicit CorruptingRtl(const HwConfig& cfg) : rtl_(make_rtl_stream_backend(cfg)) {}
  std::string name() const override { return "rtl"; }
  using StreamBackend::run;
  StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) override {
    StreamResult r = rtl_->run(s, mem, opt);
    for (auto& d : mem.drams)
      for (auto& byte : d) byte = static_cast<std::uint8_t>(byte + 1);
    return r;
  }

 private:
  std::unique_ptr<StreamBackend> rtl_;
};

TEST(Waves, FailingBlockGetsAnFstPerQpe) {
  const TempDir dir;
  RunNetRequest req;
  req.net = source_path("vectors/mini_chip.net");
  req.split_file = source_path("vectors/mini_chip_split.txt");
  req.target = "s2";
  req.preset = "mini";
  req.backend = "both";
  req.layers = {"CONV_4"};
  req.strategies = {"fuse_noreuse"};
  req.waves_dir = dir.path("waves");
  req.waves_window = 300;
  req.json_out = dir.path("n.json");
  req.rtl_backend = [](const HwConfig& cfg) { return std::make_unique<CorruptingRtl>(cfg); };
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 1) << err.str() << out.str();
  const nlohmann::json c = read_json(req.json_out)["results"]["checks"][0];
  EXPECT_EQ(c["status"], "mismatch");
  ASSERT_EQ(c["waves"], req.waves_dir + "/CONV_4_fuse_noreuse");
  for (const char* qpe : {"qpe_x0_y0.fst", "qpe_x1_y0.fst", "qpe_x0_y1.fst", "qpe_x1_y1.fst"}) {
    const Ran vcd = shell("fst2vcd " + shell_quote(c["waves"].get<std::string>() + "/" + qpe));
    ASSERT_EQ(vcd.exit_code, 0) << qpe;
    EXPECT_NE(vcd.out.find(" mesh_out_valid"), std::string::npos) << qpe;
    EXPECT_NE(vcd.out.find(" dram_valid"), std::string::npos) << qpe;
  }
}

// Progress shows on a terminal (here a pseudo-terminal made by script(1)) and not at all in a pipe.
TEST(Progress, OnATerminalOnly) {
  const std::string cmd = bin() + " regress vectors/smoke.csv --backend model -q";
  const Ran piped = shell("S2COSIM_PROGRESS_AFTER_S=0 " + cmd);
  EXPECT_EQ(piped.exit_code, 0) << piped.out;
  EXPECT_EQ(piped.out.find("[8/8]"), std::string::npos) << piped.out;
  const Ran tty = shell("S2COSIM_PROGRESS_AFTER_S=0 script -qec " + shell_quote(cmd) + " /dev/null");
  EXPECT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("[8/8] 100.0%, 0s left: smoke_"), std::string::npos) << tty.out;
}

// The HTML report in a real browser: headless Chromium renders it, its script runs (data-ready), the plots
// and every row are there, and a task id that is markup shows as text.
TEST(Html, RendersInChromiumWithPlotsRowsAndEscapedInput) {
  const TempDir dir;
  const std::string html = dir.path("r.html");
  ASSERT_EQ(shell(bin() + " regress " + shell_quote(flaw_vectors(dir)) + " --flaw neighbor_conv -q --html " + shell_quote(html)).exit_code, 1);
  const Ran dom = shell("chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                        "--disable-background-networking --disable-component-update --disable-sync --user-data-dir=" +
                        shell_quote(dir.path("profile")) + " --dump-dom " + shell_quote("file://" + html));
  ASSERT_EQ(dom.exit_code, 0) << dom.out;
  const std::string& d = dom.out;
  EXPECT_NE(d.find("data-ready=\"1\""), std::string::npos) << "the report's script did not run";
  EXPECT_NE(d.find("id=\"plot-delta\""), std::string::npos);
  EXPECT_NE(d.find("id=\"plot-model-rtl\""), std::string::npos);
  EXPECT_NE(d.find("3 of 3 shown"), std::string::npos);
  std::size_t rows = 0;
  for (std::size_t p = d.find("<tr class=\"row\""); p != std::string::npos; p = d.find("<tr class=\"row\"", p + 1)) ++rows;
  EXPECT_EQ(rows, 3u);
  EXPECT_NE(d.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(d.find("<script>alert(1)</script>"), std::string::npos) << "input reached the page as markup";
  EXPECT_NE(d.find("id=\"failure-1\""), std::string::npos);
  EXPECT_NE(d.find("rerun:"), std::string::npos);
}

// The counts and the energy reach every output a check has: the JSON (and back, for merge and resume), the
// CSV's columns, the HTML's plot and tables, the JUnit's property; a count a backend could not observe is
// null, blank, and named as not available.
TEST(Outputs, ActivityAndEnergyReachEveryOutput) {
  ResultSet r;
  r.command = "regress";
  r.title = "counts";
  r.config_hash = "h";
  r.total = 2;
  r.energy_table = default_energy_table();
  CheckResult a;
  a.name = "t1";
  a.rtl_cycles = a.model_cycles = 1000;
  a.activity.model.emplace();
  a.activity.model->mac_ops = 64000;
  a.activity.model->sram_read_bytes_mla_a = 4096;
  a.activity.model->pe_busy_cycles = 1000;
  a.activity.rtl = a.activity.model;
  a.activity.rtl->mac_ops = 64320;  // the model 0.5% short
  a.activity.rtl_unavailable = {"noc_packets", "noc_packet_hops"};
  charge_energy(a, *r.energy_table, 250.0);
  ASSERT_TRUE(a.energy);
  EXPECT_EQ(a.energy_from, "model");  // the reference, where it ran
  EXPECT_DOUBLE_EQ(a.energy->mac, 64000 * r.energy_table->entries.at("mac_ops").pj_per_unit);
  EXPECT_GT(a.energy->static_pj, 0.0);  // 1000 PE clocks of static power
  CheckResult b;
  b.name = "t2";
  b.index = 1;
  r.checks = {a, b};

  const ResultSet back = results_from_json(results_json(r));
  ASSERT_EQ(back.checks.size(), 2u);
  EXPECT_EQ(back.checks[0].activity.model->named(), a.activity.model->named());
  EXPECT_EQ(back.checks[0].activity.rtl->mac_ops, 64320u);
  EXPECT_EQ(back.checks[0].activity.rtl_unavailable, a.activity.rtl_unavailable);
  EXPECT_EQ(back.checks[0].energy, a.energy);
  EXPECT_FALSE(back.checks[1].activity.model || back.checks[1].energy);
  ASSERT_TRUE(back.energy_table);
  EXPECT_EQ(energy_table_hash(*back.energy_table), energy_table_hash(*r.energy_table));
  const nlohmann::ordered_json j = results_json(r);
  EXPECT_TRUE(j["checks"][0]["activity"]["rtl"]["noc_packets"].is_null());
  EXPECT_EQ(j["checks"][0]["activity"]["model"]["mac_ops"], 64000);
  EXPECT_EQ(j["checks"][0]["activity"]["model"]["dram_read_bytes"], 0);
  EXPECT_GT(j["checks"][0]["energy_pj"]["total"].get<double>(), 0.0);

  const std::string csv = results_csv(r);
  const std::string head = csv.substr(0, csv.find('\n'));
  EXPECT_NE(head.find(",model_mac_ops,"), std::string::npos) << head;
  EXPECT_NE(head.find(",rtl_noc_packets,"), std::string::npos) << head;
  EXPECT_NE(head.find(",energy_pj_total"), std::string::npos) << head;
  const std::string row = csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1);
  std::size_t fields = 1, head_fields = 1;
  for (char ch : row) fields += ch == ',';
  for (char ch : head) head_fields += ch == ',';
  EXPECT_EQ(fields, head_fields) << row;
  EXPECT_NE(row.find(",64000,"), std::string::npos) << row;

  const std::string html = results_html(r);
  EXPECT_NE(html.find("id=\"plot-energy\""), std::string::npos);
  EXPECT_NE(html.find("id=\"activity\""), std::string::npos);
  EXPECT_NE(html.find("id=\"energy\""), std::string::npos);
  EXPECT_NE(html.find("-0.50%"), std::string::npos) << "the model's delta from the RTL per count";

  const std::string junit = results_junit(r);
  EXPECT_NE(junit.find("name=\"activity_and_energy\""), std::string::npos);
  EXPECT_NE(junit.find("not available from the RTL (not compared): noc_packets, noc_packet_hops"), std::string::npos) << junit;
  const std::string console = format_activity_and_energy(r);
  EXPECT_NE(console.find("max |event count delta| 0.498%, t1 mac_ops (bound 1%)"), std::string::npos) << console;
  EXPECT_NE(console.find("uncalibrated"), std::string::npos) << console;
}

}  // namespace
}  // namespace s2
