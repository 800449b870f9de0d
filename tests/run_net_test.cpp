// s2cosim run-net end to end on the chip model: a small network's whole run in Table 5.10's layout and
// its JSON, refusals, the figure tables compiled into the binary against vectors/ as it stands, and which
// network gets which published figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/commands/merge.h"
#include "harness/commands/net_block_run.h"
#include "harness/commands/net_runner.h"
#include "harness/stimulus/embedded_table.h"
#include "harness/stimulus/npy_file.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/splitmix64.h"
#include "test_networks.h"
#include "test_support.h"

using namespace s2;
using s2::test::TempDir;
using s2::test::read_json;
using s2::test::source_path;
using s2::test::without_wall_times;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The data rows of a CSV in vectors/ (comments skipped), split at commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& file) {
  std::ifstream in(std::string(S2_SOURCE_DIR) + "/vectors/" + file);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST(RunNet, TheThesisTablesMatchTheirCopiesInVectors) {
  const auto net = csv_rows("thesis_network_clocks.csv");
  ASSERT_EQ(net.size(), network_categories().size());
  for (const auto& r : net) {
    EXPECT_EQ(thesis_network_clocks("vgg16", r[0]).value_or(0), std::stoull(r[1])) << r[0];
    EXPECT_EQ(thesis_network_clocks("resnet50", r[0]).value_or(0), std::stoull(r[2])) << r[0];
  }
  const auto ops = csv_rows("thesis_mapping_clocks.csv");
  ASSERT_FALSE(ops.empty());
  const char* strategies[] = {"nofuse_noreuse", "fuse_noreuse", "fuse_reuse"};
  for (const auto& r : ops)
    for (int k = 0; k < 3; ++k) {
      const std::string cell = r.size() > static_cast<std::size_t>(3 + k) ? r[static_cast<std::size_t>(3 + k)] : "";
      const auto v = thesis_mapping_clocks(r[0], r[1], r[2], strategies[k]);
      if (cell.empty()) EXPECT_FALSE(v.has_value()) << r[2];
      else EXPECT_EQ(v.value_or(0), std::stoull(cell)) << r[2] << " " << strategies[k];
    }
}

TEST(RunNet, AWholeNetworkOnTheChipSumsItsClocksPerTable510Category) {
  RunNetRequest req;
  req.net = write_temp("small.net", test_networks::kSmall);
  req.target = "s2";
  req.whole = true;
  req.json_out = ::testing::TempDir() + "whole.json";
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("thesis Table 5.10 layout"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("FC_5 ran fuse_noreuse for fuse_reuse"), std::string::npos) << out.str();
  nlohmann::json j;
  std::ifstream(req.json_out) >> j;
  EXPECT_EQ(j["config"]["chip"]["name"], "prototype");
  const auto& cats = j["category_cycles"]["fuse_reuse"];
  std::uint64_t sum = 0;
  for (const std::string& c : network_categories())
    if (c != "sum") sum += cats[c].get<std::uint64_t>();
  // the categories add up (each rounded on its own) to the sum, and every operation kind of the network is there
  EXPECT_NEAR(double(sum), double(cats["sum"].get<std::uint64_t>()), 8.0);
  for (const char* c : {"CONV", "FC", "PADD", "ACTI", "QUAN", "POOL"}) EXPECT_GT(cats[c].get<std::uint64_t>(), 0u) << c;
  EXPECT_EQ(cats["MAT_ELE"].get<std::uint64_t>(), 0u);
  // every block ran bit-exact, with where its time went (its one run, ARM timed)
  EXPECT_EQ(j["core_clocks"], false);
  for (const auto& o : j["operations"]) {
    EXPECT_TRUE(o["data_match"].get<bool>()) << o["name"];
    EXPECT_TRUE(o.contains("model_time_arm_timed")) << o["name"];
  }
}

// A whole run prints the wall-time target of what it ran (issue 31): the model alone its 5 s, both backends their
// 15 min; a whole run of some blocks (--layers) neither. The bounds are set to 0 and to a day so that met and missed do not depend
// on this machine's speed.
TEST(RunNet, AWholeRunPrintsTheWallTimeTargetOfItsBackends) {
  const auto run = [](const std::string& backend, double bound_s, std::vector<std::string> layers = {}) {
    RunNetRequest req;
    req.net = write_temp("small_residual.net", test_networks::kSmallResidual);
    req.target = "s2";
    req.preset = "mini";
    req.whole = true;
    req.layers = std::move(layers);
    req.backend = backend;
    req.policy.net.whole_model_wall_seconds = req.policy.net.whole_both_wall_seconds = bound_s;
    std::ostringstream out, err;
    EXPECT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
    return out.str();
  };
  const std::string model_line = "whole network on the model, data checked, in under", both_line = "whole network on both backends in under";
  const std::string model_missed = run("model", 0.0), both_met = run("both", 86400.0), both_missed = run("both", 0.0);
  EXPECT_NE(model_missed.find("[MISS] " + model_line), std::string::npos) << model_missed;
  EXPECT_EQ(model_missed.find(both_line), std::string::npos) << model_missed;
  EXPECT_NE(both_met.find("[met ] " + both_line + " 1440 min wall"), std::string::npos) << both_met;
  EXPECT_EQ(both_met.find(model_line), std::string::npos) << both_met;
  EXPECT_NE(both_missed.find("[MISS] " + both_line + " 0 min wall"), std::string::npos) << both_missed;
  const std::string some = run("both", 0.0, {"CONV_1"});  // some blocks of the network, not the whole
  EXPECT_EQ(some.find(model_line), std::string::npos) << some;
  EXPECT_EQ(some.find(both_line), std::string::npos) << some;
}

// --timing-only: the same clocks, counts and categories as the run with data, every data field marked not
// checked (null), and refused where it cannot mean anything.
TEST(RunNet, TimingOnlyGivesTheSameClocksAndMarksTheDataNotChecked) {
  const auto run = [](bool timing_only, const std::string& name) {
    RunNetRequest req;
    req.net = write_temp("small_residual.net", test_networks::kSmallResidual);
    req.target = "s2";
    req.preset = "mini";
    req.whole = true;
    req.timing_only = timing_only;
    req.json_out = ::testing::TempDir() + name;
    std::ostringstream out, err;
    EXPECT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
    nlohmann::json j;
    std::ifstream(req.json_out) >> j;
    return std::make_pair(j, out.str());
  };
  const auto [with_data, text_with] = run(false, "with_data.json");
  const auto [timing, text] = run(true, "timing_only.json");
  EXPECT_EQ(timing["timing_only"], true);
  EXPECT_FALSE(with_data.contains("timing_only"));
  EXPECT_EQ(timing["category_cycles"], with_data["category_cycles"]);
  ASSERT_EQ(timing["operations"].size(), with_data["operations"].size());
  ASSERT_FALSE(timing["operations"].empty());
  for (std::size_t i = 0; i < timing["operations"].size(); ++i) {
    const auto& t = timing["operations"][i];
    const auto& d = with_data["operations"][i];
    // a --whole run: the one run per stream, ARM timed
    for (const char* k : {"name", "strategy", "model_cycles_arm_timed", "model_block_cycles_arm_timed", "arm_cycles",
                          "model_activity_arm_timed", "model_simulated_cycles", "streams", "status", "model_time_arm_timed"}) {
      EXPECT_TRUE(d.contains(k)) << d["name"] << " " << k;
      EXPECT_EQ(t[k], d[k]) << t["name"] << " " << k;
    }
    EXPECT_TRUE(d["data_match"].get<bool>()) << d["name"];
    EXPECT_TRUE(t["data_match"].is_null()) << t["name"];
    EXPECT_TRUE(t["model_data_match"].is_null()) << t["name"];
  }
  EXPECT_NE(text.find("not checked (timing only)"), std::string::npos) << text;
  EXPECT_EQ(text_with.find("not checked"), std::string::npos) << text_with;
  EXPECT_NE(text.find("without data (--timing-only)"), std::string::npos) << text;
  // nothing to compare with the RTL, no output without data
  for (const std::string what : {"backend", "input"}) {
    RunNetRequest req;
    req.net = write_temp("small_residual.net", test_networks::kSmallResidual);
    req.target = "s2";
    req.preset = "mini";
    req.timing_only = true;
    if (what == "backend") req.backend = "both";
    else req.input_npy = ::testing::TempDir() + "x.npy";
    std::ostringstream out, err;
    EXPECT_EQ(run_net(req, out, err), 2) << what;
    EXPECT_NE(err.str().find("--timing-only"), std::string::npos) << err.str();
  }
}

// One simulated run per block (issue 46): a --whole run of a reference net on both backends runs every
// stream once per backend, ARM timed, and compares those runs clock for clock (the chip RTL charges the ARM
// its Table 5.9 clocks as the model does); its report has no ARM-free figure. --core-clocks runs the blocks ARM
// free too, as before, and its ARM-timed figures are the same. Each report's journal resumes to it.
TEST(RunNet, AWholeRunRunsEveryStreamOnceArmTimedOnEachBackendAndCoreClocksAddsTheArmFreeRuns) {
  const TempDir dir;
  const auto run = [&](bool core_clocks, const std::string& name, const std::string& resume = "") {
    RunNetRequest req;
    req.net = source_path("vectors/nets/tiny_cnn_qdq.onnx");
    req.input_npy = source_path("vectors/nets/tiny_cnn_input.npy");
    req.target = "s2";
    req.preset = "mini";
    req.whole = true;
    req.backend = "both";
    req.core_clocks = core_clocks;
    req.json_out = dir.path(name);
    req.resume = resume;
    std::ostringstream out, err;
    const int code = run_net(req, out, err);
    return std::make_tuple(code, out.str() + err.str(), resume.empty() ? read_json(req.json_out) : nlohmann::json());
  };
  const auto [code, text, timed] = run(false, "timed.json");
  ASSERT_EQ(code, 0) << text;
  const auto [code_core, text_core, core] = run(true, "core.json");
  ASSERT_EQ(code_core, 0) << text_core;
  EXPECT_EQ(timed["core_clocks"], false);
  EXPECT_EQ(timed["compared_arm_timing"], "timed");
  EXPECT_EQ(core["core_clocks"], true);
  EXPECT_EQ(core["compared_arm_timing"], "free");
  EXPECT_NE(text.find("the RTL too"), std::string::npos) << text;
  EXPECT_NE(text.find("each block's streams run once, ARM timed"), std::string::npos) << text;
  EXPECT_NE(text_core.find("the RTL runs ARM free"), std::string::npos) << text_core;
  const auto& ops = timed["operations"];
  ASSERT_FALSE(ops.empty());
  ASSERT_EQ(ops.size(), core["operations"].size());
  std::uint64_t arm = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    const auto& c = core["operations"][i];
    const std::string what = o.value("name", "?") + " " + o.value("strategy", "?");
    // (a) bit-exact, and model and RTL equal clock for clock, both ARM timed
    EXPECT_EQ(o["status"], "pass") << what;
    EXPECT_EQ(o["data_match"], true) << what;
    EXPECT_EQ(o["model_data_match"], true) << what;
    EXPECT_EQ(o["rtl_data_match"], true) << what;
    EXPECT_EQ(o["delta"], 0.0) << what;
    ASSERT_TRUE(o.contains("model_cycles_arm_timed") && o.contains("rtl_cycles_arm_timed")) << what;
    EXPECT_EQ(o["model_cycles_arm_timed"], o["rtl_cycles_arm_timed"]) << what;
    EXPECT_EQ(o["model_block_cycles_arm_timed"], o["rtl_block_cycles_arm_timed"]) << what;
    // no ARM-free figure
    for (const char* k : {"model_cycles", "model_block_cycles", "model_activity", "model_time", "rtl_cycles", "rtl_block_cycles",
                          "rtl_activity", "thesis_cycles", "thesis_deviation"})
      EXPECT_FALSE(o.contains(k)) << what << " " << k;
    EXPECT_TRUE(o.contains("model_activity_arm_timed") && o.contains("rtl_activity_arm_timed")) << what;
    // (c) each stream ran once on each backend: what each simulated is the sum of its ARM-timed stream clocks
    std::uint64_t model_sum = 0, rtl_sum = 0;
    for (const auto& st : o["streams"]) {
      EXPECT_FALSE(st.contains("model_cycles") || st.contains("rtl_cycles")) << what;
      EXPECT_EQ(st["model_cycles_arm_timed"], st["rtl_cycles_arm_timed"]) << what << " " << st["operation"];
      model_sum += st["model_cycles_arm_timed"].get<std::uint64_t>();
      rtl_sum += st["rtl_cycles_arm_timed"].get<std::uint64_t>();
    }
    EXPECT_EQ(o["model_simulated_cycles"].get<std::uint64_t>(), model_sum) << what;
    EXPECT_EQ(o["rtl_simulated_cycles"].get<std::uint64_t>(), rtl_sum) << what;
    EXPECT_EQ(o["model_block_cycles_arm_timed"].get<std::uint64_t>(), model_sum) << what;
    arm += o["arm_cycles"].get<std::uint64_t>();
    // (b) --core-clocks: the ARM-free figures again, the ARM-timed ones the same as (a)'s
    EXPECT_EQ(c["status"], "pass") << what;
    for (const char* k : {"model_cycles", "model_block_cycles", "model_activity", "model_time", "rtl_cycles", "rtl_block_cycles",
                          "rtl_activity"})
      EXPECT_TRUE(c.contains(k)) << what << " " << k;
    for (const char* k : {"model_block_cycles_arm_timed", "model_activity_arm_timed", "arm_cycles", "model_data_match"})
      EXPECT_EQ(c[k], o[k]) << what << " " << k;
    ASSERT_EQ(c["streams"].size(), o["streams"].size()) << what;
    for (std::size_t k = 0; k < o["streams"].size(); ++k)
      EXPECT_EQ(c["streams"][k]["model_cycles_arm_timed"], o["streams"][k]["model_cycles_arm_timed"]) << what;
    EXPECT_GE(c["model_simulated_cycles"].get<std::uint64_t>(), o["model_simulated_cycles"].get<std::uint64_t>()) << what;
    // the whole block's clocks per Table 5.10 category sum to its ARM-timed clocks either way
    double sum_timed = 0, sum_core = 0;
    for (const auto& [cat, v] : o["category_cycles"].items()) sum_timed += v.get<double>();
    for (const auto& [cat, v] : c["category_cycles"].items()) sum_core += v.get<double>();
    EXPECT_NEAR(sum_timed, sum_core, 1e-6 * sum_core + 1e-6) << what;
  }
  // the net has ARM operations, so ARM free and ARM timed differ: the RTL ran ARM timed to match the model
  EXPECT_GT(arm, 0u);
  EXPECT_LT(core["operations"][0]["model_cycles"].get<std::uint64_t>(), core["operations"][0]["model_block_cycles_arm_timed"].get<std::uint64_t>());
  EXPECT_EQ(timed["category_cycles"]["fuse_reuse"]["sum"], core["category_cycles"]["fuse_reuse"]["sum"]);
  // the ARM-free column is empty, the comparator says what it compared
  EXPECT_NE(text.find("comparator: pass (core operation, ARM timed:"), std::string::npos) << text;
  // the journal of the ARM-timed run resumes to its report; a core-clock run's journal is another run's
  const auto [again, again_text, unused] = run(false, "again.json", dir.path("timed.json.jsonl"));
  ASSERT_EQ(again, 0) << again_text;
  EXPECT_NE(again_text.find("resumed: " + std::to_string(ops.size()) + " block runs"), std::string::npos) << again_text;
  EXPECT_EQ(without_wall_times(timed), without_wall_times(read_json(dir.path("again.json"))));
  const auto [other, other_text, unused2] = run(false, "other.json", dir.path("core.json.jsonl"));
  EXPECT_EQ(other, 2) << other_text;
  EXPECT_NE(other_text.find("its core_clocks is null, this run's false"), std::string::npos) << other_text;
  // nor does merge take the two for shards of one run
  MergeRequest m{{dir.path("timed.json"), dir.path("core.json")}, dir.path("merged.json"), "", "", ""};
  std::ostringstream merge_out, merge_err;
  EXPECT_EQ(merge(m, merge_out, merge_err), 2);
  EXPECT_NE(merge_err.str().find("field 'core_clocks' is true"), std::string::npos) << merge_err.str();
}

