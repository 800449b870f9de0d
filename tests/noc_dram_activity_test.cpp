// The NoC's and the DRAMs' activity counts (model/activity.h: noc_packets, noc_packet_hops, dram_read_bytes,
// dram_write_bytes) on both backends: exact on directed transfers (a load and a store two hops from their
// DRAM, rows at odd alignments rounded to whole DRAM operations, a QPE's own DRAM and another PE's SRAM in
// the same QPE: no hop), per router and per DRAM as the parts and in the total; the model's and the RTL's
// counts equal on random chip streams and a QPE-DRAM stream; a single-QPE task's operand-A packets on the RTL
// (the model's tile schedule lists them unavailable). DISABLED_TheWholeChipSuite measures the largest
// model-to-RTL difference per count over vectors/chip_random_suite.csv (minutes: run it by name).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/backends/rtl/qpe_ports.h"
#include "harness/stimulus/chip_random.h"
#include "harness/stimulus/chip_suite.h"
#include "model/hw_config.h"
#include "model/task_stream.h"
#include "tests/test_support.h"

using namespace s2;

namespace {

using namespace s2::test;

// A cols x 1 row of QPEs, DRAM 0 at the west end's router, the host's agent there too.
HwConfig row_of(int cols) {
  HwConfig cfg;
  cfg.chip.name = "test_row";
  cfg.chip.mesh_cols = cols;
  cfg.chip.mesh_rows = 1;
  cfg.chip.drams = {{{{0, 0}}}};
  cfg.chip.host_agents = {{0, 0}};
  validate(cfg);
  return cfg;
}

const MemoryRef kDram0{MemoryRef::Kind::Dram, 0};

TaskStream stream_of(const HwConfig& cfg, const std::string& name) {
  TaskStream s;
  s.name = name;
  s.pe.assign(static_cast<std::size_t>(cfg.chip.qpes() * kPesPerQpe), {});
  s.dram_bytes = 1 << 16;
  return s;
}

struct Both {
  StreamResult model, rtl;
};

Both run_both(const HwConfig& cfg, const TaskStream& s, const SystemMemory& start) {
  Both b;
  SystemMemory model_mem = start, rtl_mem = start;
  b.model = make_model_stream_backend(cfg)->run(s, model_mem, StreamRunOptions{false});
  StreamRunOptions opt{false};
  opt.watchdog_cycles = 4 * b.model.cycles + 100000;
  b.rtl = make_rtl_stream_backend(cfg)->run(s, rtl_mem, opt);
  return b;
}

// The counts this test is about, by name, of one backend's result.
struct NocDram {
  std::uint64_t packets = 0, hops = 0, read = 0, write = 0;
  explicit NocDram(const Activity& a)
      : packets(a.noc_packets), hops(a.noc_packet_hops), read(a.dram_read_bytes), write(a.dram_write_bytes) {}
  NocDram(std::uint64_t p, std::uint64_t h, std::uint64_t r, std::uint64_t w) : packets(p), hops(h), read(r), write(w) {}
  bool operator==(const NocDram&) const = default;
};
void PrintTo(const NocDram& c, std::ostream* os) {
  *os << "{packets " << c.packets << ", hops " << c.hops << ", DRAM read " << c.read << ", written " << c.write << "}";
}

// Each backend's total equals its parts (routers and DRAMs), which hold only their own counts.
void expect_parts_sum(const StreamResult& r, const HwConfig& cfg, const std::string& who) {
  ASSERT_EQ(r.router_activity.size(), static_cast<std::size_t>(cfg.chip.qpes())) << who;
  ASSERT_EQ(r.dram_activity.size(), cfg.chip.drams.size()) << who;
  Activity sum;
  for (const Activity& a : r.router_activity) {
    EXPECT_EQ(a.dram_read_bytes + a.dram_write_bytes, 0u) << who;
    sum += a;
  }
  for (const Activity& a : r.dram_activity) {
    EXPECT_EQ(a.noc_packets + a.noc_packet_hops, 0u) << who;
    sum += a;
  }
  EXPECT_EQ(NocDram(sum), NocDram(r.activity)) << who;
  EXPECT_TRUE(r.activity_unavailable.empty()) << who << ": the stock RTL counts everything";
}

void expect_both(const Both& b, const HwConfig& cfg, const NocDram& total, const std::vector<NocDram>& routers) {
  ASSERT_TRUE(b.model.completed) << b.model.stalled;
  ASSERT_TRUE(b.rtl.completed) << b.rtl.stalled;
  for (const auto& [who, r] : {std::pair<std::string, const StreamResult*>{"model", &b.model}, {"rtl", &b.rtl}}) {
    expect_parts_sum(*r, cfg, who);
    EXPECT_EQ(NocDram(r->activity), total) << who;
    for (std::size_t q = 0; q < routers.size() && q < r->router_activity.size(); ++q)
      EXPECT_EQ(NocDram(r->router_activity[q]), routers[q]) << who << " router " << q;
  }
}

}  // namespace

