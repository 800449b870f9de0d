// The SpiNNaker2 distributor on the chip model: small networks' blocks in every strategy the chip runs,
// bit-exact against the golden blocks wherever the output went (DRAMs or storage QPEs); the data reuse
// strategy's storage QPEs, data migration and sync groups; presets stamped into the configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "harness/backends/backend.h"
#include "harness/stimulus/block_data.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/hw_config.h"
#include "model/noc/mesh.h"
#include "test_networks.h"

using namespace s2;
using namespace s2::mapper;

namespace {

HwConfig chip() {
  HwConfig cfg;
  apply_preset(cfg, "prototype");
  return cfg;
}

ParsedNetwork parse_text(const char* text) { return parse_network(parse_layer_list(text, "test")); }

// Runs every stream of the block on the chip model; whether its output, gathered from wherever its stores
// went, equals the golden block.
bool runs_exact(const OperationBlock& b, const BlockSplit& s, Strategy strategy, const HwConfig& cfg, BlockStreams* out = nullptr,
                const BlockResidency& where = {}) {
  const BlockStreams bs = distribute(b, s, strategy, cfg, where);
  if (out) *out = bs;
  const std::vector<std::uint8_t> image = block_dram_image(b, s, bs, cfg, 11);
  SystemMemory mem = stage_block_memory(bs, cfg, image);
  auto backend = make_model_stream_backend(cfg);
  for (const TaskStream& st : bs.streams) {
    const StreamResult r = backend->run(st, mem, StreamRunOptions{true});
    EXPECT_TRUE(r.completed) << st.name;
  }
  return gather_block_output(bs, mem) == golden_block_output(b, s, bs, cfg, image);
}

int run_network(const char* text) {
  const HwConfig cfg = chip();
  const ParsedNetwork n = parse_text(text);
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  int ran = 0;
  for (std::size_t i = 0; i < n.blocks.size(); ++i)
    for (Strategy st : kAllStrategies) {
      std::string why;
      if (!distributable(n.blocks[i], split.blocks[i], st, cfg, &why)) continue;
      SCOPED_TRACE(n.blocks[i].name() + " " + to_string(st));
      EXPECT_TRUE(runs_exact(n.blocks[i], split.blocks[i], st, cfg));
      ++ran;
    }
  return ran;
}

}  // namespace

TEST(ChipDistributor, SmallNetworkBlocksAreExactOnTheChipInEveryStrategy) {
  // three convolution blocks in three strategies, the FC in two
  EXPECT_EQ(run_network(test_networks::kSmall), 3 * 3 + 2);
}

TEST(ChipDistributor, StridedResidualAndPoolingBlocksAreExactOnTheChip) {
  EXPECT_GE(run_network(test_networks::kSmallResidual), 8 * 2 + 2 * 2);
}

