// The model's timing on its own (no RTL): the clock counts derived by hand from the RTL in
// tests/rtl_mla_tile_test.cpp (its top comment), the tile schedule's determinism and cache, the
// extrapolation of long tasks (model/qpe/task_timing.h), and the phase counters of a model task.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "model/golden.h"
#include "model/qpe/task_timing.h"
#include "model/qpe/tile_schedule.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

// The tasks of tests/rtl_mla_tile_test.cpp (mm_tile, conv_tile, multi_tile_conv, multi_tile_mm: test_support.h),
// and a long single-PE convolution: 1 filter group x 50 output rows x 2 column tiles of 3x3x16 steps, several
// times the model's resolve window (5000 clocks), and within the 96 KB budget.
Task long_conv(int pe = 1) { return make_conv_task("long_conv", ConvShape{34, 52, 16, 3, 3, 4, 1}, pe, 31); }

TaskTrace run_model(const Task& t, const HwConfig& cfg) {
  return run_with_watchdog(*make_model_backend(cfg), t, 10000000);
}

// The model also knows its phases, and spends one SETUP clock per tile.
void expect_timing(const TaskTrace& tr, const ExpectedTiming& e) {
  expect_lone_pe_timing(tr, e);
  if (tr.pes.size() != 1) return;  // already a failure
  const PeTrace& p = tr.pes[0];
  EXPECT_TRUE(p.phases_known);
  EXPECT_EQ(p.phases.setup, e.tiles);  // one SETUP clock per tile
}

// A task through the model: golden results and the hand-derived clocks.
void expect_tile(const Task& t, const HwConfig& cfg, const ExpectedTiming& e) {
  const TaskTrace tr = run_model(t, cfg);
  expect_golden(t, cfg, tr);
  expect_timing(tr, e);
}

// ---------------------------------------------------------------- (a) the hand-derived clock counts

TEST(ModelTiming, MmOneTileIs24Clocks) {
  expect_tile(mm_tile(), config("16x4", false), {24, 6, 17, 1, 1, 1, 4});
}

TEST(ModelTiming, MmOneTileWithSram2clkIs45Clocks) {
  expect_tile(mm_tile(), config("16x4", true), {45, 11, 33, 2, 5, 1, 4});
}

TEST(ModelTiming, ConvOneTileIs29Clocks) {
  expect_tile(conv_tile(), config("16x4", false), {29, 11, 17, 7, 0, 1, 4});
}

TEST(ModelTiming, ConvOneTileWithSram2clkIs49Clocks) {
  expect_tile(conv_tile(), config("16x4", true), {49, 15, 33, 8, 3, 1, 4});
}

TEST(ModelTiming, OtherMacShapesTakeTwoTiles) {
  for (const char* shape : {"16x2", "8x4"}) {
    SCOPED_TRACE(shape);
    const HwConfig cfg = config(shape, false);
    expect_tile(mm_tile(), cfg, {32, 12, 18, 2, 2, 2, 8});
    expect_tile(conv_tile(), cfg, {42, 22, 18, 14, 0, 2, 8});
  }
}

TEST(ModelTiming, TheSameTileOnAnyPeTakesTheSameClocks) {
  // a lone PE has no neighbour traffic: PE 0 .. 3 alike
  const HwConfig cfg = config("16x4", false);
  for (int pe = 0; pe < kPesPerQpe; ++pe) {
    Task mm = mm_tile();
    mm.pe = pe;
    Task conv = conv_tile();
    conv.pe = pe;
    EXPECT_EQ(run_model(mm, cfg).cycles, 24u) << "PE " << pe;
    EXPECT_EQ(run_model(conv, cfg).cycles, 29u) << "PE " << pe;
  }
}

// ---------------------------------------------------------------- (b) the tile schedule and its cache

TileSituation lone_mm_tile(int pe) {
  TileSituation s;
  s.tiles = {TileShape{4, 1, 16, false}};  // mm [4,4]x[16,4]: 4 rows of B, 1 step each, 16 writes
  for (int p = 0; p < kPesPerQpe; ++p) s.a_source[p] = p;
  s.active[pe] = true;
  return s;
}

