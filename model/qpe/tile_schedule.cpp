#include "model/qpe/tile_schedule.h"

#include <algorithm>
#include <bit>
#include <map>
#include <unordered_map>
#include <vector>
#include <stdexcept>

namespace s2 {

namespace {

constexpr int kChannels = (kPesPerQpe + 1) * 2;  // 4 PEs + host, each a request and a response channel
constexpr int kReq = 0;
constexpr int kRsp = 1;

struct Packet {
  std::uint8_t src = 0;
  std::uint8_t dst = 0;
  bool rsp = false;
  int out_channel() const { return dst * 2 + (rsp ? kRsp : kReq); }
};

struct InFlight {
  std::uint64_t deliver_edge = 0;
  Packet pkt;
};

// A FIFO of at most N entries without heap traffic (the schedule's inner loop touches these every clock).
template <typename T, unsigned N>
struct Ring {
  static_assert((N & (N - 1)) == 0, "a power of two, so that wrapping is a mask");
  unsigned head = 0, n = 0;
  std::array<T, N> v{};
  bool empty() const { return n == 0; }
  int size() const { return static_cast<int>(n); }
  const T& front() const { return v[head]; }
  const T& at(int i) const { return v[(head + static_cast<unsigned>(i)) & (N - 1)]; }
  T& at(int i) { return v[(head + static_cast<unsigned>(i)) & (N - 1)]; }
  void push_back(const T& x) {
    if (n == N) throw std::logic_error("tile schedule: queue overflow (model bug)");
    v[(head + n++) & (N - 1)] = x;
  }
  void pop_front() {
    head = (head + 1) & (N - 1);
    --n;
  }
};
constexpr int kQueue = 8;  // >= every FIFO depth the configuration may ask for (checked in resolve)
using PacketQueue = Ring<Packet, kQueue>;

// One packet queue per channel, with a bit per channel that holds a packet (read every clock).
struct ChannelQueues {
  std::array<PacketQueue, kChannels> q;
  unsigned busy = 0;  // bit c: q[c] not empty
  const PacketQueue& operator[](int c) const { return q[c]; }
  void push(int c, const Packet& p) {
    q[c].push_back(p);
    busy |= 1u << c;
  }
  void pop(int c) {
    q[c].pop_front();
    if (q[c].empty()) busy &= ~(1u << c);
  }
  auto begin() const { return q.begin(); }
  auto end() const { return q.end(); }
};

// The router between NoC edges: input channels are the PEs' outbound FIFOs, outputs its own FIFOs.
struct Router {
  int latency = 4;
  int out_depth = 4;
  int rr = 0;
  Ring<InFlight, 16> pipe;
  std::array<int, kChannels> reserved{};  // packets in the pipeline per output channel
  ChannelQueues out;

