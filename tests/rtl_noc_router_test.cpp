// Directed tests of the QPE NoC router (rtl_stubs/noc_router.sv) verilated on its own (s2_rtl_blocks,
// Vnoc_router). Every test clock is a NoC clock.
//
// Channels: channel = port * 2 + class, ports 0..3 = PEs, 4 = host, 5 = DRAM, 6..9 the mesh links north,
// east, south, west; class 1 (response) for
// PKT_RD_RSP and PKT_DMA_ACK, class 0 (request) for every other kind. Inputs are the senders' FIFO heads (in_valid / in_pkt); the router pops
// one with in_pop, combinationally, in the clock it accepts it. Outputs are router-owned FIFOs
// (out_valid / out_pkt, popped with out_pop).
//
// Timing as the RTL defines it (noc_router.sv: "delivers it into the destination's output FIFO LATENCY
// clocks later"): a packet offered in clock 0 is accepted at the edge that ends clock 0 (in_pop = 1 in clock
// 0), moves through the 4 pipeline stages and is written into the output FIFO at the 4th edge after the
// accepting one; it is visible (out_valid) from clock 5 on. A packet for another QPE (its destination node's
// coordinates are not the router's) goes to the link towards it, X first, and is visible there a clock
// earlier, from clock 4: the next router takes it 4 clocks after this one did.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <verilated.h>

#include "Vnoc_router.h"
#include "model/noc/router.h"

double sc_time_stamp() { return 0; }

namespace {

constexpr int kPorts = 6;      // local ports (a packet's destination port)
constexpr int kChannels = 20;  // 10 ports x 2 classes
constexpr int kLatency = 4;
constexpr int kOutDepth = 4;
enum Kind : unsigned { kRegWr = 0, kMemWr = 1, kMemRd = 2, kRdRsp = 3 };

struct Pkt {
  unsigned dst = 0, src = 0, kind = kMemRd, addr = 0;  // dst, src: local ports
  std::uint64_t tag = 0;  // goes into data[63:0]; data[127:64] = ~tag
  unsigned rtag = 0;      // operand-A return tag: carried through untouched like everything else
  bool a_read = false;
  unsigned be = 0xa5c3;   // byte enables: carried through untouched
  unsigned dst_x = 0, dst_y = 0, src_x = 0, src_y = 0;  // the nodes' QPE coordinates
  bool operator==(const Pkt& o) const {
    return dst == o.dst && src == o.src && kind == o.kind && addr == o.addr && tag == o.tag && rtag == o.rtag &&
           a_read == o.a_read && be == o.be && dst_x == o.dst_x && dst_y == o.dst_y && src_x == o.src_x &&
           src_y == o.src_y;
  }
};

int channel_of(unsigned dst, unsigned kind) { return static_cast<int>(dst) * 2 + (kind == kRdRsp ? 1 : 0); }

// noc_pkt_t is packed {dst, src, kind[3:0], a_read, rtag[6:0], be[15:0], addr[16:0], data[127:0]}, a node
// being {x[3:0], y[3:0], port[2:0]}: 195 bits, data in words 0..3, the header from bit 128 (word 4) on.
template <typename W>
void pack(W& w, const Pkt& p) {
  w[0] = static_cast<std::uint32_t>(p.tag);
  w[1] = static_cast<std::uint32_t>(p.tag >> 32);
  w[2] = ~static_cast<std::uint32_t>(p.tag);
  w[3] = ~static_cast<std::uint32_t>(p.tag >> 32);
  const std::uint64_t h = (p.addr & 0x1ffffull) | (std::uint64_t(p.be & 0xffffu) << 17) |
                          (std::uint64_t(p.rtag & 0x7fu) << 33) | (std::uint64_t(p.a_read) << 40) |
                          (std::uint64_t(p.kind & 15u) << 41) | (std::uint64_t(p.src & 7u) << 45) |
                          (std::uint64_t(p.src_y & 15u) << 48) | (std::uint64_t(p.src_x & 15u) << 52) |
                          (std::uint64_t(p.dst & 7u) << 56) | (std::uint64_t(p.dst_y & 15u) << 59) |
                          (std::uint64_t(p.dst_x & 1u) << 63);
  w[4] = static_cast<std::uint32_t>(h);
  w[5] = static_cast<std::uint32_t>(h >> 32);
  w[6] = (p.dst_x >> 1) & 7u;  // header bits 64..66: dst x's upper three bits
}
template <typename W>
Pkt unpack(const W& w) {
  Pkt p;
  p.tag = std::uint64_t(w[0]) | (std::uint64_t(w[1]) << 32);
  EXPECT_EQ(w[2], ~w[0]) << "payload corrupted";
  EXPECT_EQ(w[3], ~w[1]) << "payload corrupted";
  const std::uint64_t h = std::uint64_t(w[4]) | (std::uint64_t(w[5]) << 32);
  p.addr = h & 0x1ffffu;
  p.be = (h >> 17) & 0xffffu;
  p.rtag = (h >> 33) & 0x7fu;
  p.a_read = (h >> 40) & 1u;
  p.kind = (h >> 41) & 15u;
  p.src = (h >> 45) & 7u;
  p.src_y = (h >> 48) & 15u;
  p.src_x = (h >> 52) & 15u;
  p.dst = (h >> 56) & 7u;
  p.dst_y = (h >> 59) & 15u;
  p.dst_x = static_cast<unsigned>((h >> 63) | (std::uint64_t(w[6] & 7u) << 1));
  return p;
}

// The router with a queue of packets in front of every input channel and a receiver at every output channel.
class Router {
 public:
  // a router at mesh position (x, y)
  explicit Router(unsigned x = 0, unsigned y = 0) {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(0);
    m_ = std::make_unique<Vnoc_router>(ctx_.get(), "router");
    m_->clk = 0;
    m_->rst_n = 0;
    m_->my_x = x;
    m_->my_y = y;
    for (int c = 0; c < kChannels; ++c) {
      m_->in_valid[c] = 0;
      m_->out_pop[c] = 0;
      for (int w = 0; w < 7; ++w) m_->in_pkt[c][w] = 0;
    }
    m_->eval();
    edge();
    m_->rst_n = 1;
    m_->eval();
    pop_.fill(true);
  }
  ~Router() { m_->final(); }

