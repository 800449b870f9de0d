// The chip in the model: the mesh's routes, hop latency, routers shared by flows, DRAM queueing, transfers
// between PEs' SRAMs, the 1x1 system as QPE-DRAM, and streams the system refuses before running them.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/backends/backend.h"
#include "model/hw_config.h"
#include "model/noc/mesh.h"
#include "model/task_stream.h"

using namespace s2;

namespace {

// A row of `cols` QPEs, DRAM 0 at the west end, every QPE its own host agent (no host hops).
HwConfig row_of_qpes(int cols) {
  HwConfig cfg;
  cfg.chip.name = "row";
  cfg.chip.mesh_cols = cols;
  cfg.chip.mesh_rows = 1;
  cfg.chip.drams = {{{{0, 0}}}, {{{cols - 1, 0}}}};
  cfg.chip.host_agents.clear();
  for (int x = 0; x < cols; ++x) cfg.chip.host_agents.push_back({x, 0});
  validate(cfg);
  return cfg;
}

StreamCommand transfer(CommandKind kind, MemoryRef remote, std::uint64_t remote_addr, std::uint32_t sram_addr,
                       std::uint32_t bytes) {
  StreamCommand c;
  c.kind = kind;
  c.operation = "MOVE";
  c.dma.remote = remote;
  c.dma.dram_addr = remote_addr;
  c.dma.sram_addr = sram_addr;
  c.dma.row_bytes = bytes;
  return c;
}

TaskStream stream_of(const HwConfig& cfg, const std::string& name) {
  TaskStream s;
  s.name = name;
  s.pe.assign(static_cast<std::size_t>(cfg.chip.qpes() * kPesPerQpe), {});
  s.dram_bytes = 1 << 16;
  return s;
}

const MemoryRef kDram0{MemoryRef::Kind::Dram, 0};

}  // namespace

TEST(Mesh, RoutesGoAlongXFirstThenY) {
  const Mesh m(prototype_chip());
  const std::vector<int> r = m.route(prototype_chip().qpe_index({0, 0}), prototype_chip().qpe_index({2, 1}));
  const ChipShape c = prototype_chip();
  EXPECT_EQ(r, (std::vector<int>{c.qpe_index({0, 0}), c.qpe_index({1, 0}), c.qpe_index({2, 0}), c.qpe_index({2, 1})}));
  EXPECT_EQ(m.hops(c.qpe_index({0, 0}), c.qpe_index({5, 5})), 10);
  // a DRAM is reached through its router in the QPE's row; the host through the nearest agent
  EXPECT_EQ(m.dram_router(1, c.qpe_index({3, 1})), c.qpe_index({5, 1}));
  EXPECT_EQ(m.dram_router(0, c.qpe_index({1, 4})), c.qpe_index({0, 2}));
  EXPECT_EQ(m.host_agent(c.qpe_index({0, 0})), c.qpe_index({2, 2}));
  EXPECT_EQ(m.host_agent(c.qpe_index({5, 5})), c.qpe_index({3, 3}));
}

TEST(ChipModel, EachHopAddsItsLatencyToARequestAndToItsData) {
  const HwConfig cfg = row_of_qpes(4);
  auto backend = make_model_stream_backend(cfg);
  std::vector<std::uint64_t> cycles;
  for (int q = 0; q < 4; ++q) {
    TaskStream s = stream_of(cfg, "hop");
    s.pe[static_cast<std::size_t>(q * kPesPerQpe)].push_back(transfer(CommandKind::DmaLoad, kDram0, 0, 0, 16));
    SystemMemory mem;
    cycles.push_back(backend->run(s, mem, StreamRunOptions{}).cycles);
  }
  // the request's packets go q hops to the DRAM's router, its line q hops back: 2 x q x 4 NoC clocks
  for (int q = 1; q < 4; ++q) EXPECT_EQ(cycles[static_cast<std::size_t>(q)] - cycles[0], 2u * q * 2) << "QPE " << q;
}

