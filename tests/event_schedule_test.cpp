// The event schedule (model_schedule "event", the default) against the clock-level one ("clock"), the
// reference: equal where the event schedule is exact (a PE alone; four PEs on operands in their own SRAM),
// the same where PEs contend (both resolve those clock by clock), and a cost that grows with the tile shapes
// of a task, not with its clocks (model/README.md, "How the model keeps time").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/stimulus/task_vectors.h"
#include "model/qpe/task_timing.h"
#include "model/qpe/tile_schedule.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

HwConfig with_schedule(HwConfig cfg, const std::string& schedule) {
  cfg.model_schedule = schedule;
  return cfg;
}

constexpr std::uint64_t kEveryClock = 1ull << 40;  // a resolve window no task reaches: nothing extrapolated

struct Timed {
  TaskTiming timing;
  std::uint64_t clocks_resolved = 0;
};

Timed timed(const Task& t, const HwConfig& cfg, const std::array<bool, kPesPerQpe>& active, std::uint64_t window) {
  TileSchedule schedule(cfg);
  Timed out{task_timing(t, cfg, schedule, active, {0, 1, 2, 3}, window), 0};
  out.clocks_resolved = schedule.clocks_resolved();
  return out;
}

void expect_same_timing(const TaskTiming& a, const TaskTiming& b, const std::string& what) {
  for (int p = 0; p < kPesPerQpe; ++p) {
    SCOPED_TRACE(what + ", PE " + std::to_string(p));
    EXPECT_EQ(a.pe[p].row_end, b.pe[p].row_end);
    EXPECT_EQ(a.pe[p].phases.setup, b.pe[p].phases.setup);
    EXPECT_EQ(a.pe[p].phases.compute, b.pe[p].phases.compute);
    EXPECT_EQ(a.pe[p].phases.output, b.pe[p].phases.output);
    EXPECT_EQ(a.pe[p].phases.a_wait, b.pe[p].phases.a_wait);
    EXPECT_EQ(a.pe[p].phases.b_wait, b.pe[p].phases.b_wait);
  }
}

std::array<bool, kPesPerQpe> pes_of(const Task& t) {
  std::array<bool, kPesPerQpe> active{};
  for (int p : t.pes()) active[p] = true;
  return active;
}


// A PE alone: every task of the random suite on its first PE, against every clock resolved.
TEST(EventSchedule, OnePeAloneEqualsTheClockLevelSchedule) {
  for (const HwConfig& cfg : mac_shape_configs_with_sram2clk()) {
    SCOPED_TRACE(cfg.mac_shape() + (cfg.flaws.sram2clk ? " sram2clk" : ""));
    int compared = 0;
    for (const Task& t : read_task_vectors(source_path("vectors/random_suite.csv"), cfg)) {
      std::array<bool, kPesPerQpe> alone{};
      alone[t.pes().front()] = true;
      const Timed event = timed(t, with_schedule(cfg, "event"), alone, kEveryClock);
      const Timed clock = timed(t, with_schedule(cfg, "clock"), alone, kEveryClock);
      expect_same_timing(event.timing, clock.timing, t.id);
      EXPECT_EQ(event.timing.rows_extrapolated, 0u) << t.id;
      ++compared;
    }
    EXPECT_EQ(compared, 240);
  }
}

// Four PEs on operands in their own SRAM (matrix multiplications without a neighbour): no router, no shared
// port, so each PE's tiles are a lone PE's.
TEST(EventSchedule, FourPesOnLocalOperandsEqualTheClockLevelSchedule) {
  for (const HwConfig& cfg : mac_shape_configs_with_sram2clk()) {
    SCOPED_TRACE(cfg.mac_shape() + (cfg.flaws.sram2clk ? " sram2clk" : ""));
    int compared = 0;
    for (const Task& t : read_task_vectors(source_path("vectors/random_suite.csv"), cfg)) {
      if (t.op != Op::Mm || t.a_from_neighbor() || t.pes().size() != kPesPerQpe) continue;
      const Timed event = timed(t, with_schedule(cfg, "event"), pes_of(t), kEveryClock);
      const Timed clock = timed(t, with_schedule(cfg, "clock"), pes_of(t), kEveryClock);
      expect_same_timing(event.timing, clock.timing, t.id);
      ++compared;
    }
    EXPECT_GE(compared, 10) << "the suite has matrix multiplications on four PEs with local operand A";
  }
}

