// One chip: rtl_stubs/chip.sv verilated flat as a 2x2 mesh (harness/backends/rtl/flat_chip.h) against the QPEs
// the RTL backend links in C++ (linked_qpes.h, from model/noc/mesh.h's neighbours), both under the same
// RtlChip (its ARMs, DRAMs and host): on the mini chip's streams every packet through every DRAM port crosses in
// the same NoC clock, every command ends in the same PE clock, and every byte of every memory is the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "Vchip_2x2.h"
#include "harness/backends/rtl/flat_chip.h"
#include "harness/backends/rtl/linked_qpes.h"
#include "harness/backends/rtl/rtl_chip.h"
#include "harness/stimulus/block_data.h"
#include "harness/stimulus/chip_random.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/hw_config.h"
#include "model/noc/mesh.h"
#include "test_support.h"

using namespace s2;

namespace {

using FlatRtlChip = RtlChip<FlatChip<Vchip_2x2, 2, 2>>;
using LinkedRtlChip = RtlChip<LinkedQpes<Vqpe_16x4>>;

struct Run {
  StreamResult result;
  SystemMemory memory;
  std::vector<DramPortEvent> ports;
};

template <typename Chip>
Run run_on(const HwConfig& cfg, const TaskStream& s, const SystemMemory& start) {
  Chip chip(cfg);
  Run r;
  r.memory = start;
  chip.log_dram_ports(&r.ports);
  StreamRunOptions opt{false};
  opt.watchdog_cycles = 2000000;
  r.result = chip.run(s, r.memory, opt);
  return r;
}

// the two chips on one stream: equal in everything they report and leave, and in every DRAM port's traffic
void expect_equal_runs(const HwConfig& cfg, const TaskStream& s, const SystemMemory& start, const std::string& what) {
  const Run flat = run_on<FlatRtlChip>(cfg, s, start);
  const Run linked = run_on<LinkedRtlChip>(cfg, s, start);
  ASSERT_TRUE(linked.result.completed) << what << ": " << linked.result.stalled;
  EXPECT_TRUE(flat.result.completed) << what << ": " << flat.result.stalled;
  EXPECT_GT(linked.ports.size(), 0u) << what << ": no DRAM traffic to compare";
  ASSERT_EQ(flat.ports.size(), linked.ports.size()) << what;
  for (std::size_t i = 0; i < flat.ports.size(); ++i)
    ASSERT_TRUE(flat.ports[i] == linked.ports[i])
        << what << ": DRAM port packet " << i << " differs: flat NoC clock " << flat.ports[i].noc_clock << " QPE "
        << flat.ports[i].qpe << ", linked NoC clock " << linked.ports[i].noc_clock << " QPE " << linked.ports[i].qpe;
  EXPECT_EQ(flat.result.cycles, linked.result.cycles) << what;
  EXPECT_EQ(flat.result.pe_end_cycle, linked.result.pe_end_cycle) << what;
  EXPECT_EQ(flat.result.command_end_cycle, linked.result.command_end_cycle) << what;
  EXPECT_EQ(flat.result.dram_ops, linked.result.dram_ops) << what;
  EXPECT_EQ(flat.result.arm_cycles, linked.result.arm_cycles) << what;
  // the routers' activity counters: a hop counted by the router that sends it, once, on either fabric
  ASSERT_EQ(flat.result.router_activity.size(), linked.result.router_activity.size()) << what;
  for (std::size_t q = 0; q < flat.result.router_activity.size(); ++q) {
    EXPECT_EQ(flat.result.router_activity[q].noc_packets, linked.result.router_activity[q].noc_packets) << what << " QPE " << q;
    EXPECT_EQ(flat.result.router_activity[q].noc_packet_hops, linked.result.router_activity[q].noc_packet_hops) << what << " QPE " << q;
  }
  EXPECT_GT(flat.result.activity.noc_packets, 0u) << what;
  // the activity counters, found in both models (has_activity_counters) and counting the same
  EXPECT_TRUE(flat.result.activity_unavailable.empty()) << what;
  EXPECT_TRUE(linked.result.activity_unavailable.empty()) << what;
  EXPECT_EQ(flat.result.activity.named(), linked.result.activity.named()) << what;
  ASSERT_EQ(flat.result.pe_activity.size(), linked.result.pe_activity.size()) << what;
  for (std::size_t p = 0; p < flat.result.pe_activity.size(); ++p)
    EXPECT_EQ(flat.result.pe_activity[p].named(), linked.result.pe_activity[p].named()) << what << ", PE " << p;
  EXPECT_EQ(flat.memory.drams, linked.memory.drams) << what;
  EXPECT_EQ(flat.memory.sram, linked.memory.sram) << what;
}

}  // namespace