TEST(ChipDistributor, DataReuseKeepsResultsInTheStorageQpesAndMigratesFiltersThroughTheNoc) {
  const HwConfig cfg = chip();
  // 256 filters in 64 parts (16 groups around the ring of 32 QPEs) over 16 input parts (8 copies each): each
  // PE sees its groups over two steps, the filters migrating between them; the pooled output (1 MB) fits
  // the storage QPEs, and the next convolution, its only reader, loads it from there
  const ParsedNetwork n = parse_text("network r\ninput 130 130 32\nconv 3 3 32 256 pad=valid act=relu\npool max 2 2 stride=2\n"
                                     "conv 3 3 256 64 pad=same act=relu\n");
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
  ASSERT_EQ(where.size(), 2u);
  EXPECT_FALSE(where[0].input_in_storage);
  EXPECT_TRUE(where[0].output_in_storage);
  EXPECT_TRUE(where[1].input_in_storage);
  EXPECT_FALSE(where[1].output_in_storage);  // the last block's output goes to DRAM
  BlockStreams bs, next;
  ASSERT_TRUE(runs_exact(n.blocks[0], split.blocks[0], Strategy::FuseReuse, cfg, &bs, where[0]));
  ASSERT_TRUE(runs_exact(n.blocks[1], split.blocks[1], Strategy::FuseReuse, cfg, &next, where[1]));
  ASSERT_EQ(bs.streams.size(), 1u);
  const TaskStream& st = bs.streams[0];
  // the output stays in the 16 PEs of the four centre QPEs, which run nothing themselves
  std::set<int> storage(bs.output_storage.pes.begin(), bs.output_storage.pes.end());
  const std::set<int> centre{cfg.chip.qpe_index({2, 2}), cfg.chip.qpe_index({3, 2}), cfg.chip.qpe_index({2, 3}),
                             cfg.chip.qpe_index({3, 3})};
  ASSERT_EQ(storage.size(), 16u);
  for (int pe : storage) {
    EXPECT_TRUE(centre.count(pe / kPesPerQpe)) << pe;
    EXPECT_TRUE(st.pe[static_cast<std::size_t>(pe)].empty()) << pe;
  }
  // the computation PEs meet as one group, read operand A from their QPE's PEs (shift 1..3), and push
  // filters to the same PE of a neighbouring QPE
  ASSERT_EQ(st.sync_groups.size(), 1u);
  EXPECT_EQ(st.sync_groups[0].size(), 128u);
  int shifted = 0, migrations = 0, to_storage = 0;
  for (std::size_t pe = 0; pe < st.pe.size(); ++pe)
    for (const StreamCommand& c : st.pe[pe]) {
      shifted += c.kind == CommandKind::Mla && c.mla.a_src_shift > 0;
      if (c.kind != CommandKind::DmaStore || c.dma.remote.kind != MemoryRef::Kind::Sram) continue;
      const int to = c.dma.remote.index;
      if (storage.count(to)) {
        ++to_storage;
        continue;
      }
      if (c.async) {
        ++migrations;
        EXPECT_EQ(to % kPesPerQpe, static_cast<int>(pe) % kPesPerQpe);
        EXPECT_EQ(Mesh(cfg.chip).hops(static_cast<int>(pe) / kPesPerQpe, to / kPesPerQpe), 1);
      }
    }
  EXPECT_GT(shifted, 0);
  EXPECT_GT(migrations, 0);
  EXPECT_GT(to_storage, 0);
  // the next block loads its input from the storage PEs only; its filters still come from DRAM
  int from_storage = 0, input_from_dram = 0;
  for (const auto& cmds : next.streams[0].pe)
    for (const StreamCommand& c : cmds) {
      if (c.kind != CommandKind::DmaLoad) continue;
      if (c.dma.remote.kind == MemoryRef::Kind::Sram) {
        EXPECT_TRUE(storage.count(c.dma.remote.index)) << c.dma.remote.index;
        ++from_storage;
      } else {
        input_from_dram += c.dma.dram_addr >= next.map.input && c.dma.dram_addr < next.map.input + next.map.input_bytes;
      }
    }
  EXPECT_GT(from_storage, 0);
  EXPECT_EQ(input_from_dram, 0);
}

