// How the chip RTL is simulated changes nothing it reports (harness/backends/rtl/linked_qpes.h): the QPEs
// evaluated on one thread or two, every QPE every clock or only the active ones (the rest, quiescent, advanced
// by QpeTop::advance_idle), every run gives the same DRAM-port traffic clock for clock, the same command end
// clocks, activity counts and memories. On the mini chip's random streams (flaws off and on), a small
// network's block on the prototype chip, DMAs waiting on a DRAM and on other PEs' SRAMs, an MLA waiting
// forever for operand A, and run-net's reports on the mini chip.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backends/rtl/linked_qpes.h"
#include "harness/commands/net_runner.h"
#include "harness/backends/rtl/rtl_chip.h"
#include "harness/backends/rtl/worker_pool.h"
#include "harness/stimulus/block_data.h"
#include "harness/stimulus/chip_random.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/hw_config.h"
#include "model/sram_layout.h"
#include "model/task_stream.h"
#include "test_networks.h"
#include "test_support.h"

using namespace s2;

namespace {
using namespace s2::test;

using Chip = RtlChip<LinkedQpes<Vqpe_16x4>>;

struct Run {
  StreamResult result;
  SystemMemory memory;
  std::vector<DramPortEvent> ports;
};

// `watchdog_cycles` 0: every stream must complete; else each runs until it completes or the watchdog ends it
Run run_with(const HwConfig& cfg, const RtlSimOptions& sim, const std::vector<TaskStream>& streams, const SystemMemory& start,
             std::uint64_t watchdog_cycles = 0) {
  Chip chip(cfg, sim);
  Run r;
  r.memory = start;
  chip.log_dram_ports(&r.ports);
  StreamRunOptions opt{false};
  opt.watchdog_cycles = watchdog_cycles ? watchdog_cycles : 5000000;
  for (const TaskStream& s : streams) {
    const StreamResult one = chip.run(s, r.memory, opt);
    if (!watchdog_cycles) {
      EXPECT_TRUE(one.completed) << s.name << ": " << one.stalled;
    }
    r.result = one;  // the last stream's figures; the port log and memories hold every stream's
  }
  return r;
}

void expect_same(const Run& ref, const Run& got, const std::string& what) {
  ASSERT_EQ(ref.ports.size(), got.ports.size()) << what;
  for (std::size_t i = 0; i < ref.ports.size(); ++i)
    ASSERT_TRUE(ref.ports[i] == got.ports[i]) << what << ": DRAM port packet " << i << " differs: NoC clock "
                                              << ref.ports[i].noc_clock << " against " << got.ports[i].noc_clock;
  EXPECT_EQ(ref.result.completed, got.result.completed) << what;
  EXPECT_EQ(ref.result.stalled, got.result.stalled) << what;
  EXPECT_EQ(ref.result.cycles, got.result.cycles) << what;
  EXPECT_EQ(ref.result.pe_end_cycle, got.result.pe_end_cycle) << what;
  EXPECT_EQ(ref.result.command_end_cycle, got.result.command_end_cycle) << what;
  EXPECT_EQ(ref.result.dram_ops, got.result.dram_ops) << what;
  EXPECT_EQ(ref.result.activity.named(), got.result.activity.named()) << what;
  ASSERT_EQ(ref.result.pe_activity.size(), got.result.pe_activity.size()) << what;
  for (std::size_t p = 0; p < ref.result.pe_activity.size(); ++p)
    EXPECT_EQ(ref.result.pe_activity[p].named(), got.result.pe_activity[p].named()) << what << ", PE " << p;
  ASSERT_EQ(ref.result.router_activity.size(), got.result.router_activity.size()) << what;
  for (std::size_t q = 0; q < ref.result.router_activity.size(); ++q)
    EXPECT_EQ(ref.result.router_activity[q].named(), got.result.router_activity[q].named()) << what << ", QPE " << q;
  EXPECT_EQ(ref.memory.drams, got.memory.drams) << what;
  EXPECT_EQ(ref.memory.sram, got.memory.sram) << what;
}

// Every way of simulating against the plainest (one thread, every QPE every clock); returns the share of QPE
// clocks the active-only run evaluated.
double expect_every_simulation_equal(const HwConfig& cfg, const std::vector<TaskStream>& streams, const SystemMemory& start,
                                     const std::string& what, std::uint64_t watchdog_cycles = 0) {
  const Run ref = run_with(cfg, RtlSimOptions{1, false}, streams, start, watchdog_cycles);
  EXPECT_GT(ref.ports.size(), 0u) << what << ": no DRAM traffic to compare";
  EXPECT_EQ(ref.result.qpe_clocks_evaluated, ref.result.qpe_clocks_simulated) << what << ": 'all' evaluates every QPE clock";
  double share = 1.0;
  for (const RtlSimOptions sim : {RtlSimOptions{1, true}, RtlSimOptions{2, true}}) {
    const Run got = run_with(cfg, sim, streams, start, watchdog_cycles);
    expect_same(ref, got, what + ", " + sim.describe());
    EXPECT_EQ(got.result.qpe_clocks_simulated, ref.result.qpe_clocks_simulated) << what;
    if (sim.active_only) {
      EXPECT_LE(got.result.qpe_clocks_evaluated, got.result.qpe_clocks_simulated) << what;
      share = double(got.result.qpe_clocks_evaluated) / double(got.result.qpe_clocks_simulated);
    }
  }
  std::printf("%s: %.3f of the QPE clocks evaluated (active QPEs only)\n", what.c_str(), share);
  return share;
}

std::vector<TaskStream> block_streams(const HwConfig& cfg, const char* network, std::size_t block, mapper::Strategy st,
                                      SystemMemory& start) {
  using namespace s2::mapper;
  const ParsedNetwork n = parse_network(parse_layer_list(network, "test"));
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const BlockStreams bs = distribute(n.blocks[block], split.blocks[block], st, cfg);
  start = stage_block_memory(bs, cfg, block_dram_image(n.blocks[block], split.blocks[block], bs, cfg, 3));
  return bs.streams;
}

// A cols x rows mesh with its DRAM at the north-west corner's router, as is the host's agent
HwConfig mesh_with_corner_dram(int cols, int rows) {
  HwConfig cfg;
  cfg.chip.name = "test_mesh";
  cfg.chip.mesh_cols = cols;
  cfg.chip.mesh_rows = rows;
  cfg.chip.drams = {{{{0, 0}}}};
  cfg.chip.host_agents = {{0, 0}};
  validate(cfg);
  return cfg;
}

// `rows` rows of `row_bytes` bytes, packed on both sides, between the DRAM or PE `far_pe`'s SRAM (far_pe >= 0)
// at `far_addr` and the own SRAM at `own_addr`
StreamCommand transfer(CommandKind kind, std::uint64_t far_addr, std::uint32_t own_addr, std::uint32_t row_bytes,
                       std::uint32_t rows, int far_pe = -1) {
  return packed_transfer(kind, far_pe < 0 ? MemoryRef{MemoryRef::Kind::Dram, 0} : MemoryRef{MemoryRef::Kind::Sram, far_pe},
                         far_addr, own_addr, row_bytes, rows);
}

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 131 + seed * 17 + (i >> 8)) & 0xff);
  return v;
}

}  // namespace