TEST(ChipModel, FlowsThroughOneRouterShareItsPacketsPerClock) {
  const HwConfig cfg = row_of_qpes(4);
  auto backend = make_model_stream_backend(cfg);
  constexpr std::uint32_t kLines = 2048;
  // each flow: a PE of QPE `from` writes 2048 lines into the same PE of QPE `to`, a line per clock
  auto run = [&](std::vector<std::pair<int, int>> flows, int pes) {
    TaskStream s = stream_of(cfg, "flows");
    for (auto [from, to] : flows)
      for (int p = 0; p < pes; ++p)
        s.pe[static_cast<std::size_t>(from * kPesPerQpe + p)].push_back(
            transfer(CommandKind::DmaStore, {MemoryRef::Kind::Sram, to * kPesPerQpe + p}, 0, 0, 16 * kLines));
    SystemMemory mem;
    return double(backend->run(s, mem, StreamRunOptions{}).cycles);
  };
  const double alone = run({{0, 2}}, 1);
  EXPECT_NEAR(alone, kLines, 0.05 * kLines);
  // four flows over the same routers: each router passes 2 packets per PE clock, so they take twice as long
  EXPECT_NEAR(run({{0, 2}}, 4), 2.0 * kLines, 0.05 * kLines);
  // flows on routers of their own do not meet: QPE 0 -> 1 and QPE 2 -> 3 together take as long as one
  EXPECT_NEAR(run({{0, 1}, {2, 3}}, 2), alone, 0.01 * kLines);
  // QPE 0 -> 2 and QPE 1 -> 3 share routers 1 and 2: twice the packets of one of them at those routers
  EXPECT_GE(run({{0, 2}, {1, 3}}, 2), 2.0 * kLines);
}

TEST(ChipModel, RequestsQueueAtADram) {
  const HwConfig cfg = row_of_qpes(2);
  auto backend = make_model_stream_backend(cfg);
  constexpr std::uint32_t kBytes = 4096;  // 256 DRAM operations, 512 clocks
  auto run = [&](bool two_drams) {
    TaskStream s = stream_of(cfg, "queue");
    for (int q = 0; q < 2; ++q)
      for (int p = 0; p < kPesPerQpe; ++p)
        s.pe[static_cast<std::size_t>(q * kPesPerQpe + p)].push_back(transfer(
            CommandKind::DmaLoad, {MemoryRef::Kind::Dram, two_drams ? q : 0}, 0, 0, kBytes));
    SystemMemory mem;
    return backend->run(s, mem, StreamRunOptions{});
  };
  const StreamResult one = run(false), two = run(true);
  EXPECT_EQ(one.dram_ops, 8u * 256);
  // one DRAM serves 8 loads one after the other; two DRAMs 4 each, side by side
  EXPECT_GE(one.cycles, 8u * 512);
  EXPECT_LT(one.cycles, 8u * 512 + 200);
  EXPECT_GE(two.cycles, 4u * 512);
  EXPECT_LT(two.cycles, 4u * 512 + 200);
}

TEST(ChipModel, DataMovesBetweenTheSramsOfPesOnDifferentQpes) {
  const HwConfig cfg = row_of_qpes(3);
  auto backend = make_model_stream_backend(cfg);
  TaskStream s = stream_of(cfg, "migrate");
  s.sync_groups = {{0, 9}};
  // PE 0 (QPE 0) loads 100 bytes from DRAM 0 and pushes them into PE 9 (QPE 2); PE 9 waits for it, pulls
  // 20 more from PE 0's SRAM and stores everything in DRAM 1
  s.pe[0].push_back(transfer(CommandKind::DmaLoad, kDram0, 1000, 256, 100));
  s.pe[0].push_back(transfer(CommandKind::DmaStore, {MemoryRef::Kind::Sram, 9}, 512, 256, 100));
  s.pe[0].push_back(StreamCommand{});
  s.pe[9].push_back(StreamCommand{});
  s.pe[9].push_back(transfer(CommandKind::DmaLoad, {MemoryRef::Kind::Sram, 0}, 256, 612, 20));
  s.pe[9].push_back(transfer(CommandKind::DmaStore, {MemoryRef::Kind::Dram, 1}, 64, 512, 120));
  SystemMemory mem;
  mem.drams.assign(2, std::vector<std::uint8_t>(1 << 16, 0));
  for (int i = 0; i < 100; ++i) mem.drams[0][1000 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i + 1);
  mem.sram[9] = {};  // read back PE 9's SRAM
  const StreamResult r = backend->run(s, mem, StreamRunOptions{});
  ASSERT_TRUE(r.completed);
  for (int i = 0; i < 120; ++i)
    ASSERT_EQ(mem.drams[1][64 + static_cast<std::size_t>(i)], static_cast<std::uint8_t>(i % 100 + 1)) << "byte " << i;
  EXPECT_EQ(mem.sram[9][512], 1);
}

TEST(ChipModel, TheOneByOneSystemIsQpeDram) {
  // the same QPE-DRAM stream on the default (1x1) system and on a chip whose QPE 0 holds the DRAM and the
  // host agent takes the same clocks: the other QPEs are idle and cost nothing
  HwConfig chip = row_of_qpes(3);
  TaskStream s;
  s.name = "qpe";
  s.dram_bytes = 8192;
  for (int p = 0; p < kPesPerQpe; ++p) {
    s.pe[static_cast<std::size_t>(p)].push_back(transfer(CommandKind::DmaLoad, kDram0, std::uint64_t(p) * 1024, 0, 1024));
    s.pe[static_cast<std::size_t>(p)].push_back(transfer(CommandKind::DmaStore, kDram0, 4096 + std::uint64_t(p) * 1024, 0, 1024));
  }
  std::vector<std::uint8_t> a(8192, 3), b(8192, 3);
  const StreamResult one = make_model_stream_backend(HwConfig{})->run(s, a, StreamRunOptions{});
  const StreamResult three = make_model_stream_backend(chip)->run(s, b, StreamRunOptions{});
  EXPECT_EQ(one.cycles, three.cycles);
  EXPECT_EQ(a, b);
}

