#include "model/qpe/tile_schedule.h"

#include "model/noc/packet.h"
#include "model/pe/mla_engine.h"
#include "model/qpe/qpe_noc.h"

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
  QpeNoc::Pkt slave_pkt = 0;    // the response being sent
  const MlaEngine::Regs& r() const { return mla.regs(); }
};

// What a PE does in a clock, decided on the state before the edge.
struct PeDecision {
  MlaEngine::Decision mla;
  bool grant_slave = false, grant_mla = false;
  bool slave_rsp_now = false, push_rsp = false, pop_rsp = false;
};

// The period with which the run's tile shapes repeat (their number if they do not).
std::size_t tile_pattern_period(const std::vector<TileShape>& tiles) {
  for (std::size_t p = 1; p < tiles.size(); ++p) {
    bool same = true;
    for (std::size_t i = p; i < tiles.size() && same; ++i) same = !(tiles[i] < tiles[i - p]) && !(tiles[i - p] < tiles[i]);
    if (same) return p;
  }
  return tiles.size();
}

// A clock as a distance from clock `now` (0 once it has passed), for comparing states at different clocks.
std::int64_t relative(std::uint64_t v, std::uint64_t now) { return v > now ? std::int64_t(v - now) : 0; }

// One run of a tile situation on the QPE, clock by clock: each PE clock, the PEs decide on the state before the
// edge (decide_clock), then the router and the PEs take the edge together (clock_edge). Two shortcuts keep it
// fast without changing a clock: a clock in which nothing moves jumps to the next timed event (quiet_until),
// and a steady state that recurs is skipped period by period (skip_row_periods within a tile's CONV/MM stage,
// skip_tile_periods across tiles).
class TileRun {
 public:
  TileRun(const HwConfig& cfg, const TileSituation& s, bool skip_periods);
  TileRun(const TileRun&) = delete;  // large, and never copied
  TileRun& operator=(const TileRun&) = delete;

  void run();
  TileTiming timing() const;
  std::uint64_t clocks() const { return t_; }
  std::uint64_t clocks_skipped() const { return skipped_; }

 private:
  // ---- the clock
  void decide_clock(std::array<PeDecision, kPesPerQpe>& d);
  std::uint64_t quiet_until(std::uint64_t now, int accepted) const;
  void skip_quiet_clocks(std::uint64_t until, const std::array<PeDecision, kPesPerQpe>& d);
  void clock_edge(const std::array<PeDecision, kPesPerQpe>& d);
  void noc_slave_edge(PeState& q, const PeDecision& x);
  void mla_edge(PeState& q, const PeDecision& x);
  void look_for_periods();
  // ---- steady states: keys of the state relative to a clock, and skipping what repeats
  void network_key();
  void port_key(const PeState& q, std::uint64_t now);
  std::uint64_t key_hash() const;
  void shift_times(std::uint64_t shift);
  std::uint64_t skip_row_periods(std::uint64_t now);
  std::uint64_t skip_tile_periods(std::uint64_t now);

  const TileSituation& s_;
  const std::uint64_t L_;  // clocks an SRAM access occupies a port
  TaskTiles run_;          // the run as one "output row" of tiles for the MLA engines
  QpeNoc noc_;  // the QPE's router with the PEs' outbound FIFOs
  std::array<PeState, kPesPerQpe> pe_;
  std::array<bool, kPesPerQpe> acts_{};  // the PE does something in this clock
  int remaining_ = 0;                    // active PEs whose run has not ended
  int lead_ = -1;                        // the first active PE: steady states are looked for on its rows and tiles
  std::uint64_t t_ = 0;
  std::uint64_t skipped_ = 0;
  std::uint64_t give_up_ = 0;  // a run that has not ended by then is a modelling error, not a slow run
  bool skip_periods_ = true;

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
  static constexpr std::size_t kMaxMarks = 64;
  static constexpr std::uint64_t kMarkRows = 8;
  std::unordered_map<std::uint64_t, std::pair<std::vector<std::int64_t>, Mark>> marks_;
  bool gave_up_ = false;
  std::uint64_t lead_row_ = ~0ull;
  std::vector<std::int64_t> key_;