TEST(WorkerPool, EveryItemRunsOnceAndAnErrorReachesTheCaller) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  for (int n : {0, 1, 2, 7, 100}) {
    std::vector<int> hits(static_cast<std::size_t>(n), 0);
    for (int round = 0; round < 50; ++round) pool.for_each(n, [&](int i) { ++hits[static_cast<std::size_t>(i)]; });
    for (int h : hits) EXPECT_EQ(h, 50) << n << " items";
  }
  EXPECT_THROW(pool.for_each(10, [](int i) {
    if (i == 4) throw std::runtime_error("item 4");
  }),
               std::runtime_error);
  int ran = 0;
  pool.for_each(1, [&](int) { ++ran; });  // still usable after an error
  EXPECT_EQ(ran, 1);
}

TEST(ChipRtlEval, RandomStreamsOnTheMiniChipAreTheSameHoweverSimulated) {
  const HwConfig cfg = chip_random_config("mini");
  for (std::uint64_t seed : {1ull, 2026ull}) {
    const TaskStream s = random_chip_stream(cfg, seed);
    expect_every_simulation_equal(cfg, {s}, random_chip_memory(cfg, s, seed), "seed " + std::to_string(seed));
  }
}

TEST(ChipRtlEval, WithTheFlawsOnTooTheyAreTheSame) {
  HwConfig cfg = chip_random_config("mini");
  cfg.flaws.sram2clk = cfg.flaws.neighbor_conv = cfg.flaws.mm_wide_a = true;
  const TaskStream s = random_chip_stream(cfg, 7);
  expect_every_simulation_equal(cfg, {s}, random_chip_memory(cfg, s, 7), "seed 7, flaws on");
}