TEST(ChipSvEquivalence, TheMeshNeighboursAreChipSvs) {
  // chip.sv neighbour(q, d): north y - 1, east x + 1, south y + 1, west x - 1, QPEs numbered row by row
  for (const auto& [cols, rows] : std::vector<std::pair<int, int>>{{2, 2}, {3, 2}, {1, 1}, {6, 6}}) {
    ChipShape c = mini_chip();
    c.mesh_cols = cols;
    c.mesh_rows = rows;
    const Mesh m(c);
    for (int q = 0; q < cols * rows; ++q) {
      const int x = q % cols, y = q / cols;
      EXPECT_EQ(m.neighbour(q, Mesh::kNorth), y > 0 ? q - cols : -1);
      EXPECT_EQ(m.neighbour(q, Mesh::kEast), x < cols - 1 ? q + 1 : -1);
      EXPECT_EQ(m.neighbour(q, Mesh::kSouth), y < rows - 1 ? q + cols : -1);
      EXPECT_EQ(m.neighbour(q, Mesh::kWest), x > 0 ? q - 1 : -1);
    }
  }
}

TEST(ChipSvEquivalence, RandomStreamsRunClockForClockEqualOnTheFlatChipAndTheLinkedQpes) {
  // mini-chip random streams (vectors/chip_random_suite.csv's generator): transfers across the mesh between
  // SRAMs and to both DRAMs, MLA tasks, Sync groups, async commands
  const HwConfig cfg = chip_random_config("mini");
  for (std::uint64_t seed : {1ull, 2ull, 3ull, 2026ull}) {
    const TaskStream s = random_chip_stream(cfg, seed);
    expect_equal_runs(cfg, s, random_chip_memory(cfg, s, seed), "seed " + std::to_string(seed));
  }
}

TEST(ChipSvEquivalence, WithTheFlawsOnTooTheyRunClockForClockEqual) {
  HwConfig cfg = chip_random_config("mini");
  cfg.flaws.sram2clk = cfg.flaws.neighbor_conv = cfg.flaws.mm_wide_a = true;
  const TaskStream s = random_chip_stream(cfg, 7);
  expect_equal_runs(cfg, s, random_chip_memory(cfg, s, 7), "seed 7, flaws on");
}

TEST(ChipSvEquivalence, AMappedBlockRunsClockForClockEqual) {
  // vectors/mini_chip.net's first convolution under fuse_reuse: its filter parts migrate along the ring of
  // computation QPEs and its output goes to the storage QPEs, across the mesh
  HwConfig cfg;
  apply_preset(cfg, "mini");
  validate(cfg);
  using namespace s2::mapper;
  const ParsedNetwork n = parse_network(load_network(test::source_path("vectors/mini_chip.net")));
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg),
                                           read_split_file(test::source_path("vectors/mini_chip_split.txt")));
  const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
  const BlockStreams bs = distribute(n.blocks[0], split.blocks[0], Strategy::FuseReuse, cfg, where[0]);
  ASSERT_EQ(bs.streams.size(), 1u);
  const std::vector<std::uint8_t> image = block_dram_image(n.blocks[0], split.blocks[0], bs, cfg, 1);
  expect_equal_runs(cfg, bs.streams[0], stage_block_memory(bs, cfg, image), n.blocks[0].name() + " fuse_reuse");
}