  // One NoC clock edge. `ob` are the PEs' outbound FIFOs (channel = pe*2 + class). Returns the channel
  // popped (-1 if none). Decisions use the state before the edge, like the RTL.
  int decide(const ChannelQueues& ob) const {
    const unsigned waiting = ob.busy;
    if (waiting == 0) return -1;
    // round robin from rr: rotate so that bit 0 is channel rr, then take the set bits in order
    unsigned order = ((waiting >> rr) | (waiting << (kChannels - rr))) & ((1u << kChannels) - 1);
    for (; order != 0; order &= order - 1) {
      int c = rr + std::countr_zero(order);
      if (c >= kChannels) c -= kChannels;
      const int oc = ob[c].front().out_channel();
      if (out[oc].size() + reserved[oc] < out_depth) return c;
    }
    return -1;
  }
  void apply(std::uint64_t edge, int accepted, ChannelQueues& ob) {
    while (!pipe.empty() && pipe.front().deliver_edge == edge) {
      const int oc = pipe.front().pkt.out_channel();
      out.push(oc, pipe.front().pkt);
      --reserved[oc];
      pipe.pop_front();
    }
    if (accepted >= 0) {
      const Packet p = ob[accepted].front();
      pipe.push_back({edge + static_cast<std::uint64_t>(latency), p});
      ++reserved[p.out_channel()];
      ob.pop(accepted);
      rr = accepted + 1 == kChannels ? 0 : accepted + 1;
    }
  }
};

enum class Stage { Waiting, Setup, Compute, Output, OutWait, Done };
enum class Slave { Idle, Wait, Send };

struct PeState {
  bool active = false;
  int id = 0;
  int a_src = 0;
  std::uint64_t start = 0;
  Stage stage = Stage::Waiting;
  PeTileTiming timing;
  std::uint64_t end = 0;
  // step engine
  std::uint64_t step = 0, row = 0, kx = 0;
  // operand-B fetch unit
  std::uint64_t fb_row = 0, fb_j = 0;
  bool fb_done = false;
  bool b_inflight = false, b_stage = false;
  std::uint64_t b_arrive = 0;
  // operand-A fetch unit
  std::uint64_t a_issued = 0, a_outstanding = 0, a_count = 0;
  std::uint64_t local_a_arrive = ~0ull;  // local SRAM read of operand A completes in this clock
  // SRAM port and NoC slave
  std::uint64_t port_free = 0;
  Slave slave = Slave::Idle;
  std::uint64_t slave_rsp = 0;  // clock the slave's read data arrives
  Packet slave_pkt;             // the response being sent
  // output stage
  std::uint64_t out_k = 0;
  bool out_wait = false;
  bool finished = false;  // the run being timed has ended (later clocks belong to what follows it)
  // the tile being worked on
  std::size_t tile = 0;
  std::uint64_t rows = 0, wf = 1, refills = 0, steps = 0, a_words = 0, writes = 0;

