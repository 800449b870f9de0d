#include "model/qpe/tile_schedule.h"

#include "model/noc/router.h"
#include "model/pe/mla_engine.h"

#include <algorithm>
#include <bit>
#include <map>
#include <unordered_map>
#include <vector>
#include <stdexcept>

namespace s2 {

namespace {

enum class Slave { Idle, Wait, Send };
using Stage = MlaEngine::Stage;

// A PE of the QPE: its MLA (pe/mla_engine.h, the one tile loop the NoC fabric runs too), its SRAM port and its
// NoC slave, and what is recorded of its run.
struct PeState {
  bool active = false;
  int id = 0;
  int a_src = 0;
  std::uint64_t start = 0;
  MlaEngine mla;
  PeTileTiming timing;  // the tile ends; the stages' clocks when the run has ended
  std::uint64_t end = 0;
  bool finished = false;  // the run being timed has ended (later clocks belong to what follows it)
  // SRAM port and NoC slave
  std::uint64_t port_free = 0;
  Slave slave = Slave::Idle;
  std::uint64_t slave_rsp = 0;  // clock the slave's read data arrives
  Packet slave_pkt;             // the response being sent
  const MlaEngine::Regs& r() const { return mla.regs(); }
};

}  // namespace

const TileTiming& TileSchedule::tile(const TileSituation& s) {
  auto it = cache_.find(s);
  if (it == cache_.end()) it = cache_.emplace(s, resolve(s)).first;
  return it->second;
}

TileTiming TileSchedule::resolve(const TileSituation& s) {
  const std::uint64_t L = static_cast<std::uint64_t>(cfg_.sram_cycles_per_access());
  if (s.tiles.empty()) return TileTiming{};
  std::uint64_t run_steps = 0, run_writes = 0;
  for (const TileShape& sh : s.tiles) {
    run_steps += std::uint64_t(sh.rows) * sh.steps_per_row;
    run_writes += sh.writes;
  }
  // the run as one "output row" of tiles for the MLA engines
  TaskTiles run;
  run.groups = run.out_rows = 1;
  run.column_tiles = s.tiles.size();
  run.row = s.tiles;

  // the QPE's router (noc/router.h, the one the NoC fabric links into the mesh) with the PEs' outbound FIFOs
  Router router(Router::Params{0, 0, cfg_.router_latency_noc_cycles, cfg_.router_out_fifo_packets, Fifo::kMaxDepth});
  if (cfg_.noc_if_out_fifo_packets > Fifo::kMaxDepth)
    throw std::invalid_argument("tile schedule: outbound FIFOs above " + std::to_string(Fifo::kMaxDepth) + " packets are not supported");
  std::array<std::array<Fifo, kNocClasses>, kPesPerQpe> ob;
  for (int p = 0; p < kPesPerQpe; ++p)
    for (int k = 0; k < kNocClasses; ++k) {
      ob[p][k] = Fifo(cfg_.noc_if_out_fifo_packets);
      router.connect_input(p * kNocClasses + k, &ob[p][k]);
    }
  std::array<PeState, kPesPerQpe> pe;
  int remaining = 0;
  for (int p = 0; p < kPesPerQpe; ++p) {
    pe[p].id = p;
    pe[p].active = s.active[p];
    pe[p].a_src = s.a_source[p];
    pe[p].start = s.offset[p];
    pe[p].mla.configure(cfg_);
    if (pe[p].active) {
      pe[p].mla.start(run, pe[p].start);  // SETUP in the clock it starts
      ++remaining;
    }
  }

  std::uint64_t t = 0;
  std::uint64_t skipped_ = 0;
  // a run that has not ended long after any plausible schedule is a modelling error, not a slow run
  const std::uint64_t give_up = 64 * (run_steps + run_writes + 64 * s.tiles.size()) * L + 4096;
  // The clock after `t` from which something can happen, if nothing happens in clock t (else t).
  std::array<bool, kPesPerQpe> acts{};
  auto quiet_until = [&](std::uint64_t now, int accepted) -> std::uint64_t {
    if (accepted >= 0) return now;
    for (const PeState& q : pe)
      if (acts[q.id]) return now;
    if (router.waiting() > 0 || !router.outputs_empty()) return now;
    std::uint64_t until = ~0ull;
    if (const int e = router.edges_to_exit(); e > 0) {  // a packet enters its output FIFO in edge 2 now + e
      if (e <= 1) return now;
      until = (2 * now + static_cast<std::uint64_t>(e)) / 2;
    }
    for (const PeState& q : pe) {
      if (q.mla.busy()) {
        const std::uint64_t w = q.mla.wakes_at(now);
        if (w <= now) return now;
        until = std::min(until, w);
        const Stage st = q.r().stage;
        if (now >= q.mla.begin() && (st == Stage::Compute || st == Stage::Output) && q.port_free > now)
          until = std::min(until, q.port_free);
      }
      if (q.slave == Slave::Send) return now;
      if (q.slave == Slave::Wait) until = std::min(until, q.slave_rsp);
    }
    return until == ~0ull ? now : until;
  };
  // Periodic steady state: a tile's CONV/MM stage repeats the same pattern row after row. Each time the
  // first active PE starts an operand-B row, the whole state relative to the clock and to that PE's row
  // (every PE, the router, all queues) is recorded; when a state recurs, the schedule between the two is
  // exactly periodic, so whole periods are skipped up to shortly before the first PE's stage ends.
  struct Mark {
    std::uint64_t t;
    std::array<MlaEngine::Counters, kPesPerQpe> c;
  };
  // recorded states by hash; a run that shows no period within kMaxMarks rows stops looking until the
  // stage changes (looking costs more than it saves there)
  constexpr std::size_t kMaxMarks = 64;
  constexpr std::uint64_t kMarkRows = 8;
  std::unordered_map<std::uint64_t, std::pair<std::vector<std::int64_t>, Mark>> marks;
  bool gave_up = false;
  std::vector<std::int64_t> key;
  int lead = -1;
  for (const PeState& q : pe)
    if (q.active && lead < 0) lead = q.id;
  std::uint64_t lead_row = ~0ull;
  auto rel = [&](std::uint64_t v, std::uint64_t now) { return v > now ? std::int64_t(v - now) : 0; };
  // The state of the router and of the PEs' outbound FIFOs into `key` (cleared).
  auto network_key = [&]() {
    key.clear();
    router.append_state(key);  // (taken after a clock's PE edge: its pipeline stages compare as they are)
    for (const auto& fifos : ob)
      for (const Fifo& f : fifos) {
        key.push_back(f.size());
        for (int i = 0; i < f.size(); ++i) key.insert(key.end(), {f.at(i).src_port, f.at(i).dst_port, f.at(i).cls()});
      }
  };
  // The state of PE q's SRAM port and NoC slave relative to clock `now`.
  auto port_key = [&](const PeState& q, std::uint64_t now) {
    key.insert(key.end(), {rel(q.port_free, now), std::int64_t(q.slave), q.slave == Slave::Wait ? rel(q.slave_rsp, now) : 0,
                           q.slave == Slave::Idle ? 0 : q.slave_pkt.src_port, q.slave == Slave::Idle ? 0 : q.slave_pkt.dst_port});
  };
  auto key_hash = [&] {
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t v : key) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return h;
  };
  // Moves every pending event `shift` clocks later (after skipping whole periods).
  auto shift_times = [&](std::uint64_t shift) {
    for (PeState& q : pe) {
      q.mla.shift_times(shift);
      q.port_free += shift;
      q.slave_rsp += shift;
    }
  };
  auto fast_forward = [&](std::uint64_t now) {
    for (const PeState& q : pe) {
      if (q.active && (q.r().stage != Stage::Compute || q.finished || q.r().col != pe[lead].r().col)) {
        marks.clear();
        gave_up = false;
        return now;
      }
    }
    if (gave_up) return now;
    network_key();
    const MlaEngine::Regs& ld = pe[lead].r();
    for (const PeState& q : pe) {
      if (!q.active) continue;  // idle PEs' state is constant, but relative to the lead's it would drift
      q.mla.append_state(key, now, ld.row);
      key.push_back(q.finished);
      port_key(q, now);
    }
    const std::uint64_t h = key_hash();
    auto it = marks.find(h);
    if (it == marks.end() || it->second.first != key) {
      if (marks.size() >= kMaxMarks) {
        marks.clear();
        gave_up = true;
        return now;
      }
      Mark m{now, {}};
      for (const PeState& q : pe) m.c[q.id] = q.mla.counters();
      marks[h] = {key, m};
      return now;
    }
    const Mark& m = it->second.second;
    const std::uint64_t dt = now - m.t;
    const std::uint64_t drow = ld.row - m.c[lead][1];
    if (dt == 0 || drow == 0) return now;
    std::uint64_t n = ~0ull;
    for (const PeState& q : pe) {
      if (!q.active) continue;
      const std::uint64_t left = q.r().rows > q.r().row ? q.r().rows - q.r().row : 0;
      const std::uint64_t keep = 2 * drow + 2;  // leave the stage's end to the clock-level schedule
      n = std::min(n, left > keep ? (left - keep) / drow : 0);
    }
    if (n == 0 || n == ~0ull) return now;
    for (PeState& q : pe)
      if (q.active) q.mla.repeat_period(n, m.c[q.id]);
    shift_times(n * dt);
    marks.clear();
    skipped_ += n * dt;
    return now + n * dt;
  };

