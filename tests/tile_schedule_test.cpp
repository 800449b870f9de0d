// The clock-level tile schedule (model/qpe/tile_schedule.cpp): skipping the periods of a steady state changes no
// clock (every PE's tile ends and phase clocks equal to evaluating every clock) on every situation the random
// suite asks for (every MAC shape, the 2-clock SRAM flaw off and on, the event and the clock schedule, two sets
// of start offsets) and on random tile runs; and its router, packed for the loop (model/qpe/qpe_noc.h), is the
// NoC fabric's (noc/router.h) edge by edge. (Its rewrite for speed was held equal to the engine before it on
// the same situations until that engine was deleted, 2026-11-27.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/stimulus/task_vectors.h"
#include "model/noc/router.h"
#include "model/qpe/qpe_noc.h"
#include "model/qpe/task_timing.h"
#include "model/qpe/tile_schedule.h"
#include "model/splitmix64.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

std::string describe(const TileSituation& s) {
  std::string d = std::to_string(s.tiles.size()) + " tiles (first " + std::to_string(s.tiles.front().rows) + "x" +
                  std::to_string(s.tiles.front().steps_per_row) + ", " + std::to_string(s.tiles.front().writes) +
                  " writes, A " + (s.tiles.front().a_via_noc ? "via NoC" : "local") + ")";
  for (int p = 0; p < kPesPerQpe; ++p)
    if (s.active[p]) d += " PE" + std::to_string(p) + "<-" + std::to_string(s.a_source[p]) + "@" + std::to_string(s.offset[p]);
  return d + (s.next_follows ? " next follows" : "");
}

std::array<bool, kPesPerQpe> pes_of(const Task& t) {
  std::array<bool, kPesPerQpe> active{};
  for (int p : t.pes()) active[p] = true;
  return active;
}

// Random tile runs: shapes, operand-A paths and sources, the PEs that run, their offsets, runs that go on.
std::vector<TileSituation> random_tile_runs(const HwConfig& cfg, std::uint64_t seed, int count) {
  SplitMix64 rng{seed};
  auto below = [&](std::uint64_t n) { return rng.next() % n; };
  std::vector<TileSituation> runs;
  for (int i = 0; i < count; ++i) {
    TileSituation s;
    const bool via_noc = below(4) != 0;
    const std::uint32_t width_words = 1 + static_cast<std::uint32_t>(below(4));
    const std::size_t distinct = 1 + below(3), repeats = 1 + below(6);
    std::vector<TileShape> pattern;
    for (std::size_t k = 0; k < distinct; ++k) {
      TileShape sh;
      sh.rows = 1 + static_cast<std::uint32_t>(below(k == 0 && below(3) == 0 ? 200 : 40));
      sh.steps_per_row = via_noc ? 1 + static_cast<std::uint32_t>(below(7)) : 1;
      sh.writes = static_cast<std::uint32_t>(cfg.mac_rows) * (k + 1 == distinct ? 1 + static_cast<std::uint32_t>(below(width_words)) : width_words);
      sh.a_via_noc = via_noc;
      pattern.push_back(sh);
    }
    for (std::size_t r = 0; r < repeats; ++r) s.tiles.insert(s.tiles.end(), pattern.begin(), pattern.end());
    do {
      for (int p = 0; p < kPesPerQpe; ++p) s.active[p] = below(4) != 0;
    } while (s.active == std::array<bool, kPesPerQpe>{});
    const int shift = static_cast<int>(below(5)) - 1;  // -1: each PE's own SRAM
    for (int p = 0; p < kPesPerQpe; ++p) {
      s.a_source[p] = shift < 0 ? p : (p + shift) % kPesPerQpe;
      s.offset[p] = s.active[p] ? static_cast<std::uint32_t>(below(below(4) == 0 ? 40 : 4)) : 0;
    }
    std::uint32_t first = ~0u;
    for (int p = 0; p < kPesPerQpe; ++p)
      if (s.active[p]) first = std::min(first, s.offset[p]);
    for (int p = 0; p < kPesPerQpe; ++p)
      if (s.active[p]) s.offset[p] -= first;
    s.next_follows = below(2) != 0;
    runs.push_back(s);
  }
  return runs;
}

