// The clock-level tile schedule (model/qpe/tile_schedule.cpp), rewritten for speed, against the engine it
// replaced (model/qpe/tile_schedule_reference.cpp, built only into this test): on every situation the model
// asks it for, every PE's tile ends (and so its output rows' ends) and its phase clocks must be equal.
// Situations come from the random suite's tasks (every MAC shape, the 2-clock SRAM flaw off and on, operand A
// local and from each neighbour, the STARTs' real offsets and others) and from random tile runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/stimulus/task_vectors.h"
#include "model/noc/router.h"
#include "model/qpe/qpe_noc.h"
#include "model/qpe/task_timing.h"
#include "model/qpe/tile_schedule.h"
#include "model/qpe/tile_schedule_reference.h"
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

// Both engines on one situation: equal tile ends and phases on every PE. Returns the clocks the old engine
// resolved (a test that compared nothing would show as 0).
std::uint64_t expect_same_as_reference(const HwConfig& cfg, const TileSituation& s, const TileTiming& fast) {
  std::uint64_t clocks = 0;
  const TileTiming ref = reference::resolve(cfg, s, &clocks);
  for (int p = 0; p < kPesPerQpe; ++p) {
    SCOPED_TRACE(describe(s) + ", PE " + std::to_string(p));
    EXPECT_EQ(fast[p].tile_end, ref[p].tile_end);
    EXPECT_EQ(fast[p].setup, ref[p].setup);
    EXPECT_EQ(fast[p].compute, ref[p].compute);
    EXPECT_EQ(fast[p].output, ref[p].output);
    EXPECT_EQ(fast[p].a_wait, ref[p].a_wait);
    EXPECT_EQ(fast[p].b_wait, ref[p].b_wait);
  }
  return clocks;
}


std::array<bool, kPesPerQpe> pes_of(const Task& t) {
  std::array<bool, kPesPerQpe> active{};
  for (int p : t.pes()) active[p] = true;
  return active;
}

// The random suite as the model runs it (the STARTs one NoC clock apart: PEs 2 and 3 a PE clock after 0 and 1)
// and with the PEs a clock apart each; the event schedule with the model's window and the clock-level schedule
// over whole tasks (no extrapolation). Every situation either asks for is compared.
TEST(TileSchedule, EqualsTheReferenceOnEveryRandomSuiteSituation) {
  for (const HwConfig& base : mac_shape_configs_with_sram2clk()) {
    SCOPED_TRACE(base.mac_shape() + (base.flaws.sram2clk ? " sram2clk" : ""));
    const std::vector<Task> tasks = read_task_vectors(source_path("vectors/random_suite.csv"), base);
    ASSERT_EQ(tasks.size(), 240u);
    for (const char* schedule : {"event", "clock"}) {
      HwConfig cfg = base;
      cfg.model_schedule = schedule;
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
      std::uint64_t clocks = 0;
      std::size_t contended = 0;
      for (const auto& [s, timing] : fast.resolved()) {
        clocks += expect_same_as_reference(cfg, s, timing);
        int running = 0;
        for (bool a : s.active) running += a;
        contended += running > 1 && s.tiles.front().a_via_noc;
      }
      EXPECT_GT(contended, 100u) << schedule << ": situations where PEs meet at the router";
      EXPECT_GT(clocks, 100000u) << schedule;
    }
  }
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

TEST(TileSchedule, EqualsTheReferenceOnRandomTileRuns) {
  for (const HwConfig& cfg : mac_shape_configs_with_sram2clk()) {
    SCOPED_TRACE(cfg.mac_shape() + (cfg.flaws.sram2clk ? " sram2clk" : ""));
    TileSchedule fast(cfg);
    std::uint64_t clocks = 0;
    for (const TileSituation& s : random_tile_runs(cfg, 31, 150)) clocks += expect_same_as_reference(cfg, s, fast.tile(s));
    EXPECT_GT(clocks, 50000u);
  }
}

// Skipping whole periods of a steady state is a shortcut, not a model: every tile end and phase clock must be
// what evaluating every clock gives, on the random suite's situations and on random tile runs.
TEST(TileSchedule, SkippingSteadyStatesChangesNoClock) {
  for (const HwConfig& cfg : mac_shape_configs_with_sram2clk()) {
    SCOPED_TRACE(cfg.mac_shape() + (cfg.flaws.sram2clk ? " sram2clk" : ""));
    TileSchedule fast(cfg);
    const std::vector<Task> tasks = read_task_vectors(source_path("vectors/random_suite.csv"), cfg);
    for (const Task& t : tasks)
      task_timing(t, cfg, fast, pes_of(t), std::array<std::uint64_t, kPesPerQpe>{0, 0, 1, 1},
                  static_cast<std::uint64_t>(cfg.model_resolve_window_cycles));
    std::vector<TileSituation> situations;
    for (const auto& [s, timing] : fast.resolved()) situations.push_back(s);
    for (const TileSituation& s : random_tile_runs(cfg, 77, 150)) situations.push_back(s);
    TileSchedule every_clock(cfg, false);
    std::size_t differing = 0;
    for (const TileSituation& s : situations) {
      const TileTiming& a = fast.tile(s);
      const TileTiming& b = every_clock.tile(s);
      bool same = true;
      for (int p = 0; p < kPesPerQpe; ++p) {
        SCOPED_TRACE(describe(s) + ", PE " + std::to_string(p));
        same = same && a[p].tile_end == b[p].tile_end && a[p].compute == b[p].compute && a[p].a_wait == b[p].a_wait &&
               a[p].b_wait == b[p].b_wait && a[p].setup == b[p].setup && a[p].output == b[p].output;
        if (differing < 5) {
          EXPECT_EQ(a[p].tile_end, b[p].tile_end);
          EXPECT_EQ(a[p].compute, b[p].compute);
          EXPECT_EQ(a[p].a_wait, b[p].a_wait);
          EXPECT_EQ(a[p].b_wait, b[p].b_wait);
        }
      }
      differing += !same;
    }
    EXPECT_EQ(differing, 0u) << "of " << situations.size() << " situations";
    EXPECT_GT(fast.clocks_resolved(), 0u);
    // the shortcut was taken: most clocks were skipped (evaluating every clock skips almost none)
    EXPECT_GT(fast.clocks_skipped(), fast.clocks_resolved() / 3);
    EXPECT_LT(every_clock.clocks_skipped(), every_clock.clocks_resolved() / 1000);
  }
}

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