  // The same across tiles: each time the first active PE starts a tile, the whole state relative to the
  // clock and to that PE's tile is recorded; when it recurs (after a whole number of periods of the run's
  // tile pattern), the tiles in between repeat exactly and whole periods are skipped, their tile ends
  // written out from the recorded period.
  struct TileMark {
    std::uint64_t t;
    std::array<std::size_t, kPesPerQpe> tile{}, ends{};
    std::array<PhaseCycles, kPesPerQpe> phases{};
  };
  std::size_t pattern_;  // the run's tiles repeat with this period
  std::unordered_map<std::uint64_t, std::pair<std::vector<std::int64_t>, TileMark>> tile_marks_;
  std::size_t lead_tile_ = ~std::size_t(0);
};

TileRun::TileRun(const HwConfig& cfg, const TileSituation& s, bool skip_periods)
    : s_(s),
      L_(static_cast<std::uint64_t>(cfg.sram_cycles_per_access())),
      skip_periods_(skip_periods),
      pattern_(tile_pattern_period(s.tiles)) {
  std::uint64_t run_steps = 0, run_writes = 0;
  for (const TileShape& sh : s.tiles) {
    run_steps += std::uint64_t(sh.rows) * sh.steps_per_row;
    run_writes += sh.writes;
  }
  give_up_ = 64 * (run_steps + run_writes + 64 * s.tiles.size()) * L_ + 4096;
  run_.groups = run_.out_rows = 1;
  run_.column_tiles = s.tiles.size();
  run_.row = s.tiles;

  // the limits of noc/router.h and noc/packet.h
  if (cfg.router_latency_noc_cycles < 2 || cfg.router_latency_noc_cycles > 8)
    throw std::invalid_argument("router: a latency of 2 to 8 NoC clocks");
  if (cfg.router_out_fifo_packets < 1 || cfg.router_out_fifo_packets > Fifo::kMaxDepth)
    throw std::invalid_argument("router: output FIFOs of 1 to " + std::to_string(Fifo::kMaxDepth) + " packets");
  if (cfg.noc_if_out_fifo_packets > Fifo::kMaxDepth)
    throw std::invalid_argument("tile schedule: outbound FIFOs above " + std::to_string(Fifo::kMaxDepth) + " packets are not supported");
  noc_.latency = cfg.router_latency_noc_cycles;
  noc_.out_depth = cfg.router_out_fifo_packets;
  noc_.in_depth = cfg.noc_if_out_fifo_packets;
  for (int p = 0; p < kPesPerQpe; ++p) {
    PeState& q = pe_[p];
    q.id = p;
    q.active = s.active[p];
    q.a_src = s.a_source[p];
    q.start = s.offset[p];
    q.mla.configure(cfg);
    if (q.active) {
      q.mla.start(run_, q.start);  // SETUP in the clock it starts
      ++remaining_;
      if (lead_ < 0) lead_ = p;
    }
  }
}

void TileRun::run() {
  while (remaining_ > 0) {
    if (t_ > give_up_) throw std::logic_error("tile schedule did not converge (model bug)");
    // mid-cycle NoC edge
    noc_.apply(noc_.decide());
    std::array<PeDecision, kPesPerQpe> d{};
    decide_clock(d);
    // the PE clock edge (NoC edge 2t+1): router and PEs update together
    const int accepted = noc_.decide();
    // A clock in which nothing moves repeats until the next timed event (an access completing, a packet
    // landing, a PE starting): jump there and only count the waiting.
    if (const std::uint64_t until = quiet_until(t_, accepted); until > t_ + 1) {
      skip_quiet_clocks(until, d);
      continue;
    }
    clock_edge(d);
    noc_.apply(accepted);
    ++t_;
    look_for_periods();
  }
}

TileTiming TileRun::timing() const {
  TileTiming out{};
  for (const PeState& q : pe_) {
    if (!q.active) continue;
    out[q.id] = q.timing;
  }
  return out;
}

