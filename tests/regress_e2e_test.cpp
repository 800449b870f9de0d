// End-to-end regression on both backends: vectors/smoke.csv through s2::regress (what `s2cosim regress`
// runs) and through run_tasks, on every MAC-array build the RTL is verilated for, with the flaws off and
// with sram2clk. Every task must pass: RTL and model results bit-exact against the golden results and
// |delta| <= 0.02. Also the JSON report's contract-2 fields, and a hang (watchdog budget too small) that
// does not stop the regression.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/commands/regress_report.h"
#include "harness/commands/regress.h"
#include "harness/stimulus/task_vectors.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

// Every task of a run_tasks result passed, with both backends bit-exact and |delta| <= 0.02.
void expect_all_pass(const RunResult& r, std::size_t tasks) {
  ASSERT_EQ(r.tasks.size(), tasks);
  for (const TaskComparison& c : r.tasks) {
    SCOPED_TRACE(c.task.id + " on " + r.cfg.mac_shape() + (r.cfg.flaws.sram2clk ? " sram2clk" : ""));
    EXPECT_EQ(c.status, Status::Pass) << to_string(c.status) << ": " << c.error << " " << data_cell(c);
    EXPECT_TRUE(c.rtl_ran);
    EXPECT_TRUE(c.model_ran);
    EXPECT_EQ(c.rtl_completed, std::optional<bool>(true));
    EXPECT_EQ(c.model_completed, std::optional<bool>(true));
    EXPECT_EQ(c.data_match(), std::optional<bool>(true)) << data_cell(c);
    EXPECT_EQ(c.model_data_match(), std::optional<bool>(true)) << data_cell(c);
    EXPECT_EQ(c.rtl_data.differing, 0u);
    EXPECT_EQ(c.model_data.differing, 0u);
    ASSERT_TRUE(c.rtl_cycles && c.model_cycles);
    EXPECT_GT(*c.rtl_cycles, 0u);
    EXPECT_GT(*c.model_cycles, 0u);
    ASSERT_TRUE(c.delta.has_value());
    EXPECT_LE(std::fabs(*c.delta), 0.02) << "RTL " << *c.rtl_cycles << " clk, model " << *c.model_cycles << " clk";
    EXPECT_TRUE(c.hung_pes.empty());
    EXPECT_TRUE(c.early_stop_pes.empty());
    EXPECT_EQ(c.pes.size(), c.task.pes().size());
  }
}

// The same for the JSON report (contract 2) of a regression.
void expect_all_pass(const nlohmann::json& j, const std::vector<Task>& tasks) {
  ASSERT_TRUE(j.contains("tasks") && j["tasks"].is_array());
  ASSERT_EQ(j["tasks"].size(), tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const nlohmann::json& t = j["tasks"][i];
    SCOPED_TRACE(tasks[i].id);
    EXPECT_EQ(t.at("id"), tasks[i].id);
    EXPECT_EQ(t.at("status"), "pass") << t.dump(1);
    EXPECT_EQ(t.at("data_match"), true);
    EXPECT_EQ(t.at("model_data_match"), true);
    ASSERT_TRUE(t.at("delta").is_number());
    EXPECT_LE(std::fabs(t.at("delta").get<double>()), 0.02);
    ASSERT_TRUE(t.at("rtl_cycles").is_number_unsigned());
    ASSERT_TRUE(t.at("model_cycles").is_number_unsigned());
    // equation 5.1, model against RTL
    const double rtl = t.at("rtl_cycles").get<double>(), model = t.at("model_cycles").get<double>();
    EXPECT_NEAR(t.at("delta").get<double>(), (model - rtl) / rtl, 1e-12);
    // the counts: both backends', every one observed, the MLA's work among them, each delta within 1%
    for (const char* who : {"model", "rtl"}) {
      const nlohmann::json& a = t.at("activity").at(who);
      ASSERT_TRUE(a.is_object()) << who;
      // the model's single-QPE tasks keep no router count (its tile schedule extrapolates): not available
      for (const auto& [count, v] : a.items())
        EXPECT_TRUE(v.is_number_unsigned() || (who == std::string("model") && count.rfind("noc_", 0) == 0)) << who << " " << count;
      EXPECT_GE(a.at("mac_ops").get<std::uint64_t>(), tasks[i].macs_per_pe() * tasks[i].pes().size()) << who;
      EXPECT_GT(a.at("sram_write_bytes_mla_out").get<std::uint64_t>(), 0u) << who;
    }
    for (const auto& [count, d] : t.at("activity_delta").items())
      EXPECT_LE(std::fabs(d.get<double>()), 0.01) << count;
    EXPECT_TRUE(t.at("activity_floor").empty());
  }
  const nlohmann::json& counts = j.at("summary").at("counts");
  EXPECT_EQ(counts.at("pass"), tasks.size());
  for (const char* s : {"mismatch", "hang", "early_stop", "deviation", "error"}) EXPECT_EQ(counts.at(s), 0) << s;
  EXPECT_EQ(j.at("summary").at("all_passed"), true);
}

