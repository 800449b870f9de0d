// The chip's QPEs as the RTL backend simulates them: every QPE its own Verilated rtl_stubs/qpe.sv, their mesh
// ports linked clock by clock as rtl_stubs/chip.sv links them, from the same neighbour description
// (model/noc/mesh.h Mesh::neighbour, chip.sv neighbour()). Verilated flat, chip.sv writes every QPE's code out
// again (some 26 MB of C++ at 2x2); linked, one QPE's code serves every mesh. tests/chip_sv_equivalence_test.cpp
// shows the two clock-for-clock equal (flat_chip.h is chip.sv verilated flat).
//
// A fabric of RtlChip (rtl_chip.h): reset, the clocks, each QPE's ports (qpe_ports.h) and SRAMs, waveforms.
//
// How it is simulated (RtlSimOptions, backend.h) changes only the wall time: the QPEs of a phase are evaluated
// on a pool of threads (worker_pool.h; each QPE's model is its own, the links are copied between phases on
// one thread), and with active_only a QPE that is quiescent (qpe.sv `quiescent`: nothing in flight, its units
// idle or waiting for a packet) and has no input this clock (no ARM write, mesh packet or DRAM packet) is not
// evaluated: a clock would change nothing in it but its PE clock enable and count, which
// QpeTop::advance_idle moves on when it next wakes. One that is not skips the next edge alone when that edge
// changes nothing either (qpe.sv `edge_quiet`: not a PE clock edge, its router with nothing to do). Waveforms
// evaluate every QPE.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/backends/backend.h"
#include "harness/backends/rtl/qpe_ports.h"
#include "harness/backends/rtl/qpe_top.h"
#include "harness/backends/rtl/worker_pool.h"
#include "model/hw_config.h"
#include "model/noc/mesh.h"

namespace s2 {

template <typename V>
class LinkedQpes {
  static_assert(sizeof(std::declval<V&>().mesh_out_pkt) == (kMeshChannels * kNocPacketBits + 31) / 32 * 4,
                "rtl_stubs/s2_pkg.svh noc_pkt_t changed width: update kNocPacketBits");

 public:
  using Top = V;
  static constexpr bool kTraceable = QpeTop<V>::kTraceable;

  explicit LinkedQpes(const ChipShape& chip) : chip_(chip) {
    if (chip.mesh_cols > 16 || chip.mesh_rows > 16)
      throw std::runtime_error(fmt::format("the RTL's NoC nodes hold mesh coordinates up to 15 (rtl_stubs/s2_pkg.svh COORD_BITS); chip '{}' is {}x{}",
                                           chip.name, chip.mesh_cols, chip.mesh_rows));
    const Mesh mesh(chip);
    const int n = chip.qpes();
    for (int q = 0; q < n; ++q) qpes_.push_back(std::make_unique<QpeTop<V>>("qpe" + std::to_string(q)));
    // each QPE's mesh channel m = direction * 2 + class reads its neighbour's channel back towards it
    links_.resize(static_cast<std::size_t>(n));
    for (int q = 0; q < n; ++q)
      for (int m = 0; m < kMeshChannels; ++m) {
        const int d = m / 2, nb = mesh.neighbour(q, d);
        if (nb >= 0) links_[static_cast<std::size_t>(q)].push_back({m, nb, ((d + 2) % Mesh::kDirections) * 2 + m % 2});
      }
    quiet_.assign(static_cast<std::size_t>(n), 0);
    quiet_edge_.assign(static_cast<std::size_t>(n), 0);
    awake_.assign(static_cast<std::size_t>(n), 1);
    skipped_edges_.assign(static_cast<std::size_t>(n), 0);
    simulate(RtlSimOptions{});
  }