// The combinational decisions of PE clock t: each PE's MLA, and who gets its SRAM port (the NoC slave first,
// then the MLA).
void TileRun::decide_clock(std::array<PeDecision, kPesPerQpe>& d) {
  for (PeState& q : pe_) {
    // written and read field by field in place: a copy of the whole decision would read back bytes just
    // stored one by one, which the processor cannot forward (the loop's largest cost when it was a copy)
    PeDecision& x = d[q.id];
    x = PeDecision{};
    const int rsp_c = q.id * kNocClasses + kClassResponse, req_c = q.id * kNocClasses + kClassRequest;
    x.pop_rsp = noc_.out[rsp_c].size != 0;
    if (q.mla.busy()) x.mla = q.mla.decide(t_, x.pop_rsp, !noc_.in_full(req_c));
    if (t_ >= q.port_free) {
      if (q.slave == Slave::Idle && noc_.out[req_c].size != 0) x.grant_slave = true;
      else if (x.mla.port != MlaEngine::PortUse::None) x.grant_mla = true;
    }
    x.slave_rsp_now = q.slave == Slave::Wait && q.slave_rsp == t_;
    x.push_rsp = (x.slave_rsp_now || q.slave == Slave::Send) && !noc_.in_full(rsp_c);
    acts_[q.id] = x.mla.acts() || x.grant_slave || x.grant_mla || x.slave_rsp_now || x.push_rsp || x.pop_rsp;
  }
}

