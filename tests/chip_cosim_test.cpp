// The chip on both backends end to end: run-net --target s2 --preset mini --backend both on a small
// network's SpiNNaker2 streams in every strategy, data migration between QPEs included (filter parts along
// the ring of computation QPEs, input copies between them, maps kept in and loaded from the storage QPEs):
// every block bit-exact on both backends and the model within 2% of the RTL (run-net's comparators).
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "harness/check/comparators.h"
#include "harness/commands/net_runner.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "model/hw_config.h"
#include "test_support.h"

using namespace s2;
using namespace s2::mapper;

namespace {

HwConfig mini() { return test::preset_config("mini"); }

// run-net --net vectors/mini_chip.net --split vectors/mini_chip_split.txt --target s2 --preset mini
// --backend both --json DIR/json
RunNetRequest mini_chip_run(const test::TempDir& dir, const std::string& json) {
  RunNetRequest req;
  req.net = test::source_path("vectors/mini_chip.net");
  req.split_file = test::source_path("vectors/mini_chip_split.txt");
  req.target = "s2";
  req.preset = "mini";
  req.backend = "both";
  req.json_out = dir.path(json);
  return req;
}

}  // namespace

TEST(ChipCosim, TheMiniChipPresetHasStorageQpesAndARingThatMigratesFilters) {
  const HwConfig cfg = mini();
  const ParsedNetwork n = parse_network(load_network(test::source_path("vectors/mini_chip.net")));
  const NetworkSplit split = split_network(n, split_rules(Target::SpiNNaker2, cfg),
                                           read_split_file(test::source_path("vectors/mini_chip_split.txt")));
  // 8 of the 16 PEs compute under fuse_reuse: the splitter's minimum
  EXPECT_EQ(split_rules(Target::SpiNNaker2, cfg).min_pieces, 8u);
  const std::vector<BlockResidency> where = storage_residency(n, split, cfg);
  ASSERT_EQ(where.size(), 4u);
  EXPECT_TRUE(where[0].output_in_storage);
  EXPECT_TRUE(where[1].input_in_storage && where[1].output_in_storage);
  EXPECT_TRUE(where[2].input_in_storage);
  const BlockStreams bs = distribute(n.blocks[0], split.blocks[0], Strategy::FuseReuse, cfg, where[0]);
  ASSERT_EQ(bs.streams.size(), 1u);
  const std::set<int> storage(bs.output_storage.pes.begin(), bs.output_storage.pes.end());
  int migrations = 0, to_storage = 0;
  for (std::size_t pe = 0; pe < bs.streams[0].pe.size(); ++pe)
    for (const StreamCommand& c : bs.streams[0].pe[pe]) {
      if (c.kind != CommandKind::DmaStore || c.dma.remote.kind != MemoryRef::Kind::Sram) continue;
      const int to = c.dma.remote.index;
      if (storage.count(to)) {
        ++to_storage;
      } else if (c.async) {  // a filter part on to the next ring QPE
        ++migrations;
        EXPECT_NE(to / kPesPerQpe, static_cast<int>(pe) / kPesPerQpe);
      }
    }
  EXPECT_GT(migrations, 0);
  EXPECT_GT(to_storage, 0);
  // CONV_2 loads its input from the storage PEs CONV_1 left it in
  const BlockStreams next = distribute(n.blocks[1], split.blocks[1], Strategy::FuseReuse, cfg, where[1]);
  int from_storage = 0;
  for (const auto& cmds : next.streams[0].pe)
    for (const StreamCommand& c : cmds)
      if (c.kind == CommandKind::DmaLoad && c.dma.remote.kind == MemoryRef::Kind::Sram) {
        EXPECT_TRUE(storage.count(c.dma.remote.index)) << c.dma.remote.index;
        ++from_storage;
      }
  EXPECT_GT(from_storage, 0);
}