// Skipping whole periods of a steady state is a shortcut, not a model: every tile end and phase clock must be
// what evaluating every clock gives, on the random suite's situations and on random tile runs. One test per MAC
// shape with the 2-clock SRAM flaw off and on (a few seconds each, and they run side by side).
std::string name_of(const HwConfig& c) { return c.mac_shape() + (c.flaws.sram2clk ? "_sram2clk" : ""); }

std::vector<std::string> configuration_names() {
  std::vector<std::string> names;
  for (const HwConfig& c : mac_shape_configs_with_sram2clk()) names.push_back(name_of(c));
  return names;
}

class TileScheduleSkipping : public ::testing::TestWithParam<std::string> {};

TEST_P(TileScheduleSkipping, SkippingSteadyStatesChangesNoClock) {
  HwConfig base;
  for (const HwConfig& c : mac_shape_configs_with_sram2clk())
    if (name_of(c) == GetParam()) base = c;
  ASSERT_EQ(name_of(base), GetParam());
  const std::vector<Task> tasks = read_task_vectors(source_path("vectors/random_suite.csv"), base);
  ASSERT_EQ(tasks.size(), 240u);
  for (const char* schedule : {"event", "clock"}) {
    HwConfig cfg = base;
    cfg.model_schedule = schedule;
    SCOPED_TRACE(cfg.mac_shape() + (cfg.flaws.sram2clk ? " sram2clk " : " ") + schedule);
    // the random suite as the model runs it (the STARTs one NoC clock apart: PEs 2 and 3 a PE clock after 0
    // and 1) and with the PEs a clock apart each; the event schedule with the model's window, the clock-level
    // one over whole tasks
    const std::uint64_t window =
        cfg.model_schedule == "event" ? static_cast<std::uint64_t>(cfg.model_resolve_window_cycles) : 1ull << 40;
    TileSchedule fast(cfg);
    int neighbour = 0;
    for (const Task& t : tasks) {
      for (const std::array<std::uint64_t, kPesPerQpe>& start :
           {std::array<std::uint64_t, kPesPerQpe>{0, 0, 1, 1}, std::array<std::uint64_t, kPesPerQpe>{3, 2, 1, 0}})
        task_timing(t, cfg, fast, pes_of(t), start, window);
      neighbour += t.a_from_neighbor();
    }
    EXPECT_GT(neighbour, 50);
    std::vector<TileSituation> situations;
    std::size_t contended = 0;
    for (const auto& [s, timing] : fast.resolved()) {
      situations.push_back(s);
      int running = 0;
      for (bool a : s.active) running += a;
      contended += running > 1 && s.tiles.front().a_via_noc;
    }
    EXPECT_GT(contended, 100u) << "situations where PEs meet at the router";
    for (const TileSituation& s : random_tile_runs(cfg, 77, 150)) situations.push_back(s);
    TileSchedule every_clock(cfg, false);
    std::size_t differing = 0;
    for (const TileSituation& s : situations) {
      const TileTiming& a = fast.tile(s);
      const TileTiming& b = every_clock.tile(s);
      bool same = true;
      for (int p = 0; p < kPesPerQpe; ++p) {
        same = same && a[p].tile_end == b[p].tile_end && a[p].setup == b[p].setup && a[p].compute == b[p].compute &&
               a[p].output == b[p].output && a[p].a_wait == b[p].a_wait && a[p].b_wait == b[p].b_wait;
        if (differing < 3) {  // the first few in full
          SCOPED_TRACE(describe(s) + ", PE " + std::to_string(p));
          EXPECT_EQ(a[p].tile_end, b[p].tile_end);
          EXPECT_EQ(a[p].compute, b[p].compute);
          EXPECT_EQ(a[p].a_wait, b[p].a_wait);
          EXPECT_EQ(a[p].b_wait, b[p].b_wait);
        }
      }
      differing += !same;
    }
    EXPECT_EQ(differing, 0u) << "of " << situations.size() << " situations";
    // the shortcut was taken: most clocks were skipped (evaluating every clock skips almost none)
    EXPECT_GT(every_clock.clocks_resolved(), 100000u);
    EXPECT_GT(fast.clocks_skipped(), fast.clocks_resolved() / 3);
    EXPECT_LT(every_clock.clocks_skipped(), every_clock.clocks_resolved() / 1000);
  }
}