TileSituation pair_conv_tiles(std::uint32_t offset1) {
  TileSituation s;
  s.tiles = {TileShape{12, 3, 16, true}, TileShape{12, 3, 16, true}};
  for (int p = 0; p < kPesPerQpe; ++p) s.a_source[p] = (p + 1) % kPesPerQpe;
  s.active[0] = s.active[1] = true;
  s.offset[1] = offset1;
  return s;
}

void expect_same(const TileTiming& a, const TileTiming& b) {
  for (int p = 0; p < kPesPerQpe; ++p) {
    SCOPED_TRACE("PE " + std::to_string(p));
    EXPECT_EQ(a[p].setup, b[p].setup);
    EXPECT_EQ(a[p].compute, b[p].compute);
    EXPECT_EQ(a[p].output, b[p].output);
    EXPECT_EQ(a[p].a_wait, b[p].a_wait);
    EXPECT_EQ(a[p].b_wait, b[p].b_wait);
    EXPECT_EQ(a[p].tile_end, b[p].tile_end);
  }
}

TEST(ModelTiming, TileScheduleOfOneTileMatchesTheHandCount) {
  TileSchedule sched(config("16x4", false));
  const TileTiming& t = sched.tile(lone_mm_tile(0));
  EXPECT_EQ(t[0].setup, 1u);
  EXPECT_EQ(t[0].compute, 6u);
  EXPECT_EQ(t[0].output, 17u);
  EXPECT_EQ(t[0].total(), 24u);
  EXPECT_EQ(t[0].tile_end, std::vector<std::uint64_t>{24});
  for (int p = 1; p < kPesPerQpe; ++p) EXPECT_EQ(t[p].total(), 0u) << "PE " << p << " is not active";
}

TEST(ModelTiming, TileScheduleCachesTheSameSituation) {
  TileSchedule sched(config("16x4", false));
  EXPECT_EQ(sched.distinct_tiles(), 0u);
  const TileTiming* first = &sched.tile(pair_conv_tiles(3));
  const std::uint64_t resolved = sched.clocks_resolved();
  EXPECT_GT(resolved, 0u);
  EXPECT_EQ(sched.distinct_tiles(), 1u);
  // the same situation (a separate but equal object): the very same answer, nothing resolved anew
  const TileTiming* again = &sched.tile(pair_conv_tiles(3));
  EXPECT_EQ(first, again);
  EXPECT_EQ(sched.distinct_tiles(), 1u);
  EXPECT_EQ(sched.clocks_resolved(), resolved);
}

TEST(ModelTiming, TileScheduleResolvesADifferentSituationAnew) {
  TileSchedule sched(config("16x4", false));
  const TileTiming* base = &sched.tile(pair_conv_tiles(0));
  std::uint64_t resolved = sched.clocks_resolved();
  std::size_t n = 1;
  auto expect_new = [&](const TileSituation& s, const char* what) {
    const TileTiming* t = &sched.tile(s);
    EXPECT_NE(t, base) << what;
    EXPECT_EQ(sched.distinct_tiles(), ++n) << what;
    EXPECT_GT(sched.clocks_resolved(), resolved) << what;
    resolved = sched.clocks_resolved();
    return t;
  };
  // a different start offset of one PE
  const TileTiming* shifted = expect_new(pair_conv_tiles(5), "offset");
  // a different set of active PEs
  TileSituation three = pair_conv_tiles(0);
  three.active[2] = true;
  const TileTiming* wider = expect_new(three, "active set");
  // different operand-A sources
  TileSituation local = pair_conv_tiles(0);
  for (int p = 0; p < kPesPerQpe; ++p) local.a_source[p] = p;
  expect_new(local, "a_source");
  // the run followed by more of the same
  TileSituation follows = pair_conv_tiles(0);
  follows.next_follows = true;
  expect_new(follows, "next_follows");
  // a different tile shape
  TileSituation wider_tile = pair_conv_tiles(0);
  wider_tile.tiles.back().writes = 8;
  expect_new(wider_tile, "tile shape");

  // the answers differ where the situation says they must
  EXPECT_GT((*shifted)[1].tile_end.back(), 0u);
  EXPECT_NE((*shifted)[1].tile_end, (*base)[1].tile_end) << "PE 1 starts 5 clocks later";
  EXPECT_GT((*wider)[2].total(), 0u);
  EXPECT_EQ((*base)[2].total(), 0u);
  // earlier entries are still there, unchanged in place
  EXPECT_EQ(&sched.tile(pair_conv_tiles(0)), base);
  EXPECT_EQ(&sched.tile(pair_conv_tiles(5)), shifted);
  EXPECT_EQ(sched.distinct_tiles(), n);
}