  std::deque<Pkt> in[kChannels];                 // what each sender still has to send, head first
  std::vector<std::pair<int, Pkt>> out[kChannels];  // (clock, packet) received on each output channel
  std::array<bool, kChannels> pop_{};             // the receiver of a channel pops whenever it can
  std::vector<int> accepted;                      // per clock: the input channel accepted (-1: none)
  int clock = 0;

  // One NoC clock: drive the inputs, sample, rising edge, update the queues.
  void step() {
    for (int c = 0; c < kChannels; ++c) {
      m_->in_valid[c] = !in[c].empty();
      if (!in[c].empty()) pack(m_->in_pkt[c], in[c].front());
    }
    m_->eval();
    int acc = -1, pops = 0;
    for (int c = 0; c < kChannels; ++c) {
      if (m_->in_pop[c]) {
        EXPECT_TRUE(m_->in_valid[c]) << "popped an empty input, channel " << c;
        acc = c;
        ++pops;
      }
    }
    EXPECT_LE(pops, 1) << "more than one packet accepted in clock " << clock;
    std::vector<std::pair<int, Pkt>> got;
    for (int c = 0; c < kChannels; ++c) {
      const bool take = pop_[static_cast<std::size_t>(c)] && m_->out_valid[c];
      m_->out_pop[c] = take;
      if (take) got.emplace_back(c, unpack(m_->out_pkt[c]));
    }
    m_->eval();
    edge();
    if (acc >= 0) in[acc].pop_front();
    for (auto& [c, p] : got) out[c].emplace_back(clock, p);
    accepted.push_back(acc);
    ++clock;
  }
  void run(int clocks) {
    for (int i = 0; i < clocks; ++i) step();
  }
  bool out_valid(int c) {
    m_->eval();
    return m_->out_valid[c];
  }