// PEs whose operand-A reads meet at the router: both schedules resolve them clock by clock with the same
// window, so every task of the suite, on all its PEs, is timed the same.
TEST(EventSchedule, EveryRandomSuiteTaskIsTimedAsByTheClockLevelSchedule) {
  const HwConfig cfg;
  const std::uint64_t window = static_cast<std::uint64_t>(cfg.model_resolve_window_cycles);
  int contended = 0;
  for (const Task& t : read_task_vectors(source_path("vectors/random_suite.csv"), cfg)) {
    const Timed event = timed(t, with_schedule(cfg, "event"), pes_of(t), window);
    const Timed clock = timed(t, with_schedule(cfg, "clock"), pes_of(t), window);
    expect_same_timing(event.timing, clock.timing, t.id);
    contended += t.pes().size() > 1 && (t.op == Op::Conv || t.a_from_neighbor());
  }
  EXPECT_GT(contended, 100);
}

// The event schedule's cost: a lone PE's task four times as long (four times the output rows) costs no
// more clocks resolved, while the clock-level schedule resolves clocks in proportion to the task.
TEST(EventSchedule, ItsCostGrowsWithTileShapesNotWithClocks) {
  const HwConfig event = with_schedule(HwConfig{}, "event"), clock = with_schedule(HwConfig{}, "clock");
  const Task short_task = make_conv_task("short", ConvShape{34, 14, 16, 3, 3, 4, 1}, 1, 31);
  const Task long_task = make_conv_task("long", ConvShape{34, 50, 16, 3, 3, 4, 1}, 1, 31);
  std::array<bool, kPesPerQpe> alone{};
  alone[1] = true;
  const Timed es = timed(short_task, event, alone, kEveryClock), el = timed(long_task, event, alone, kEveryClock);
  const Timed cs = timed(short_task, clock, alone, kEveryClock), cl = timed(long_task, clock, alone, kEveryClock);
  EXPECT_EQ(el.timing.pe[1].cycles(), cl.timing.pe[1].cycles());
  EXPECT_GT(el.timing.pe[1].cycles(), 3 * es.timing.pe[1].cycles());
  EXPECT_EQ(el.clocks_resolved, es.clocks_resolved) << "one tile shape, resolved once, whatever the task's length";
  EXPECT_LT(es.clocks_resolved, es.timing.pe[1].cycles() / 8);
  EXPECT_GT(cl.clocks_resolved, 3 * cs.clocks_resolved / 2);
}

// Through the model backend: the same trace (clocks, phases, results) on either schedule.
TEST(EventSchedule, TheModelBackendReportsTheSameOnEitherSchedule) {
  for (const Task& t : {multi_tile_conv(2), multi_tile_mm(-1), multi_tile_conv(-1)}) {
    SCOPED_TRACE(t.id + (t.pe < 0 ? " on all PEs" : ""));
    const TaskTrace e = run_with_watchdog(*make_model_backend(with_schedule(HwConfig{}, "event")), t, 1000000);
    const TaskTrace c = run_with_watchdog(*make_model_backend(with_schedule(HwConfig{}, "clock")), t, 1000000);
    EXPECT_EQ(e.cycles, c.cycles);
    ASSERT_EQ(e.pes.size(), c.pes.size());
    for (std::size_t i = 0; i < e.pes.size(); ++i) {
      EXPECT_EQ(e.pes[i].end_cycle - e.pes[i].start_cycle, c.pes[i].end_cycle - c.pes[i].start_cycle);
      EXPECT_EQ(e.pes[i].phases.compute, c.pes[i].phases.compute);
      EXPECT_EQ(e.pes[i].results, c.pes[i].results);
    }
  }
}

}  // namespace
}  // namespace s2