TEST(ChipCosim, TheMiniChipRunsASmallNetworkOnBothBackendsBitExactWithin2Percent) {
  const test::TempDir dir;
  const RunNetRequest req = mini_chip_run(dir, "mini_chip.json");
  std::ostringstream out, err;
  const int code = run_net(req, out, err);
  std::cout << out.str();
  EXPECT_EQ(code, 0) << err.str();
  const nlohmann::json j = test::read_json(req.json_out);
  EXPECT_EQ(j["config"]["chip"]["name"], "mini");
  // three convolution blocks in three strategies, the FC in two; each passes every comparator
  ASSERT_EQ(j["operations"].size(), 3u * 3 + 2);
  int reuse = 0;
  for (const auto& o : j["operations"]) {
    const std::string what = o["name"].get<std::string>() + " " + o["strategy"].get<std::string>();
    EXPECT_EQ(o["status"], "pass") << what << ": " << o.dump();
    EXPECT_TRUE(o["rtl_data_match"].get<bool>()) << what;
    EXPECT_TRUE(o["model_data_match"].get<bool>()) << what;
    EXPECT_LE(std::abs(o["delta"].get<double>()), 0.02) << what;
    reuse += o["strategy"] == "fuse_reuse";
  }
  EXPECT_EQ(reuse, 3);
}

namespace {

// A user's RTL adapter that lacks transfers between PEs' SRAMs: it says so for every stream that has one
// (StreamBackend::refusal) and runs the others, here on the model.
class NoPeerTransfers final : public StreamBackend {
 public:
  explicit NoPeerTransfers(const HwConfig& cfg) : inner_(make_model_stream_backend(cfg)) {}
  std::string name() const override { return "rtl"; }
  std::string refusal(const TaskStream& s) const override {
    for (const auto& cmds : s.pe)
      for (const StreamCommand& c : cmds)
        if ((c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore) && c.dma.remote.kind == MemoryRef::Kind::Sram)
          return "this RTL has no transfers between PEs' SRAMs";
    return "";
  }
  using StreamBackend::run;
  StreamResult run(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) override {
    if (!refusal(s).empty()) throw std::logic_error("ran a stream it refused");
    return inner_->run(s, mem, opt);
  }

 private:
  std::unique_ptr<StreamBackend> inner_;
};

}  // namespace