 private:
  void edge() {
    m_->clk = 1;
    m_->eval();
    m_->clk = 0;
    m_->eval();
  }
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vnoc_router> m_;
};

// ---------------------------------------------------------------- latency

TEST(RtlNocRouter, PacketReachesTheOutputFifoFourClocksAfterAcceptance) {
  Router r;
  r.pop_.fill(false);  // nobody pops: out_valid shows when the packet lands
  const Pkt p{3, 1, kMemRd, 0x1abcd, 0x1122334455667788ull};
  r.in[2].push_back(p);  // port 1, request class
  const int out = channel_of(3, kMemRd);
  ASSERT_EQ(out, 6);
  r.step();  // clock 0: accepted (in_pop) at the edge that ends it
  ASSERT_EQ(r.accepted[0], 2);
  // the pipeline: stage 0 after edge 1, ..., stage 3 after edge 4; written into the FIFO at edge 5
  for (int c = 1; c <= kLatency; ++c) {
    EXPECT_FALSE(r.out_valid(out)) << "visible too early, clock " << c;
    r.step();
  }
  EXPECT_TRUE(r.out_valid(out)) << "not in the output FIFO 4 clocks after the accepting edge";
  r.pop_[static_cast<std::size_t>(out)] = true;
  r.step();
  ASSERT_EQ(r.out[out].size(), 1u);
  EXPECT_EQ(r.out[out][0].first, 1 + kLatency);  // popped in clock 5, the first clock it is visible
  EXPECT_EQ(r.out[out][0].second, p);             // header and 128-bit payload intact
  for (int c = 0; c < kChannels; ++c) {
    if (c != out) {
      EXPECT_TRUE(r.out[c].empty()) << "channel " << c;
    }
  }
}

TEST(RtlNocRouter, BackToBackPacketsKeepOnePerClock) {
  // three packets from one input to three outputs: accepted in clocks 0, 1, 2, delivered in clocks 5, 6, 7
  Router r;
  for (unsigned d = 0; d < 3; ++d) r.in[8].push_back(Pkt{d, 4, kMemWr, d * 16, 100 + d});
  r.run(10);
  EXPECT_EQ(r.accepted[0], 8);
  EXPECT_EQ(r.accepted[1], 8);
  EXPECT_EQ(r.accepted[2], 8);
  for (unsigned d = 0; d < 3; ++d) {
    const int c = channel_of(d, kMemWr);
    ASSERT_EQ(r.out[c].size(), 1u);
    EXPECT_EQ(r.out[c][0].first, static_cast<int>(d) + 1 + kLatency);
  }
}

// ---------------------------------------------------------------- arbitration

TEST(RtlNocRouter, AtMostOnePacketPerClockAllInputsBusy) {
  Router r;
  for (int c = 0; c < kChannels; ++c) {
    for (int k = 0; k < 6; ++k) {
      const unsigned dst = static_cast<unsigned>((c + k) % kPorts);
      const unsigned kind = (c % 2) ? kRdRsp : kMemRd;
      r.in[c].push_back(Pkt{dst, static_cast<unsigned>(c / 2), kind, 0, std::uint64_t(c) * 1000 + k,
                              static_cast<unsigned>(c * 7 + k) & 0x7fu, (k & 1) != 0});
    }
  }
  r.run(200);  // Router::step checks <= 1 pop per clock and no pop of an empty input
  int total = 0;
  for (int c = 0; c < kChannels; ++c) total += static_cast<int>(r.out[c].size());
  EXPECT_EQ(total, kChannels * 6);
}

TEST(RtlNocRouter, RoundRobinAmongInputsToDifferentOutputs) {
  // PE0, PE1, PE2 request channels (0, 2, 4) always have a packet, each to its own output: the router takes
  // them in strict rotation, one per clock.
  Router r;
  for (int k = 0; k < 40; ++k) {
    r.in[0].push_back(Pkt{1, 0, kMemRd, 0, std::uint64_t(k)});
    r.in[2].push_back(Pkt{2, 1, kMemRd, 0, std::uint64_t(k)});
    r.in[4].push_back(Pkt{3, 2, kMemRd, 0, std::uint64_t(k)});
  }
  r.run(30);
  for (int c = 0; c < 30; ++c) EXPECT_EQ(r.accepted[static_cast<std::size_t>(c)], (c % 3) * 2) << "clock " << c;
}

TEST(RtlNocRouter, RoundRobinIsFairUnderContentionForOneOutput) {
  // four inputs (two of them responses to the host's response channel would be a different output; here all
  // four send requests to port 3) compete for one output channel that the receiver drains every clock
  Router r;
  const int inputs[] = {0, 2, 6, 8};
  for (int in : inputs)
    for (int k = 0; k < 100; ++k) r.in[in].push_back(Pkt{3, static_cast<unsigned>(in / 2), kMemWr, 0, std::uint64_t(k)});
  r.run(300);
  std::map<int, int> taken;
  for (int a : r.accepted)
    if (a >= 0) ++taken[a];
  int lo = 1 << 30, hi = 0;
  for (int in : inputs) {
    lo = std::min(lo, taken[in]);
    hi = std::max(hi, taken[in]);
  }
  EXPECT_GT(lo, 20) << "some input starved";
  EXPECT_LE(hi - lo, 1) << "round robin must share the output evenly";
  // and within any window of 4 acceptances, every input appears once
  std::vector<int> seq;
  for (int a : r.accepted)
    if (a >= 0) seq.push_back(a);
  for (std::size_t i = 0; i + 4 <= std::min<std::size_t>(seq.size(), 200); i += 4) {
    std::map<int, int> w;
    for (std::size_t k = i; k < i + 4; ++k) ++w[seq[k]];
    EXPECT_EQ(w.size(), 4u) << "window at acceptance " << i;
  }
}

// ---------------------------------------------------------------- ordering, classes, back-pressure

TEST(RtlNocRouter, OrderPreservedPerInputOutputPairUnderRandomTraffic) {
  Router r;
  std::uint64_t rng = 0x12345678u;
  auto next = [&rng]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  std::map<std::pair<int, int>, std::vector<std::uint64_t>> sent;  // (input, output) -> tags in send order
  for (int c = 0; c < kChannels; ++c) {
    for (int k = 0; k < 40; ++k) {
      const unsigned dst = static_cast<unsigned>(next() % kPorts);
      const unsigned kind = static_cast<unsigned>(next() % 4);
      const std::uint64_t tag = (std::uint64_t(c) << 32) | static_cast<std::uint64_t>(k);
      r.in[c].push_back(Pkt{dst, static_cast<unsigned>(c / 2), kind, static_cast<unsigned>(next() & 0x1ffff), tag});
      sent[{c, channel_of(dst, kind)}].push_back(tag);
    }
  }
  for (int clk = 0; clk < 3000; ++clk) {
    for (int c = 0; c < kChannels; ++c) r.pop_[static_cast<std::size_t>(c)] = (next() % 3) != 0;  // back-pressure
    r.step();
  }
  std::map<std::pair<int, int>, std::vector<std::uint64_t>> got;
  int total = 0;
  for (int c = 0; c < kChannels; ++c) {
    for (const auto& [when, p] : r.out[c]) {
      EXPECT_EQ(channel_of(p.dst, p.kind), c) << "delivered to the wrong channel";
      got[{static_cast<int>(p.tag >> 32), c}].push_back(p.tag);
      ++total;
    }
  }
  EXPECT_EQ(total, kChannels * 40) << "packets lost or duplicated";
  EXPECT_EQ(got, sent) << "order not preserved on some input -> output pair";
}

TEST(RtlNocRouter, RequestsAndResponsesUseSeparateChannels) {
  // Port 1's request channel (2) is full and not drained; a response to port 1 still gets through on
  // channel 3, and a further request to port 1 waits without being lost.
  Router r;
  r.pop_[2] = false;
  for (int k = 0; k < kOutDepth; ++k) r.in[0].push_back(Pkt{1, 0, kMemRd, 0, std::uint64_t(k)});
  r.run(12);
  ASSERT_EQ(r.in[0].size(), 0u);
  r.in[0].push_back(Pkt{1, 0, kMemWr, 0, 99});         // another request (class 0) to port 1: no room
  r.in[5].push_back(Pkt{1, 2, kRdRsp, 0x40, 0xabcd});  // a response (class 1) from port 2 to port 1
  r.run(12);
  ASSERT_EQ(r.out[3].size(), 1u) << "the response was blocked by the full request channel";
  EXPECT_EQ(r.out[3][0].second, (Pkt{1, 2, kRdRsp, 0x40, 0xabcd}));
  EXPECT_EQ(r.in[0].size(), 1u) << "the request was accepted although its channel is full";
  EXPECT_TRUE(r.out[2].empty());
  // drain: the waiting request follows the first four, in order
  r.pop_[2] = true;
  r.run(12);
  ASSERT_EQ(r.out[2].size(), static_cast<std::size_t>(kOutDepth) + 1);
  for (int k = 0; k < kOutDepth; ++k) EXPECT_EQ(r.out[2][static_cast<std::size_t>(k)].second.tag, std::uint64_t(k));
  EXPECT_EQ(r.out[2][kOutDepth].second.tag, 99u);
  // a response never lands on a request channel and vice versa
  EXPECT_EQ(channel_of(1, kRdRsp), 3);
  EXPECT_EQ(channel_of(4, kRdRsp), 9);
  EXPECT_EQ(channel_of(4, kRegWr), 8);
}

TEST(RtlNocRouter, BackPressureWhenTheOutputFifoIsFull) {
  // 10 packets to a channel nobody drains: exactly OUT_DEPTH (4) are accepted (room is reserved at
  // acceptance, so the pipeline never overfills the FIFO), then the router stops popping the input.
  Router r;
  r.pop_[4] = false;
  for (int k = 0; k < 10; ++k) r.in[6].push_back(Pkt{2, 3, kMemWr, 0, std::uint64_t(k)});
  r.run(20);
  EXPECT_EQ(r.in[6].size(), 6u);
  int acc = 0;
  for (int a : r.accepted) acc += a == 6;
  EXPECT_EQ(acc, kOutDepth);
  // accepted in clocks 0..3, none after
  for (int c = 0; c < 20; ++c) EXPECT_EQ(r.accepted[static_cast<std::size_t>(c)], c < kOutDepth ? 6 : -1) << c;
  // other traffic is not blocked meanwhile
  r.in[0].push_back(Pkt{3, 0, kMemRd, 0, 7});
  r.run(8);
  ASSERT_EQ(r.out[6].size(), 1u);
  // pop one: one more is accepted
  r.pop_[4] = true;
  r.step();
  r.pop_[4] = false;
  r.run(10);
  EXPECT_EQ(r.in[6].size(), 5u);
  // drain everything: all 10 arrive, in order, none lost
  r.pop_[4] = true;
  r.run(60);
  ASSERT_EQ(r.out[4].size(), 10u);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(r.out[4][static_cast<std::size_t>(k)].second.tag, std::uint64_t(k));
  EXPECT_TRUE(r.in[6].empty());
}

// ---------------------------------------------------------------- the mesh

TEST(RtlNocRouter, RoutesToTheLinkTowardsTheDestinationXFirst) {
  // a router at (1, 1): packets for other QPEs go to the link towards them, X before Y; its own QPE's to
  // the local port
  Router r(1, 1);
  constexpr int kNorth = 6, kEast = 7, kSouth = 8, kWest = 9;
  struct Case {
    unsigned x, y;
    int port;
  } cases[] = {{2, 0, kEast}, {3, 3, kEast}, {0, 0, kWest}, {0, 2, kWest},
               {1, 0, kNorth}, {1, 5, kSouth}, {1, 1, 3}};
  std::uint64_t tag = 1;
  for (const Case& c : cases) {
    Pkt p{3, 0, kMemWr, 0, tag++};
    p.dst_x = c.x;
    p.dst_y = c.y;
    r.in[0].push_back(p);
  }
  r.run(30);
  tag = 1;
  for (const Case& c : cases) {
    const int ch = c.port * 2;  // request class
    bool found = false;
    for (const auto& [when, p] : r.out[ch]) found = found || p.tag == tag;
    EXPECT_TRUE(found) << "packet for (" << c.x << ", " << c.y << ") not on port " << c.port;
    ++tag;
  }
}

TEST(RtlNocRouter, ALinksPacketIsVisibleAClockEarlierThanALocalOne) {
  // accepted in clock 0 (local) and 1 (link): the link's is visible from clock 4 + 1, the local one's from
  // clock 5, so both leave the pipeline at the same edge, into different FIFOs
  Router r(0, 0);
  r.pop_.fill(false);
  Pkt local{2, 0, kMemWr, 0, 10};
  Pkt east{2, 0, kMemWr, 0, 11};
  east.dst_x = 1;
  r.in[0].push_back(local);
  r.in[0].push_back(east);
  r.run(1);
  ASSERT_EQ(r.accepted[0], 0);
  for (int c = 1; c < 5; ++c) {
    EXPECT_FALSE(r.out_valid(7 * 2)) << "link packet visible too early, clock " << c;
    r.step();
    if (c == 1) {
      ASSERT_EQ(r.accepted[1], 0);
    }
  }
  EXPECT_TRUE(r.out_valid(7 * 2)) << "link packet not visible 4 clocks after its acceptance";
  EXPECT_TRUE(r.out_valid(2 * 2)) << "local packet not visible 5 clocks after its acceptance";
  r.pop_.fill(true);
  r.run(2);
  ASSERT_EQ(r.out[14].size(), 1u);
  ASSERT_EQ(r.out[4].size(), 1u);
  EXPECT_EQ(r.out[14][0].second, east);
  EXPECT_EQ(r.out[4][0].second, local);
}

}  // namespace