TEST(ChipDistributor, MapsAreKeptInTheStorageQpesOnlyForTheirOneReaderAndWhereTheyFit) {
  const HwConfig cfg = chip();
  // the first map (192 x 192 x 64: bands of 12 rows, 144 KB, per storage PE) does not fit; the second is
  // the residual unit's input and its shortcut (two readers); inside the unit the map has one reader; the
  // last block's result has none
  const ParsedNetwork n = parse_text("network r\ninput 192 192 16\nconv 3 3 16 64 pad=same act=relu\nconv 1 1 64 32 act=relu\n"
                                     "residual begin\nconv 1 1 32 32 act=relu\nconv 1 1 32 32 act=none\nresidual end shortcut=identity\n");
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const std::vector<BlockResidency> w = storage_residency(n, split, cfg);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_FALSE(w[0].output_in_storage);
  EXPECT_FALSE(w[1].output_in_storage);  // read by the unit's first convolution and as its shortcut
  EXPECT_TRUE(w[2].output_in_storage);
  EXPECT_TRUE(w[3].input_in_storage);
  EXPECT_FALSE(w[3].output_in_storage);
  // a chain: the middle blocks read from one end of the storage PEs' SRAM and write to the other
  const ParsedNetwork c = parse_text("network c\ninput 56 56 32\nconv 3 3 32 64 pad=same act=relu\nconv 1 1 64 64 act=relu\n"
                                     "conv 1 1 64 64 act=relu\nconv 1 1 64 32 act=relu\n");
  const NetworkSplit csplit = split_network(c, split_rules(Target::SpiNNaker2, cfg));
  const std::vector<BlockResidency> cw = storage_residency(c, csplit, cfg);
  ASSERT_EQ(cw.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(c.blocks[i].name());
    EXPECT_EQ(cw[i].input_in_storage, i > 0);
    EXPECT_EQ(cw[i].output_in_storage, i < 3);
    if (i > 0) {
      EXPECT_EQ(cw[i].input_base, cw[i - 1].output_base);
    }
    BlockStreams bs;
    EXPECT_TRUE(runs_exact(c.blocks[i], csplit.blocks[i], Strategy::FuseReuse, cfg, &bs, cw[i]));
    if (i == 1 || i == 2) {
      EXPECT_NE(bs.input_storage.base, bs.output_storage.base);
    }
  }
  // on QPE-DRAM, nothing is kept in storage
  const NetworkSplit qsplit = split_network(n, split_rules(Target::Qpe, HwConfig{}));
  for (const BlockResidency& r : storage_residency(n, qsplit, HwConfig{})) EXPECT_FALSE(r.output_in_storage || r.input_in_storage);
}

// A window shorter than the padding (a 5x1 filter, padding 2) has output rows whose input rows are all
// padding: the pieces of them load nothing and the ARM's pad writes their whole window, from DRAM and from
// the storage QPEs (the window's rows once came out negative, and the storage QPEs' split divided by zero).
TEST(ChipDistributor, APieceWhoseInputIsAllPaddingLoadsNothingAndIsExact) {
  const HwConfig cfg = chip();
  const ParsedNetwork n = parse_text("network p\ninput 23 10 1\nconv 5 5 1 4 act=relu\nconv 5 1 4 7 pad=2 act=relu\n");
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  int strategies = 0;
  for (Strategy st : kAllStrategies) {
    if (!distributable(n.blocks[1], split.blocks[1], st, cfg, nullptr)) continue;
    SCOPED_TRACE(to_string(st));
    EXPECT_TRUE(runs_exact(n.blocks[1], split.blocks[1], st, cfg));
    ++strategies;
  }
  EXPECT_EQ(strategies, 3);
  const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
  ASSERT_EQ(where.size(), 2u);
  ASSERT_TRUE(where[1].input_in_storage);
  BlockStreams bs;
  EXPECT_TRUE(runs_exact(n.blocks[1], split.blocks[1], Strategy::FuseReuse, cfg, &bs, where[1]));
  int empty_loads = 0;
  for (const TaskStream& st : bs.streams)
    for (const auto& pe : st.pe)
      for (const StreamCommand& c : pe) empty_loads += c.kind == CommandKind::DmaLoad && c.dma.rows == 0;
  EXPECT_GT(empty_loads, 0) << "the case this test is about: loads of padding rows only";
}