TEST(ChipRtlEval, ASmallNetworksBlockOnThePrototypeChipIsTheSameAndMostQpeClocksAreSkipped) {
  // the first convolution, its filters migrating around the ring of computation QPEs to the storage QPEs
  HwConfig cfg;
  apply_preset(cfg, "prototype");
  validate(cfg);
  SystemMemory start;
  const std::vector<TaskStream> streams = block_streams(cfg, test_networks::kSmall, 0, mapper::Strategy::FuseReuse, start);
  const double share = expect_every_simulation_equal(cfg, streams, start, "small CONV_1 fuse_reuse");
  // a small block keeps few of the 36 QPEs busy: activity-driven evaluation must skip most of their clocks
  EXPECT_LT(share, 0.5);
}

TEST(ChipRtlEval, DmasWaitingOnTheDramAndOnOtherPesSramsSleepAndAreTheSame) {
  // 3x3 mesh, its DRAM at (0, 0): the PEs of QPE 8 (2, 2) and QPE 6 (0, 2) each load 4 KB from the DRAM and
  // store it back elsewhere (the DRAM serves one load after the other: the DMAs wait their turn, and for
  // their acknowledgements); PE 8 (QPE 2) loads 2 KB from PE 33's SRAM and PE 17 (QPE 4) stores 2 KB into PE
  // 25's (a transfer with another PE's SRAM waits for its reads' data and its rows' acknowledgements)
  const HwConfig cfg = mesh_with_corner_dram(3, 3);
  TaskStream s = empty_stream(cfg, "waiting_dmas");
  for (int p : {24, 25, 26, 27, 32, 33, 34, 35}) {
    const std::uint64_t k = static_cast<std::uint64_t>(p % 4 + (p >= 32 ? 4 : 0));
    s.pe[static_cast<std::size_t>(p)].push_back(transfer(CommandKind::DmaLoad, k * 4096, 0, 64, 64));
    s.pe[static_cast<std::size_t>(p)].push_back(transfer(CommandKind::DmaStore, 32768 + k * 4096, 0, 64, 64));
  }
  s.pe[8].push_back(transfer(CommandKind::DmaLoad, 65536 + 16, 4096, 128, 16, 33));
  s.pe[17].push_back(transfer(CommandKind::DmaStore, 65536 + 8, 4096 + 4, 100, 20, 25));
  SystemMemory mem;
  mem.drams = {pattern(1 << 16, 1)};
  for (int p : {8, 17, 25, 33}) mem.sram[p] = pattern(128 * 1024, 10 + static_cast<unsigned>(p));
  const double share = expect_every_simulation_equal(cfg, {s}, mem, "waiting DMAs");
  // a QPE whose DMAs only wait sleeps: 0.45 of the QPE clocks evaluated (0.53 when a QPE slept only with
  // nothing in flight)
  EXPECT_LT(share, 0.5);
}

