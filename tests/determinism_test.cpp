// Determinism: the same vectors run twice give the same JSON report once the wall-clock fields
// (summary.rtl_wall_s, summary.model_wall_s: harness/commands/regress_report.h says they are the only ones that differ) are
// removed, and the random-suite generator gives the same text for the same seed; run-net (QPE-DRAM on
// both backends, the chip) and flaw-limit too.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/commands/flaw_limit.h"
#include "harness/commands/net_runner.h"
#include "harness/stimulus/random_vectors.h"
#include "harness/commands/regress_report.h"
#include "harness/commands/regress.h"
#include "harness/stimulus/task_vectors.h"
#include "tests/test_networks.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

constexpr std::uint64_t kSeed = 99;
constexpr int kCount = 12;

// The JSON report of `s2cosim regress VECTORS [--flaw ...] --json F`, wall-clock fields removed.
nlohmann::json regress_report(const TempDir& dir, const std::string& vectors, const std::string& name,
                              const std::vector<std::string>& flaws = {}) {
  RegressRequest req;
  req.vectors = vectors;
  req.flaws = flaws;
  req.json_out = dir.path(name);
  req.quiet = true;
  std::ostringstream out, err;
  const int rc = regress(req, out, err);
  EXPECT_NE(rc, 2) << err.str();
  std::ifstream in(req.json_out);
  EXPECT_TRUE(in) << "no report at " << req.json_out;
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_TRUE(j.at("summary").contains("rtl_wall_s"));
  EXPECT_TRUE(j.at("summary").contains("model_wall_s"));
  return without_wall_times(j);
}

// A readable account of where two reports differ (json::diff gives JSON-pointer paths).
std::string differences(const nlohmann::json& a, const nlohmann::json& b) {
  return nlohmann::json::diff(a, b).dump(1);
}

TEST(Determinism, RandomSuiteSameSeedSameText) {
  const HwConfig cfg;
  const std::string a = random_suite_csv(kSeed, kCount, cfg);
  EXPECT_EQ(a, random_suite_csv(kSeed, kCount, cfg));
  EXPECT_NE(a, random_suite_csv(kSeed + 1, kCount, cfg)) << "the seed must matter";
  // and the same on the other MAC-array builds
  for (const char* shape : {"16x2", "8x4"}) {
    HwConfig c;
    set_mac_shape(c, shape);
    EXPECT_EQ(random_suite_csv(kSeed, kCount, c), random_suite_csv(kSeed, kCount, c)) << shape;
  }
}

TEST(Determinism, RandomSuiteRunTwiceGivesTheSameReport) {
  TempDir dir;
  const std::string vectors = dir.path("random.csv");
  write_text_file(vectors, random_suite_csv(kSeed, kCount, HwConfig{}));
  ASSERT_EQ(read_task_vectors(vectors, HwConfig{}).size(), static_cast<std::size_t>(kCount));

  const nlohmann::json first = regress_report(dir, vectors, "first.json");
  // another configuration in between: the model's per-configuration caches and the RTL's state must not leak
  const nlohmann::json other = regress_report(dir, vectors, "other.json", {"sram2clk"});
  const nlohmann::json second = regress_report(dir, vectors, "second.json");

  ASSERT_EQ(first.at("tasks").size(), static_cast<std::size_t>(kCount));
  EXPECT_TRUE(first == second) << differences(first, second);
  // the comparison is not vacuous: the reports hold cycle counts of both backends, and another
  // configuration gives another report
  for (const nlohmann::json& t : first.at("tasks")) {
    EXPECT_TRUE(t.at("rtl_cycles").is_number_unsigned()) << t.at("id");
    EXPECT_TRUE(t.at("model_cycles").is_number_unsigned()) << t.at("id");
  }
  EXPECT_NE(first.at("config_hash"), other.at("config_hash"));
  EXPECT_NE(first.at("tasks"), other.at("tasks"));
}

TEST(Determinism, SmokeTasksRunTwiceGiveTheSameReport) {
  // through run_tasks and report_json directly, with new backends each time
  const HwConfig cfg;
  const std::vector<Task> tasks = read_task_vectors(smoke_csv(), cfg);
  auto run = [&] {
    nlohmann::ordered_json j = report_json(run_tasks(tasks, cfg));
    j["summary"].erase("rtl_wall_s");
    j["summary"].erase("model_wall_s");
    for (auto& c : j["results"]["checks"]) {
      c.erase("rtl_wall_s");
      c.erase("model_wall_s");
    }
    return j;
  };
  const nlohmann::ordered_json a = run();
  const nlohmann::ordered_json b = run();
  EXPECT_EQ(a.at("tasks").size(), tasks.size());
  EXPECT_TRUE(a == b) << nlohmann::ordered_json::diff(a, b).dump(1);
  EXPECT_EQ(a.dump(), b.dump()) << "same keys in the same order";
}

}  // namespace
}  // namespace s2

namespace s2 {
namespace {

nlohmann::json run_net_report(const RunNetRequest& base, const std::string& json) {
  RunNetRequest req = base;
  req.json_out = json;
  std::ostringstream out, err;
  EXPECT_EQ(run_net(req, out, err), 0) << err.str();
  return without_wall_times(read_json(json));
}

}  // namespace

TEST(Determinism, RunNetTwiceGivesTheSameReportOnQpeDramAndTheChip) {
  const TempDir dir;
  const std::string net = dir.write("small.txt", test_networks::kSmall);
  RunNetRequest qpe;
  qpe.net = net;
  qpe.backend = "both";
  RunNetRequest chip;
  chip.net = net;
  chip.target = "s2";
  for (const RunNetRequest& req : {qpe, chip}) {
    SCOPED_TRACE(req.target);
    const nlohmann::json first = run_net_report(req, dir.path("first.json"));
    const nlohmann::json second = run_net_report(req, dir.path("second.json"));
    ASSERT_FALSE(first.at("operations").empty());
    EXPECT_TRUE(first == second) << differences(first, second);
  }
}

TEST(Determinism, FlawLimitTwiceGivesTheSameReport) {
  const TempDir dir;
  std::array<nlohmann::json, 2> reports;
  for (int i = 0; i < 2; ++i) {
    FlawLimitRequest req;
    req.flaw = "neighbor_conv";
    req.json_out = dir.path("limit" + std::to_string(i) + ".json");
    std::ostringstream out, err;
    EXPECT_NE(flaw_limit(req, out, err), 2) << err.str();
    reports[static_cast<std::size_t>(i)] = without_wall_times(read_json(req.json_out));
  }
  EXPECT_TRUE(reports[0] == reports[1]) << differences(reports[0], reports[1]);
}

}  // namespace s2