TEST(ModelTiming, TileScheduleIsDeterministic) {
  // two schedules resolve the same situations in different orders: the same answers
  const HwConfig cfg = config("16x4", true);
  TileSchedule a(cfg), b(cfg);
  std::vector<TileSituation> all;
  for (std::uint32_t off : {0u, 1u, 2u, 7u}) all.push_back(pair_conv_tiles(off));
  for (int pe = 0; pe < kPesPerQpe; ++pe) all.push_back(lone_mm_tile(pe));
  for (const TileSituation& s : all) a.tile(s);
  for (auto it = all.rbegin(); it != all.rend(); ++it) b.tile(*it);
  for (const TileSituation& s : all) expect_same(a.tile(s), b.tile(s));
  EXPECT_EQ(a.distinct_tiles(), all.size());
  EXPECT_EQ(a.clocks_resolved(), b.clocks_resolved());
}

// ---------------------------------------------------------------- (c) task timing of a long task

void expect_long_task_is_the_sum_of_its_rows(const HwConfig& cfg) {
  SCOPED_TRACE(cfg.flaws.sram2clk ? "sram2clk" : "no flaw");
  const Task t = long_conv();
  const TaskTiles tiles = task_tiles(t, cfg);
  ASSERT_EQ(tiles.rows_total(), 50u);
  ASSERT_EQ(tiles.column_tiles, 2u);
  std::array<bool, kPesPerQpe> active{};
  active[t.pe] = true;
  const std::array<std::uint64_t, kPesPerQpe> start{};

  TileSchedule sched(cfg);
  const TaskTiming tt = task_timing(t, cfg, sched, active, start, 5000);
  EXPECT_EQ(tt.rows_resolved + tt.rows_extrapolated, tiles.rows_total());
  EXPECT_GE(tt.rows_resolved, 2u);
  EXPECT_GT(tt.rows_extrapolated, 0u) << "the task is longer than the resolve window";
  const PeTaskTiming& pt = tt.pe[t.pe];
  ASSERT_EQ(pt.row_end.size(), tiles.rows_total());
  std::uint64_t sum = 0, prev = 0;
  for (std::uint64_t end : pt.row_end) {
    ASSERT_GT(end, prev) << "rows end in order";
    sum += end - prev;
    prev = end;
  }
  EXPECT_EQ(pt.cycles(), sum);
  for (int p = 0; p < kPesPerQpe; ++p) {
    if (p != t.pe) {
      EXPECT_TRUE(tt.pe[p].row_end.empty()) << "PE " << p;
    }
  }

  // a lone PE repeats its rows exactly: resolving every row clock by clock gives the same clocks
  TileSchedule full_sched(cfg);
  const TaskTiming full = task_timing(t, cfg, full_sched, active, start, 100000000);
  EXPECT_EQ(full.rows_resolved, tiles.rows_total());
  EXPECT_EQ(full.rows_extrapolated, 0u);
  EXPECT_EQ(full.pe[t.pe].row_end, pt.row_end);
  EXPECT_EQ(full.pe[t.pe].cycles(), pt.cycles());
  // every row but the first takes the same clocks
  const std::vector<std::uint64_t>& r = full.pe[t.pe].row_end;
  for (std::size_t i = 2; i < r.size(); ++i) ASSERT_EQ(r[i] - r[i - 1], r[1] - r[0]) << "row " << i;

  // the model backend reports exactly this
  EXPECT_EQ(run_model(t, cfg).cycles, pt.cycles());
}

// The clock-level schedule's window and extrapolation (the event schedule times a lone PE tile by tile and
// resolves no window: tests/event_schedule_test.cpp).
HwConfig clock_schedule(HwConfig cfg) {
  cfg.model_schedule = "clock";
  return cfg;
}

TEST(ModelTiming, LongSinglePeTaskIsTheSumOfItsRows) {
  expect_long_task_is_the_sum_of_its_rows(clock_schedule(config("16x4", false)));
  expect_long_task_is_the_sum_of_its_rows(clock_schedule(config("16x4", true)));
}