TEST(ChipRtlEval, AnMlaWaitingForeverForOperandASleepsAndHangsTheSame) {
  // mm_wide_a: PE 4 (QPE 1) multiplies with operand A in PE 5's SRAM, 32 words per row group: its last step
  // waits for ever, its MLA asking for and receiving nothing (quiescent) until the watchdog. PE 0 loads from
  // the DRAM meanwhile.
  HwConfig cfg = mesh_with_corner_dram(2, 1);
  cfg.flaws.mm_wide_a = true;
  TaskStream s = empty_stream(cfg, "mm_wide_a_hang");
  Task t = make_mm_task("wide_a", MmShape{128, 4, 16, 128}, 0, 3);
  t.a_src_shift = 1;
  const SramLayout l = sram_layout(t, cfg);
  s.pe[4].push_back(mla_command("MM", t, l.a_base, l.b_base, l.o_base));
  s.pe[0].push_back(transfer(CommandKind::DmaLoad, 0, 0, 256, 16));
  SystemMemory mem;
  mem.drams = {pattern(1 << 16, 2)};
  for (int p : {4, 5}) mem.sram[p] = pattern(128 * 1024, 30 + static_cast<unsigned>(p));
  const std::uint64_t watchdog_cycles = 20000;
  const auto hung = run_with(cfg, RtlSimOptions{1, true}, {s}, mem, watchdog_cycles);
  EXPECT_FALSE(hung.result.completed);
  EXPECT_NE(hung.result.stalled.find("PE 4 (QPE 1, PE 0)"), std::string::npos) << hung.result.stalled;
  const double share = expect_every_simulation_equal(cfg, {s}, mem, "mm_wide_a hang", watchdog_cycles);
  // QPE 1 sleeps through the hang: 0.02 of the QPE clocks evaluated (0.51 when a QPE slept only with nothing
  // in flight)
  EXPECT_LT(share, 0.1);
}

namespace {

// How the RTL was simulated is reported like the wall time (the head's rtl_simulation, each block's
// rtl_qpe_clocks_*): a report without them and the wall times is the same for every setting.
nlohmann::json without_simulation(const nlohmann::json& x) {
  return without_keys(x, [](const std::string& k) { return k == "rtl_simulation" || k.find("qpe_clocks_") != std::string::npos; });
}

// The small test network on the mini chip's RTL, as run-net would run it
RunNetRequest small_network_on_mini_rtl(const TempDir& dir) {
  RunNetRequest req;
  req.net = dir.write("small.txt", test_networks::kSmall);
  req.target = "s2";
  req.preset = "mini";
  req.backend = "rtl";
  return req;
}

}  // namespace

TEST(ChipRtlEval, RunNetReportsAreTheSameHoweverTheRtlIsSimulated) {
  const TempDir dir;
  RunNetRequest req = small_network_on_mini_rtl(dir);
  req.layers = {"CONV_1", "FC_5"};
  std::vector<nlohmann::json> reports;
  for (const RtlSimOptions sim : {RtlSimOptions{1, false}, RtlSimOptions{2, true}}) {
    req.rtl_sim = sim;
    req.json_out = dir.path("report.json");
    std::ostringstream out, err;
    ASSERT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
    EXPECT_NE(out.str().find(sim.describe()), std::string::npos) << "the console says how the RTL was simulated";
    const nlohmann::json j = read_json(req.json_out);
    EXPECT_EQ(j.at("rtl_simulation").at("eval"), sim.active_only ? "active" : "all");
    reports.push_back(without_simulation(without_wall_times(j)));
  }
  ASSERT_FALSE(reports[0].at("operations").empty());
  EXPECT_TRUE(reports[0] == reports[1]) << reports[0].dump().substr(0, 400) << "\n" << reports[1].dump().substr(0, 400);
}

TEST(ChipRtlEval, RunNetRunsTheRtlAgainEachOtherWayAndPrintsTheSpeedUps) {
  const TempDir dir;
  RunNetRequest req = small_network_on_mini_rtl(dir);
  req.layers = {"CONV_1"};
  req.strategies = {"fuse_reuse"};
  req.rtl_sim = RtlSimOptions{2, true};
  req.rtl_sim_others = {RtlSimOptions{1, true}, RtlSimOptions{2, false}};
  req.json_out = dir.path("report.json");
  std::ostringstream out, err;
  ASSERT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("the RTL gives the same results with 1 thread, active QPEs only as with 2 threads, active QPEs only: 1 of 1 block runs"),
            std::string::npos) << text;
  EXPECT_NE(text.find("the RTL on 2 threads at least 1.6x as fast as on 1:"), std::string::npos) << text;
  EXPECT_NE(text.find("the RTL evaluating active QPEs only at least 3x as fast as every QPE every clock:"), std::string::npos) << text;
  const nlohmann::json j = read_json(req.json_out);
  const nlohmann::json& sims = j.at("operations").at(0).at("rtl_simulations");
  ASSERT_EQ(sims.size(), 2u);
  EXPECT_TRUE(sims.at(0).at("same").get<bool>());
  EXPECT_EQ(sims.at(1).at("eval"), "all");
}
