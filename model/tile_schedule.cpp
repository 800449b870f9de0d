#include "tile_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace s2 {

namespace {

constexpr int kChannels = (kPesPerQpe + 1) * 2;  // 4 PEs + host, each a request and a response channel
constexpr int kReq = 0;
constexpr int kRsp = 1;

struct Packet {
  int src = 0;
  int dst = 0;
  bool rsp = false;
  int out_channel() const { return dst * 2 + (rsp ? kRsp : kReq); }
};

struct InFlight {
  std::uint64_t deliver_edge = 0;
  Packet pkt;
};

// A FIFO of at most N entries without heap traffic (the schedule's inner loop touches these every clock).
template <typename T, int N>
struct Ring {
  std::array<T, N> v{};
  int head = 0, n = 0;
  bool empty() const { return n == 0; }
  int size() const { return n; }
  const T& front() const { return v[head]; }
  void push_back(const T& x) {
    if (n == N) throw std::logic_error("tile schedule: queue overflow (model bug)");
    v[(head + n++) % N] = x;
  }
  void pop_front() {
    head = (head + 1) % N;
    --n;
  }
};
constexpr int kQueue = 8;  // >= every FIFO depth the configuration may ask for (checked in resolve)
using PacketQueue = Ring<Packet, kQueue>;

// The router between NoC edges: input channels are the PEs' outbound FIFOs, outputs its own FIFOs.
struct Router {
  int latency = 4;
  int out_depth = 4;
  int rr = 0;
  Ring<InFlight, 16> pipe;
  std::array<int, kChannels> reserved{};  // packets in the pipeline per output channel
  std::array<PacketQueue, kChannels> out;

  // One NoC clock edge. `ob` are the PEs' outbound FIFOs (channel = pe*2 + class). Returns the channel
  // popped (-1 if none). Decisions use the state before the edge, like the RTL.
  int decide(const std::array<PacketQueue, kChannels>& ob) const {
    for (int k = 0; k < kChannels; ++k) {
      const int c = (rr + k) % kChannels;
      if (ob[c].empty()) continue;
      const int oc = ob[c].front().out_channel();
      if (out[oc].size() + reserved[oc] < out_depth) return c;
    }
    return -1;
  }
  void apply(std::uint64_t edge, int accepted, std::array<PacketQueue, kChannels>& ob) {
    while (!pipe.empty() && pipe.front().deliver_edge == edge) {
      const int oc = pipe.front().pkt.out_channel();
      out[oc].push_back(pipe.front().pkt);
      --reserved[oc];
      pipe.pop_front();
    }
    if (accepted >= 0) {
      const Packet p = ob[accepted].front();
      pipe.push_back({edge + static_cast<std::uint64_t>(latency), p});
      ++reserved[p.out_channel()];
      ob[accepted].pop_front();
      rr = (accepted + 1) % kChannels;
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
  const std::uint64_t steps_per_word = 16 / static_cast<std::uint64_t>(cfg_.mac_rows);
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
  std::array<PacketQueue, kChannels> ob;  // PEs' outbound FIFOs
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

  std::uint64_t t = 0;
  // a run that has not ended long after any plausible schedule is a modelling error, not a slow run
  const std::uint64_t give_up = 64 * (run_steps + run_writes + 64 * s.tiles.size()) * L + 4096;
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
      Decision& x = d[q.id];
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
        x.a_pop = x.fire && ((q.step % steps_per_word) == steps_per_word - 1 || x.last_step);
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
    }

    // ---- PE clock edge (NoC edge 2t+1): router and PEs update together ----
    const int accepted = router.decide(ob);
    for (PeState& q : pe) {
      const Decision& x = d[q.id];
      auto& rsp_in = router.out[q.id * 2 + kRsp];
      auto& req_in = router.out[q.id * 2 + kReq];
      // NoC slave
      if (x.grant_slave) {
        q.port_free = t + L;
        q.slave = Slave::Wait;
        q.slave_rsp = t + L;
        q.slave_pkt = {q.id, req_in.front().src, true};
        req_in.pop_front();
      }
      if (x.slave_rsp_now) q.slave = x.push_rsp ? Slave::Idle : Slave::Send;
      else if (q.slave == Slave::Send && x.push_rsp) q.slave = Slave::Idle;
      if (x.push_rsp) ob[q.id * 2 + kRsp].push_back(q.slave_pkt);
      if (x.pop_rsp) rsp_in.pop_front();

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
            ob[q.id * 2 + kReq].push_back({q.id, q.a_src, false});
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
    // a PE whose tile starts at clock t+... enters SETUP in the clock it starts
    for (PeState& q : pe) {
      if (q.active && q.stage == Stage::Waiting && q.start == t) q.stage = Stage::Setup;
    }
  }
  clocks_resolved_ += t;

  TileTiming out{};
  for (const PeState& q : pe) {
    if (!q.active) continue;
    out[q.id] = q.timing;
  }
  return out;
}

}  // namespace s2