// A block must read at least the input its outputs depend on; windows that stop short of the last rows (a
// 2x2 pooling of an odd map) or skip rows (a stride longer than the window) leave the rest unread, and a
// floor of the whole input would call a correct run a deviation.
TEST(RunNet, ABlocksInputFloorIsWhatItsWindowsRead) {
  const char* net =
      "network unread_edges\n"
      "input 35 21 8\n"
      "pool avg 2 2 stride=2\n"          // POOL_1: 35x21 -> 17x10 from 34x20 of it
      "conv 3 3 8 8 stride=2\n"          // CONV_2: 17x10 -> 8x4, its windows over 17x9
      "conv 2 2 8 8 stride=3 pad=1\n"    // CONV_3: 8x4 padded to 10x6 -> 3x2, windows over columns 0 2 3 5 6, rows 0 2 3
      "conv 1 1 8 8 stride=2\n"          // CONV_4: 3x2 -> 2x1 from columns 0 and 2 of row 0
      "fc 16 4\n";
  const mapper::ParsedNetwork n = mapper::parse_network(mapper::parse_layer_list(net, "unread_edges.net"));
  ASSERT_EQ(n.blocks.size(), 5u);
  const std::uint64_t input[] = {34 * 20 * 8, 17 * 9 * 8, 5 * 3 * 8, 2 * 1 * 8, 16};
  const std::uint64_t weights[] = {0, 3 * 3 * 8 * 8, 2 * 2 * 8 * 8, 8 * 8, 16 * 4};
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    EXPECT_EQ(block_activity_floor(n.blocks[i], {}).dram_read_bytes, input[i] + weights[i]) << n.blocks[i].name();
    mapper::BlockResidency in_storage;
    in_storage.input_in_storage = true;
    EXPECT_EQ(block_activity_floor(n.blocks[i], in_storage).dram_read_bytes, weights[i]) << n.blocks[i].name();
  }
  // and the runs on both backends meet it: every block in every strategy passes
  RunNetRequest req;
  req.net = write_temp("unread_edges.net", net);
  req.backend = "both";
  req.json_out = ::testing::TempDir() + "unread_edges.json";
  std::ostringstream out, err;
  EXPECT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  nlohmann::json j;
  std::ifstream(req.json_out) >> j;
  ASSERT_GE(j["operations"].size(), 5u);
  for (const auto& op : j["operations"]) EXPECT_EQ(op["status"], "pass") << op["name"] << " " << op["strategy"];
}