INSTANTIATE_TEST_SUITE_P(MacShapes, TileScheduleSkipping, ::testing::ValuesIn(configuration_names()),
                         [](const auto& info) { return info.param; });

// The tile schedule's packed router (model/qpe/qpe_noc.h) and the NoC fabric's (noc/router.h) are two
// layouts of one set of rules: under the same random operand-A traffic, edge by edge, they accept the same
// channel and hold the same packets in every output FIFO, for every latency and FIFO depth the model takes.
TEST(TileSchedule, ThePackedQpeRouterIsTheFabricsRouter) {
  SplitMix64 rng{2027};
  auto below = [&](std::uint64_t n) { return rng.next() % n; };
  std::uint64_t accepted = 0;
  for (int latency = 2; latency <= 8; ++latency)
    for (int depth : {1, 2, 4, 8}) {
      SCOPED_TRACE("latency " + std::to_string(latency) + ", FIFOs of " + std::to_string(depth));
      QpeNoc packed;
      packed.latency = latency;
      packed.out_depth = packed.in_depth = depth;
      Router router({0, 0, latency, depth, 8});
      std::vector<Fifo> in(QpeNoc::kChannels, Fifo(depth));
      for (int c = 0; c < QpeNoc::kChannels; ++c) router.connect_input(c, &in[static_cast<std::size_t>(c)]);
      const int push_odds = 1 + static_cast<int>(below(4)), pop_odds = 1 + static_cast<int>(below(4));
      for (int edge = 0; edge < 4000; ++edge) {
        const int a = packed.decide(), b = router.decide();
        ASSERT_EQ(a, b) << "edge " << edge;
        packed.apply(a);
        router.apply(b);
        accepted += a >= 0;
        for (int c = 0; c < QpeNoc::kChannels; ++c) {
          ASSERT_EQ(packed.out[c].size, router.output(c).size()) << "edge " << edge << ", output " << c;
          for (int k = 0; k < packed.out[c].size; ++k) {
            const QpeNoc::Pkt p = QpeNoc::Pkt(packed.out[c].bytes >> (8 * k));
            const Packet& q = router.output(c).at(k);
            ASSERT_EQ(QpeNoc::from(p), q.src_port) << "edge " << edge << ", output " << c;
            ASSERT_EQ(QpeNoc::to(p), q.dst_port) << "edge " << edge << ", output " << c;
          }
          // the PEs take responses and requests at random, and send operand-A reads and responses at random
          if (packed.out[c].size && below(static_cast<std::uint64_t>(pop_odds)) == 0) {
            packed.pop_out(c);
            router.output(c).pop();
          }
          if (!packed.in_full(c) && below(static_cast<std::uint64_t>(push_odds)) == 0) {
            const int from = c / kNocClasses, cls = c % kNocClasses, to = static_cast<int>(below(kPesPerQpe));
            packed.push_in(c, QpeNoc::packet(from, to, cls));
            Packet q;
            q.src_port = static_cast<std::int8_t>(from);
            q.dst_port = static_cast<std::int8_t>(to);
            q.kind = cls == kClassRequest ? PacketKind::MemRd : PacketKind::RdRsp;
            q.a_read = true;
            in[static_cast<std::size_t>(c)].push(q);
          }
        }
      }
    }
  EXPECT_GT(accepted, 50000u);
}

}  // namespace
}  // namespace s2