  // The same across tiles: each time the first active PE starts a tile, the whole state relative to the
  // clock and to that PE's tile is recorded; when it recurs (after a whole number of periods of the run's
  // tile pattern), the tiles in between repeat exactly and whole periods are skipped, their tile ends
  // written out from the recorded period.
  std::size_t pattern = s.tiles.size();  // the run's tiles repeat with this period
  for (std::size_t p = 1; p < s.tiles.size(); ++p) {
    bool same = true;
    for (std::size_t i = p; i < s.tiles.size() && same; ++i) same = !(s.tiles[i] < s.tiles[i - p]) && !(s.tiles[i - p] < s.tiles[i]);
    if (same) {
      pattern = p;
      break;
    }
  }
  struct TileMark {
    std::uint64_t t;
    std::array<std::size_t, kPesPerQpe> tile{}, ends{};
    std::array<PhaseCycles, kPesPerQpe> phases{};
  };
  std::unordered_map<std::uint64_t, std::pair<std::vector<std::int64_t>, TileMark>> tile_marks;
  std::size_t lead_tile = ~std::size_t(0);
  auto tile_fast_forward = [&](std::uint64_t now) {
    for (const PeState& q : pe)
      if (q.active && (q.finished || now < q.mla.begin())) return now;
    network_key();
    const MlaEngine::Regs& ld = pe[lead].r();
    for (const PeState& q : pe) {
      if (!q.active) continue;
      const MlaEngine::Regs& r = q.r();
      key.insert(key.end(), {std::int64_t(r.stage), std::int64_t(r.col) - std::int64_t(ld.col),
                             std::int64_t(r.col % pattern), std::int64_t(r.row), std::int64_t(r.step),
                             std::int64_t(r.fb_row), std::int64_t(r.a_issued), std::int64_t(r.out_k), r.out_wait,
                             std::int64_t(r.kx), std::int64_t(r.fb_j), r.fb_done, r.b_inflight, r.b_stage,
                             r.b_inflight ? rel(r.b_arrive, now) : 0, std::int64_t(r.a_outstanding), std::int64_t(r.a_count),
                             r.local_a_arrive != ~0ull && r.local_a_arrive >= now ? rel(r.local_a_arrive, now) + 1 : 0});
      port_key(q, now);
    }
    const std::uint64_t h = key_hash();
    auto it = tile_marks.find(h);
    if (it == tile_marks.end() || it->second.first != key) {
      if (tile_marks.size() >= 1024) tile_marks.clear();
      TileMark m{now, {}, {}, {}};
      for (const PeState& q : pe) {
        m.tile[q.id] = q.r().col;
        m.ends[q.id] = q.timing.tile_end.size();
        m.phases[q.id] = q.r().phases;
      }
      tile_marks[h] = {key, m};
      return now;
    }
    const TileMark& m = it->second.second;
    const std::uint64_t dt = now - m.t;
    const std::size_t dtiles = ld.col - m.tile[lead];
    if (dt == 0 || dtiles == 0 || ld.col < m.tile[lead]) return now;
    std::size_t n = ~std::size_t(0);
    for (const PeState& q : pe) {
      if (!q.active) continue;
      const std::size_t left = s.tiles.size() - 1 - q.r().col;  // tiles after the current one
      const std::size_t keep = dtiles + 1;                       // the end stays with the clock-level schedule
      n = std::min(n, left > keep ? (left - keep) / dtiles : 0);
    }
    if (n == 0 || n == ~std::size_t(0)) return now;
    for (PeState& q : pe) {
      if (q.active) {
        const std::size_t from = m.ends[q.id], to = q.timing.tile_end.size();
        for (std::size_t j = 1; j <= n; ++j)
          for (std::size_t e = from; e < to; ++e) q.timing.tile_end.push_back(q.timing.tile_end[e] + j * dt);
        const PhaseCycles& a = m.phases[q.id];
        MlaEngine::Regs& r = q.mla.regs();
        r.phases.setup += n * (r.phases.setup - a.setup);
        r.phases.compute += n * (r.phases.compute - a.compute);
        r.phases.output += n * (r.phases.output - a.output);
        r.phases.a_wait += n * (r.phases.a_wait - a.a_wait);
        r.phases.b_wait += n * (r.phases.b_wait - a.b_wait);
        r.col += n * dtiles;
      }
    }
    shift_times(n * dt);
    tile_marks.clear();
    marks.clear();
    skipped_ += n * dt;
    return now + n * dt;
  };