TEST(RunNet, PresetsNeedTheChip) {
  std::ostringstream out, err;
  RunNetRequest q;
  q.preset = "prototype";
  EXPECT_EQ(run_net(q, out, err), 2);
  EXPECT_NE(err.str().find("a chip preset needs --target s2"), std::string::npos) << err.str();
}

TEST(RunNet, AFigureTableNamesTheFileLineAndFieldOfAProblem) {
  const std::string text = "# a comment\nnet,clocks\nvgg16,12\n\nvgg16,12x\n";
  const FigureTable t = parse_figure_table(text, "vectors/x.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.count(t.rows[0], "clocks").value_or(0), 12u);
  try {
    t.count(t.rows[1], "clocks");
    FAIL() << "a malformed figure was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "vectors/x.csv:5: field 'clocks': '12x' is not a whole number");
  }
  EXPECT_THROW(parse_figure_table("net,clocks\nvgg16\n", "vectors/y.csv"), std::invalid_argument);
}

TEST(RunNet, PublishedFiguresGoByTheNetworksLayersNotItsName) {
  // VGG-16's layers under another name are VGG-16; a network called vgg16 with other layers is not
  mapper::Network renamed = mapper::load_network("vgg16");
  renamed.name = "my_net";
  EXPECT_EQ(thesis_network(mapper::parse_network(renamed)), "vgg16");
  mapper::Network other = mapper::parse_layer_list(test_networks::kSmall, "small.net");
  other.name = "vgg16";
  EXPECT_EQ(thesis_network(mapper::parse_network(other)), "");
  // the OctopuScheduler MLP's silicon figures: its layers, whatever it is called; one output more, none
  const std::string mlp = "network some_mlp\ninput 784 1 1\nfc 784 512\nfc 512 256\nfc 256 16 act=none\n";
  const auto figures = silicon_figures(mapper::parse_network(mapper::parse_layer_list(mlp, "mlp.net")));
  ASSERT_TRUE(figures.has_value());
  ASSERT_EQ(figures->layers.size(), 3u);
  EXPECT_EQ(figures->layers[0].us, 323);
  EXPECT_EQ(figures->whole_model_us, 688);
  const std::string wider = "network octopus_mlp\ninput 784 1 1\nfc 784 512\nfc 512 256\nfc 256 17 act=none\n";
  EXPECT_FALSE(silicon_figures(mapper::parse_network(mapper::parse_layer_list(wider, "w.net"))).has_value());
}

TEST(RunNet, AGraphOfLayoutsAndElementwiseBlocksIsExactOnBothBackends) {
  const std::string net = std::string(S2_SOURCE_DIR) + "/vectors/graph_cnn.net";
  // every block in every strategy it has, on QPE-DRAM; then the whole network on its data, on the mini chip
  RunNetRequest req;
  req.net = net;
  req.backend = "both";
  req.json_out = ::testing::TempDir() + "graph_cnn.json";
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  nlohmann::json j;
  std::ifstream(req.json_out) >> j;
  int elementwise = 0;
  for (const auto& op : j["operations"]) {
    EXPECT_EQ(op["status"], "pass") << op["name"] << " " << op["strategy"];
    const std::string name = op["name"];
    elementwise += name.starts_with("LUT_") || name.starts_with("MUL_") || name.starts_with("ADD_") || name.starts_with("AFFINE_");
  }
  // five element-wise blocks, each in nofuse_noreuse and fuse_noreuse (LUT_15 joins CONV_14's block)
  EXPECT_EQ(elementwise, 2 * 5);
  std::vector<std::int8_t> x(3 * 12 * 12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int8_t>((i * 37 + 11) % 256 - 128);
  RunNetRequest whole;
  whole.net = net;
  whole.target = "s2";
  whole.preset = "mini";
  whole.backend = "both";
  whole.whole = true;
  whole.input_npy = ::testing::TempDir() + "graph_cnn_in.npy";
  whole.output_npy = ::testing::TempDir() + "graph_cnn_out.npy";
  whole.json_out = ::testing::TempDir() + "graph_cnn_whole.json";
  write_npy(whole.input_npy, {3, 12, 12}, x);
  std::ostringstream out2, err2;
  ASSERT_EQ(run_net(whole, out2, err2), 0) << err2.str() << out2.str();
  nlohmann::json w;
  std::ifstream(whole.json_out) >> w;
  EXPECT_EQ(w["output"]["equals_golden"], true) << out2.str();
  EXPECT_EQ(w["output"]["backend"], "RTL");
}

TEST(RunNet, TheGraphReferenceNetsLayerListsRunExactOnBothBackends) {
  // vectors/nets/'s graph networks as layer lists (their structure, test data drawn): every block in every strategy
  for (const char* name : {"fire_cnn", "dense_cnn", "shuffle_cnn", "se_cnn"}) {
    RunNetRequest req;
    req.net = std::string(S2_SOURCE_DIR) + "/vectors/nets/" + name + ".net";
    req.backend = "both";
    req.json_out = ::testing::TempDir() + name + "_blocks.json";
    std::ostringstream out, err;
    ASSERT_EQ(run_net(req, out, err), 0) << name << "\n" << err.str() << out.str();
    nlohmann::json j;
    std::ifstream(req.json_out) >> j;
    for (const auto& op : j["operations"]) EXPECT_EQ(op["status"], "pass") << name << " " << op["name"] << " " << op["strategy"];
  }
}

TEST(RunNet, PerChannelShiftsQuantizeEachFilterByItsOwn) {
  // a shift per output channel in every place QUAN runs: a convolution (its filters as planes), a strided one (its
  // filters as rows of a per-row task), a projection shortcut and a fully connected layer (columns)
  const char* net =
      "network per_channel\n"
      "input 10 10 4\n"
      "conv 3 3 4 8 pad=1 shifts=6,7,8,9,6,7,8,9 bias=seed\n"
      "residual begin\n"
      "conv 3 3 8 8 stride=2 pad=1 shifts=5,6,7,8,9,10,11,12\n"
      "conv 1 1 8 8 act=none shifts=4,5,6,7,4,5,6,7\n"
      "residual end shortcut=projection stride=2 shifts=7,7,8,8,9,9,10,10\n"
      "pool avg 5 5\n"
      "fc 8 6 act=none shifts=3,4,5,6,7,8 bias=seed\n";
  const mapper::ParsedNetwork n = mapper::parse_network(mapper::parse_layer_list(net, "per_channel.net"));
  ASSERT_NE(n.find("FC_5"), nullptr);
  ASSERT_NE(n.find("CONV_SC_3"), nullptr);
  ASSERT_TRUE(mapper::find_op(*n.find("FC_5"), mapper::PrimitiveKind::Quantization)->shifts);
  ASSERT_TRUE(mapper::find_op(*n.find("CONV_SC_3"), mapper::PrimitiveKind::Quantization)->shifts);
  for (const char* target : {"qpe", "s2"}) {
    RunNetRequest req;
    req.net = write_temp("per_channel.net", net);
    req.target = target;
    if (std::string(target) == "s2") req.preset = "mini";
    req.backend = "both";
    req.json_out = ::testing::TempDir() + "per_channel.json";
    std::ostringstream out, err;
    ASSERT_EQ(run_net(req, out, err), 0) << target << "\n" << err.str() << out.str();
    nlohmann::json j;
    std::ifstream(req.json_out) >> j;
    ASSERT_GE(j["operations"].size(), 10u);
    for (const auto& op : j["operations"]) EXPECT_EQ(op["status"], "pass") << target << " " << op["name"] << " " << op["strategy"];
  }
  // every block with them lays them out in DRAM and each piece's QUAN reads its slice (not the one shift)
  const HwConfig cfg = build_hw_config("", "", {});
  const mapper::NetworkSplit split = mapper::split_network(n, mapper::split_rules(mapper::Target::Qpe, cfg));
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    const mapper::Operation* q = mapper::find_op(n.blocks[i], mapper::PrimitiveKind::Quantization);
    if (!q) continue;
    const mapper::BlockStreams bs = mapper::distribute(n.blocks[i], split.blocks[i], mapper::Strategy::FuseNoreuse, cfg);
    EXPECT_EQ(bs.map.shift_bytes, q->shifts->size()) << n.blocks[i].name();
    int quantizes = 0;
    for (const auto& cmds : bs.streams.at(0).pe)
      for (const StreamCommand& c : cmds)
        if (c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::Quantize) {
          EXPECT_TRUE(c.arm.per_channel_shift) << n.blocks[i].name();
          ++quantizes;
        }
    EXPECT_GT(quantizes, 0) << n.blocks[i].name();
  }
}

namespace {

// Grouped convolutions as the brief of issue 45 lists them: a depthwise 3x3 at stride 1 and 2 (padded), a grouped
// 3x3 with 4 groups of 8 channels, a grouped 1x1; biased, with and without ReLU.
const char* kGroupedNet =
    "network grouped\n"
    "input 10 10 32\n"
    "conv 3 3 32 32 pad=1 groups=32 bias=seed\n"
    "conv 3 3 32 32 stride=2 pad=1 groups=32 bias=seed\n"
    "conv 3 3 32 32 pad=1 groups=4 bias=seed act=none\n"
    "conv 1 1 32 64 groups=4 bias=seed\n";

}  // namespace

TEST(RunNet, GroupedConvolutionsRunExactOnBothBackendsInEveryStrategyTheyHave) {
  for (const char* target : {"qpe", "s2"}) {
    SCOPED_TRACE(target);
    RunNetRequest req;
    req.net = write_temp("grouped.net", kGroupedNet);
    req.target = target;
    if (std::string(target) == "s2") req.preset = "mini";
    req.backend = "both";
    req.json_out = ::testing::TempDir() + "grouped.json";
    std::ostringstream out, err;
    ASSERT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
    nlohmann::json j;
    std::ifstream(req.json_out) >> j;
    int runs = 0;
    for (const auto& op : j["operations"]) {
      EXPECT_EQ(op["status"], "pass") << op["name"] << " " << op["strategy"];
      EXPECT_NE(op["strategy"], "fuse_reuse") << op["name"];
      ++runs;
    }
    EXPECT_EQ(runs, 4 * 2);  // nofuse_noreuse and fuse_noreuse; fuse_reuse refused, with its reason
    EXPECT_NE(out.str().find("fuse_reuse does not run a grouped convolution"), std::string::npos) << out.str();
  }
  // --whole asks for fuse_reuse (Table 5.10's) and runs each grouped block in the next strategy that takes it
  RunNetRequest whole;
  whole.net = write_temp("grouped.net", kGroupedNet);
  whole.target = "s2";
  whole.preset = "mini";
  whole.backend = "both";
  whole.whole = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_net(whole, out, err), 0) << err.str() << out.str();
  for (const char* block : {"CONV_1", "CONV_2", "CONV_3", "CONV_4"})
    EXPECT_NE(out.str().find(std::string(block) + " ran fuse_noreuse for fuse_reuse"), std::string::npos) << block << "\n" << out.str();
}