// The clock after `now` from which something can happen, if nothing happens in clock `now` (else `now`).
std::uint64_t TileRun::quiet_until(std::uint64_t now, int accepted) const {
  if (accepted >= 0) return now;
  for (const PeState& q : pe_)
    if (acts_[q.id]) return now;
  if (noc_.waiting > 0 || noc_.out_nonempty != 0) return now;
  std::uint64_t until = ~0ull;
  if (const int e = noc_.edges_to_exit(); e > 0) {  // a packet enters its output FIFO in edge 2 now + e
    if (e <= 1) return now;
    until = (2 * now + static_cast<std::uint64_t>(e)) / 2;
  }
  for (const PeState& q : pe_) {
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
}

// Clocks t .. until - 1 in which nothing moves: counted as waiting, the router's edges passed over.
void TileRun::skip_quiet_clocks(std::uint64_t until, const std::array<PeDecision, kPesPerQpe>& d) {
  for (PeState& q : pe_)
    if (!q.finished && q.mla.busy() && t_ >= q.mla.begin()) q.mla.count_quiet(until - t_, d[q.id].mla);
  skipped_ += until - t_;
  noc_.skip_quiet_edges(static_cast<int>(2 * (until - t_) - 1));  // this clock's PE edge to the next clock's middle
  t_ = until;
}

// The PEs' side of the PE clock edge: each PE's NoC slave, then its MLA.
void TileRun::clock_edge(const std::array<PeDecision, kPesPerQpe>& d) {
  for (PeState& q : pe_) {
    const PeDecision& x = d[q.id];
    noc_slave_edge(q, x);
    if (q.mla.busy()) mla_edge(q, x);
  }
}

// The NoC slave: an operand-A read of another PE's MLA, answered L clocks later; and the PE's NoC interface
// taking the response for its own MLA.
void TileRun::noc_slave_edge(PeState& q, const PeDecision& x) {
  const int rsp_c = q.id * kNocClasses + kClassResponse, req_c = q.id * kNocClasses + kClassRequest;
  if (x.grant_slave) {
    q.port_free = t_ + L_;
    q.slave = Slave::Wait;
    q.slave_rsp = t_ + L_;
    q.slave_pkt = QpeNoc::packet(q.id, QpeNoc::from(noc_.out[req_c].front()), kClassResponse);
    noc_.pop_out(req_c);
  }
  if (x.slave_rsp_now) q.slave = x.push_rsp ? Slave::Idle : Slave::Send;
  else if (q.slave == Slave::Send && x.push_rsp) q.slave = Slave::Idle;
  if (x.push_rsp) noc_.push_in(rsp_c, q.slave_pkt);
  if (x.pop_rsp) noc_.pop_out(rsp_c);
}

// The MLA's edge: its SRAM access, its operand-A read request, and what the edge ended (a tile, the run).
void TileRun::mla_edge(PeState& q, const PeDecision& x) {
  if (x.grant_mla) q.port_free = t_ + L_;
  if (x.mla.push_a_read) noc_.push_in(q.id * kNocClasses + kClassRequest, QpeNoc::packet(q.id, q.a_src, kClassRequest));
  const MlaEngine::Events ev = q.mla.clock(t_, x.mla, x.grant_mla);
  if (ev.tile_end && !q.finished) q.timing.tile_end.push_back(t_ + 1 - q.start);
  if (!ev.done) return;
  if (!q.finished) {
    q.finished = true;
    q.end = t_ + 1;
    --remaining_;
    const PhaseCycles& ph = q.mla.phases();
    q.timing.setup = ph.setup;
    q.timing.compute = ph.compute;
    q.timing.output = ph.output;
    q.timing.a_wait = ph.a_wait;
    q.timing.b_wait = ph.b_wait;
  }
  if (s_.next_follows) q.mla.start(run_, t_ + 1);  // it goes on with the same run (its traffic meets the others')
}

// After a clock: where the first PE starts a tile, or every kMarkRows-th operand-B row of its CONV/MM stage,
// the state is compared with the ones recorded before (a period of P rows shows after at most lcm(P, 8));
// stages too short to gain from it are not looked at.
void TileRun::look_for_periods() {
  if (!skip_periods_) return;
  const MlaEngine::Regs* ld = lead_ >= 0 ? &pe_[lead_].r() : nullptr;
  if (ld && ld->stage == Stage::Setup && t_ >= pe_[lead_].mla.begin() && ld->col != lead_tile_) {
    lead_tile_ = ld->col;
    t_ = skip_tile_periods(t_);
    lead_tile_ = pe_[lead_].r().col;
  }
  if (ld && ld->stage == Stage::Compute && ld->kx == 0 && ld->row != lead_row_ && ld->row % kMarkRows == 0 &&
      ld->rows >= 8 * kMarkRows) {
    lead_row_ = ld->row;
    t_ = skip_row_periods(t_);
    lead_row_ = pe_[lead_].r().row;
  }
}

// The state of the router and of the PEs' outbound FIFOs into `key_` (cleared).
void TileRun::network_key() {
  key_.clear();
  noc_.append_state(key_);  // (taken after a clock's PE edge: its pipeline stages compare as they are)
}

// The state of PE q's SRAM port and NoC slave relative to clock `now`.
void TileRun::port_key(const PeState& q, std::uint64_t now) {
  key_.insert(key_.end(), {relative(q.port_free, now), std::int64_t(q.slave), q.slave == Slave::Wait ? relative(q.slave_rsp, now) : 0,
                           q.slave == Slave::Idle ? 0 : q.slave_pkt});
}

std::uint64_t TileRun::key_hash() const {
  std::uint64_t h = 1469598103934665603ull;
  for (std::int64_t v : key_) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
  return h;
}

// Moves every pending event `shift` clocks later (after skipping whole periods).
void TileRun::shift_times(std::uint64_t shift) {
  for (PeState& q : pe_) {
    q.mla.shift_times(shift);
    q.port_free += shift;
    q.slave_rsp += shift;
  }
}

// Within the CONV/MM stage of the PEs' tile: `now` if the state is new (recorded), or the clock after the
// whole row periods skipped.
std::uint64_t TileRun::skip_row_periods(std::uint64_t now) {
  for (const PeState& q : pe_) {
    if (q.active && (q.r().stage != Stage::Compute || q.finished || q.r().col != pe_[lead_].r().col)) {
      marks_.clear();
      gave_up_ = false;
      return now;
    }
  }
  if (gave_up_) return now;
  network_key();
  const MlaEngine::Regs& ld = pe_[lead_].r();
  for (const PeState& q : pe_) {
    // an idle PE's NoC slave still serves the operand-A reads of the PEs whose source it is: its port is part
    // of the state whether or not its MLA runs (its MLA's state is constant, and relative to the lead's it would drift)
    port_key(q, now);
    if (!q.active) continue;
    q.mla.append_state(key_, now, ld.row);
    key_.push_back(q.finished);
  }
  const std::uint64_t h = key_hash();
  auto it = marks_.find(h);
  if (it == marks_.end() || it->second.first != key_) {
    if (marks_.size() >= kMaxMarks) {
      marks_.clear();
      gave_up_ = true;
      return now;
    }
    Mark m{now, {}};
    for (const PeState& q : pe_) m.c[q.id] = q.mla.counters();
    marks_[h] = {key_, m};
    return now;
  }
  const Mark& m = it->second.second;
  const std::uint64_t dt = now - m.t;
  const std::uint64_t drow = ld.row - m.c[lead_][1];
  if (dt == 0 || drow == 0) return now;
  std::uint64_t n = ~0ull;
  for (const PeState& q : pe_) {
    if (!q.active) continue;
    const std::uint64_t left = q.r().rows > q.r().row ? q.r().rows - q.r().row : 0;
    const std::uint64_t keep = 2 * drow + 2;  // leave the stage's end to the clock-level schedule
    n = std::min(n, left > keep ? (left - keep) / drow : 0);
  }
  if (n == 0 || n == ~0ull) return now;
  for (PeState& q : pe_)
    if (q.active) q.mla.repeat_period(n, m.c[q.id]);
  shift_times(n * dt);
  marks_.clear();
  skipped_ += n * dt;
  return now + n * dt;
}

// Where the first PE starts a tile: `now` if the state is new (recorded), or the clock after the whole periods
// of tiles skipped.
std::uint64_t TileRun::skip_tile_periods(std::uint64_t now) {
  for (const PeState& q : pe_)
    if (q.active && (q.finished || now < q.mla.begin())) return now;
  network_key();
  const MlaEngine::Regs& ld = pe_[lead_].r();
  for (const PeState& q : pe_) {
    port_key(q, now);  // every PE's: an idle PE's NoC slave serves operand-A reads too
    if (!q.active) continue;
    const MlaEngine::Regs& r = q.r();
    key_.insert(key_.end(), {std::int64_t(r.stage), std::int64_t(r.col) - std::int64_t(ld.col),
                             std::int64_t(r.col % pattern_), std::int64_t(r.row), std::int64_t(r.step),
                             std::int64_t(r.fb_row), std::int64_t(r.a_issued), std::int64_t(r.out_k), r.out_wait,
                             std::int64_t(r.kx), std::int64_t(r.fb_j), r.fb_done, r.b_inflight, r.b_stage,
                             r.b_inflight ? relative(r.b_arrive, now) : 0, std::int64_t(r.a_outstanding), std::int64_t(r.a_count),
                             r.local_a_arrive != ~0ull && r.local_a_arrive >= now ? relative(r.local_a_arrive, now) + 1 : 0});
  }
  const std::uint64_t h = key_hash();
  auto it = tile_marks_.find(h);
  if (it == tile_marks_.end() || it->second.first != key_) {
    if (tile_marks_.size() >= 1024) tile_marks_.clear();
    TileMark m{now, {}, {}, {}};
    for (const PeState& q : pe_) {
      m.tile[q.id] = q.r().col;
      m.ends[q.id] = q.timing.tile_end.size();
      m.phases[q.id] = q.r().phases;
    }
    tile_marks_[h] = {key_, m};
    return now;
  }
  const TileMark& m = it->second.second;
  const std::uint64_t dt = now - m.t;
  const std::size_t dtiles = ld.col - m.tile[lead_];
  if (dt == 0 || dtiles == 0 || ld.col < m.tile[lead_]) return now;
  std::size_t n = ~std::size_t(0);
  for (const PeState& q : pe_) {
    if (!q.active) continue;
    const std::size_t left = s_.tiles.size() - 1 - q.r().col;  // tiles after the current one
    const std::size_t keep = dtiles + 1;                        // the end stays with the clock-level schedule
    n = std::min(n, left > keep ? (left - keep) / dtiles : 0);
  }
  if (n == 0 || n == ~std::size_t(0)) return now;
  for (PeState& q : pe_) {
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
  tile_marks_.clear();
  marks_.clear();
  skipped_ += n * dt;
  return now + n * dt;
}

}  // namespace

const TileTiming& TileSchedule::tile(const TileSituation& s) {
  auto it = cache_.find(s);
  if (it == cache_.end()) it = cache_.emplace(s, resolve(s)).first;
  return it->second;
}

TileTiming TileSchedule::resolve(const TileSituation& s) {
  if (s.tiles.empty()) return TileTiming{};
  TileRun run(cfg_, s, skip_periods_);
  run.run();
  clocks_resolved_ += run.clocks();
  clocks_skipped_ += run.clocks_skipped();
  return run.timing();
}

}  // namespace s2