  void load(const TileShape& sh, int mac_rows) {
    rows = sh.rows;
    wf = sh.steps_per_row;
    refills = wf > 1 ? (wf + 2) / 4 : 0;
    steps = rows * wf;
    a_words = (steps * static_cast<std::uint64_t>(mac_rows) + 15) / 16;
    writes = sh.writes;
  }
  // Starts the next tile at the next clock.
  void restart() {
    stage = Stage::Setup;
    step = row = kx = 0;
    fb_row = fb_j = 0;
    fb_done = rows == 0;
    b_inflight = b_stage = false;
    a_issued = a_outstanding = a_count = 0;
    out_k = 0;
    out_wait = false;
  }
};

}  // namespace

const TileTiming& TileSchedule::tile(const TileSituation& s) {
  auto it = cache_.find(s);
  if (it == cache_.end()) it = cache_.emplace(s, resolve(s)).first;
  return it->second;
}

TileTiming TileSchedule::resolve(const TileSituation& s) {
  const std::uint64_t L = static_cast<std::uint64_t>(cfg_.sram_cycles_per_access());
  const std::uint64_t depth = static_cast<std::uint64_t>(cfg_.operand_a_buffer_words);
  const std::uint64_t steps_per_word = 16 / static_cast<std::uint64_t>(cfg_.mac_rows);  // 4, 8 or 16
  const std::uint64_t word_mask = steps_per_word - 1;
  const std::size_t ob_depth = static_cast<std::size_t>(cfg_.noc_if_out_fifo_packets);
  if (s.tiles.empty()) return TileTiming{};
  const bool via_noc = s.tiles.front().a_via_noc;
  std::uint64_t run_steps = 0, run_writes = 0;
  for (const TileShape& sh : s.tiles) {
    run_steps += std::uint64_t(sh.rows) * sh.steps_per_row;
    run_writes += sh.writes;
  }

  if (cfg_.router_out_fifo_packets > kQueue || cfg_.noc_if_out_fifo_packets > kQueue || cfg_.router_latency_noc_cycles > 15)
    throw std::invalid_argument("tile schedule: FIFO depths above 8 packets or router latencies above 15 are not supported");
  Router router;
  router.latency = cfg_.router_latency_noc_cycles;
  router.out_depth = cfg_.router_out_fifo_packets;
  ChannelQueues ob;  // PEs' outbound FIFOs
  std::array<PeState, kPesPerQpe> pe;
  int remaining = 0;
  for (int p = 0; p < kPesPerQpe; ++p) {
    pe[p].id = p;
    pe[p].active = s.active[p];
    pe[p].a_src = s.a_source[p];
    pe[p].start = s.offset[p];
    pe[p].load(s.tiles.front(), cfg_.mac_rows);
    pe[p].fb_done = pe[p].rows == 0;
    pe[p].stage = !pe[p].active ? Stage::Done : (pe[p].start == 0 ? Stage::Setup : Stage::Waiting);
    if (pe[p].active) ++remaining;
  }
  // PEs still waiting for their start: each enters SETUP in the clock it starts
  int waiting_pes = 0;
  for (const PeState& q : pe) waiting_pes += q.stage == Stage::Waiting;
  auto start_waiting = [&](std::uint64_t now) {
    if (waiting_pes == 0) return;
    for (PeState& q : pe) {
      if (q.stage == Stage::Waiting && q.start == now) {
        q.stage = Stage::Setup;
        --waiting_pes;
      }
    }
  };

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
    if (ob.busy | router.out.busy) return now;
    std::uint64_t until = ~0ull;
    if (!router.pipe.empty()) {
      const std::uint64_t e = router.pipe.front().deliver_edge;  // the earliest: the pipe is in order
      if (e <= 2 * now + 1) return now;
      until = e / 2;
    }
    for (const PeState& q : pe) {
      if (acts[q.id]) return now;
      switch (q.stage) {
        case Stage::Setup:
        case Stage::OutWait:
          return now;
        case Stage::Waiting:
          until = std::min(until, q.start);
          break;
        case Stage::Compute:
          if (q.b_inflight && q.b_arrive > now) until = std::min(until, q.b_arrive);
          if (q.local_a_arrive != ~0ull && q.local_a_arrive > now) until = std::min(until, q.local_a_arrive);
          if (q.port_free > now) until = std::min(until, q.port_free);
          break;
        case Stage::Output:
          until = std::min(until, q.port_free);
          break;
        case Stage::Done:
          break;
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
    std::array<std::array<std::uint64_t, 7>, kPesPerQpe> c;  // step, row, fb_row, a_issued, compute, a_wait, b_wait
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
  auto counters = [&](const PeState& q) {
    return std::array<std::uint64_t, 7>{q.step, q.row, q.fb_row, q.a_issued, q.timing.compute, q.timing.a_wait,
                                        q.timing.b_wait};
  };
  auto rel = [&](std::uint64_t v, std::uint64_t now) { return v > now ? std::int64_t(v - now) : 0; };
  // The state of the router and of every packet queue, relative to clock `now`, into `key` (cleared).
  auto network_key = [&](std::uint64_t now) {
    key.clear();
    key.push_back(router.rr);
    for (int i = 0; i < router.pipe.size(); ++i) {
      const InFlight& f = router.pipe.at(i);
      key.insert(key.end(), {std::int64_t(f.deliver_edge) - std::int64_t(2 * now), f.pkt.src, f.pkt.dst, f.pkt.rsp});
    }
    key.push_back(-1);
    for (const auto* qs : {&router.out, &ob}) {
      for (const PacketQueue& pq : *qs) {
        key.push_back(pq.size());
        for (int i = 0; i < pq.size(); ++i) {
          const Packet& k = pq.at(i);
          key.insert(key.end(), {k.src, k.dst, k.rsp});
        }
      }
    }
  };
  auto key_hash = [&] {
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t v : key) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return h;
  };
  // Moves every pending event `shift` clocks later (after skipping whole periods).
  auto shift_times = [&](std::uint64_t shift) {
    for (PeState& q : pe) {
      q.b_arrive += shift;
      if (q.local_a_arrive != ~0ull) q.local_a_arrive += shift;
      q.port_free += shift;
      q.slave_rsp += shift;
    }
    for (int i = 0; i < router.pipe.size(); ++i) router.pipe.at(i).deliver_edge += 2 * shift;
  };
  auto fast_forward = [&](std::uint64_t now) {
    for (const PeState& q : pe) {
      if (q.active && (q.stage != Stage::Compute || q.finished || q.tile != pe[lead].tile)) {
        marks.clear();
        gave_up = false;
        return now;
      }
    }
    if (gave_up) return now;
    network_key(now);
    const PeState& ld = pe[lead];
    for (const PeState& q : pe) {
      if (!q.active) continue;  // idle PEs' state is constant, but relative to the lead's it would drift
      key.insert(key.end(),
                 {std::int64_t(q.stage), std::int64_t(q.tile), q.finished, std::int64_t(q.kx),
                  std::int64_t(q.row) - std::int64_t(ld.row), std::int64_t(q.fb_row) - std::int64_t(q.row),
                  std::int64_t(q.fb_j), q.fb_done, q.b_inflight, q.b_stage, q.b_inflight ? rel(q.b_arrive, now) : 0,
                  std::int64_t(q.a_issued * 16) - std::int64_t(q.step * static_cast<std::uint64_t>(cfg_.mac_rows)),
                  std::int64_t(q.a_outstanding), std::int64_t(q.a_count),
                  q.local_a_arrive != ~0ull && q.local_a_arrive >= now ? rel(q.local_a_arrive, now) + 1 : 0,
                  rel(q.port_free, now), std::int64_t(q.slave), q.slave == Slave::Wait ? rel(q.slave_rsp, now) : 0,
                  q.slave == Slave::Idle ? 0 : q.slave_pkt.src, q.slave == Slave::Idle ? 0 : q.slave_pkt.dst,
                  std::int64_t(q.step % steps_per_word)});
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
      for (const PeState& q : pe) m.c[q.id] = counters(q);
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
      const std::uint64_t left = q.rows > q.row ? q.rows - q.row : 0;
      const std::uint64_t keep = 2 * drow + 2;  // leave the stage's end to the clock-level schedule
      n = std::min(n, left > keep ? (left - keep) / drow : 0);
    }
    if (n == 0 || n == ~0ull) return now;
    for (PeState& q : pe) {
      if (q.active) {
        const auto c = counters(q);
        q.step += n * (c[0] - m.c[q.id][0]);
        q.row += n * (c[1] - m.c[q.id][1]);
        q.fb_row += n * (c[2] - m.c[q.id][2]);
        q.a_issued += n * (c[3] - m.c[q.id][3]);
        q.timing.compute += n * (c[4] - m.c[q.id][4]);
        q.timing.a_wait += n * (c[5] - m.c[q.id][5]);
        q.timing.b_wait += n * (c[6] - m.c[q.id][6]);
      }
    }
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
    std::array<PeTileTiming, kPesPerQpe> timing{};
  };
  std::unordered_map<std::uint64_t, std::pair<std::vector<std::int64_t>, TileMark>> tile_marks;
  std::size_t lead_tile = ~std::size_t(0);
  auto tile_fast_forward = [&](std::uint64_t now) {
    for (const PeState& q : pe)
      if (q.active && (q.finished || q.stage == Stage::Waiting)) return now;
    network_key(now);
    const PeState& ld = pe[lead];
    for (const PeState& q : pe) {
      if (!q.active) continue;
      key.insert(key.end(),
                 {std::int64_t(q.stage), std::int64_t(q.tile) - std::int64_t(ld.tile), std::int64_t(q.tile % pattern),
                  std::int64_t(q.kx), std::int64_t(q.row), std::int64_t(q.step), std::int64_t(q.fb_row),
                  std::int64_t(q.fb_j), q.fb_done, q.b_inflight, q.b_stage, q.b_inflight ? rel(q.b_arrive, now) : 0,
                  std::int64_t(q.a_issued), std::int64_t(q.a_outstanding), std::int64_t(q.a_count),
                  q.local_a_arrive != ~0ull && q.local_a_arrive >= now ? rel(q.local_a_arrive, now) + 1 : 0,
                  rel(q.port_free, now), std::int64_t(q.slave), q.slave == Slave::Wait ? rel(q.slave_rsp, now) : 0,
                  q.slave == Slave::Idle ? 0 : q.slave_pkt.src, q.slave == Slave::Idle ? 0 : q.slave_pkt.dst,
                  std::int64_t(q.out_k), q.out_wait});
    }
    const std::uint64_t h = key_hash();
    auto it = tile_marks.find(h);
    if (it == tile_marks.end() || it->second.first != key) {
      if (tile_marks.size() >= 1024) tile_marks.clear();
      TileMark m{now, {}, {}, {}};
      for (const PeState& q : pe) {
        m.tile[q.id] = q.tile;
        m.ends[q.id] = q.timing.tile_end.size();
        m.timing[q.id] = q.timing;
      }
      tile_marks[h] = {key, m};
      return now;
    }
    const TileMark& m = it->second.second;
    const std::uint64_t dt = now - m.t;
    const std::size_t dtiles = ld.tile - m.tile[lead];
    if (dt == 0 || dtiles == 0 || ld.tile < m.tile[lead]) return now;
    std::size_t n = ~std::size_t(0);
    for (const PeState& q : pe) {
      if (!q.active) continue;
      const std::size_t left = s.tiles.size() - 1 - q.tile;  // tiles after the current one
      const std::size_t keep = dtiles + 1;                     // the end stays with the clock-level schedule
      n = std::min(n, left > keep ? (left - keep) / dtiles : 0);
    }
    if (n == 0 || n == ~std::size_t(0)) return now;
    for (PeState& q : pe) {
      if (q.active) {
        const std::size_t from = m.ends[q.id], to = q.timing.tile_end.size();
        for (std::size_t j = 1; j <= n; ++j)
          for (std::size_t e = from; e < to; ++e) q.timing.tile_end.push_back(q.timing.tile_end[e] + j * dt);
        const PeTileTiming& a = m.timing[q.id];
        q.timing.setup += n * (q.timing.setup - a.setup);
        q.timing.compute += n * (q.timing.compute - a.compute);
        q.timing.output += n * (q.timing.output - a.output);
        q.timing.a_wait += n * (q.timing.a_wait - a.a_wait);
        q.timing.b_wait += n * (q.timing.b_wait - a.b_wait);
        q.tile += n * dtiles;
      }
    }
    shift_times(n * dt);
    tile_marks.clear();
    marks.clear();
    skipped_ += n * dt;
    return now + n * dt;
  };

  while (remaining > 0) {
    if (t > give_up) throw std::logic_error("tile schedule did not converge (model bug)");
    // mid-cycle NoC edge
    router.apply(2 * t, router.decide(ob), ob);

    // ---- combinational decisions of PE clock t ----
    struct Decision {
      bool fire = false, a_ok = false, a_arrive = false, a_pop = false, consume_b = false;
      bool last_kx = false, last_step = false;
      bool grant_slave = false, grant_a = false, grant_b = false, grant_out = false;
      bool b_rsp = false, slave_rsp_now = false, push_rsp = false, push_req = false, pop_rsp = false;
    };
    std::array<Decision, kPesPerQpe> d{};
    for (PeState& q : pe) {
      Decision x;  // a local, not a reference into d: stores to it cannot alias the PE state the compiler reads
      const auto& rsp_in = router.out[q.id * 2 + kRsp];
      const auto& req_in = router.out[q.id * 2 + kReq];
      x.pop_rsp = !rsp_in.empty();
      if (q.stage == Stage::Compute) {
        x.a_arrive = via_noc ? !rsp_in.empty() : (q.local_a_arrive == t);
        x.b_rsp = q.b_inflight && q.b_arrive == t;
        const bool need_b = q.kx == 0 || ((q.kx - 1) & 3) == 0;
        x.a_ok = q.a_count > 0 || x.a_arrive;
        x.fire = x.a_ok && (!need_b || q.b_stage || x.b_rsp);
        x.last_kx = q.kx == q.wf - 1;
        x.last_step = q.step == q.steps - 1;
        const std::uint64_t row_after = q.row + ((x.fire && x.last_kx) ? 1 : 0);
        x.a_pop = x.fire && ((q.step & word_mask) == word_mask || x.last_step);
        x.consume_b = x.fire && need_b;
        const bool slot_free =
            (!q.b_inflight || x.b_rsp) && (q.b_stage ? x.consume_b : (!x.b_rsp || x.consume_b));
        const bool b_req = !q.fb_done && slot_free && q.fb_row <= row_after;
        const bool a_room = q.a_outstanding + q.a_count - (x.a_pop ? 1 : 0) < depth && q.a_issued < q.a_words;
        const bool slave_req = q.slave == Slave::Idle && !req_in.empty();
        if (t >= q.port_free) {
          if (slave_req) x.grant_slave = true;
          else if (!via_noc && a_room) x.grant_a = true;
          else if (b_req) x.grant_b = true;
        }
        x.push_req = via_noc && a_room && static_cast<std::size_t>(ob[q.id * 2 + kReq].size()) < ob_depth;
      } else if (t >= q.port_free && q.slave == Slave::Idle && !req_in.empty()) {
        x.grant_slave = true;
      } else if (q.stage == Stage::Output && t >= q.port_free) {
        x.grant_out = true;
      }
      x.slave_rsp_now = q.slave == Slave::Wait && q.slave_rsp == t;
      x.push_rsp = (x.slave_rsp_now || q.slave == Slave::Send) && static_cast<std::size_t>(ob[q.id * 2 + kRsp].size()) < ob_depth;
      acts[q.id] = x.fire || x.a_arrive || x.b_rsp || x.grant_slave || x.grant_a || x.grant_b || x.grant_out ||
                   x.slave_rsp_now || x.push_rsp || x.push_req || x.pop_rsp;
      d[q.id] = x;
    }

    // ---- PE clock edge (NoC edge 2t+1): router and PEs update together ----
    const int accepted = router.decide(ob);

    // A clock in which nothing moves repeats until the next timed event (an access completing, a packet
    // landing, a PE starting): jump there and only count the waiting.
    if (const std::uint64_t until = quiet_until(t, accepted); until > t + 1) {
      for (PeState& q : pe) {
        if (q.finished) continue;
        const std::uint64_t n = until - t;
        if (q.stage == Stage::Compute) {
          q.timing.compute += n;
          (d[q.id].a_ok ? q.timing.b_wait : q.timing.a_wait) += n;
        } else if (q.stage == Stage::Output) {
          q.timing.output += n;
        }
      }
      skipped_ += until - t;
      t = until;
      start_waiting(t);
      continue;
    }
    for (PeState& q : pe) {
      const Decision x = d[q.id];  // a copy, for the same reason
      const int rsp_in = q.id * 2 + kRsp, req_in = q.id * 2 + kReq;
      // NoC slave
      if (x.grant_slave) {
        q.port_free = t + L;
        q.slave = Slave::Wait;
        q.slave_rsp = t + L;
        q.slave_pkt = {static_cast<std::uint8_t>(q.id), router.out[req_in].front().src, true};
        router.out.pop(req_in);
      }
      if (x.slave_rsp_now) q.slave = x.push_rsp ? Slave::Idle : Slave::Send;
      else if (q.slave == Slave::Send && x.push_rsp) q.slave = Slave::Idle;
      if (x.push_rsp) ob.push(q.id * 2 + kRsp, q.slave_pkt);
      if (x.pop_rsp) router.out.pop(rsp_in);

      switch (q.stage) {
        case Stage::Waiting:
          break;
        case Stage::Setup:
          if (!q.finished) ++q.timing.setup;
          q.stage = Stage::Compute;
          break;
        case Stage::Compute: {
          if (!q.finished) ++q.timing.compute;
          if (x.grant_a) {
            q.port_free = t + L;
            q.local_a_arrive = t + L;
            ++q.a_issued;
            ++q.a_outstanding;
          }
          if (x.push_req) {
            ob.push(q.id * 2 + kReq, {static_cast<std::uint8_t>(q.id), static_cast<std::uint8_t>(q.a_src), false});
            ++q.a_issued;
            ++q.a_outstanding;
          }
          if (x.grant_b) {
            q.port_free = t + L;
            q.b_inflight = true;
            q.b_arrive = t + L;
            if (q.fb_j == q.refills) {
              q.fb_j = 0;
              if (++q.fb_row == q.rows) q.fb_done = true;
            } else {
              ++q.fb_j;
            }
          } else if (x.b_rsp) {
            q.b_inflight = false;
          }
          if (x.b_rsp && !(x.consume_b && !q.b_stage)) q.b_stage = true;
          else if (x.consume_b && q.b_stage) q.b_stage = false;
          if (x.a_arrive) {
            --q.a_outstanding;
            ++q.a_count;
          }
          if (x.a_pop) --q.a_count;
          if (x.fire) {
            ++q.step;
            if (x.last_kx) {
              q.kx = 0;
              ++q.row;
            } else {
              ++q.kx;
            }
            if (x.last_step) q.stage = Stage::Output;
          } else if (q.finished) {
          } else if (!x.a_ok) {
            ++q.timing.a_wait;
          } else {
            ++q.timing.b_wait;
          }
          break;
        }
        case Stage::Output:
          if (!q.finished) ++q.timing.output;
          if (x.grant_out) {
            q.port_free = t + L;
            if (++q.out_k == q.writes) {
              q.stage = Stage::OutWait;
              q.out_wait = L > 1;
            }
          }
          break;
        case Stage::OutWait:
          if (!q.finished) ++q.timing.output;
          if (q.out_wait) {
            q.out_wait = false;
          } else {
            if (!q.finished) q.timing.tile_end.push_back(t + 1 - q.start);
            const bool last = q.tile + 1 == s.tiles.size();
            q.tile = last ? 0 : q.tile + 1;
            if (last && !q.finished) {
              q.finished = true;
              q.end = t + 1;
              --remaining;
            }
            q.load(s.tiles[q.tile], cfg_.mac_rows);
            if (q.finished && !s.next_follows) q.stage = Stage::Done;
            else q.restart();
          }
          break;
        case Stage::Done:
          break;
      }
    }
    router.apply(2 * t + 1, accepted, ob);
    ++t;
    start_waiting(t);
    if (lead >= 0 && pe[lead].stage == Stage::Setup && pe[lead].tile != lead_tile) {
      lead_tile = pe[lead].tile;
      t = tile_fast_forward(t);
      lead_tile = pe[lead].tile;
    }
    // looked at every kMarkRows rows of the first PE (a period of P rows shows after at most lcm(P, 8));
    // stages too short to gain from it are not looked at
    if (lead >= 0 && pe[lead].stage == Stage::Compute && pe[lead].kx == 0 && pe[lead].row != lead_row &&
        pe[lead].row % kMarkRows == 0 && pe[lead].rows >= 8 * kMarkRows) {
      lead_row = pe[lead].row;
      t = fast_forward(t);
      lead_row = pe[lead].row;
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