namespace {

// One convolution layer, grouped (`groups`) with weights `w` [C][D/G][F][F], or written as one convolution over all
// D channels whose filters are zero outside their group (block-diagonal), the same bias and shift.
mapper::ParsedNetwork one_conv(int side, int D, int C, int F, int stride, int groups, bool block_diagonal,
                               const std::vector<std::int8_t>& w, const std::vector<std::int32_t>& bias) {
  mapper::Network net;
  net.name = "one_conv";
  net.source = "one_conv";
  net.input = {side, side, D};
  mapper::LayerSpec l;
  l.kind = mapper::LayerKind::Conv;
  l.Wf = l.Hf = F;
  l.D = D;
  l.C = C;
  l.stride = stride;
  l.pad = F / 2;
  l.shift = 6;
  l.line = 1;
  l.bias = std::make_shared<const std::vector<std::int32_t>>(bias);
  const std::size_t k = std::size_t(F) * F, Dg = std::size_t(D / groups), Cg = std::size_t(C / groups);
  if (block_diagonal) {
    std::vector<std::int8_t> full(std::size_t(C) * D * k, 0);
    for (std::size_t c = 0; c < std::size_t(C); ++c)
      std::copy_n(w.begin() + std::ptrdiff_t(c * Dg * k), Dg * k, full.begin() + std::ptrdiff_t((c * D + c / Cg * Dg) * k));
    l.weights = std::make_shared<const std::vector<std::int8_t>>(std::move(full));
  } else {
    l.groups = groups;
    l.weights = std::make_shared<const std::vector<std::int8_t>>(w);
  }
  net.layers.push_back(l);
  return mapper::parse_network(net);
}

}  // namespace

