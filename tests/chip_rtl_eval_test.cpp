// How the chip RTL is simulated changes nothing it reports (harness/backends/rtl/linked_qpes.h): the QPEs
// evaluated on one thread or two, every QPE every clock or only the active ones (the rest advanced by
// QpeTop::advance_idle), every run gives the same DRAM-port traffic clock for clock, the same command end
// clocks, activity counts and memories. On the mini chip's random streams (flaws off and on), a small
// network's block on the prototype chip, and run-net's reports on the mini chip.
#include <gtest/gtest.h>

#include <cstdint>
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

Run run_with(const HwConfig& cfg, const RtlSimOptions& sim, const std::vector<TaskStream>& streams, const SystemMemory& start) {
  Chip chip(cfg, sim);
  Run r;
  r.memory = start;
  chip.log_dram_ports(&r.ports);
  StreamRunOptions opt{false};
  opt.watchdog_cycles = 5000000;
  for (const TaskStream& s : streams) {
    const StreamResult one = chip.run(s, r.memory, opt);
    EXPECT_TRUE(one.completed) << s.name << ": " << one.stalled;
    r.result = one;  // the last stream's figures; the port log and memories hold every stream's
  }
  return r;
}

void expect_same(const Run& ref, const Run& got, const std::string& what) {
  ASSERT_EQ(ref.ports.size(), got.ports.size()) << what;
  for (std::size_t i = 0; i < ref.ports.size(); ++i)
    ASSERT_TRUE(ref.ports[i] == got.ports[i]) << what << ": DRAM port packet " << i << " differs: NoC clock "
                                              << ref.ports[i].noc_clock << " against " << got.ports[i].noc_clock;
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
                                     const std::string& what) {
  const Run ref = run_with(cfg, RtlSimOptions{1, false}, streams, start);
  EXPECT_GT(ref.ports.size(), 0u) << what << ": no DRAM traffic to compare";
  EXPECT_EQ(ref.result.qpe_clocks_evaluated, ref.result.qpe_clocks_simulated) << what << ": 'all' evaluates every QPE clock";
  double share = 1.0;
  for (const RtlSimOptions sim : {RtlSimOptions{1, true}, RtlSimOptions{2, true}}) {
    const Run got = run_with(cfg, sim, streams, start);
    expect_same(ref, got, what + ", " + sim.describe());
    EXPECT_EQ(got.result.qpe_clocks_simulated, ref.result.qpe_clocks_simulated) << what;
    if (sim.active_only) {
      EXPECT_LE(got.result.qpe_clocks_evaluated, got.result.qpe_clocks_simulated) << what;
      share = double(got.result.qpe_clocks_evaluated) / double(got.result.qpe_clocks_simulated);
    }
  }
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