TEST(ChipDistributor, PresetsAreConfigurationAndChangeTheHash) {
  HwConfig qpe, proto;
  apply_preset(proto, "prototype");
  EXPECT_EQ(qpe.chip.qpes(), 1);
  EXPECT_EQ(proto.chip.qpes(), 36);
  EXPECT_EQ(proto.chip.drams.size(), 4u);
  EXPECT_NE(config_hash(qpe), config_hash(proto));
  EXPECT_EQ(to_json(proto)["chip"]["name"], "prototype");
  // the shape round-trips through the configuration's JSON
  const HwConfig back = hw_config_from_json(to_json(proto));
  EXPECT_EQ(config_hash(back), config_hash(proto));
  EXPECT_THROW(apply_preset(proto, "nonesuch"), std::invalid_argument);
  // the taped-out chip: 152 PEs, 2 DRAMs, every unpublished figure listed as an assumption
  HwConfig s2;
  apply_preset(s2, "spinnaker2");
  validate(s2);
  int pes = 0;
  for (int q = 0; q < s2.chip.qpes(); ++q) pes += s2.chip.has_pes(q) ? kPesPerQpe : 0;
  EXPECT_EQ(pes, 152);
  EXPECT_EQ(s2.chip.drams.size(), 2u);
  EXPECT_FALSE(s2.chip.assumptions.empty());
  EXPECT_EQ(to_json(s2)["chip"]["assumptions"].size(), s2.chip.assumptions.size());
  EXPECT_NE(config_hash(s2), config_hash(proto));
  nlohmann::json bad = to_json(proto);
  bad["chip"]["host_agents"] = nlohmann::json::array({nlohmann::json::array({7, 0})});
  try {
    hw_config_from_json(bad);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("chip.host_agents"), std::string::npos) << e.what();
  }
}

TEST(ChipDistributor, TheTapedOutPresetRunsBlocksExactAndRefusesWorkOnItsRouterOnlyPositions) {
  HwConfig cfg;
  apply_preset(cfg, "spinnaker2");
  const ParsedNetwork n = parse_text(test_networks::kSmall);
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  BlockStreams bs;
  ASSERT_TRUE(runs_exact(n.blocks[0], split.blocks[0], Strategy::FuseNoreuse, cfg, &bs));
  // no PE of the router-only positions got work
  for (QpeCoord c : cfg.chip.routers_without_pes)
    for (int z = 0; z < kPesPerQpe; ++z)
      EXPECT_TRUE(bs.streams[0].pe[static_cast<std::size_t>(cfg.chip.qpe_index(c) * kPesPerQpe + z)].empty());
  // the data reuse strategy needs storage QPEs, which the preset does not assume
  std::string why;
  EXPECT_FALSE(distributable(n.blocks[0], split.blocks[0], Strategy::FuseReuse, cfg, &why));
  EXPECT_NE(why.find("no storage QPEs"), std::string::npos) << why;
  // a stream giving a router-only position work is refused before it runs
  TaskStream st;
  st.name = "bad";
  st.pe.assign(static_cast<std::size_t>(cfg.chip.qpes() * kPesPerQpe), {});
  st.dram_bytes = 64;
  StreamCommand c;
  c.kind = CommandKind::Arm;
  c.operation = "ACTI";
  st.pe[static_cast<std::size_t>(cfg.chip.qpe_index({3, 2}) * kPesPerQpe)].push_back(c);
  SystemMemory mem;
  try {
    make_model_stream_backend(cfg)->run(st, mem, StreamRunOptions{});
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has a router but no PEs"), std::string::npos) << e.what();
  }
}