// The same grouped layer, the same data, two lowerings: per-group tasks and one convolution with block-diagonal
// weights give the same output bytes on the model and the RTL (nofuse_noreuse and fuse_noreuse, QPE-DRAM and
// the mini chip); the per-group tasks take fewer clocks where the groups are many.
TEST(RunNet, PerGroupTasksGiveTheBlockDiagonalConvolutionsBytesInFewerClocks) {
  struct Shape {
    int side, D, C, F, stride, groups;
  };
  const Shape shapes[] = {{10, 32, 32, 3, 1, 32}, {10, 32, 32, 3, 2, 32}, {8, 32, 32, 3, 1, 4}, {8, 32, 64, 1, 1, 4}};
  s2::SplitMix64 rng{45};
  for (const Shape& sh : shapes) {
    std::vector<std::int8_t> w(std::size_t(sh.C) * (sh.D / sh.groups) * sh.F * sh.F), x(std::size_t(sh.side) * sh.side * sh.D);
    for (auto& v : w) v = static_cast<std::int8_t>(rng.next() >> 56);
    for (auto& v : x) v = static_cast<std::int8_t>(rng.next() >> 56);
    std::vector<std::int32_t> bias(static_cast<std::size_t>(sh.C));
    for (auto& v : bias) v = static_cast<std::int32_t>(rng.next() % 512) - 256;
    const mapper::ParsedNetwork grouped = one_conv(sh.side, sh.D, sh.C, sh.F, sh.stride, sh.groups, false, w, bias);
    const mapper::ParsedNetwork diagonal = one_conv(sh.side, sh.D, sh.C, sh.F, sh.stride, sh.groups, true, w, bias);
    for (const char* target : {"qpe", "s2"}) {
      HwConfig cfg = build_hw_config("", "", {});
      const mapper::Target t = mapper::parse_target(target);
      if (t == mapper::Target::Qpe) cfg.chip = qpe_dram_chip();
      else apply_preset(cfg, "mini");
      const mapper::SplitRules rules = mapper::split_rules(t, cfg);
      const auto model = make_model_stream_backend(cfg);
      const auto rtl = make_rtl_stream_backend(cfg);
      for (const mapper::Strategy st : {mapper::Strategy::NofuseNoreuse, mapper::Strategy::FuseNoreuse}) {
        const std::string what = std::to_string(sh.side) + "x" + std::to_string(sh.side) + "x" + std::to_string(sh.D) + " " +
                                 std::to_string(sh.F) + "x" + std::to_string(sh.F) + "/" + std::to_string(sh.stride) +
                                 " groups=" + std::to_string(sh.groups) + " on " + target + " " + mapper::to_string(st);
        BlockOutput out[2];
        std::uint64_t clocks[2] = {};
        int k = 0;
        for (const mapper::ParsedNetwork* n : {&grouped, &diagonal}) {
          const mapper::OperationBlock& b = n->blocks[0];
          std::map<std::string, std::vector<std::uint8_t>> golden;
          const BlockRun r = run_block(b, mapper::split_block(b, rules), st, {}, cfg, model.get(), rtl.get(), 1,
                                       BlockInputs{x, {}}, golden, WaveRequest{}, &out[k], CheckPolicy{});
          ASSERT_TRUE(r.error.empty()) << what << ": " << r.error;
          ASSERT_TRUE(r.model && r.rtl) << what;
          EXPECT_TRUE(r.model->data_match && r.rtl->data_match) << what << ": " << r.model->first_difference << r.rtl->first_difference;
          EXPECT_EQ(r.model->block_cycles, r.rtl->block_cycles) << what;
          clocks[k++] = r.rtl->block_cycles;
        }
        EXPECT_EQ(out[0].bytes, out[1].bytes) << what;
        EXPECT_EQ(out[0].backend, "RTL") << what;
        if (sh.groups >= 8) {
          EXPECT_LT(clocks[0], clocks[1]) << what;
        }
        std::printf("%s: per-group %llu clocks, block-diagonal %llu\n", what.c_str(),
                    static_cast<unsigned long long>(clocks[0]), static_cast<unsigned long long>(clocks[1]));
      }
    }
  }
}

