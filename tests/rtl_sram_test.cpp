// Directed tests of the PE SRAM (rtl_stubs/sram.sv) verilated on its own (rtl_stubs: s2_rtl_blocks, Vsram).
//
// Conventions: every test clock is a PE clock (ce = 1 unless a test says otherwise). "Clock n" is the time
// after n rising edges. Requests are set up in a clock, req_grant is read combinationally in that clock, and
// the access is taken at the edge that ends it. With flaw_sram2clk = 0 the access completes at that edge and
// a read's line is on rsp_data (rsp_valid one-hot) in the next clock; with flaw_sram2clk = 1 the port is busy
// for one more clock (no grant to anyone), the access completes at the end of it and the line is there one
// clock later. Masters: 0 NoC slave, 1 MLA operand A, 2 MLA operand B, 3 MLA output writes (fixed priority,
// lowest index first).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <verilated.h>

#include "Vsram.h"
#include "harness/backends/rtl/qpe_ports.h"

// Verilator's runtime may ask for the simulation time; these tests keep none.
double sc_time_stamp() { return 0; }

namespace {

using Line = std::array<std::uint32_t, 4>;  // a 128-bit line as four 32-bit banks, bank 0 = bytes 0..3

Line pattern(std::uint32_t seed) {
  return {0x03020100u ^ seed, 0x07060504u ^ (seed * 3), 0x0b0a0908u ^ (seed * 5), 0x0f0e0d0cu ^ (seed * 7)};
}

class Sram {
 public:
  explicit Sram(bool flaw_sram2clk) {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(0);
    m_ = std::make_unique<Vsram>(ctx_.get(), "sram");
    m_->flaw_sram2clk = flaw_sram2clk;
    m_->ce = 1;
    m_->clk = 0;
    m_->rst_n = 0;
    idle();
    m_->eval();
    edge();
    m_->rst_n = 1;
    m_->eval();
  }
  ~Sram() { m_->final(); }

  Vsram& m() { return *m_; }

