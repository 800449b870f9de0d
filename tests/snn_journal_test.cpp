// `s2cosim snn` loses nothing finished and splits like every other command: a journal record per finished
// layout, a stopped run resumed to the uninterrupted run's report (its percentages made again from the
// layouts' figures), damaged records run again, a journal of another layer refused, shards merged into the
// unsharded report, and a shard of another run refused (commands/snn_records.h).
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "harness/commands/merge.h"
#include "harness/commands/snn_runner.h"
#include "harness/session/journal.h"
#include "test_support.h"

using namespace s2;

namespace {

using namespace s2::test;

// The command's default layer (64 x 40, 4 delays: one PE in every layout), every layout, on the model.
SnnRequest small_layer(const std::string& json) {
  SnnRequest req;
  req.draw = {64, 40, 4, 16, 0.1, 0.1, 1};
  req.backend = "model";
  req.json_out = json;
  req.quiet = true;
  return req;
}

int run(const SnnRequest& req, std::string* said = nullptr) {
  std::ostringstream out, err;
  const int rc = snn(req, out, err);
  if (said) *said = out.str() + err.str();
  return rc;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path, std::ios::trunc);
  for (const std::string& l : lines) f << l << "\n";
}

}  // namespace

// Both backends: the RTL makes a layout last long enough to be stopped after the first.
TEST(SnnJournal, AStoppedRunResumesToTheUninterruptedReport) {
  const TempDir dir;
  SnnRequest req = small_layer(dir.path("whole.json"));
  req.backend = "both";
  std::string said;
  ASSERT_EQ(run(req, &said), 0) << said;
  const nlohmann::json whole = read_json(req.json_out);
  // the percentages depend on other layouts' figures: a resumed run must make them again, not leave them out
  ASSERT_TRUE(whole["layouts"][3]["time_percent_of_serial_arm"].is_number());
  ASSERT_TRUE(whole["layouts"][3]["memory_percent_of_original_mac"].is_number());
  // one record per layout after the run's first
  EXPECT_EQ(read_journal(req.json_out + ".jsonl").size(), 6u);

  // the same run stopped by SIGTERM once its first layout is in the journal
  req.json_out = dir.path("cut.json");
  const std::string journal = req.json_out + ".jsonl";
  const int status = run_and_signal([&](std::ostream& o, std::ostream& e) { return snn(req, o, e); }, journal, 2, SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping";
  ASSERT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  const std::size_t done = read_journal(journal).size() - 1;
  ASSERT_GE(done, 1u);
  ASSERT_LT(done, 5u);
  // the report holds what finished
  const nlohmann::json cut = read_json(req.json_out);
  EXPECT_EQ(cut["stopped_by_signal"], SIGTERM);
  EXPECT_EQ(cut["layouts"].size(), done);
  EXPECT_EQ(cut["results"]["checks"].size(), done);

  // resumed from its own journal, which the run continues
  req.resume = journal;
  ASSERT_EQ(run(req, &said), 0) << said;
  EXPECT_NE(said.find("resumed: " + std::to_string(done) + " layouts from " + journal), std::string::npos) << said;
  EXPECT_EQ(without_wall_times(whole), without_wall_times(read_json(req.json_out)));
  EXPECT_EQ(read_json(req.json_out)["resume"]["taken"], done);
  EXPECT_EQ(read_journal(journal).size(), 6u);
}

TEST(SnnJournal, ADamagedRecordIsRunAgainAndAnotherLayersJournalIsRefused) {
  const TempDir dir;
  SnnRequest req = small_layer(dir.path("whole.json"));
  ASSERT_EQ(run(req), 0);
  const std::string journal = req.json_out + ".jsonl";
  // a journal cut after three layouts (as by a kill), its second layout's record edited (its checksum fails)
  std::vector<std::string> lines = lines_of(journal);
  ASSERT_EQ(lines.size(), 6u);
  lines.resize(4);
  const std::string::size_type at = lines[2].find("\"status\":\"pass\"");
  ASSERT_NE(at, std::string::npos) << lines[2];
  lines[2].replace(at, 15, "\"status\":\"hang\"");
  const std::string edited = dir.path("edited.jsonl");
  write_lines(edited, lines);
  req.json_out = dir.path("resumed.json");
  req.resume = edited;
  std::string said;
  ASSERT_EQ(run(req, &said), 0) << said;
  EXPECT_NE(said.find("resumed: 2 layouts from " + edited + " are not run again; run again instead of 1 damaged line"),
            std::string::npos) << said;
  EXPECT_EQ(without_wall_times(read_json(dir.path("whole.json"))), without_wall_times(read_json(req.json_out)));
  // another journal gets the taken records again, so it can be resumed in turn
  EXPECT_EQ(read_journal(req.json_out + ".jsonl").size(), 6u);

  // a journal of another drawn layer: refused, naming the field, nothing run
  req.json_out = dir.path("other.json");
  req.draw.seed = 2;
  ASSERT_EQ(run(req, &said), 2);
  EXPECT_NE(said.find("a journal of another run: its seed is 1, this run's 2"), std::string::npos) << said;
  // a layer read from files: the same paths with other content are another layer
  SnnRequest files = small_layer(dir.path("files.json"));
  files.save_layer_dir = dir.path("layer");
  ASSERT_EQ(run(files), 0);
  files.save_layer_dir.clear();
  files.weights_file = dir.path("layer/weights.npy");
  files.spikes_file = dir.path("layer/spikes.npy");
  ASSERT_EQ(run(files), 0);
  SnnRequest redraw = small_layer("");
  redraw.draw.seed = 3;
  redraw.save_layer_dir = dir.path("layer");
  ASSERT_EQ(run(redraw), 0);
  files.resume = files.json_out + ".jsonl";
  files.json_out = dir.path("files_again.json");
  ASSERT_EQ(run(files, &said), 2);
  EXPECT_NE(said.find("a journal of another run: its layer_hash is"), std::string::npos) << said;
}

TEST(SnnShards, MergedEqualTheUnshardedReport) {
  const TempDir dir;
  auto shard = [&](const std::string& s, const std::string& name, std::uint64_t seed = 1) {
    SnnRequest req = small_layer(dir.path(name + ".json"));
    req.draw.seed = seed;
    req.shard = s;
    std::string said;
    EXPECT_EQ(run(req, &said), 0) << said;
    return req.json_out;
  };
  const std::string whole = shard("1/1", "whole");
  const std::string a = shard("1/2", "a"), b = shard("2/2", "b");
  // shard 1/2 runs layouts 0, 2 and 4 (serial_arm, operand_stack, echelon_mixed), shard 2/2 layouts 1 and 3
  EXPECT_EQ(read_json(a)["layouts"].size(), 3u);
  EXPECT_EQ(read_json(b)["layouts"][0]["layout"], "original_mac");
  // a shard without serial_arm cannot give the time relative to it; the merge makes it across the shards
  EXPECT_TRUE(read_json(b)["layouts"][1]["time_percent_of_serial_arm"].is_null());
  MergeRequest m{{b, a}, dir.path("merged.json"), "", dir.path("merged.xml"), ""};
  std::ostringstream out, err;
  ASSERT_EQ(merge(m, out, err), 0) << err.str();
  const nlohmann::json merged = read_json(m.json_out), unsharded = read_json(whole);
  ASSERT_TRUE(unsharded["layouts"][3]["time_percent_of_serial_arm"].is_number());
  EXPECT_EQ(without_wall_times(merged), without_wall_times(unsharded));

  // a shard of another run (another layer): refused, naming the field, nothing written
  MergeRequest other{{a, shard("2/2", "other", 2)}, dir.path("refused.json"), "", "", ""};
  std::ostringstream out2, err2;
  EXPECT_EQ(merge(other, out2, err2), 2);
  EXPECT_NE(err2.str().find("field 'layer'"), std::string::npos) << err2.str();
  EXPECT_FALSE(std::ifstream(other.json_out).good());
  // another configuration (a flaw on): the configuration hash differs
  SnnRequest flawed = small_layer(dir.path("flawed.json"));
  flawed.flaws = {"sram2clk"};
  flawed.shard = "2/2";
  ASSERT_EQ(run(flawed), 0);
  MergeRequest flaw{{a, flawed.json_out}, dir.path("refused.json"), "", "", ""};
  std::ostringstream out3, err3;
  EXPECT_EQ(merge(flaw, out3, err3), 2);
  EXPECT_NE(err3.str().find("field 'config_hash'"), std::string::npos) << err3.str();
}