// s2cosim regress vectors/smoke.csv [--mac SHAPE] [--flaw sram2clk] --json F --csv F, checked through its report.
void regress_smoke(const std::string& shape, bool sram2clk) {
  TempDir dir;
  RegressRequest req;
  req.vectors = smoke_csv();
  req.mac_shape = shape;
  if (sram2clk) req.flaws = {"sram2clk"};
  req.json_out = dir.path("report.json");
  req.csv_out = dir.path("report.csv");
  std::ostringstream out, err;
  EXPECT_EQ(regress(req, out, err), 0) << out.str() << err.str();

  const HwConfig cfg = config(shape, sram2clk);
  const std::vector<Task> tasks = read_task_vectors(smoke_csv(), cfg);
  ASSERT_GE(tasks.size(), 6u);
  const nlohmann::json j = read_json(req.json_out);
  expect_all_pass(j, tasks);
  EXPECT_EQ(j.at("config"), to_json(cfg));
  EXPECT_EQ(j.at("config_hash"), config_hash(cfg));
  EXPECT_EQ(j.at("backends"), "both");
  // the human-readable output: one table row per task, and the summary
  for (const Task& t : tasks) EXPECT_NE(out.str().find(t.id), std::string::npos) << t.id;
  EXPECT_NE(out.str().find("tasks: " + std::to_string(tasks.size()) + " (" + std::to_string(tasks.size()) + " pass"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("config hash: " + config_hash(cfg)), std::string::npos);
  // no progress when standard error is not a terminal (report_outputs_test checks it on one)
  const std::string n = std::to_string(tasks.size());
  EXPECT_EQ(err.str().find("[" + n + "/" + n + "] "), std::string::npos) << err.str();
  // the CSV: a header and one row per task, all pass
  const std::string csv = read_text(req.csv_out);
  std::size_t lines = 0, passes = 0;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    ++lines;
    passes += line.find(",pass,") != std::string::npos;
  }
  EXPECT_EQ(lines, tasks.size() + 1) << csv;
  EXPECT_EQ(passes, tasks.size()) << csv;
}

// ---------------------------------------------------------------- the smoke vectors, every build

TEST(RegressE2e, SmokePassesOn16x4) { regress_smoke("16x4", false); }
TEST(RegressE2e, SmokePassesOn16x4WithSram2clk) { regress_smoke("16x4", true); }
TEST(RegressE2e, SmokePassesOn16x2) { regress_smoke("16x2", false); }
TEST(RegressE2e, SmokePassesOn8x4) { regress_smoke("8x4", false); }

TEST(RegressE2e, SmokePassesThroughRunTasksOnEveryBuildWithSram2clk) {
  // the library path, with the comparison's details; sram2clk on the other builds
  for (const char* shape : {"16x2", "8x4"}) {
    const HwConfig cfg = config(shape, true);
    const std::vector<Task> tasks = read_task_vectors(smoke_csv(), cfg);
    const RunResult r = run_tasks(tasks, cfg);
    EXPECT_EQ(r.backends, BackendSelection::Both);
    expect_all_pass(r, tasks.size());
    const RunSummary s = summarize(r);
    EXPECT_TRUE(s.all_passed());
    ASSERT_TRUE(s.max_abs_delta.has_value());
    EXPECT_LE(*s.max_abs_delta, 0.02);
  }
}

// ---------------------------------------------------------------- the counts and their energy