// ---------------------------------------------------------------- the model's router against this RTL

// The model's router (model/noc/router.h) fed the same random traffic as the RTL, with the same receivers'
// back-pressure: every clock it accepts the same input channel, and every output channel delivers the same
// packets in the same clocks. This is what lets the model's NoC (model/noc/fabric.h) arbitrate as the RTL.
TEST(RtlNocRouter, TheModelsRouterAcceptsAndDeliversInTheSameClocksAsTheRtl) {
  constexpr unsigned kX = 2, kY = 1;
  Router rtl(kX, kY);
  s2::Router model(s2::Router::Params{kX, kY, kLatency, kOutDepth, 8});
  std::array<s2::Fifo, kChannels> model_in;
  std::array<std::deque<s2::Packet>, kChannels> model_queue;
  for (int c = 0; c < kChannels; ++c) {
    model_in[static_cast<std::size_t>(c)] = s2::Fifo(1);
    model.connect_input(c, &model_in[static_cast<std::size_t>(c)]);
  }
  std::uint64_t rng = 0x9e3779b97f4a7c15ull;
  auto next = [&rng]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  const unsigned kinds[] = {kMemWr, kMemRd, kRdRsp};
  int tag = 0;
  for (int c = 0; c < kChannels; ++c)
    for (int k = 0; k < 60; ++k) {
      Pkt p;
      p.dst = static_cast<unsigned>(next() % kPorts);
      p.kind = kinds[next() % 3];
      p.dst_x = static_cast<unsigned>(next() % 5);  // destinations on this router and beyond every link
      p.dst_y = static_cast<unsigned>(next() % 3);
      p.src = static_cast<unsigned>(c / 2) % kPorts;
      p.tag = static_cast<std::uint64_t>(++tag);
      rtl.in[c].push_back(p);
      s2::Packet m;
      m.dst_x = static_cast<std::int8_t>(p.dst_x);
      m.dst_y = static_cast<std::int8_t>(p.dst_y);
      m.dst_port = static_cast<std::int8_t>(p.dst);
      m.src_qpe = static_cast<std::int16_t>(tag);  // the packet's identity
      m.kind = static_cast<s2::PacketKind>(p.kind);
      model_queue[static_cast<std::size_t>(c)].push_back(m);
    }
  std::array<std::vector<std::pair<int, int>>, kChannels> model_out;  // (clock, tag)
  for (int clk = 0; clk < 4000; ++clk) {
    for (int c = 0; c < kChannels; ++c) rtl.pop_[static_cast<std::size_t>(c)] = (next() % 4) != 0;
    // the model, on the same state: its input FIFOs hold each sender's head
    for (int c = 0; c < kChannels; ++c)
      if (model_in[static_cast<std::size_t>(c)].empty() && !model_queue[static_cast<std::size_t>(c)].empty()) {
        model_in[static_cast<std::size_t>(c)].push(model_queue[static_cast<std::size_t>(c)].front());
        model_queue[static_cast<std::size_t>(c)].pop_front();
      }
    const int acc = model.decide();
    std::array<bool, kChannels> take{};
    for (int c = 0; c < kChannels; ++c) {
      take[static_cast<std::size_t>(c)] = rtl.pop_[static_cast<std::size_t>(c)] && !model.output(c).empty();
      if (take[static_cast<std::size_t>(c)]) model_out[static_cast<std::size_t>(c)].emplace_back(clk, model.output(c).front().src_qpe);
    }
    model.apply(acc);
    for (int c = 0; c < kChannels; ++c)
      if (take[static_cast<std::size_t>(c)]) model.output(c).pop();
    rtl.step();
    ASSERT_EQ(acc, rtl.accepted.back()) << "clock " << clk;
  }
  int delivered = 0;
  for (int c = 0; c < kChannels; ++c) {
    std::vector<std::pair<int, int>> want;
    for (const auto& [when, p] : rtl.out[c]) want.emplace_back(when, static_cast<int>(p.tag));
    EXPECT_EQ(model_out[static_cast<std::size_t>(c)], want) << "output channel " << c;
    delivered += static_cast<int>(want.size());
  }
  EXPECT_EQ(delivered, tag) << "the traffic did not drain in the clocks given";
}