  // How the next runs are simulated. Activity-driven evaluation needs every QPE to report quiescent and publish
  // its free-running state (QpeTop::can_sleep); a QPE RTL that does not is evaluated every clock
  // (active_only() says which applies).
  void simulate(const RtlSimOptions& sim) {
    sim_ = sim;
    const int threads = std::min(sim.resolved_threads(), qpes());
    if (!pool_ || pool_->threads() != threads) pool_ = std::make_unique<WorkerPool>(threads);
    can_sleep_ = true;
    for (int q = 0; q < qpes(); ++q) can_sleep_ = can_sleep_ && qpe(q).can_sleep();
  }
  bool active_only() const { return sim_.active_only && can_sleep_ && !waves_; }
  // QPE NoC clocks evaluated and QPE NoC clocks simulated since the last reset (their ratio: the share
  // activity-driven evaluation could not skip)
  std::uint64_t qpe_clocks_evaluated() const { return evaluated_; }
  std::uint64_t qpe_clocks() const { return clocks_ * static_cast<std::uint64_t>(qpes()); }

  int qpes() const { return static_cast<int>(qpes_.size()); }
  std::size_t sram_bytes() const { return qpes_.front()->sram_bytes(); }
  QpePorts<V> ports(int q) { return QpePorts<V>(qpe(q).top(), 0); }
  std::uint64_t cycle() { return skipped_edges_[0] ? qpe(0).cycle_after(skipped_edges_[0]) : qpe(0)->cycle; }
  void sram_read(int q, int pe, std::vector<std::uint8_t>& img) { qpe(q).sram_read(pe, img); }
  void sram_write(int q, int pe, const std::vector<std::uint8_t>& img) { qpe(q).sram_write(pe, img); }
  // the RTL's activity counters (QpeTop::counts_activity), PE `pe` of QPE q's since reset
  bool counts_activity() { return qpe(0).counts_activity(); }
  Activity activity(int q, int pe) {
    wake(q);
    return qpe(q).activity(pe);
  }

  // Every QPE reset on its own at its mesh position, as many clocks each: they leave reset in the same clock
  // phase. The flaw switches are set after.
  void reset(const FlawSwitches& flaws) {
    for (int q = 0; q < qpes(); ++q) {
      const QpeCoord c = chip_.qpe_coord(q);
      QpeTop<V>& t = qpe(q);
      t.reset(c.x, c.y);
      t->flaw_sram2clk = flaws.sram2clk;
      t->flaw_neighbor_conv = flaws.neighbor_conv;
      t->flaw_mm_wide_a = flaws.mm_wide_a;
    }
    std::fill(quiet_.begin(), quiet_.end(), 0);
    std::fill(quiet_edge_.begin(), quiet_edge_.end(), 0);
    std::fill(awake_.begin(), awake_.end(), 1);
    std::fill(skipped_edges_.begin(), skipped_edges_.end(), 0);
    evaluated_ = clocks_ = 0;
  }