// Schedule::Overlapped (run-net --schedule overlapped) on both backends: every fuse_reuse block of the reference
// nets bit-exact and clock for clock the same on the model and the chip RTL, each block run under its bound, and
// the blocks together faster than in the thesis's schedule.
TEST(RunNet, TheOverlappedScheduleIsExactOnBothBackendsAndFaster) {
  const std::vector<std::pair<std::string, std::string>> nets = {
      {"small", write_temp("ov_small.net", test_networks::kSmall)},
      {"small_residual", write_temp("ov_small_residual.net", test_networks::kSmallResidual)},
      {"mini_chip", source_path("vectors/mini_chip.net")}};
  for (const auto& net : nets) {
    const std::string& name = net.first;  // (a lambda may not capture a structured binding before C++20's clang 16)
    auto run = [&](const std::string& schedule, const std::string& backend) {
      RunNetRequest req;
      req.net = net.second;
      req.target = "s2";
      req.preset = "mini";
      req.strategies = {"fuse_reuse"};
      req.schedule = schedule;
      req.backend = backend;
      req.json_out = ::testing::TempDir() + "ov_" + name + "_" + schedule + ".json";
      std::ostringstream out, err;
      EXPECT_EQ(run_net(req, out, err), 0) << name << " " << schedule << "\n" << err.str() << out.str();
      return read_json(req.json_out);
    };
    const nlohmann::json overlapped = run("overlapped", "both"), thesis = run("thesis", "model");
    std::uint64_t sum_overlapped = 0, sum_thesis = 0;
    int ran = 0;
    for (const auto& op : overlapped["operations"]) {
      EXPECT_EQ(op["status"], "pass") << name << " " << op["name"];
      EXPECT_TRUE(op["data_match"].get<bool>()) << name << " " << op["name"];
      EXPECT_EQ(op["model_block_cycles_arm_timed"], op["rtl_block_cycles_arm_timed"]) << name << " " << op["name"];
      EXPECT_EQ(op.value("schedule", ""), "overlapped") << name << " " << op["name"];
      sum_overlapped += op["model_block_cycles_arm_timed"].get<std::uint64_t>();
      ++ran;
    }
    for (const auto& op : thesis["operations"]) sum_thesis += op["model_block_cycles_arm_timed"].get<std::uint64_t>();
    EXPECT_GT(ran, 0) << name;
    EXPECT_LT(sum_overlapped, sum_thesis) << name;
  }
}