TEST(NocDramActivity, ALoadAndAStoreTwoHopsFromTheirDram) {
  // PE 0 of QPE 2 (two hops east of DRAM 0's router) loads 16 rows of 256 bytes (4096, SRAM-line aligned) and
  // stores them back. The load: its request (DRAM_RD, DRAM_RDX) and 256 lines; the store: per row a header,
  // 16 lines and an acknowledgement. Every packet crosses both links.
  const HwConfig cfg = row_of(3);
  TaskStream s = stream_of(cfg, "two_hops");
  s.pe[8] = {packed_transfer(CommandKind::DmaLoad, kDram0, 0, 0, 256, 16), packed_transfer(CommandKind::DmaStore, kDram0, 0x8000, 0, 256, 16)};
  SystemMemory mem;
  mem.drams = {std::vector<std::uint8_t>(1 << 16, 7)};
  const std::uint64_t from_pe = 2 + 16 * (1 + 16), from_dram = 256 + 16;
  expect_both(run_both(cfg, s, mem), cfg, NocDram(from_pe + from_dram, 2 * (from_pe + from_dram), 4096, 4096),
              {NocDram(from_dram, from_dram, 0, 0), NocDram(0, from_pe + from_dram, 0, 0), NocDram(from_pe, from_pe, 0, 0)});
}

TEST(NocDramActivity, RowsAtOddAlignmentsAtTheQpesOwnDramMoveWholeOperationsAndNoHop) {
  // QPE-DRAM: PE 1 loads 100 bytes from DRAM address 3 into SRAM address 5 (SRAM lines 0..6: 7 lines; the DRAM
  // reads 7 operations of 16 bytes), then stores 3 rows of 20 bytes from SRAM address 40 (each row on 2
  // lines; 2 operations each). No packet leaves the QPE.
  const HwConfig cfg = row_of(1);
  TaskStream s = stream_of(cfg, "odd_rows");
  s.pe[1] = {packed_transfer(CommandKind::DmaLoad, kDram0, 3, 5, 100, 1), packed_transfer(CommandKind::DmaStore, kDram0, 0x1001, 40, 20, 3)};
  SystemMemory mem;
  mem.drams = {std::vector<std::uint8_t>(1 << 16, 3)};
  const std::uint64_t packets = (2 + 7) + 3 * (1 + 2 + 1);
  expect_both(run_both(cfg, s, mem), cfg, NocDram(packets, 0, 112, 96), {NocDram(packets, 0, 0, 0)});
}

TEST(NocDramActivity, ATransferBetweenTwoPesOfOneQpeCrossesNoLink) {
  // PE 0 loads 64 bytes (4 lines) from PE 3's SRAM, in the same QPE of a 2x1 mesh: a read and its response per
  // line, no hop, no DRAM byte
  const HwConfig cfg = row_of(2);
  TaskStream s = stream_of(cfg, "in_qpe");
  s.pe[0] = {packed_transfer(CommandKind::DmaLoad, MemoryRef{MemoryRef::Kind::Sram, 3}, 0x100, 0x200, 64, 1)};
  SystemMemory mem;
  mem.drams = {std::vector<std::uint8_t>(1 << 16, 1)};
  expect_both(run_both(cfg, s, mem), cfg, NocDram(8, 0, 0, 0), {NocDram(8, 0, 0, 0), NocDram(0, 0, 0, 0)});
}

TEST(NocDramActivity, ASingleQpeTasksOperandAReadsAreTwoPacketsPerWordOnTheRtl) {
  // mm with operand A in the neighbour PE's SRAM: one tile (4 rows of A, 16 columns of B) reads W_A x 4 = 256
  // bytes of A, 16 words, each a read request and its response through the router; the host's descriptors
  // are not counted. A one-tile convolution reads its one filter word through the NoC too.
  Task mm = make_mm_task("mm_a_from_neighbour", MmShape{64, 4, 16, 64}, 0, 3);
  mm.a_src_shift = 1;
  const HwConfig cfg;
  for (const auto& [t, packets] : {std::pair<Task, std::uint64_t>{mm, 32}, {conv_tile(), 2}}) {
    const TaskTrace rtl = run_with_watchdog(*make_rtl_backend(cfg), t, 100000);
    ASSERT_TRUE(rtl.completed) << t.id;
    EXPECT_EQ(rtl.activity.noc_packets, packets) << t.id;
    EXPECT_EQ(rtl.activity.noc_packet_hops, 0u) << t.id;
    EXPECT_TRUE(rtl.activity_unavailable.empty()) << t.id;
    const TaskTrace model = run_with_watchdog(*make_model_backend(cfg), t, 100000);
    EXPECT_NE(std::find(model.activity_unavailable.begin(), model.activity_unavailable.end(), "noc_packets"),
              model.activity_unavailable.end()) << t.id;
  }
}