  // The inputs of this NoC clock set (ARM and DRAM ports), settles the rest as chip.sv's wiring does: every
  // QPE's mesh inputs are its neighbours' link FIFO heads (registered, so settled since the last edge); a first
  // evaluation settles what each router takes, whose pops go back to the neighbours' link FIFOs. A QPE that
  // is quiet (quiescent, or edge_quiet for this edge alone, after the last edge) and gets no input sleeps
  // through this clock; a sleeping QPE's router
  // takes nothing, so it pops nothing.
  void settle() {
    const int n = qpes();
    const bool active = active_only();
    awake_list_.clear();
    for (int q = 0; q < n; ++q) {
      V& t = qpe(q).top();
      unsigned valid = 0;
      for (const Link& l : links_[static_cast<std::size_t>(q)]) {
        V& o = qpe(l.neighbour).top();
        if (!((o.mesh_out_valid >> l.back) & 1u)) continue;
        valid |= 1u << l.channel;
        copy_bits(o.mesh_out_pkt.data(), l.back * kNocPacketBits, t.mesh_in_pkt.data(), l.channel * kNocPacketBits, kNocPacketBits);
      }
      t.mesh_in_valid = valid;
      const bool quiet = quiet_[static_cast<std::size_t>(q)] || quiet_edge_[static_cast<std::size_t>(q)];
      const bool wake = !active || !quiet || valid || t.arm_wr || t.dram_valid || t.host_valid;
      awake_[static_cast<std::size_t>(q)] = wake;
      if (wake) awake_list_.push_back(q);
    }
    ++clocks_;
    evaluated_ += awake_list_.size();
    pool_->for_each(static_cast<int>(awake_list_.size()), [this](int i) {
      const int q = awake_list_[static_cast<std::size_t>(i)];
      catch_up(q);
      qpe(q)->eval();
    });
    for (int q = 0; q < n; ++q) {
      unsigned pop = 0;
      for (const Link& l : links_[static_cast<std::size_t>(q)])
        if (awake_[static_cast<std::size_t>(l.neighbour)] && ((qpe(l.neighbour)->mesh_in_pop >> l.back) & 1u)) pop |= 1u << l.channel;
      qpe(q)->mesh_out_pop = pop;
    }
  }
  // the rising edge, everywhere awake (the falling edge is evaluated with the next clock's inputs); a
  // sleeping QPE counts the edge it missed (one that was quiet for this edge alone is evaluated again next)
  void clock_edge() {
    const bool active = active_only();
    pool_->for_each(static_cast<int>(awake_list_.size()), [this, active](int i) {
      const std::size_t q = static_cast<std::size_t>(awake_list_[static_cast<std::size_t>(i)]);
      QpeTop<V>& t = qpe(static_cast<int>(q));
      t.clock_edge();
      quiet_[q] = active && t.quiescent();
      quiet_edge_[q] = active && !quiet_[q] && t.edge_quiet();
    });
    for (std::size_t q = 0; q < skipped_edges_.size(); ++q)
      if (!awake_[q]) {
        ++skipped_edges_[q];
        quiet_edge_[q] = 0;
      }
  }

  // FST waveforms, one per QPE (qpe_x<x>_y<y>.fst in `dir`); recorded while dumping(true)
  void start_waves(const std::string& dir) {
    for (int q = 0; q < qpes(); ++q) wake(q);
    waves_ = true;
    for (int q = 0; q < qpes(); ++q) {
      const QpeCoord c = chip_.qpe_coord(q);
      qpe(q).start_waves((std::filesystem::path(dir) / fmt::format("qpe_x{}_y{}.fst", c.x, c.y)).string());
    }
  }
  void dumping(bool on) {
    for (auto& q : qpes_) q->dumping(on);
  }
  void stop_waves() {
    for (auto& q : qpes_) q->stop_waves();
    waves_ = false;
  }

 private:
  QpeTop<V>& qpe(int q) { return *qpes_[static_cast<std::size_t>(q)]; }
  // a QPE that slept: its free-running state moved on by the edges it missed
  void catch_up(int q) {
    std::uint64_t& k = skipped_edges_[static_cast<std::size_t>(q)];
    if (k) qpe(q).advance_idle(k);
    k = 0;
  }
  // caught up and evaluated again from the next clock (as if it had not been quiet)
  void wake(int q) {
    catch_up(q);
    quiet_[static_cast<std::size_t>(q)] = quiet_edge_[static_cast<std::size_t>(q)] = 0;
    awake_[static_cast<std::size_t>(q)] = 1;
  }
  struct Link {
    int channel, neighbour, back;  // this QPE's mesh channel, the neighbour's index and its channel back
  };
  ChipShape chip_;
  std::vector<std::unique_ptr<QpeTop<V>>> qpes_;
  std::vector<std::vector<Link>> links_;  // per QPE (none towards the mesh's edges)
  RtlSimOptions sim_;
  std::unique_ptr<WorkerPool> pool_;
  bool can_sleep_ = false;
  bool waves_ = false;
  // per QPE: quiescent after its last edge; edge_quiet (but not quiescent) after it; evaluated this clock;
  // NoC clock edges missed since it last was
  std::vector<std::uint8_t> quiet_, quiet_edge_, awake_;
  std::vector<std::uint64_t> skipped_edges_;
  std::vector<int> awake_list_;                   // this clock's awake QPEs, the pool's items
  std::uint64_t evaluated_ = 0, clocks_ = 0;
};

}  // namespace s2
