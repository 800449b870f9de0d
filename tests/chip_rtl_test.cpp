// The chip on the RTL (rtl_stubs/chip.sv, linked QPE by QPE in harness/rtl_qpe_adapter.cpp) against the
// chip model, on directed streams: a transfer one hop from its DRAM, two flows sharing a mesh link, DRAMs
// reached through the attached router nearest the PE, Sync groups across QPEs, and a PE that does not
// finish reported by name while the others do.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "model/hw_config.h"
#include "model/task_stream.h"

using namespace s2;

namespace {

// A cols x rows mesh, DRAM 0 at the north-west corner's router, DRAM 1 (if asked) at the south-east
// corner's, the host's agent at (0, 0).
HwConfig mesh(int cols, int rows, bool two_drams = false) {
  HwConfig cfg;
  cfg.chip.name = "test_mesh";
  cfg.chip.mesh_cols = cols;
  cfg.chip.mesh_rows = rows;
  cfg.chip.drams = {{{{0, 0}}}};
  if (two_drams) cfg.chip.drams.push_back({{{cols - 1, rows - 1}}});
  cfg.chip.host_agents = {{0, 0}};
  validate(cfg);
  return cfg;
}

StreamCommand transfer(CommandKind kind, int dram, std::uint64_t remote_addr, std::uint32_t sram_addr, std::uint32_t bytes,
                       std::uint32_t rows = 1) {
  StreamCommand c;
  c.kind = kind;
  c.operation = "MOVE";
  c.dma.remote = {MemoryRef::Kind::Dram, dram};
  c.dma.dram_addr = remote_addr;
  c.dma.dram_row_stride = bytes;
  c.dma.sram_addr = sram_addr;
  c.dma.sram_row_stride = bytes;
  c.dma.row_bytes = bytes;
  c.dma.rows = rows;
  return c;
}

StreamCommand sync(int group = 0) {
  StreamCommand c;
  c.kind = CommandKind::Sync;
  c.operation = "SYNC";
  c.sync_group = group;
  return c;
}

TaskStream stream_of(const HwConfig& cfg, const std::string& name, std::uint64_t dram_bytes = 1 << 16) {
  TaskStream s;
  s.name = name;
  s.pe.assign(static_cast<std::size_t>(cfg.chip.qpes() * kPesPerQpe), {});
  s.dram_bytes = dram_bytes;
  return s;
}

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 131 + seed * 17 + (i >> 8)) & 0xff);
  return v;
}

struct Both {
  StreamResult model, rtl;
  SystemMemory model_mem, rtl_mem;
  double delta() const { return (double(model.cycles) - double(rtl.cycles)) / double(rtl.cycles); }
};

Both run_both(const HwConfig& cfg, const TaskStream& s, const SystemMemory& start) {
  Both b;
  b.model_mem = start;
  b.rtl_mem = start;
  b.model = make_model_stream_backend(cfg)->run(s, b.model_mem, StreamRunOptions{false});
  StreamRunOptions opt{false};
  opt.watchdog_cycles = 4 * b.model.cycles + 100000;
  b.rtl = make_rtl_stream_backend(cfg)->run(s, b.rtl_mem, opt);
  std::printf("%s: model %llu, RTL %llu PE clocks\n", s.name.c_str(), static_cast<unsigned long long>(b.model.cycles),
              static_cast<unsigned long long>(b.rtl.cycles));
  return b;
}

}  // namespace

TEST(ChipRtl, AStoreAndLoadOneHopFromTheDramMatchTheModel) {
  // PE 0 of QPE (1, 0) copies 4 KB from DRAM 0 (router (0, 0), one hop west) through its SRAM to another
  // place in DRAM 0
  const HwConfig cfg = mesh(2, 1);
  TaskStream s = stream_of(cfg, "one_hop");
  auto& pe = s.pe[4];
  pe.push_back(transfer(CommandKind::DmaLoad, 0, 0, 0, 256, 16));
  pe.push_back(transfer(CommandKind::DmaStore, 0, 0x8000, 0, 256, 16));
  SystemMemory mem;
  mem.drams = {pattern(1 << 16, 1)};
  const Both b = run_both(cfg, s, mem);
  ASSERT_TRUE(b.model.completed);
  ASSERT_TRUE(b.rtl.completed) << b.rtl.stalled;
  for (std::size_t i = 0; i < 4096; ++i) {
    ASSERT_EQ(b.rtl_mem.drams[0][0x8000 + i], mem.drams[0][i]) << "RTL byte " << i;
    ASSERT_EQ(b.model_mem.drams[0][0x8000 + i], mem.drams[0][i]) << "model byte " << i;
  }
  EXPECT_LE(std::abs(b.delta()), 0.02) << "model " << b.model.cycles << ", RTL " << b.rtl.cycles;
}