TEST(ModelTiming, TaskTimingAsksTheScheduleOnce) {
  const HwConfig cfg = config("16x4", false);
  const Task t = long_conv();
  std::array<bool, kPesPerQpe> active{};
  active[t.pe] = true;
  TileSchedule sched(cfg);
  const TaskTiming a = task_timing(t, cfg, sched, active, {}, 5000);
  EXPECT_EQ(sched.distinct_tiles(), 1u);
  const std::uint64_t resolved = sched.clocks_resolved();
  const TaskTiming b = task_timing(t, cfg, sched, active, {}, 5000);
  EXPECT_EQ(sched.distinct_tiles(), 1u);
  EXPECT_EQ(sched.clocks_resolved(), resolved) << "the second call comes from the cache";
  EXPECT_EQ(a.pe[t.pe].row_end, b.pe[t.pe].row_end);
  // where the PE starts does not matter when it is alone
  std::array<std::uint64_t, kPesPerQpe> later{};
  later[t.pe] = 12345;
  EXPECT_EQ(task_timing(t, cfg, sched, active, later, 5000).pe[t.pe].row_end, a.pe[t.pe].row_end);
}

// ---------------------------------------------------------------- (d) phase counters

void expect_phases_add_up(const Task& t, const HwConfig& cfg) {
  SCOPED_TRACE(t.id + " on " + cfg.mac_shape() + (cfg.flaws.sram2clk ? " sram2clk" : ""));
  const TaskTrace tr = run_model(t, cfg);
  expect_golden(t, cfg, tr);
  ASSERT_EQ(tr.pes.size(), 1u);
  const PeTrace& p = tr.pes[0];
  EXPECT_EQ(p.pe, t.pe);
  EXPECT_TRUE(p.phases_known);
  EXPECT_EQ(p.phases.setup + p.phases.compute + p.phases.output, p.cycles());
  EXPECT_EQ(p.cycles(), tr.cycles);
  EXPECT_EQ(p.phases.setup, p.tiles * static_cast<std::uint64_t>(cfg.tile_setup_cycles));
  EXPECT_LE(p.phases.a_wait + p.phases.b_wait, p.phases.compute);
  const TaskTiles tiles = task_tiles(t, cfg);
  EXPECT_EQ(p.tiles, tiles.rows_total() * tiles.column_tiles);
}

TEST(ModelTiming, PhasesAddUpToTheCyclesOfASinglePeTask) {
  for (bool sram2clk : {false, true}) {
    for (const char* shape : {"16x4", "16x2", "8x4"}) {
      const HwConfig cfg = config(shape, sram2clk);
      expect_phases_add_up(mm_tile(), cfg);
      expect_phases_add_up(conv_tile(), cfg);
      expect_phases_add_up(multi_tile_conv(3), cfg);
      expect_phases_add_up(multi_tile_mm(2), cfg);
    }
  }
}

TEST(ModelTiming, PhasesAddUpOnEveryPeOfAnExtrapolatedFourPeTask) {
  // four PEs contend, and most rows are extrapolated: every PE's phases must still account for its clocks
  for (bool sram2clk : {false, true}) {
    for (int shift : {-1, 1}) {
      Task t = long_conv(-1);
      t.a_src_shift = shift;
      const HwConfig cfg = config("16x4", sram2clk);
      SCOPED_TRACE(std::string(sram2clk ? "sram2clk" : "no flaw") + " a_src " + a_src_string(t));
      const TaskTrace tr = run_model(t, cfg);
      expect_golden(t, cfg, tr);
      ASSERT_EQ(tr.pes.size(), 4u);
      for (const PeTrace& p : tr.pes) {
        EXPECT_EQ(p.phases.setup + p.phases.compute + p.phases.output, p.cycles()) << "PE " << p.pe;
        EXPECT_EQ(p.phases.setup, p.tiles * static_cast<std::uint64_t>(cfg.tile_setup_cycles)) << "PE " << p.pe;
        EXPECT_LE(p.phases.a_wait + p.phases.b_wait, p.phases.compute) << "PE " << p.pe;
      }
    }
  }
}

TEST(ModelTiming, PhasesAddUpOnALongExtrapolatedTask) {
  // the rows after the resolve window are extrapolated; the phases must still account for every clock
  expect_phases_add_up(long_conv(), config("16x4", false));
  expect_phases_add_up(long_conv(), config("16x4", true));
}

}  // namespace
}  // namespace s2
