// s2cosim design-report end to end: a small network's whole runs on the mini chip in two MAC shapes put side by
// side (clocks, energy and area each the reports' own, summed; ratios against 16x4), its outputs, and the
// reports it refuses (not whole, not charged, a shard, a point twice, two energy tables, two configurations).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/commands/design_report.h"
#include "harness/commands/net_runner.h"
#include "test_networks.h"
#include "test_support.h"

using namespace s2;

namespace {

// A PE's area per shape as tools/synth.sh --json writes it (figures made up for the test, not measured).
constexpr const char* kSynth = R"({"yosys": "Yosys 0.23", "date": "2026-11-27", "commit": "abc", "note": "generic cells",
  "shapes": {"16x4": {"cells": 100, "flops": 10, "transistors": 1000, "blocks": {"mla": {"cells": 60, "flops": 5, "transistors": 600}}},
             "8x4": {"cells": 70, "flops": 8, "transistors": 700, "blocks": {"mla": {"cells": 30, "flops": 3, "transistors": 300}}}}})";

// run-net on the mini chip, the small network whole, in fuse_noreuse and fuse_reuse; its --json report's path.
std::string run_small(const test::TempDir& dir, const std::string& mac, const std::string& name, bool whole = true,
                      const std::string& energy = "default", const std::string& shard = "") {
  RunNetRequest req;
  req.net = dir.write("small.net", test_networks::kSmall);
  req.target = "s2";
  req.preset = "mini";
  req.whole = whole;
  req.mac_shape = mac;
  req.strategies = {"fuse_noreuse", "fuse_reuse"};
  req.energy = energy;
  if (!shard.empty()) req.shard = shard;
  req.json_out = dir.path(name);
  std::ostringstream out, err;
  const int rc = run_net(req, out, err);
  EXPECT_EQ(rc, 0) << err.str() << out.str();
  return req.json_out;
}

// design-report's exit code, console and error text.
struct Reported {
  int rc;
  std::string out, err;
};
Reported report(DesignReportRequest req) {
  std::ostringstream out, err;
  const int rc = design_report(req, out, err);
  return {rc, out.str(), err.str()};
}

}  // namespace

TEST(DesignReport, PutsEveryMacShapeAndStrategySideBySideFromTheRunsOwnFigures) {
  const test::TempDir dir;
  const std::string a = run_small(dir, "16x4", "a.json"), b = run_small(dir, "8x4", "b.json");
  DesignReportRequest req;
  req.reports = {b, a};  // any order: the reference shape comes first
  req.synth_json = dir.write("synth.json", kSynth);
  req.json_out = dir.path("design.json");
  req.html_out = dir.path("design.html");
  req.csv_out = dir.path("design.csv");
  req.junit_out = dir.path("design.xml");
  const Reported r = report(req);
  ASSERT_EQ(r.rc, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("small on mini, fuse_reuse: 8x4 takes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("with 0.70x the PE's logic (0.50x the MAC array's)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("estimates, uncalibrated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16x4: DRAM's share of the FC blocks' energy: fuse_noreuse "), std::string::npos) << r.out;

  const nlohmann::json d = test::read_json(req.json_out);
  const nlohmann::json ra = test::read_json(a), rb = test::read_json(b);
  ASSERT_EQ(d["designs"].size(), 4u);
  const char* order[][2] = {{"16x4", "fuse_noreuse"}, {"8x4", "fuse_noreuse"}, {"16x4", "fuse_reuse"}, {"8x4", "fuse_reuse"}};
  for (std::size_t i = 0; i < 4; ++i) {
    const nlohmann::json& p = d["designs"][i];
    const std::string mac = order[i][0], st = order[i][1];
    SCOPED_TRACE(mac + " " + st);
    EXPECT_EQ(p["mac"], mac);
    EXPECT_EQ(p["strategy"], st);
    const nlohmann::json& run = mac == "16x4" ? ra : rb;
    // the clocks are the run's Table 5.10 sum; the energy the sum of its blocks' in that strategy
    EXPECT_EQ(p["clocks"].get<std::uint64_t>(), run["category_cycles"][st]["sum"].get<std::uint64_t>());
    double total = 0;
    std::size_t blocks = 0;
    for (const auto& c : run["results"]["checks"]) {
      const auto& labels = c["labels"];
      const std::string asked = labels.contains("for") ? labels["for"].get<std::string>() : labels["strategy"].get<std::string>();
      if (asked != st) continue;
      total += c["energy_pj"]["total"].get<double>();
      ++blocks;
    }
    EXPECT_EQ(p["blocks"].get<std::size_t>(), blocks);
    EXPECT_NEAR(p["energy_pj"]["total"].get<double>(), total, 1e-6 * total);
    EXPECT_GT(total, 0);
    double by_kind = 0;  // the kinds of block (CONV, FC) split the same energy
    for (const auto& [kind, e] : p["energy_by_kind_pj"].items()) by_kind += e["total"].get<double>();
    EXPECT_NEAR(by_kind, total, 1e-6 * total);
    EXPECT_TRUE(p["energy_by_kind_pj"].contains("FC"));
    EXPECT_EQ(p["pe_area"]["transistors"].get<int>(), mac == "16x4" ? 1000 : 700);
    const nlohmann::json& ref = d["designs"][i - (mac == "8x4" ? 1 : 0)];
    EXPECT_DOUBLE_EQ(p["vs_reference"]["clocks"].get<double>(), p["clocks"].get<double>() / ref["clocks"].get<double>());
    EXPECT_DOUBLE_EQ(p["vs_reference"]["pe_transistors"].get<double>(), mac == "16x4" ? 1.0 : 0.7);
    EXPECT_EQ(p["status"], "pass");
  }
  // the smaller array is slower on the same blocks (more tiles): what the report is for
  EXPECT_GT(d["designs"][1]["clocks"].get<std::uint64_t>(), d["designs"][0]["clocks"].get<std::uint64_t>());
  EXPECT_EQ(d["results"]["command"], "design-report");
  EXPECT_EQ(d["results"]["energy_table_hash"], ra["results"]["energy_table_hash"]);
  // every output has every point; the HTML its panels
  const std::string html = test::read_text(req.html_out);
  for (const char* id : {"plot-design-1-clocks", "plot-design-1-energy", "plot-design-area", "plot-energy"})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  const std::string csv = test::read_text(req.csv_out);
  EXPECT_NE(csv.find("small mini 8x4 fuse_reuse,small on mini,small,mini,8x4,fuse_reuse,700,pass"), std::string::npos) << csv;
  EXPECT_NE(test::read_text(req.junit_out).find("tests=\"4\""), std::string::npos);
}