TEST(NocDramActivity, AQpeRtlWithoutTheCountersIsToldApartAtCompileTime) {
  // a user's QPE without the ports (the backends then list the counts unavailable) and one with them
  struct Without {
    unsigned dma_busy = 0;
  } without;
  struct With {
    std::uint64_t noc_packets = 5, noc_packet_hops = 7;
  } with;
  static_assert(!QpePorts<Without>::kCountsNoc);
  static_assert(QpePorts<With>::kCountsNoc);
  EXPECT_EQ(QpePorts<Without>(without, 0).noc_packets(), 0u);
  EXPECT_EQ(QpePorts<With>(with, 0).noc_packets(), 5u);
  EXPECT_EQ(QpePorts<With>(with, 0).noc_packet_hops(), 7u);
}

TEST(NocDramActivity, ModelAndRtlCountTheSameOnRandomChipStreamsAndAQpeDramStream) {
  const std::vector<ChipSuiteRow> rows = read_chip_suite(source_path("vectors/chip_random_suite.csv"));
  ASSERT_GE(rows.size(), 2u);
  std::vector<std::pair<std::string, std::uint64_t>> streams = {{rows[0].system, rows[0].seed}, {rows[1].system, rows[1].seed},
                                                                 {"1x1", 5}};
  for (const auto& [system, seed] : streams) {
    const HwConfig cfg = chip_random_config(system);
    const TaskStream s = random_chip_stream(cfg, seed);
    const Both b = run_both(cfg, s, random_chip_memory(cfg, s, seed));
    const std::string id = system + " seed " + std::to_string(seed);
    ASSERT_TRUE(b.model.completed) << id << ": " << b.model.stalled;
    ASSERT_TRUE(b.rtl.completed) << id << ": " << b.rtl.stalled;
    expect_parts_sum(b.model, cfg, id + " model");
    expect_parts_sum(b.rtl, cfg, id + " rtl");
    EXPECT_GT(b.model.activity.noc_packets, 0u) << id;
    EXPECT_GT(b.model.activity.dram_read_bytes + b.model.activity.dram_write_bytes, 0u) << id;
    for (std::size_t q = 0; q < b.model.router_activity.size(); ++q)
      EXPECT_EQ(NocDram(b.model.router_activity[q]), NocDram(b.rtl.router_activity[q])) << id << " router " << q;
    for (std::size_t d = 0; d < b.model.dram_activity.size(); ++d)
      EXPECT_EQ(NocDram(b.model.dram_activity[d]), NocDram(b.rtl.dram_activity[d])) << id << " DRAM " << d;
    std::printf("%s: %llu packets, %llu hops, DRAM %llu read, %llu written (model = RTL)\n", id.c_str(),
                static_cast<unsigned long long>(b.model.activity.noc_packets),
                static_cast<unsigned long long>(b.model.activity.noc_packet_hops),
                static_cast<unsigned long long>(b.model.activity.dram_read_bytes),
                static_cast<unsigned long long>(b.model.activity.dram_write_bytes));
  }
}

// The measurement for docs (minutes): every stream of the committed chip suite on both backends, the largest
// relative difference per count; fails above issue 30's 1%.
TEST(NocDramActivity, DISABLED_TheWholeChipSuite) {
  const std::vector<ChipSuiteRow> rows = read_chip_suite(source_path("vectors/chip_random_suite.csv"));
  const char* names[] = {"noc_packets", "noc_packet_hops", "dram_read_bytes", "dram_write_bytes"};
  double worst[4] = {0, 0, 0, 0};
  std::string where[4];
  std::size_t ran = 0, differ = 0;
  for (const ChipSuiteRow& r : rows) {
    const HwConfig cfg = chip_random_config(r.system);
    const TaskStream s = random_chip_stream(cfg, r.seed);
    const Both b = run_both(cfg, s, random_chip_memory(cfg, s, r.seed));
    if (!b.model.completed || !b.rtl.completed) {
      ADD_FAILURE() << r.id << " did not complete";
      continue;
    }
    ++ran;
    const NocDram m(b.model.activity), t(b.rtl.activity);
    const std::uint64_t mv[4] = {m.packets, m.hops, m.read, m.write}, tv[4] = {t.packets, t.hops, t.read, t.write};
    differ += !(m == t);
    for (int k = 0; k < 4; ++k) {
      const double rel = tv[k] ? std::abs(double(mv[k]) - double(tv[k])) / double(tv[k]) : (mv[k] ? 1.0 : 0.0);
      if (rel > worst[k] || where[k].empty()) worst[k] = std::max(worst[k], rel), where[k] = r.id;
    }
  }
  std::printf("%zu streams of %zu on both backends, %zu with any of the four totals different\n", ran, rows.size(), differ);
  for (int k = 0; k < 4; ++k) {
    std::printf("%-18s max |model - RTL| / RTL = %.4f%% (%s)\n", names[k], 100 * worst[k], where[k].c_str());
    EXPECT_LE(worst[k], 0.01) << names[k];
  }
}
