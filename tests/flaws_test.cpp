// The RTL's switchable flaws seen from outside (rtl_stubs/README.md, "The known flaws"): with a flaw off
// every task of vectors/flaws.csv passes; with it on, its documented symptom appears on the tasks past its
// limit and nowhere else; the limit search finds exactly the documented limit; a hang never stalls the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "harness/commands/flaw_limit.h"
#include "harness/commands/regress.h"
#include "harness/stimulus/task_vectors.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

HwConfig config(const std::vector<std::string>& flaws) { return build_hw_config("", "16x4", flaws); }

RunResult run_flaw_vectors(const HwConfig& cfg) {
  return run_tasks(read_task_vectors(source_path("vectors/flaws.csv"), cfg), cfg);
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

TEST(Flaws, WithTheFlawsOffEveryTaskPasses) {
  for (const HwConfig& cfg : {config({}), config({"sram2clk"})}) {
    const RunResult r = run_flaw_vectors(cfg);
    for (const TaskComparison& c : r.tasks) EXPECT_EQ(c.status, Status::Pass) << c.task.id;
  }
}

TEST(Flaws, NeighborConvStopsThePesEarlyPastItsLimitOnly) {
  const RunResult r = run_flaw_vectors(config({"sram2clk", "neighbor_conv"}));
  for (const TaskComparison& c : r.tasks) {
    SCOPED_TRACE(c.task.id);
    const bool past = starts_with(c.task.id, "nc_at_") || c.task.id == "nc_thesis_d64_shift2";
    if (!past) {
      EXPECT_EQ(c.status, Status::Pass);
      continue;
    }
    // every PE raised done with wrong results: an early stop, reported per PE
    EXPECT_EQ(c.status, Status::EarlyStop);
    EXPECT_EQ(c.early_stop_pes, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_TRUE(c.hung_pes.empty());
    EXPECT_EQ(c.data_match(), std::optional<bool>(false));
    EXPECT_EQ(c.model_data_match(), std::optional<bool>(true));  // the model is the correct hardware
  }
}

TEST(Flaws, MmWideAHangsEveryPePastItsLimitOnlyAndTheRunGoesOn) {
  const RunResult r = run_flaw_vectors(config({"sram2clk", "mm_wide_a"}));
  bool passed_after_hang = false, hung = false;
  for (const TaskComparison& c : r.tasks) {
    SCOPED_TRACE(c.task.id);
    const bool past = c.task.id == "mm_at_w125_shift1" || c.task.id == "mm_thesis_w128_shift3";
    if (!past) {
      EXPECT_EQ(c.status, Status::Pass);
      passed_after_hang = passed_after_hang || hung;
      continue;
    }
    hung = true;
    EXPECT_EQ(c.status, Status::Hang);
    EXPECT_EQ(c.hung_pes, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(c.long_run_pes, (std::vector<int>{0, 1, 2, 3}));  // flagged with its cycles and the model's
    EXPECT_LE(c.rtl_elapsed_cycles, c.rtl_budget_cycles + 1);   // stopped by the watchdog, not run on
    // each PE's state at the point the watchdog gave up: stuck before its last step, waiting for operand A
    for (const std::string& f : c.flags) {
      if (starts_with(f, "hang:")) {
        EXPECT_NE(f.find("stalled on operand A"), std::string::npos) << f;
      }
    }
  }
  EXPECT_TRUE(passed_after_hang);
}

TEST(Flaws, LimitSearchFindsTheDocumentedLimits) {
  std::ostringstream log;
  const FlawLimitResult nc = find_flaw_limit("neighbor_conv", config({"sram2clk"}), &log);
  ASSERT_TRUE(nc.found) << nc.why_not;
  EXPECT_EQ(nc.dimension, "weight_bytes");
  EXPECT_EQ(nc.limit, 540u);  // [3,3,15,4]: 34 operand-A words, the first family member past 32 words
  EXPECT_EQ(nc.last_pass, 504u);
  EXPECT_EQ(nc.control_status, "pass");
  EXPECT_TRUE(nc.independence_holds);
  EXPECT_LE(nc.simulations, 14);

  const FlawLimitResult mm = find_flaw_limit("mm_wide_a", config({}), &log);
  ASSERT_TRUE(mm.found) << mm.why_not;
  EXPECT_EQ(mm.dimension, "W_A");
  EXPECT_EQ(mm.limit, 125u);  // 32 operand-A words per row group
  EXPECT_EQ(mm.last_pass, 124u);
  EXPECT_EQ(mm.reproducer_status, "hang");
  EXPECT_EQ(mm.control_status, "pass");
  EXPECT_TRUE(mm.independence_holds);
  // the reproducer is a contract-1 row that reads back as the task that hung
  const std::vector<Task> back =
      parse_task_vectors(task_vector_header() + "\n" + task_vector_row(mm.reproducer) + "\n", "reproducer", config({}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].mm.W_A, 125);
  EXPECT_EQ(back[0].a_src_shift, 1);
}

TEST(Flaws, LimitSearchRefusesAFlawWithoutASearchDimension) {
  // sram2clk changes timing, which the model predicts too: there is no symptom to search for
  EXPECT_THROW(find_flaw_limit("sram2clk", config({}), nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace s2