  void idle() {
    m_->req_valid = 0;
    m_->req_we = 0;
    m_->bd_we = 0;
    // master i at req_addr[17i +: 17], req_wdata[128i +: 128], req_be[16i +: 16]
    for (int i = 0; i < 4; ++i) {
      s2::set_bits(m_->req_addr, 17 * i, 17, 0);
      for (int w = 0; w < 4; ++w) s2::set_bits(m_->req_wdata, 128 * i + 32 * w, 32, 0);
      s2::set_bits(m_->req_be, 16 * i, 16, 0xffff);  // whole-line writes (byte enables: the DMA's partial lines)
    }
  }
  void request(int master, bool we, std::uint32_t addr, const Line& data = {}) {
    m_->req_valid |= static_cast<unsigned>(1u << master);
    if (we) m_->req_we |= static_cast<unsigned>(1u << master);
    else m_->req_we &= static_cast<unsigned>(~(1u << master));
    s2::set_bits(m_->req_addr, 17 * master, 17, addr);
    for (int w = 0; w < 4; ++w) s2::set_bits(m_->req_wdata, 128 * master + 32 * w, 32, data[static_cast<std::size_t>(w)]);
  }
  void drop(int master) { m_->req_valid &= static_cast<unsigned>(~(1u << master)); }
  // combinational outputs of this clock
  unsigned grant() {
    m_->eval();
    return m_->req_grant;
  }
  // one rising edge (and the falling edge after it)
  void edge() {
    m_->clk = 1;
    m_->eval();
    m_->clk = 0;
    m_->eval();
  }
  Line rsp_data() const { return {m_->rsp_data[0], m_->rsp_data[1], m_->rsp_data[2], m_->rsp_data[3]}; }
  void backdoor_write(unsigned line, const Line& d) {
    m_->bd_line = line;
    for (int w = 0; w < 4; ++w) m_->bd_wdata[w] = d[static_cast<std::size_t>(w)];
    m_->bd_we = 1;
    edge();
    m_->bd_we = 0;
    m_->eval();
  }
  Line backdoor_read(unsigned line) {
    m_->bd_line = line;
    m_->eval();
    return {m_->bd_rdata[0], m_->bd_rdata[1], m_->bd_rdata[2], m_->bd_rdata[3]};
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsram> m_;
};

// ---------------------------------------------------------------- latency

TEST(RtlSram, ReadTakesOneClockWithoutTheFlaw) {
  Sram s(false);
  s.backdoor_write(5, pattern(5));
  s.request(2, false, 5 * 16);
  EXPECT_EQ(s.grant(), 0b0100u);  // clock 0: granted
  EXPECT_EQ(s.m().busy_o, 0);
  s.edge();                        // the access completes at this edge
  s.drop(2);
  s.grant();
  EXPECT_EQ(s.m().rsp_valid, 0b0100u);  // clock 1: the line is there
  EXPECT_EQ(s.rsp_data(), pattern(5));
  EXPECT_EQ(s.m().busy_o, 0);
  s.edge();
  s.grant();
  EXPECT_EQ(s.m().rsp_valid, 0u);  // a one-clock pulse
  EXPECT_EQ(s.rsp_data(), pattern(5));  // the data register keeps the line
}

TEST(RtlSram, ReadTakesTwoClocksWithTheFlaw) {
  Sram s(true);
  s.backdoor_write(9, pattern(9));
  s.request(2, false, 9 * 16);
  EXPECT_EQ(s.grant(), 0b0100u);  // clock 0: granted
  s.edge();
  s.drop(2);
  s.request(1, false, 0);          // another master waits while the port is busy
  EXPECT_EQ(s.grant(), 0u);        // clock 1: busy, nobody is granted
  EXPECT_EQ(s.m().busy_o, 1);
  EXPECT_EQ(s.m().rsp_valid, 0u);
  s.edge();                        // the access completes at the end of the second clock
  EXPECT_EQ(s.grant(), 0b0010u);   // clock 2: the port is free again
  EXPECT_EQ(s.m().busy_o, 0);
  EXPECT_EQ(s.m().rsp_valid, 0b0100u);
  EXPECT_EQ(s.rsp_data(), pattern(9));
}

// Grants to one master that keeps requesting, over `clocks` clocks.
std::vector<int> grant_clocks(bool flaw, int clocks) {
  Sram s(flaw);
  std::vector<int> at;
  s.request(2, false, 0x40);
  for (int c = 0; c < clocks; ++c) {
    if (s.grant() == 0b0100u) at.push_back(c);
    s.edge();
  }
  return at;
}

TEST(RtlSram, PortOccupancyOneClockPerAccess) {
  const std::vector<int> at = grant_clocks(false, 20);
  ASSERT_EQ(at.size(), 20u);  // one access every clock
  for (int c = 0; c < 20; ++c) EXPECT_EQ(at[static_cast<std::size_t>(c)], c);
}

TEST(RtlSram, PortOccupancyTwoClocksPerAccessWithTheFlaw) {
  const std::vector<int> at = grant_clocks(true, 20);
  ASSERT_EQ(at.size(), 10u);  // one access every 2 clocks
  for (int k = 0; k < 10; ++k) EXPECT_EQ(at[static_cast<std::size_t>(k)], 2 * k);
}

// ---------------------------------------------------------------- arbitration

// All four masters request a read of their own line at once; each drops its request when granted.
// Returns the master granted in each clock (-1: none) and checks every response's data.
std::vector<int> drain_four(bool flaw) {
  Sram s(flaw);
  for (int m = 0; m < 4; ++m) s.backdoor_write(static_cast<unsigned>(100 + m), pattern(static_cast<std::uint32_t>(m)));
  for (int m = 0; m < 4; ++m) s.request(m, false, static_cast<std::uint32_t>((100 + m) * 16));
  std::vector<int> order;
  int responses = 0;
  for (int c = 0; c < 12; ++c) {
    const unsigned g = s.grant();
    EXPECT_LE(__builtin_popcount(g), 1) << "clock " << c;
    const unsigned rv = s.m().rsp_valid;
    if (rv != 0) {
      const int who = __builtin_ctz(rv);
      EXPECT_EQ(s.rsp_data(), pattern(static_cast<std::uint32_t>(who))) << "response to master " << who;
      ++responses;
    }
    order.push_back(g ? __builtin_ctz(g) : -1);
    s.edge();
    if (g) s.drop(__builtin_ctz(g));
  }
  EXPECT_EQ(responses, 4);
  return order;
}

TEST(RtlSram, FixedPriorityLowestMasterFirst) {
  EXPECT_EQ(drain_four(false), (std::vector<int>{0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(RtlSram, FixedPriorityWithTheFlaw) {
  EXPECT_EQ(drain_four(true), (std::vector<int>{0, -1, 1, -1, 2, -1, 3, -1, -1, -1, -1, -1}));
}

TEST(RtlSram, FixedPriorityIsNotRoundRobin) {
  // master 0 requesting every clock keeps master 3 out for as long as it asks
  Sram s(false);
  s.request(0, false, 0);
  s.request(3, true, 16, pattern(1));
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(s.grant(), 0b0001u) << "clock " << c;
    s.edge();
  }
  s.drop(0);
  EXPECT_EQ(s.grant(), 0b1000u);
}

// ---------------------------------------------------------------- data

TEST(RtlSram, WriteThenReadA128BitLine) {
  for (bool flaw : {false, true}) {
    SCOPED_TRACE(flaw ? "sram2clk" : "1 clock");
    Sram s(flaw);
    const Line d = {0xdeadbeefu, 0x01234567u, 0x89abcdefu, 0xf00dcafeu};
    s.request(3, true, 0x1234, d);  // byte address 0x1234: line 0x123 (the low 4 bits are ignored)
    EXPECT_EQ(s.grant(), 0b1000u);
    s.edge();
    s.drop(3);
    if (flaw) {
      EXPECT_NE(s.backdoor_read(0x123), d) << "the write must not land before its second clock";
      s.grant();
      s.edge();
    }
    EXPECT_EQ(s.backdoor_read(0x123), d);  // the banks: word k of the line = bank k = bytes 4k .. 4k+3
    EXPECT_EQ(s.m().rsp_valid, 0u) << "writes have no response";
    // read it back through the port (a different master, an address inside the line)
    s.request(1, false, 0x1238);
    EXPECT_EQ(s.grant(), 0b0010u);
    s.edge();
    s.drop(1);
    if (flaw) {
      s.grant();
      s.edge();
    }
    s.grant();
    EXPECT_EQ(s.m().rsp_valid, 0b0010u);
    EXPECT_EQ(s.rsp_data(), d);
    // the neighbouring lines are untouched
    EXPECT_EQ(s.backdoor_read(0x122), (Line{0, 0, 0, 0}));
    EXPECT_EQ(s.backdoor_read(0x124), (Line{0, 0, 0, 0}));
  }
}

TEST(RtlSram, BackdoorWriteAndReadBypassThePort) {
  Sram s(true);
  // the backdoor writes at a clock edge whatever the port does, and reads combinationally
  s.request(0, false, 0);  // keep the port busy
  s.grant();
  s.backdoor_write(0, pattern(11));
  s.backdoor_write(8191, pattern(12));  // the last line of 128 KB
  EXPECT_EQ(s.backdoor_read(0), pattern(11));
  EXPECT_EQ(s.backdoor_read(8191), pattern(12));
  // and needs no PE clock enable
  s.drop(0);
  s.m().ce = 0;
  s.backdoor_write(77, pattern(13));
  EXPECT_EQ(s.backdoor_read(77), pattern(13));
  // a timed read sees what the backdoor wrote
  s.m().ce = 1;
  s.edge();  // let the pending 2-clock access finish
  s.request(2, false, 8191 * 16 + 15);
  ASSERT_EQ(s.grant(), 0b0100u);
  s.edge();
  s.drop(2);
  s.grant();
  s.edge();
  s.grant();
  EXPECT_EQ(s.m().rsp_valid, 0b0100u);
  EXPECT_EQ(s.rsp_data(), pattern(12));
}

TEST(RtlSram, NothingHappensWithoutTheClockEnable) {
  Sram s(false);
  s.backdoor_write(3, pattern(3));
  s.m().ce = 0;
  s.request(2, false, 3 * 16);
  for (int c = 0; c < 3; ++c) {
    s.grant();
    s.edge();
    EXPECT_EQ(s.m().rsp_valid, 0u);
  }
  s.m().ce = 1;
  EXPECT_EQ(s.grant(), 0b0100u);
  s.edge();
  s.drop(2);
  s.grant();
  EXPECT_EQ(s.m().rsp_valid, 0b0100u);
  EXPECT_EQ(s.rsp_data(), pattern(3));
}

}  // namespace
