// s2cosim tune on a tiny network on the mini chip: it finds a mapping at least as good as one known to beat the
// default (a hand-written mapping file, judged by run-net), its mapping runs bit-exact on both backends with the
// clocks the search judged, and a second search takes every candidate from the first one's journal.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/commands/net_runner.h"
#include "harness/commands/tune.h"
#include "test_support.h"

using namespace s2;
using s2::test::read_json;

namespace {

const char* kTiny =
    "network tune_tiny\n"
    "input 14 14 32\n"
    "conv 1 1 32 64 act=relu\n"         // CONV_1: the splitter makes one input part of 14x14
    "conv 3 3 64 64 pad=same act=relu\n"
    "conv 1 1 64 128 act=none\n";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The model's ARM-timed clocks of each block of a --whole run (with the mapping, if given), and the sum.
std::map<std::string, std::uint64_t> whole_run(const std::string& net, const std::string& mapping, const std::string& backend,
                                               const std::string& name) {
  RunNetRequest req;
  req.net = net;
  req.target = "s2";
  req.preset = "mini";
  req.whole = true;
  req.mapping_file = mapping;
  req.backend = backend;
  req.json_out = ::testing::TempDir() + name;
  std::ostringstream out, err;
  EXPECT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  std::map<std::string, std::uint64_t> cycles;
  const nlohmann::json report = read_json(req.json_out);
  for (const auto& op : report["operations"]) {
    EXPECT_EQ(op["status"], "pass") << op["name"];
    EXPECT_TRUE(op["data_match"].get<bool>()) << op["name"];
    if (backend == "both") {
      EXPECT_EQ(op["model_block_cycles_arm_timed"], op["rtl_block_cycles_arm_timed"]) << op["name"];
    }
    const auto name = op["name"].get<std::string>();
    cycles[name] = op["model_block_cycles_arm_timed"].get<std::uint64_t>();
    cycles["sum"] += cycles[name];
  }
  return cycles;
}

}  // namespace

TEST(Tune, FindsAMappingAtLeastAsGoodAsAKnownBetterOneExactOnBothBackends) {
  const std::string net = write_temp("tune_tiny.net", kTiny);
  // known better than the default for CONV_1: its rows in two parts, each PE its own piece (fuse_noreuse)
  const std::string hand = write_temp("hand.mapping", "CONV_1 14x1 7x2 8x8 strategy=fuse_noreuse\n");
  const auto by_default = whole_run(net, "", "model", "tune_default.json");
  const auto by_hand = whole_run(net, hand, "model", "tune_hand.json");
  ASSERT_LT(by_hand.at("CONV_1"), by_default.at("CONV_1"));

  TuneRequest t;
  t.net = net;
  t.preset = "mini";
  t.out = ::testing::TempDir() + "tiny.mapping";
  t.journal = ::testing::TempDir() + "tiny.mapping.jsonl";
  std::remove(t.journal.c_str());
  t.json_out = ::testing::TempDir() + "tune.json";
  std::ostringstream out, err;
  ASSERT_EQ(tune_network(t, out, err), 0) << err.str() << out.str();
  const nlohmann::json report = read_json(t.json_out);
  ASSERT_EQ(report["blocks"].size(), 3u);
  std::map<std::string, std::uint64_t> found;
  for (const auto& b : report["blocks"]) {
    found[b["block"].get<std::string>()] = b["found"]["cycles"].get<std::uint64_t>();
    EXPECT_LE(b["found"]["cycles"].get<std::uint64_t>(), b["default"]["cycles"].get<std::uint64_t>()) << b["block"];
    EXPECT_GE(b["found"]["cycles"].get<std::uint64_t>(), b["bound"]["cycles"].get<std::uint64_t>()) << b["block"];
  }
  EXPECT_LE(found.at("CONV_1"), by_hand.at("CONV_1"));
  // the found mapping, run as run-net runs it, on both backends: exact, and the sum below the default's
  const auto tuned = whole_run(net, t.out, "both", "tune_tuned.json");
  EXPECT_LT(tuned.at("sum"), by_default.at("sum"));
  ASSERT_TRUE(report.contains("whole"));
  EXPECT_EQ(report["whole"]["tuned_cycles"].get<std::uint64_t>(), tuned.at("sum"));
  EXPECT_EQ(report["whole"]["default_cycles"].get<std::uint64_t>(), by_default.at("sum"));

  // a second search takes every candidate from the journal and finds the same
  std::ifstream first_mapping(t.out);
  const std::string mapping((std::istreambuf_iterator<char>(first_mapping)), std::istreambuf_iterator<char>());
  std::ostringstream out2, err2;
  t.verify = false;
  ASSERT_EQ(tune_network(t, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("candidates from " + t.journal), std::string::npos) << out2.str();
  std::ifstream second_mapping(t.out);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(second_mapping)), std::istreambuf_iterator<char>()), mapping);

  // bad input names what is wrong
  TuneRequest bad = t;
  bad.layers = {"CONV_9"};
  std::ostringstream out3, err3;
  EXPECT_EQ(tune_network(bad, out3, err3), 2);
  EXPECT_NE(err3.str().find("--layers: tune_tiny has no operation block CONV_9"), std::string::npos) << err3.str();
}