TEST(ChipCosim, ABlockAnAdapterRefusesRunsOnTheModelOnlyAndTheRunSaysWhy) {
  const test::TempDir dir;
  RunNetRequest req = mini_chip_run(dir, "refused.json");
  req.layers = {"CONV_1", "CONV_4"};
  req.rtl_backend = [](const HwConfig& cfg) { return std::make_unique<NoPeerTransfers>(cfg); };
  std::ostringstream out, err;
  EXPECT_EQ(run_net(req, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("CONV_1     fuse_reuse      not on the RTL (model only): this RTL has no transfers between PEs' SRAMs"),
            std::string::npos)
      << out.str();
  const nlohmann::json j = test::read_json(req.json_out);
  ASSERT_EQ(j["operations"].size(), 2u * 3);
  for (const auto& o : j["operations"]) {
    const std::string what = o["name"].get<std::string>() + " " + o["strategy"].get<std::string>();
    if (o["strategy"] == "fuse_reuse") {
      // the model's run stands, its data checked; nothing was compared
      EXPECT_EQ(o["rtl_refused"], "this RTL has no transfers between PEs' SRAMs") << what;
      EXPECT_EQ(o["status"], "pass") << what;  // the model's data checked, nothing compared
      EXPECT_FALSE(o.contains("rtl_cycles")) << what;
      EXPECT_FALSE(o.contains("delta")) << what;
      EXPECT_TRUE(o["data_match"].get<bool>()) << what;
    } else {
      EXPECT_FALSE(o.contains("rtl_refused")) << what;
      EXPECT_EQ(o["status"], "pass") << what;  // the fake is the model: no deviation
      EXPECT_EQ(o["delta"].get<double>(), 0.0) << what;
    }
  }
}

TEST(ChipCosim, TheLocatorNamesTheDramsSramsAndLinksOfTheTransfersThatDiffer) {
  const HwConfig cfg = mini();  // DRAM 0 at QPE(0,0), DRAM 1 at QPE(0,1)
  TaskStream s;
  s.name = "LOCATE";
  s.pe.assign(static_cast<std::size_t>(cfg.chip.qpes() * kPesPerQpe), {});
  const auto transfer = [](CommandKind kind, MemoryRef far) {
    StreamCommand c;
    c.kind = kind;
    c.operation = "MOVE";
    c.dma.remote = far;
    c.dma.row_bytes = 64;
    return c;
  };
  s.pe[0] = {transfer(CommandKind::DmaLoad, {MemoryRef::Kind::Dram, 0})};        // QPE(0,0), no link
  s.pe[4] = {transfer(CommandKind::DmaLoad, {MemoryRef::Kind::Dram, 0})};        // QPE(1,0), one hop west
  s.pe[8] = {transfer(CommandKind::DmaStore, {MemoryRef::Kind::Sram, 5})};       // QPE(0,1) to QPE(1,0)
  StreamResult model, rtl;
  for (StreamResult* r : {&model, &rtl}) {
    r->completed = true;
    r->command_end_cycle.assign(s.pe.size(), {});
    r->pe_end_cycle.assign(s.pe.size(), 0);
  }
  const auto ends = [&](StreamResult& r, int pe, std::uint64_t end) {
    r.command_end_cycle[static_cast<std::size_t>(pe)] = {end};
    r.pe_end_cycle[static_cast<std::size_t>(pe)] = end;
  };
  ends(model, 0, 100), ends(rtl, 0, 100);
  ends(model, 4, 300), ends(rtl, 4, 200);  // the model 100 clocks long on the load over QPE(1,0)-QPE(0,0)
  ends(model, 8, 150), ends(rtl, 8, 180);  // and 30 short on the store over QPE(0,1)-QPE(1,1)-QPE(1,0)
  const std::vector<CommandDeviation> d = place_deviation(s, model, rtl, cfg);
  const auto at = [&](const std::string& where) -> std::pair<std::int64_t, std::uint64_t> {
    for (const CommandDeviation& x : d)
      if (x.what == where) return {x.clocks, x.commands};
    ADD_FAILURE() << "no place " << where;
    return {0, 0};
  };
  EXPECT_EQ(at("DRAM 0"), std::make_pair(std::int64_t{100}, std::uint64_t{2}));
  EXPECT_EQ(at("PE 5's SRAM"), std::make_pair(std::int64_t{-30}, std::uint64_t{1}));
  // the load's request and the store's acknowledgement share QPE(1,0)->QPE(0,0): both are summed there
  EXPECT_EQ(at("QPE(1,0)->QPE(0,0)"), std::make_pair(std::int64_t{70}, std::uint64_t{2}));
  EXPECT_EQ(at("QPE(0,0)->QPE(1,0)"), std::make_pair(std::int64_t{100}, std::uint64_t{1}));  // the load's data
  EXPECT_EQ(at("QPE(0,1)->QPE(1,1)"), std::make_pair(std::int64_t{-30}, std::uint64_t{1}));  // X first
  EXPECT_EQ(at("QPE(1,1)->QPE(1,0)"), std::make_pair(std::int64_t{-30}, std::uint64_t{1}));
  EXPECT_EQ(at("QPE(0,0)->QPE(0,1)"), std::make_pair(std::int64_t{-30}, std::uint64_t{1}));
  EXPECT_EQ(d.size(), 2u + 5);  // 2 far ends, 5 links
  EXPECT_EQ(describe_place_deviation(d, 1), "far ends: DRAM 0 +100 clocks (2); links: QPE(0,0)->QPE(1,0) +100 clocks (1)");
}