// regress --energy: every task's energy from the model's counts, by the default table, stamped, in the JSON,
// the CSV and on the console; the counts alone (without --energy) are in the report already.
TEST(RegressE2e, EnergyFromTheCountsOfBothBackends) {
  TempDir dir;
  RegressRequest req;
  req.vectors = smoke_csv();
  req.energy = "default";
  req.json_out = dir.path("report.json");
  req.csv_out = dir.path("report.csv");
  req.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(regress(req, out, err), 0) << out.str() << err.str();
  const nlohmann::json j = read_json(req.json_out);
  const nlohmann::json& results = j.at("results");
  EXPECT_EQ(results.at("energy_table_hash"), energy_table_hash(default_energy_table()));
  for (const nlohmann::json& c : results.at("checks")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    // the model's counts where it observed them all, else the RTL's (docs/energy.md)
    const std::string from = c.at("energy_from");
    ASSERT_TRUE(from == "model" || from == "rtl") << from;
    const nlohmann::json& e = c.at("energy_pj");
    // each component is its counts times the table's figures: the MAC array's from mac_ops and padding
    const EnergyTable t = default_energy_table();
    const nlohmann::json& m = c.at("activity").at(from);
    double mac = 0;
    for (const auto& [count, entry] : t.entries)
      if (entry.component == EnergyComponent::mac) mac += m.at(count).get<double>() * entry.pj_per_unit;
    EXPECT_NEAR(e.at("mac").get<double>(), mac, 1e-6 * mac);
    EXPECT_GT(e.at("sram").get<double>(), 0.0);
    EXPECT_GT(e.at("static").get<double>(), 0.0);
    EXPECT_NEAR(e.at("total").get<double>(),
                e.at("mac").get<double>() + e.at("sram").get<double>() + e.at("noc").get<double>() + e.at("dram").get<double>() +
                    e.at("arm").get<double>() + e.at("static").get<double>(),
                1e-9 * e.at("total").get<double>());
  }
  EXPECT_NE(out.str().find("energy table 'default' (hash " + energy_table_hash(default_energy_table())), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("uncalibrated"), std::string::npos);
  EXPECT_NE(read_text(req.csv_out).find("energy_pj_total"), std::string::npos);
  // a table that cannot be read is bad input: nothing runs
  req.energy = dir.path("missing.json");
  std::ostringstream out2, err2;
  EXPECT_EQ(regress(req, out2, err2), 2);
  EXPECT_NE(err2.str().find("missing.json"), std::string::npos) << err2.str();
}

// ---------------------------------------------------------------- the JSON report (contract 2)

TEST(RegressE2e, JsonReportHasTheContract2Fields) {
  const HwConfig cfg = config("16x4", false);
  std::vector<Task> tasks = read_task_vectors(smoke_csv(), cfg);
  tasks.resize(3);  // the fields, not the run, are under test here
  RunResult r = run_tasks(tasks, cfg);
  r.vectors_path = smoke_csv();
  // the report survives a round trip through its text
  const nlohmann::json j = nlohmann::json::parse(report_json(r).dump(2));

  ASSERT_TRUE(j.at("tasks").is_array());
  ASSERT_EQ(j["tasks"].size(), 3u);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const nlohmann::json& t = j["tasks"][i];
    SCOPED_TRACE(tasks[i].id);
    ASSERT_TRUE(t.is_object());
    EXPECT_EQ(t.at("id"), tasks[i].id);
    ASSERT_TRUE(t.at("status").is_string());
    EXPECT_EQ(t.at("status"), "pass");
    EXPECT_TRUE(t.at("rtl_cycles").is_number_unsigned());
    EXPECT_TRUE(t.at("model_cycles").is_number_unsigned());
    EXPECT_EQ(t.at("rtl_cycles"), *r.tasks[i].rtl_cycles);
    EXPECT_EQ(t.at("model_cycles"), *r.tasks[i].model_cycles);
    EXPECT_TRUE(t.at("delta").is_number());
    EXPECT_TRUE(t.at("data_match").is_boolean());
  }
  // id and status come first in every task object (regress_report.h: readable order)
  const nlohmann::ordered_json ordered = report_json(r);
  for (const nlohmann::ordered_json& t : ordered.at("tasks")) {
    auto it = t.begin();
    ASSERT_NE(it, t.end());
    EXPECT_EQ(it.key(), "id");
    ASSERT_NE(++it, t.end());
    EXPECT_EQ(it.key(), "status");
  }
  const nlohmann::json& s = j.at("summary");
  const nlohmann::json& counts = s.at("counts");
  std::set<std::string> keys;
  for (auto it = counts.begin(); it != counts.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"pass", "mismatch", "hang", "early_stop", "deviation", "error"}));
  std::uint64_t total = 0;
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    ASSERT_TRUE(it.value().is_number_unsigned()) << it.key();
    total += it.value().get<std::uint64_t>();
  }
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(counts.at("pass"), 3);
  EXPECT_EQ(s.at("tasks"), 3);
  ASSERT_TRUE(s.at("rtl_wall_s").is_number());
  ASSERT_TRUE(s.at("model_wall_s").is_number());
  EXPECT_GT(s.at("rtl_wall_s").get<double>(), 0.0) << "both backends ran: their wall time is recorded";
  EXPECT_GT(s.at("model_wall_s").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(s.at("rtl_wall_s").get<double>(), r.rtl_wall_s);
  EXPECT_DOUBLE_EQ(s.at("model_wall_s").get<double>(), r.model_wall_s);

  ASSERT_TRUE(j.at("config").is_object());
  EXPECT_EQ(j.at("config"), to_json(cfg));
  EXPECT_EQ(hw_config_from_json(j.at("config")).mac_shape(), "16x4");
  ASSERT_TRUE(j.at("config_hash").is_string());
  EXPECT_EQ(j.at("config_hash"), config_hash(cfg));
  EXPECT_FALSE(j.at("config_hash").get<std::string>().empty());
  EXPECT_EQ(j.at("vectors"), smoke_csv());
}