TEST(DesignReport, WithoutAreaTheReportSaysSoAndAShapeNotSynthesizedHasNone) {
  const test::TempDir dir;
  DesignReportRequest req;
  req.reports = {run_small(dir, "16x2", "c.json")};
  req.json_out = dir.path("d.json");
  Reported r = report(req);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("area: not given"), std::string::npos) << r.out;
  // 16x2 alone: no reference point, no ratio, never a made-up 1.00
  const nlohmann::json d = test::read_json(req.json_out);
  EXPECT_TRUE(d["designs"][0]["vs_reference"].is_null());
  req.synth_json = dir.write("synth.json", kSynth);  // no 16x2 in it
  r = report(req);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(test::read_json(req.json_out)["designs"][0]["pe_area"].is_null());
}

TEST(DesignReport, RefusesReportsThatAreNotOneComparison) {
  const test::TempDir dir;
  const std::string a = run_small(dir, "16x4", "a.json");
  auto refused = [&](std::vector<std::string> reports, const std::string& says) {
    DesignReportRequest req;
    req.reports = std::move(reports);
    req.json_out = dir.path("never.json");
    const Reported r = report(req);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(req.json_out));
  };
  refused({run_small(dir, "8x4", "part.json", false)}, "field 'whole': missing: not a --whole run");
  refused({run_small(dir, "8x4", "free.json", true, "")}, "field 'results.energy_table': missing");
  refused({run_small(dir, "8x4", "shard.json", true, "default", "1/2")}, "shard 1/2 of a run: merge the shards first");
  refused({a, a}, "is in " + a + " too (each design point once)");
  refused({a, run_small(dir, "8x4", "cnnergy.json", true, test::source_path("vectors/energy/cnnergy.json"))},
          "one comparison, one table");
  // the same network and chip in another configuration than the MAC shape's
  nlohmann::json other = test::read_json(run_small(dir, "8x4", "b.json"));
  other["config"]["pe_clock_mhz"] = 300.0;
  other["config"]["noc_clock_mhz"] = 600.0;
  refused({a, dir.write("other.json", other.dump())}, "differs from " + a + "'s in more than the MAC shape");
  nlohmann::json regress = test::read_json(a);
  regress["results"]["command"] = "regress";
  refused({dir.write("regress.json", regress.dump())}, "a report of 'regress': design-report takes run-net reports");
  refused({dir.path("missing.json")}, "missing.json");
  // some blocks only; clocks that are not clocks; a strategy that is none
  RunNetRequest some;
  some.net = dir.write("small.net", test_networks::kSmall);
  some.target = "s2";
  some.preset = "mini";
  some.whole = true;
  some.layers = {"CONV_1"};
  some.energy = "default";
  some.json_out = dir.path("some.json");
  std::ostringstream o, e;
  ASSERT_EQ(run_net(some, o, e), 0) << e.str();
  refused({some.json_out}, "field 'layers': the run took some blocks only (--layers)");
  nlohmann::json bent = test::read_json(a);
  bent["category_cycles"]["fuse_reuse"]["CONV"] = -5;
  refused({dir.write("bent.json", bent.dump())}, "field 'category_cycles.fuse_reuse.CONV': expected a number of clocks >= 0, got -5");
  bent = test::read_json(a);
  bent["category_cycles"]["fuse_fast"] = bent["category_cycles"]["fuse_reuse"];
  refused({dir.write("bent.json", bent.dump())}, "field 'category_cycles.fuse_fast': not a strategy");
}