TEST(ChipModel, StreamsThatCannotRunAreRefusedNamingTheCommand) {
  const HwConfig cfg = row_of_qpes(2);
  auto backend = make_model_stream_backend(cfg);
  auto refused = [&](TaskStream s, const std::string& expected) {
    SystemMemory mem;
    try {
      backend->run(s, mem, StreamRunOptions{});
      ADD_FAILURE() << "expected a refusal containing '" << expected << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  TaskStream s = stream_of(cfg, "bad");
  s.pe.resize(9);
  refused(s, "9 PEs, the system has 8");
  s = stream_of(cfg, "bad");
  s.pe[5].push_back(transfer(CommandKind::DmaLoad, {MemoryRef::Kind::Sram, 8}, 0, 0, 16));
  refused(s, "PE 5, command 0 (dma_load of MOVE): SRAM of PE 8 (QPE 2, PE 0): the system has 8 PEs");
  s = stream_of(cfg, "bad");
  s.pe[1].push_back(transfer(CommandKind::DmaLoad, {MemoryRef::Kind::Dram, 2}, 0, 0, 16));
  refused(s, "PE 1, command 0 (dma_load of MOVE): DRAM 2: the system has 2 DRAM(s)");
  s = stream_of(cfg, "bad");
  s.pe[1].push_back(transfer(CommandKind::DmaStore, {MemoryRef::Kind::Sram, 4}, 131000, 0, 1000));
  refused(s, "PE 1, command 0 (dma_store of MOVE): range in the SRAM of PE 4 (QPE 1, PE 0) beyond 131072 bytes");
  s = stream_of(cfg, "bad");
  s.pe[1].push_back(transfer(CommandKind::DmaLoad, kDram0, 65530, 0, 16));
  refused(s, "DRAM range beyond the stream's 65536 bytes");
  // two PEs meeting two groups in opposite orders wait for each other forever
  s = stream_of(cfg, "bad");
  s.sync_groups = {{0, 4}, {0, 4}};
  StreamCommand g0, g1;
  g1.sync_group = 1;
  s.pe[0] = {g0, g1};
  s.pe[4] = {g1, g0};
  refused(s, "PE 0, command 0 (sync of ): a Sync of group 0 that can never be met: PE 4 waits at its command 0 (sync group 1)");
  s.pe[4] = {g0};
  refused(s, "PE 0, command 1 (sync of ): a Sync of group 1 that can never be met: PE 4 has no further Sync of the group");
  s.pe[4] = {g0, g1};
  s.pe[3] = {g1};
  refused(s, "PE 3, command 0 (sync of ): the PE is not in sync group 1");
}

TEST(ChipModel, TheModelsWatchdogEndsAStreamAsAHangNamingWhatEachPeWaitedFor) {
  // The model cannot be made to deadlock by a stream (check_stream refuses what cannot finish), so the
  // watchdog is shown with a budget too small for the work. A stopped model leaves its SystemC processes
  // waiting and refuses later streams: the test runs in a child process, so that the rest of this
  // executable keeps a clean model.
  const pid_t child = fork();
  if (child == 0) {
    const HwConfig cfg = row_of_qpes(2);
    auto backend = make_model_stream_backend(cfg);
    TaskStream s = stream_of(cfg, "slow");
    s.sync_groups = {{0, 5}};
    s.pe[0].push_back(transfer(CommandKind::DmaLoad, kDram0, 0, 0, 60000));
    s.pe[0].push_back(StreamCommand{});
    s.pe[5].push_back(StreamCommand{});
    SystemMemory mem;
    StreamRunOptions opt;
    opt.watchdog_cycles = 2000;
    const StreamResult r = backend->run(s, mem, opt);
    bool ok = !r.completed && r.cycles == 2000 &&
              r.stalled.find("PE 0 waited for command 1 of 2 (dma_load MOVE): the DMA's transfer") != std::string::npos &&
              r.stalled.find("PE 5 waited for command 1 of 1 (sync): the other PEs of Sync group 0 at its Sync 1") !=
                  std::string::npos;
    if (!ok) fprintf(stderr, "stalled: %s\n", r.stalled.c_str());
    try {
      backend->run(s, mem, opt);
      ok = false;
    } catch (const std::runtime_error& e) {
      ok = ok && std::string(e.what()).find("the model's watchdog stopped stream slow") != std::string::npos;
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