TEST(RegressE2e, ConfigHashTellsConfigurationsApart) {
  std::set<std::string> hashes;
  for (const char* shape : {"16x4", "16x2", "8x4"})
    for (bool f : {false, true}) hashes.insert(config_hash(config(shape, f)));
  EXPECT_EQ(hashes.size(), 6u);
}

// ---------------------------------------------------------------- a hang does not stop the regression

// The RTL backend with a tiny watchdog budget for one task (by id); every other call passes through.
class TightWatchdog final : public Backend {
 public:
  TightWatchdog(std::unique_ptr<Backend> inner, std::string task_id, std::uint64_t budget)
      : inner_(std::move(inner)), id_(std::move(task_id)), budget_(budget) {}
  std::string name() const override { return inner_->name(); }
  const HwConfig& config() const override { return inner_->config(); }
  TaskTrace run(const Task& t, const RunOptions& opt) override {
    RunOptions o = opt;
    if (t.id == id_) o.watchdog_cycles = budget_;
    return inner_->run(t, o);
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::string id_;
  std::uint64_t budget_;
};

void expect_hang_then_pass(const RunResult& r, std::uint64_t budget) {
  ASSERT_EQ(r.tasks.size(), 2u);
  const TaskComparison& h = r.tasks[0];
  EXPECT_EQ(h.status, Status::Hang) << to_string(h.status) << " " << h.error;
  EXPECT_EQ(h.rtl_completed, std::optional<bool>(false));
  EXPECT_EQ(h.model_completed, std::optional<bool>(true));
  EXPECT_FALSE(h.delta.has_value()) << "no delta for a task the RTL did not finish";
  EXPECT_EQ(h.hung_pes, h.task.pes());
  ASSERT_TRUE(h.rtl_cycles.has_value());
  EXPECT_LE(*h.rtl_cycles, budget);
  bool flagged = false;
  for (const std::string& f : h.flags) flagged |= f.rfind("hang: RTL PE", 0) == 0;
  EXPECT_TRUE(flagged);

  const TaskComparison& p = r.tasks[1];
  EXPECT_EQ(p.status, Status::Pass) << to_string(p.status) << " " << p.error << " " << data_cell(p);
  EXPECT_EQ(p.data_match(), std::optional<bool>(true));

  const nlohmann::json j = report_json(r);
  EXPECT_EQ(j["tasks"][0]["status"], "hang");
  EXPECT_TRUE(j["tasks"][0]["delta"].is_null());
  EXPECT_EQ(j["tasks"][1]["status"], "pass");
  EXPECT_EQ(j["summary"]["counts"]["hang"], 1);
  EXPECT_EQ(j["summary"]["counts"]["pass"], 1);
  EXPECT_EQ(j["summary"]["all_passed"], false);
  EXPECT_NE(format_table(r).find(h.task.id + " ("), std::string::npos) << "the hang is detailed under the table";
}

TEST(RegressE2e, HangWithATinyWatchdogThenTheNextTaskPasses) {
  const HwConfig cfg = config("16x4", false);
  const std::vector<Task> smoke = read_task_vectors(smoke_csv(), cfg);
  ASSERT_GE(smoke.size(), 2u);
  const std::vector<Task> tasks = {smoke[0], smoke[1]};
  TightWatchdog rtl(make_rtl_backend(cfg), tasks[0].id, 30);
  const std::unique_ptr<Backend> model = make_model_backend(cfg);
  const RunResult r = run_tasks(tasks, cfg, &rtl, model.get());
  expect_hang_then_pass(r, 30);
}

TEST(RegressE2e, HangFromTheRunnersBudgetThenTheNextTaskPasses) {
  // RunnerOptions: a budget of 200 clocks whatever the model says; the first task needs thousands, the
  // second (one MLA tile on PE 0, 24 clocks) fits
  const HwConfig cfg = config("16x4", false);
  const std::vector<Task> smoke = read_task_vectors(smoke_csv(), cfg);
  const Task tile = mm_tile();
  RunnerOptions opt;
  opt.policy.task_budget.min_cycles = 200;
  opt.policy.task_budget.model_factor = 0.0;
  const RunResult r = run_tasks({smoke[0], tile}, cfg, opt);
  expect_hang_then_pass(r, 200);
  EXPECT_EQ(r.tasks[0].rtl_budget_cycles, 200u);
  EXPECT_EQ(r.tasks[1].rtl_budget_cycles, 200u);
  EXPECT_EQ(r.tasks[1].rtl_cycles, std::optional<std::uint64_t>(24));
}

}  // namespace
}  // namespace s2
