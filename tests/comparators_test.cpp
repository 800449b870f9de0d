// The one status rule every comparator applies (harness/check/comparators.h, classify): each finding alone
// gives its status, several give the first by precedence, and a delta is a deviation only beyond the bound.
// The activity comparator (activity_comparator.h): model against RTL count by count, and the floors a task's
// work sets; a count off or below its floor is a deviation, and a task's counts reach compare_task's status.
#include <gtest/gtest.h>

#include "harness/check/activity_comparator.h"
#include "harness/check/comparators.h"

namespace s2 {
namespace {

TEST(Classify, EachFindingAloneGivesItsStatus) {
  EXPECT_EQ(classify(Findings{}, 0.02), Status::Pass);
  Findings f;
  f.error = true;
  EXPECT_EQ(classify(f, 0.02), Status::Error);
  f = {};
  f.hang = true;
  EXPECT_EQ(classify(f, 0.02), Status::Hang);
  f = {};
  f.early_stop = true;
  EXPECT_EQ(classify(f, 0.02), Status::EarlyStop);
  f = {};
  f.mismatch = true;
  EXPECT_EQ(classify(f, 0.02), Status::Mismatch);
  f = {};
  f.delta = -0.05;
  EXPECT_EQ(classify(f, 0.02), Status::Deviation);
}

TEST(Classify, TheFirstFindingByPrecedenceWins) {
  Findings f;
  f.delta = 0.5;
  f.mismatch = true;
  EXPECT_EQ(classify(f, 0.02), Status::Mismatch);
  f.early_stop = true;
  EXPECT_EQ(classify(f, 0.02), Status::EarlyStop);
  f.hang = true;
  EXPECT_EQ(classify(f, 0.02), Status::Hang);
  f.error = true;
  EXPECT_EQ(classify(f, 0.02), Status::Error);
}

TEST(Classify, ADeltaIsADeviationOnlyBeyondTheBound) {
  Findings f;
  f.delta = 0.02;
  EXPECT_EQ(classify(f, 0.02), Status::Pass);
  f.delta = -0.02;
  EXPECT_EQ(classify(f, 0.02), Status::Pass);
  f.delta = 0.0201;
  EXPECT_EQ(classify(f, 0.02), Status::Deviation);
  EXPECT_EQ(classify(f, 0.10), Status::Pass);  // the thesis's 10%
}

TEST(Classify, ADeviatingCountIsADeviationBelowEveryOtherFinding) {
  Findings f;
  f.activity_deviation = true;
  EXPECT_EQ(classify(f, 0.02), Status::Deviation);
  f.mismatch = true;
  EXPECT_EQ(classify(f, 0.02), Status::Mismatch);
}

TEST(ActivityComparator, ACountIsOffOnlyBeyondTheBound) {
  Activity rtl, model;
  rtl.mac_ops = model.mac_ops = 1000;
  rtl.sram_read_bytes_mla_a = 1000;
  model.sram_read_bytes_mla_a = 1010;  // +1.0%: at the bound, within
  rtl.dram_read_bytes = 1000;
  model.dram_read_bytes = 989;  // -1.1%: off
  ActivityComparison c = compare_activity(model, rtl, {}, {}, CheckPolicy{});
  ASSERT_EQ(c.counts.size(), Activity::kFields);
  EXPECT_TRUE(c.deviates());
  std::string which;
  ASSERT_TRUE(c.worst(&which));
  EXPECT_NEAR(*c.worst(), 0.011, 1e-12);
  EXPECT_EQ(which, "dram_read_bytes");
  EXPECT_EQ(c.describe(), "dram_read_bytes model 989 rtl 1000 (-1.10%)");
  model.dram_read_bytes = 1000;
  EXPECT_FALSE(compare_activity(model, rtl, {}, {}, CheckPolicy{}).deviates());
}

// Busy and idle PE clocks are time: judged by the clocks' bound (2%) against the RTL's span, so an idle
// count of 10 clocks that is 12 on the model (+20% of itself, +0.2% of the span) is no deviation.
TEST(ActivityComparator, ClockCountsAreJudgedAsClocksAgainstTheSpan) {
  Activity rtl, model;
  rtl.pe_busy_cycles = 990;
  rtl.pe_idle_cycles = 10;
  model.pe_busy_cycles = 1005;  // +1.5% of the span: within the clocks' 2%, beyond the events' 1%
  model.pe_idle_cycles = 12;
  ActivityComparison c = compare_activity(model, rtl, {}, {}, CheckPolicy{});
  EXPECT_FALSE(c.deviates()) << c.describe();
  EXPECT_NEAR(*c.worst(), 0.015, 1e-12);
  model.pe_busy_cycles = 1021;  // +3.1%
  c = compare_activity(model, rtl, {}, {}, CheckPolicy{});
  EXPECT_EQ(c.describe(), "pe_busy_cycles model 1021 rtl 990 (+3.10% of the RTL's PE clocks)");
}

TEST(ActivityComparator, AnRtlZeroAgainstAModelCountIsOffAndUnavailableCountsAreLeftOut) {
  Activity rtl, model;
  model.noc_packets = 3;  // the RTL counted none
  ActivityComparison c = compare_activity(model, rtl, {}, {}, CheckPolicy{});
  EXPECT_TRUE(c.deviates());
  EXPECT_TRUE(std::isinf(*c.worst()));
  EXPECT_EQ(c.describe(), "noc_packets model 3 rtl 0 (rtl counted none)");
  // a user's RTL without NoC counters: the count is listed, not compared
  c = compare_activity(model, rtl, {}, {"noc_packets", "noc_packet_hops"}, CheckPolicy{});
  EXPECT_FALSE(c.deviates());
  EXPECT_EQ(c.counts.size(), Activity::kFields - 2);
  EXPECT_EQ(c.unavailable, (std::vector<std::string>{"noc_packets", "noc_packet_hops"}));
}

TEST(ActivityFloor, ATasksWorkSetsItsFloorsAndACountBelowOneIsNamed) {
  Task t;
  t.op = Op::Mm;
  t.mm = {8, 5, 3, 8};  // A [8 x 5], B [3 x 8]: C = [3 x 5], 5 * 3 * 8 MACs a PE
  t.pe = -1;            // all four PEs
  const ActivityFloor f = activity_floor(t);
  EXPECT_EQ(f.mac_ops, 4u * 120);
  EXPECT_EQ(f.operand_a_read_bytes, 4u * 40);
  EXPECT_EQ(f.operand_b_read_bytes, 4u * 24);
  EXPECT_EQ(f.result_write_bytes, 4u * 4 * 15);
  Activity a;
  a.mac_ops = 480;
  a.sram_read_bytes_mla_a = 100;
  a.sram_read_bytes_dma = 60;  // a neighbour's operand A is served at the DMA/NoC port
  a.sram_read_bytes_mla_b = 96;
  a.sram_write_bytes_mla_out = 240;
  EXPECT_TRUE(activity_below_floor(a, f, {}).empty());
  a.mac_ops = 479;
  const std::vector<std::string> below = activity_below_floor(a, f, {});
  ASSERT_EQ(below.size(), 1u);
  EXPECT_EQ(below[0], "mac_ops 479 < 480 the work implies");
  EXPECT_TRUE(activity_below_floor(a, f, {"mac_ops"}).empty());  // not observed: not judged

  Task c;
  c.op = Op::Conv;
  c.pe = 2;
  c.conv = {6, 5, 3, 3, 2, 4, 1};  // input 6x5x3, filter 3x2x3x4: output 4x4x4
  const ActivityFloor g = activity_floor(c);
  EXPECT_EQ(g.mac_ops, 4u * 4 * 4 * 3 * 3 * 2);
  EXPECT_EQ(g.operand_a_read_bytes, 3u * 2 * 3 * 4);
  EXPECT_EQ(g.operand_b_read_bytes, 6u * 5 * 3);
  EXPECT_EQ(g.result_write_bytes, 4u * 4 * 4 * 4);
}

// compare_task folds the counts into the status: equal counts pass, a count off by more than the bound is a
// deviation with a flag naming it, and a backend counting less than the task's work is one too.
TEST(ActivityComparator, CompareTaskJudgesTheCounts) {
  Task t;
  t.id = "mm";
  t.op = Op::Mm;
  t.mm = {16, 4, 16, 16};
  t.pe = 0;
  HwConfig cfg;
  const auto golden = golden_for_task(t, cfg);
  TaskTrace tr;
  tr.completed = true;
  tr.cycles = 100;
  PeTrace p;
  p.pe = 0;
  p.started = p.done = true;
  p.state = "done";
  p.end_cycle = 100;
  p.results = golden[0];
  tr.pes.push_back(p);
  tr.activity.mac_ops = t.macs_per_pe();
  tr.activity.sram_read_bytes_mla_a = 16 * 4;
  tr.activity.sram_read_bytes_mla_b = 16 * 16;
  tr.activity.sram_write_bytes_mla_out = 4 * 16 * 4;
  BackendResult rtl{true, tr, ""}, model{true, tr, ""};
  TaskComparison c = compare_task(t, cfg, golden, rtl, model);
  EXPECT_EQ(c.status, Status::Pass) << (c.flags.empty() ? "" : c.flags[0]);
  ASSERT_TRUE(c.activity.model && c.activity.rtl);
  model.trace->activity.mac_ops += t.macs_per_pe() / 50;  // +2%
  c = compare_task(t, cfg, golden, rtl, model);
  EXPECT_EQ(c.status, Status::Deviation);
  ASSERT_FALSE(c.flags.empty());
  EXPECT_NE(c.flags[0].find("mac_ops model"), std::string::npos) << c.flags[0];
  rtl.trace->activity.mac_ops = model.trace->activity.mac_ops = t.macs_per_pe() - 1;  // equal, but short of the work
  c = compare_task(t, cfg, golden, rtl, model);
  EXPECT_EQ(c.status, Status::Deviation);
  ASSERT_EQ(c.activity_floor.size(), 2u);
  EXPECT_EQ(c.activity_floor[0].rfind("rtl: mac_ops", 0), 0u) << c.activity_floor[0];
}

}  // namespace
}  // namespace s2
