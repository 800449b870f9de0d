// The policy checks are judged by (harness/check/check_policy.h): the deviation bound moves a task between pass
// and deviation exactly at its |delta|, a bound outside 0..1 is refused with exit 2 on every command that
// compares, and every report stamps the policy beside the configuration hash.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "harness/check/check_policy.h"
#include "harness/commands/merge.h"
#include "harness/commands/regress.h"
#include "harness/outputs/result.h"
#include "test_support.h"

#ifndef S2COSIM_BIN
#error "S2COSIM_BIN must name the s2cosim binary (tests/CMakeLists.txt defines it)"
#endif

namespace s2 {
namespace {

using namespace s2::test;

// A task of the committed random suite whose model and RTL clocks differ by a few clocks (33269 against 33266).
constexpr const char* kNearTask = "r231_conv_f9x9_minmax";

struct Judged {
  int exit_code = -1;
  nlohmann::json report;
  std::string out;
};

Judged regress_near_task(const TempDir& dir, double bound, const std::string& name) {
  RegressRequest req;
  req.vectors = source_path("vectors/random_suite.csv");
  req.task_ids = {kNearTask};
  req.policy.deviation_bound = bound;
  req.json_out = dir.path(name + ".json");
  std::ostringstream out, err;
  Judged j;
  j.exit_code = regress(req, out, err);
  EXPECT_TRUE(err.str().empty()) << err.str();
  j.report = read_json(req.json_out);
  j.out = out.str();
  return j;
}

TEST(Policy, TheDeviationBoundFlipsATaskFromPassToDeviationAndBack) {
  const TempDir dir;
  const Judged loose = regress_near_task(dir, 0.02, "default");
  ASSERT_EQ(loose.exit_code, 0) << loose.out;
  const double delta = loose.report["tasks"][0]["delta"].get<double>();
  ASSERT_GT(std::abs(delta), 0.0) << "the task must differ by some clocks for the bound to matter";
  EXPECT_EQ(loose.report["tasks"][0]["status"], "pass");

  const Judged tight = regress_near_task(dir, std::abs(delta) / 2, "tight");
  EXPECT_EQ(tight.exit_code, 1);
  EXPECT_EQ(tight.report["tasks"][0]["status"], "deviation");
  EXPECT_EQ(tight.report["results"]["checks"][0]["status"], "deviation");
  // the rerun line carries the bound, so that it reproduces the deviation
  EXPECT_NE(tight.report["results"]["checks"][0]["replay"].get<std::string>().find("--deviation-bound"), std::string::npos);

  const Judged back = regress_near_task(dir, std::abs(delta) * 2, "back");
  EXPECT_EQ(back.exit_code, 0);
  EXPECT_EQ(back.report["tasks"][0]["status"], "pass");
  EXPECT_EQ(back.report["tasks"][0]["delta"], loose.report["tasks"][0]["delta"]);  // the clocks did not move, the bound did
}

TEST(Policy, EveryReportStampsItBesideTheConfigurationHash) {
  const TempDir dir;
  RegressRequest req;
  req.vectors = smoke_csv();
  req.task_ids = {"smoke_mm_odd"};
  req.policy.deviation_bound = 0.05;
  req.json_out = dir.path("r.json");
  req.junit_out = dir.path("r.xml");
  req.html_out = dir.path("r.html");
  std::ostringstream out, err;
  ASSERT_EQ(regress(req, out, err), 0) << err.str();
  const nlohmann::json j = read_json(req.json_out);
  const nlohmann::json want = nlohmann::json::parse(to_json(req.policy).dump());
  EXPECT_EQ(j["policy"], want);
  EXPECT_EQ(j["results"]["policy"], want);
  EXPECT_EQ(j["policy"]["deviation_bound"], 0.05);
  EXPECT_EQ(j["policy"]["task_watchdog"]["model_factor"], 4.0);
  const std::string line = "policy: " + policy_line(req.policy);
  EXPECT_NE(line.find("deviation bound 5%"), std::string::npos) << line;
  EXPECT_NE(out.str().find("config hash: " + j["config_hash"].get<std::string>() + "\n" + line + "\n"), std::string::npos)
      << out.str();
  EXPECT_NE(read_text(req.junit_out).find("<property name=\"policy\" value=\"" + xml_escape(policy_line(req.policy)) + "\"/>"),
            std::string::npos);
  EXPECT_NE(read_text(req.html_out).find("<td>policy</td><td>" + xml_escape(policy_line(req.policy)) + "</td>"),
            std::string::npos);
  // read back as merge reads it
  EXPECT_EQ(to_json(results_from_json(nlohmann::ordered_json::parse(j["results"].dump())).policy), to_json(req.policy));
}

TEST(Policy, ReadsBackEveryFieldAndNamesAMalformedOne) {
  CheckPolicy p;
  p.deviation_bound = 0.1;
  p.long_run_factor = 2;
  p.task_budget = {1, 2, 3, 4};
  p.stream_budget = {5, 6, 7};
  p.bench = {0.1, 0.2, 0.3, 40, 50};
  p.net = {0.6, 0.7, 0.8};
  const nlohmann::json j = nlohmann::json::parse(to_json(p).dump());
  EXPECT_EQ(to_json(check_policy_from_json(j)), to_json(p));
  EXPECT_NE(policy_hash(p), policy_hash(CheckPolicy{}));
  nlohmann::json bad = j;
  bad["stream_watchdog"].erase("slack_cycles");
  try {
    check_policy_from_json(bad);
    ADD_FAILURE() << "a policy without stream_watchdog.slack_cycles was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "field 'slack_cycles': missing");
  }
}

TEST(Policy, ABoundOutsideZeroToOneIsRefusedWithExit2OnEveryCommandThatCompares) {
  const std::string bin = shell_quote(S2COSIM_BIN);
  for (const std::string command : {"regress vectors/smoke.csv", "bench", "chip-regress vectors/chip_random_suite.csv",
                                    "flaw-limit mm_wide_a", "run-net --net vgg16"})
    for (const std::string bound : {"2", "-0.01", "nan", "abc"}) {
      const Ran r = shell(bin + " " + command + " --deviation-bound " + bound);
      EXPECT_EQ(r.exit_code, 2) << command << " " << bound << ": " << r.out;
      EXPECT_NE(r.out.find("--deviation-bound"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("expected a fraction from 0 to 1 (0.02 is 2%)"), std::string::npos) << r.out;
    }
  // the library refuses it too, before anything runs
  RegressRequest req;
  req.vectors = smoke_csv();
  req.policy.deviation_bound = 1.5;
  std::ostringstream out, err;
  EXPECT_EQ(regress(req, out, err), 2);
  EXPECT_EQ(err.str(), "s2cosim: --deviation-bound: expected a fraction from 0 to 1 (0.02 is 2%), got 1.5\n");
  EXPECT_TRUE(out.str().empty());
}

TEST(Policy, MergeRefusesShardsJudgedByDifferentPolicies) {
  const TempDir dir;
  auto shard = [&](const std::string& s, double bound, const std::string& name) {
    RegressRequest req;
    req.vectors = smoke_csv();
    req.backends = BackendSelection::Model;
    req.shard = s;
    req.policy.deviation_bound = bound;
    req.json_out = dir.path(name);
    req.quiet = true;
    std::ostringstream out, err;
    EXPECT_EQ(regress(req, out, err), 0) << err.str();
    return req.json_out;
  };
  MergeRequest m{{shard("1/2", 0.02, "a.json"), shard("2/2", 0.05, "b.json")}, dir.path("merged.json"), "", "", ""};
  std::ostringstream out, err;
  EXPECT_EQ(merge(m, out, err), 2);
  EXPECT_NE(err.str().find("judged by another policy"), std::string::npos) << err.str();
  EXPECT_FALSE(std::filesystem::exists(m.json_out));
}

}  // namespace
}  // namespace s2