// A layer's worker count (workers=N, the OctopuScheduler paper's 8, 4 and 1 PEs): at least N pieces, only N
// PEs get commands, they are the QPEs nearest a DRAM, and the result is still exact; more workers than the
// chip has, and fuse_reuse with a worker count, are refused.
TEST(ChipDistributor, WorkerCountsLimitTheLayersPesToTheQpesNearestADram) {
  HwConfig cfg;
  apply_preset(cfg, "spinnaker2");
  const ParsedNetwork n = parse_text("input 784 1 1\nfc 784 512 workers=8\nfc 512 256 workers=4\nfc 256 16 act=none workers=1\n");
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const Mesh mesh(cfg.chip);
  const int expected[] = {8, 4, 1};
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    SCOPED_TRACE(n.blocks[i].name());
    EXPECT_EQ(n.blocks[i].workers, expected[i]);
    EXPECT_GE(split.blocks[i].pieces, std::uint64_t(expected[i]));
    BlockStreams bs;
    EXPECT_TRUE(runs_exact(n.blocks[i], split.blocks[i], Strategy::FuseNoreuse, cfg, &bs));
    std::set<int> busy;
    for (const TaskStream& st : bs.streams)
      for (std::size_t pe = 0; pe < st.pe.size(); ++pe)
        if (!st.pe[pe].empty()) busy.insert(static_cast<int>(pe));
    EXPECT_EQ(static_cast<int>(busy.size()), expected[i]);
    // each busy PE's QPE is as near its DRAM as any QPE with PEs can be
    int nearest = 1 << 20;
    for (int q = 0; q < mesh.qpes(); ++q)
      if (cfg.chip.has_pes(q))
        for (int d = 0; d < mesh.drams(); ++d) nearest = std::min(nearest, mesh.hops(q, mesh.dram_router(d, q)));
    for (int pe : busy) {
      int hops = 1 << 20;
      for (int d = 0; d < mesh.drams(); ++d) hops = std::min(hops, mesh.hops(pe / 4, mesh.dram_router(d, pe / 4)));
      EXPECT_EQ(hops, nearest) << "PE " << pe;
    }
  }
  const ParsedNetwork too_many = parse_text("input 64 1 1\nfc 64 16 workers=1000\n");
  EXPECT_THROW(split_network(too_many, split_rules(Target::SpiNNaker2, cfg)), std::invalid_argument);
  const ParsedNetwork conv = parse_text("input 16 16 4\nconv 3 3 4 16 pad=1 workers=4\n");
  const NetworkSplit cs = split_network(conv, split_rules(Target::SpiNNaker2, cfg));
  std::string why;
  EXPECT_FALSE(distributable(conv.blocks[0], cs.blocks[0], Strategy::FuseReuse, cfg, &why));
  EXPECT_NE(why.find("workers="), std::string::npos) << why;
  EXPECT_TRUE(runs_exact(conv.blocks[0], cs.blocks[0], Strategy::FuseNoreuse, cfg));
}