  struct Decision {
    MlaEngine::Decision mla;
    bool grant_slave = false, grant_mla = false;
    bool slave_rsp_now = false, push_rsp = false, pop_rsp = false;
  };
  while (remaining > 0) {
    if (t > give_up) throw std::logic_error("tile schedule did not converge (model bug)");
    // mid-cycle NoC edge
    router.apply(router.decide());

    // ---- combinational decisions of PE clock t ----
    std::array<Decision, kPesPerQpe> d{};
    for (PeState& q : pe) {
      Decision x;  // a local, not a reference into d: stores to it cannot alias the PE state the compiler reads
      const Fifo& rsp_in = router.output(q.id * kNocClasses + kClassResponse);
      const Fifo& req_in = router.output(q.id * kNocClasses + kClassRequest);
      x.pop_rsp = !rsp_in.empty();
      if (q.mla.busy()) x.mla = q.mla.decide(t, !rsp_in.empty(), !ob[q.id][kClassRequest].full());
      // the SRAM port: the NoC slave first, then the MLA
      if (t >= q.port_free) {
        if (q.slave == Slave::Idle && !req_in.empty()) x.grant_slave = true;
        else if (x.mla.port != MlaEngine::PortUse::None) x.grant_mla = true;
      }
      x.slave_rsp_now = q.slave == Slave::Wait && q.slave_rsp == t;
      x.push_rsp = (x.slave_rsp_now || q.slave == Slave::Send) && !ob[q.id][kClassResponse].full();
      acts[q.id] = x.mla.acts() || x.grant_slave || x.grant_mla || x.slave_rsp_now || x.push_rsp || x.pop_rsp;
      d[q.id] = x;
    }

    // ---- PE clock edge (NoC edge 2t+1): router and PEs update together ----
    const int accepted = router.decide();

    // A clock in which nothing moves repeats until the next timed event (an access completing, a packet
    // landing, a PE starting): jump there and only count the waiting.
    if (const std::uint64_t until = quiet_until(t, accepted); until > t + 1) {
      for (PeState& q : pe)
        if (!q.finished && q.mla.busy() && t >= q.mla.begin()) q.mla.count_quiet(until - t, d[q.id].mla);
      skipped_ += until - t;
      router.skip_quiet_edges(static_cast<int>(2 * (until - t) - 1));  // this clock's PE edge to the next clock's middle
      t = until;
      continue;
    }
    for (PeState& q : pe) {
      const Decision x = d[q.id];  // a copy, for the same reason
      Fifo& rsp_in = router.output(q.id * kNocClasses + kClassResponse);
      Fifo& req_in = router.output(q.id * kNocClasses + kClassRequest);
      // NoC slave: an operand-A read of another PE's MLA, answered L clocks later
      if (x.grant_slave) {
        q.port_free = t + L;
        q.slave = Slave::Wait;
        q.slave_rsp = t + L;
        q.slave_pkt = Packet{};
        q.slave_pkt.dst_port = req_in.front().src_port;
        q.slave_pkt.src_port = static_cast<std::int8_t>(q.id);
        q.slave_pkt.kind = PacketKind::RdRsp;
        q.slave_pkt.a_read = true;
        req_in.pop();
      }
      if (x.slave_rsp_now) q.slave = x.push_rsp ? Slave::Idle : Slave::Send;
      else if (q.slave == Slave::Send && x.push_rsp) q.slave = Slave::Idle;
      if (x.push_rsp) ob[q.id][kClassResponse].push(q.slave_pkt);
      if (x.pop_rsp) rsp_in.pop();
      if (!q.mla.busy()) continue;
      if (x.grant_mla) q.port_free = t + L;
      if (x.mla.push_a_read) {
        Packet r;
        r.dst_port = static_cast<std::int8_t>(q.a_src);
        r.src_port = static_cast<std::int8_t>(q.id);
        r.kind = PacketKind::MemRd;
        r.a_read = true;
        ob[q.id][kClassRequest].push(r);
      }
      const MlaEngine::Events ev = q.mla.clock(t, x.mla, x.grant_mla);
      if (ev.tile_end && !q.finished) q.timing.tile_end.push_back(t + 1 - q.start);
      if (ev.done) {
        if (!q.finished) {
          q.finished = true;
          q.end = t + 1;
          --remaining;
          const PhaseCycles& ph = q.mla.phases();
          q.timing.setup = ph.setup;
          q.timing.compute = ph.compute;
          q.timing.output = ph.output;
          q.timing.a_wait = ph.a_wait;
          q.timing.b_wait = ph.b_wait;
        }
        if (s.next_follows) q.mla.start(run, t + 1);  // it goes on with the same run (its traffic meets the others')
      }
    }
    router.apply(accepted);
    ++t;
    const MlaEngine::Regs* ld = lead >= 0 ? &pe[lead].r() : nullptr;
    if (ld && ld->stage == Stage::Setup && t >= pe[lead].mla.begin() && ld->col != lead_tile) {
      lead_tile = ld->col;
      t = tile_fast_forward(t);
      lead_tile = pe[lead].r().col;
    }
    // looked at every kMarkRows rows of the first PE (a period of P rows shows after at most lcm(P, 8));
    // stages too short to gain from it are not looked at
    if (ld && ld->stage == Stage::Compute && ld->kx == 0 && ld->row != lead_row && ld->row % kMarkRows == 0 &&
        ld->rows >= 8 * kMarkRows) {
      lead_row = ld->row;
      t = fast_forward(t);
      lead_row = pe[lead].r().row;
    }
  }
  clocks_resolved_ += t;
  clocks_skipped_ += skipped_;

  TileTiming out{};
  for (const PeState& q : pe) {
    if (!q.active) continue;
    out[q.id] = q.timing;
  }
  return out;
}

}  // namespace s2