TEST(ChipRtl, TwoFlowsSharingALinkMatchTheModel) {
  // a row of three QPEs, DRAM 0 at the west end: PE 0 of QPE 1 and PE 0 of QPE 2 load 8 KB each at the same
  // time; both flows cross the link between QPE 1 and QPE 0, in both directions
  const HwConfig cfg = mesh(3, 1);
  TaskStream s = stream_of(cfg, "shared_link");
  s.pe[4].push_back(transfer(CommandKind::DmaLoad, 0, 0, 0, 512, 16));
  s.pe[8].push_back(transfer(CommandKind::DmaLoad, 0, 0x4000, 0, 512, 16));
  s.pe[4].push_back(transfer(CommandKind::DmaStore, 0, 0x8000, 0, 512, 16));
  s.pe[8].push_back(transfer(CommandKind::DmaStore, 0, 0xc000, 0, 512, 16));
  SystemMemory mem;
  mem.drams = {pattern(1 << 16, 2)};
  const Both b = run_both(cfg, s, mem);
  ASSERT_TRUE(b.rtl.completed) << b.rtl.stalled;
  for (std::size_t i = 0; i < 8192; ++i) {
    ASSERT_EQ(b.rtl_mem.drams[0][0x8000 + i], mem.drams[0][i]) << "RTL byte " << i;
    ASSERT_EQ(b.rtl_mem.drams[0][0xc000 + i], mem.drams[0][0x4000 + i]) << "RTL byte " << i;
  }
  EXPECT_EQ(b.rtl_mem.drams[0], b.model_mem.drams[0]);
  EXPECT_LE(std::abs(b.delta()), 0.02) << "model " << b.model.cycles << ", RTL " << b.rtl.cycles;
}

TEST(ChipRtl, EachDramIsReachedAndSyncGroupsMeetAcrossQpes) {
  // a 2x2 mesh with two DRAMs: every QPE's PE 1 moves a block from DRAM 0 to DRAM 1, the PEs of the west
  // column and of the east column meeting in their own Sync groups between the load and the store
  const HwConfig cfg = mesh(2, 2, true);
  TaskStream s = stream_of(cfg, "two_drams");
  s.sync_groups = {{1, 9}, {5, 13}};
  for (int q = 0; q < 4; ++q) {
    auto& pe = s.pe[static_cast<std::size_t>(q * kPesPerQpe + 1)];
    pe.push_back(transfer(CommandKind::DmaLoad, 0, std::uint64_t(q) * 2048, 0, 128, 16));
    pe.push_back(sync(q % 2));
    pe.push_back(transfer(CommandKind::DmaStore, 1, 0x8000 + std::uint64_t(q) * 2048, 0, 128, 16));
  }
  SystemMemory mem;
  mem.drams = {pattern(1 << 16, 3), std::vector<std::uint8_t>(1 << 16, 0)};
  const Both b = run_both(cfg, s, mem);
  ASSERT_TRUE(b.rtl.completed) << b.rtl.stalled;
  for (std::size_t i = 0; i < 4 * 2048; ++i) ASSERT_EQ(b.rtl_mem.drams[1][0x8000 + i], mem.drams[0][i]) << "byte " << i;
  EXPECT_EQ(b.rtl_mem.drams[1], b.model_mem.drams[1]);
  EXPECT_LE(std::abs(b.delta()), 0.02) << "model " << b.model.cycles << ", RTL " << b.rtl.cycles;
}

TEST(ChipRtl, APeThatDoesNotFinishIsNamedWhileTheOthersFinish) {
  const HwConfig cfg = mesh(2, 2);
  TaskStream s = stream_of(cfg, "one_slow");
  for (int p : {0, 1, 2, 3}) s.pe[static_cast<std::size_t>(p)].push_back(transfer(CommandKind::DmaLoad, 0, 0, 0, 64));
  s.pe[13].push_back(transfer(CommandKind::DmaLoad, 0, 0, 0, 60000));  // QPE 3 (1, 1), PE 1
  SystemMemory mem;
  mem.drams = {pattern(1 << 16, 4)};
  StreamRunOptions opt{false};
  opt.watchdog_cycles = 2000;
  const StreamResult r = make_rtl_stream_backend(cfg)->run(s, mem, opt);
  EXPECT_FALSE(r.completed);
  EXPECT_NE(r.stalled.find("15 of 16 PEs finished"), std::string::npos) << r.stalled;
  EXPECT_NE(r.stalled.find("PE 13 (QPE 3, PE 1): command 0 of 1 (dma_load of MOVE), waiting for its DMA (load from DRAM 0)"),
            std::string::npos)
      << r.stalled;
}

TEST(ChipRtl, TransfersBetweenSramsAreRefusedBeforeAnythingRuns) {
  // not in the RTL yet (rtl_stubs/README.md, "The chip"): the stream is refused, naming the command
  const HwConfig cfg = mesh(2, 1);
  TaskStream s = stream_of(cfg, "peer");
  StreamCommand c = transfer(CommandKind::DmaStore, 0, 0, 0, 64);
  c.dma.remote = {MemoryRef::Kind::Sram, 5};
  s.pe[0].push_back(c);
  SystemMemory mem;
  try {
    make_rtl_stream_backend(cfg)->run(s, mem, StreamRunOptions{false});
    FAIL() << "a transfer between SRAMs ran on the RTL";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stream peer: PE 0 command 0 moves data to SRAM of PE 5"), std::string::npos) << e.what();
  }
}