// Schedule::Overlapped in chip fuse_reuse: each PE's MLA tasks go async into two result areas taken in turn
// (the second within the SRAM budget), a WaitMla before the last run's passes, no ReLU pass on the int32 sums
// (QUAN clamps at zero: its `_relu` kernel), no pooling pass (QUAN quantizes each window's largest sum:
// QuantizeMaxPool), and the block stays exact on the chip model, in fewer clocks.
TEST(ChipDistributor, TheOverlappedScheduleComputesTheNextRunWhileTheArmFinishesTheLast) {
  const HwConfig cfg = chip();
  const ParsedNetwork n = parse_text(test_networks::kSmall);
  NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg));
  const OperationBlock& b = n.blocks[1];  // CONV_2 + POOL_3: ReLU, QUAN and a fused pooling
  ASSERT_EQ(b.name(), "CONV_2");
  BlockSplit s = split.blocks[1];
  BlockStreams thesis, overlapped;
  EXPECT_TRUE(runs_exact(b, s, Strategy::FuseReuse, cfg, &thesis));
  s.schedule = Schedule::Overlapped;
  EXPECT_TRUE(runs_exact(b, s, Strategy::FuseReuse, cfg, &overlapped));
  EXPECT_EQ(thesis.schedule, Schedule::Thesis);
  EXPECT_EQ(overlapped.schedule, Schedule::Overlapped);
  EXPECT_EQ(overlapped.schedule_note, "");
  int async_mla = 0, waits = 0, relu32 = 0, quantize_relu = 0, thesis_relu32 = 0, pools = 0, folded_pools = 0, thesis_pools = 0;
  std::set<std::uint32_t> areas;
  for (const auto& cmds : overlapped.streams[0].pe)
    for (const StreamCommand& c : cmds) {
      if (c.kind == CommandKind::Mla) {
        EXPECT_TRUE(c.async);
        async_mla += c.async;
        areas.insert(c.o_base);
      }
      waits += c.kind == CommandKind::WaitMla;
      relu32 += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::Relu32;
      const bool quantizes = c.kind == CommandKind::Arm && (c.arm.kind == ArmOpKind::Quantize || c.arm.kind == ArmOpKind::QuantizeMaxPool);
      quantize_relu += quantizes && c.arm.saturate_low == 0;
      pools += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::MaxPool8;
      folded_pools += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::QuantizeMaxPool;
    }
  for (const auto& cmds : thesis.streams[0].pe)
    for (const StreamCommand& c : cmds) {
      thesis_relu32 += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::Relu32;
      thesis_pools += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::MaxPool8;
    }
  EXPECT_GT(async_mla, 0);
  EXPECT_GT(waits, 0);
  EXPECT_EQ(areas.size(), 2u);
  EXPECT_LE(*areas.rbegin(), static_cast<std::uint32_t>(cfg.sram_mla_budget_bytes));
  EXPECT_GT(thesis_relu32, 0);
  EXPECT_EQ(relu32, 0);
  EXPECT_EQ(quantize_relu, thesis_relu32);
  EXPECT_GT(thesis_pools, 0);
  EXPECT_EQ(pools, 0);
  EXPECT_EQ(folded_pools, thesis_pools);
  auto cycles = [&](const BlockStreams& bs) {
    SystemMemory mem = stage_block_memory(bs, cfg, block_dram_image(b, s, bs, cfg, 11));
    return make_model_stream_backend(cfg)->run(bs.streams[0], mem, StreamRunOptions{true}).cycles;
  };
  EXPECT_LT(cycles(overlapped), cycles(thesis));

  // a residual block's ReLU after the shortcut's addition folds into it: no 8-bit ReLU pass, the addition clamps;
  // and the addition into the quantization's pass
  const ParsedNetwork r = parse_text(test_networks::kSmallResidual);
  NetworkSplit rsplit = split_network(r, split_rules(Target::SpiNNaker2, cfg));
  int residual_blocks = 0;
  for (std::size_t i = 0; i < r.blocks.size(); ++i) {
    if (!find_op(r.blocks[i], PrimitiveKind::ElementwiseAdd) || !distributable(r.blocks[i], rsplit.blocks[i], Strategy::FuseReuse, cfg, nullptr))
      continue;
    ++residual_blocks;
    rsplit.blocks[i].schedule = Schedule::Overlapped;
    BlockStreams rs;
    EXPECT_TRUE(runs_exact(r.blocks[i], rsplit.blocks[i], Strategy::FuseReuse, cfg, &rs)) << r.blocks[i].name();
    int relu8 = 0, add_relu = 0, adds = 0, folded_adds = 0;
    for (const auto& cmds : rs.streams[0].pe)
      for (const StreamCommand& c : cmds) {
        relu8 += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::Relu8;
        adds += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::AddInt8;
        folded_adds += c.kind == CommandKind::Arm && c.arm.kind == ArmOpKind::QuantizeAdd;
        add_relu += c.kind == CommandKind::Arm && (c.arm.kind == ArmOpKind::AddInt8 || c.arm.kind == ArmOpKind::QuantizeAdd) && c.arm.relu;
      }
    EXPECT_EQ(relu8, 0) << r.blocks[i].name();
    EXPECT_GT(add_relu, 0) << r.blocks[i].name();
    // the addition right after QUAN goes into QUAN's pass (QuantizeAdd)
    EXPECT_EQ(adds, 0) << r.blocks[i].name();
    EXPECT_GT(folded_adds, 0) << r.blocks[i].name();
  }
  EXPECT_GT(residual_blocks, 0);

  // without room for the second result area the MLA runs as the thesis's, and the block says why
  HwConfig tight = cfg;
  tight.sram_mla_budget_bytes = 1024;
  BlockStreams serial;
  EXPECT_TRUE(runs_exact(b, s, Strategy::FuseReuse, tight, &serial));
  EXPECT_NE(serial.schedule_note.find("no room for a second result area"), std::string::npos) << serial.schedule_note;
  for (const auto& cmds : serial.streams[0].pe)
    for (const StreamCommand& c : cmds) EXPECT_FALSE(c.kind == CommandKind::Mla && c.async);
}