// A mapping file (s2cosim tune --out): a split file whose lines name a block's strategy (run-net --whole runs it) and
// schedule; a bad option is an error naming the file, line and field.
TEST(RunNet, AMappingFileChoosesEachBlocksSplitStrategyAndSchedule) {
  const std::string net = write_temp("map_small.net", test_networks::kSmall);
  const std::string mapping = write_temp("small.mapping",
                                         "# a mapping\n"
                                         "CONV_1 36x1 10x2 4x3 schedule=overlapped\n"
                                         "CONV_2 18x2 10x2 4x2 strategy=fuse_noreuse\n");
  RunNetRequest req;
  req.net = net;
  req.target = "s2";
  req.preset = "mini";
  req.whole = true;
  req.mapping_file = mapping;
  req.json_out = ::testing::TempDir() + "mapping.json";
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  const nlohmann::json j = read_json(req.json_out);
  EXPECT_EQ(j["mapping_file"], mapping);
  std::map<std::string, nlohmann::json> ops;
  for (const auto& op : j["operations"]) ops[op["name"]] = op;
  EXPECT_EQ(ops["CONV_1"]["strategy"], "fuse_reuse");
  EXPECT_EQ(ops["CONV_1"].value("schedule", ""), "overlapped");
  EXPECT_EQ(ops["CONV_2"]["strategy"], "fuse_noreuse");
  EXPECT_EQ(ops["CONV_2"]["asked_strategy"], "fuse_reuse");
  EXPECT_FALSE(ops["CONV_2"].contains("schedule"));
  EXPECT_EQ(ops["CONV_4"]["strategy"], "fuse_reuse");  // not in the mapping: the run's
  for (const auto& [name, op] : ops) EXPECT_TRUE(op["data_match"].get<bool>()) << name;

  RunNetRequest bad = req;
  bad.mapping_file = write_temp("bad.mapping", "CONV_1 36x1 10x2 4x3\nCONV_2 18x2 10x2 4x2 schedule=fast\n");
  std::ostringstream out2, err2;
  EXPECT_EQ(run_net(bad, out2, err2), 2);
  EXPECT_NE(err2.str().find("bad.mapping:2: field schedule: expected thesis or overlapped, got 'schedule=fast'"), std::string::npos)
      << err2.str();
}
