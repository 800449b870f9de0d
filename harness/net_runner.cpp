#include "harness/net_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backend.h"
#include "harness/runner.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"

namespace s2 {

namespace {

struct ThesisRow {
  const char* net;
  const char* target;
  const char* operation;
  std::uint64_t clocks[3];  // nofuse_noreuse, fuse_noreuse, fuse_reuse; 0 = not applicable
};
// Thesis Table 5.5 (QPE-DRAM) and 5.7 (SpiNNaker2), VGG-16: SpiNNaker2Py with the mapper, only the core
// operation simulated, element-wise operations free. Also in vectors/thesis_mapping_clocks.csv.
constexpr ThesisRow kThesisRows[] = {
    {"vgg16", "qpe", "CONV_1", {2294223, 835667, 1065837}},
    {"vgg16", "qpe", "CONV_5", {16207531, 11050716, 9697264}},
    {"vgg16", "qpe", "CONV_9", {12616201, 12417980, 10838832}},
    {"vgg16", "qpe", "CONV_11", {6369574, 6262524, 5419584}},
    {"vgg16", "qpe", "CONV_15", {3261186, 3254902, 2918496}},
    {"vgg16", "qpe", "FC_21", {546718, 532670, 0}},
    {"vgg16", "s2", "CONV_1", {494729, 114249, 119254}},
    {"vgg16", "s2", "CONV_5", {4139243, 3557807, 381753}},
    {"vgg16", "s2", "CONV_9", {2538019, 2437194, 413733}},
    {"vgg16", "s2", "CONV_11", {1409122, 1302970, 263877}},
    {"vgg16", "s2", "CONV_15", {1457186, 1446968, 189908}},
    {"vgg16", "s2", "FC_21", {150355, 132044, 0}},
};

struct StreamRow {
  std::string operation;  // the stream's operation (nofuse) or the block's core operation (fused)
  std::uint64_t cycles = 0, cycles_arm_timed = 0, arm_cycles = 0, dram_ops = 0, mla_tasks = 0;
  bool completed = false;
};

struct BlockRun {
  std::string block;
  mapper::Strategy strategy;
  mapper::Reuse reuse = mapper::Reuse::None;
  std::vector<StreamRow> streams;
  std::uint64_t core_cycles = 0, block_cycles = 0, block_cycles_arm_timed = 0, arm_cycles = 0;
  bool completed = false, data_match = false;
  std::string first_difference;
  double wall_s = 0;
};

BlockRun run_block(const mapper::OperationBlock& b, const mapper::BlockSplit& s, mapper::Strategy strategy,
                   const HwConfig& cfg, StreamBackend& backend, std::uint64_t seed,
                   std::map<std::string, std::vector<std::uint8_t>>& golden_cache) {
  const auto wall0 = std::chrono::steady_clock::now();
  BlockRun r;
  r.block = b.name();
  r.strategy = strategy;
  const mapper::BlockStreams bs = mapper::distribute(b, s, strategy, cfg);
  r.reuse = bs.reuse;
  const std::vector<std::uint8_t> image = mapper::block_dram_image(b, s, bs, cfg, seed);
  std::vector<std::uint8_t> dram = image, timed = image;
  r.completed = true;
  for (const TaskStream& st : bs.streams) {
    StreamRow row;
    row.operation = st.name.substr(0, st.name.find(' '));
    const StreamResult free_arm = backend.run(st, dram, StreamRunOptions{false});
    const StreamResult with_arm = backend.run(st, timed, StreamRunOptions{true});
    row.cycles = free_arm.cycles;
    row.cycles_arm_timed = with_arm.cycles;
    row.arm_cycles = with_arm.arm_cycles;
    row.dram_ops = free_arm.dram_ops;
    row.mla_tasks = free_arm.mla_tasks;
    row.completed = free_arm.completed && with_arm.completed;
    r.completed = r.completed && row.completed;
    r.block_cycles += row.cycles;
    r.block_cycles_arm_timed += row.cycles_arm_timed;
    r.arm_cycles += row.arm_cycles;
    if (row.operation == b.name() || bs.streams.size() == 1) r.core_cycles = row.cycles;
    r.streams.push_back(row);
  }
  // the block's result against the golden kernels (computed once per block and seed)
  std::vector<std::uint8_t>& golden = golden_cache[b.name()];
  if (golden.empty()) golden = mapper::golden_block_output(b, s, bs, cfg, image);
  r.data_match = true;
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const std::uint8_t got = dram[bs.map.output + i], got_timed = timed[bs.map.output + i];
    if (got != golden[i] || got_timed != golden[i]) {
      r.data_match = false;
      r.first_difference = fmt::format("output byte {}: golden {}, got {}", i, static_cast<int>(static_cast<std::int8_t>(golden[i])),
                                       static_cast<int>(static_cast<std::int8_t>(got != golden[i] ? got : got_timed)));
      break;
    }
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

std::string pct(double v) { return fmt::format("{:+.1f}%", 100.0 * v); }

}  // namespace

std::optional<std::uint64_t> thesis_mapping_clocks(const std::string& net, const std::string& target,
                                                   const std::string& operation, const std::string& strategy) {
  const int k = static_cast<int>(mapper::parse_strategy(strategy));
  for (const ThesisRow& t : kThesisRows)
    if (net == t.net && target == t.target && operation == t.operation && t.clocks[k]) return t.clocks[k];
  return std::nullopt;
}

int run_net(const RunNetRequest& req, std::ostream& out, std::ostream& err) {
  std::vector<mapper::Strategy> strategies;
  mapper::ParsedNetwork n;
  mapper::NetworkSplit split;
  HwConfig cfg;
  try {
    cfg = build_hw_config(req.config_file, req.mac_shape, {});
    const mapper::Target target = mapper::parse_target(req.target);
    if (target != mapper::Target::Qpe)
      throw std::invalid_argument("--target " + req.target + ": run-net distributes for QPE-DRAM (qpe) only so far");
    if (req.backend != "model")
      throw std::invalid_argument("--backend " + req.backend +
                                  ": the RTL side of QPE-DRAM (a DMA per PE and the DRAM port) is not built yet; use --backend model");
    for (const std::string& s : req.strategies) strategies.push_back(mapper::parse_strategy(s));
    if (strategies.empty()) strategies.assign(std::begin(mapper::kAllStrategies), std::end(mapper::kAllStrategies));
    if (!check_writable(req.json_out, err)) return 2;
    n = mapper::parse_network(mapper::load_network(req.net));
    split = mapper::split_network(n, mapper::split_rules(target, cfg));
    for (const std::string& l : req.layers)
      if (!n.find(l)) throw std::invalid_argument("--layers: " + n.name + " has no operation block " + l);
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << e.what() << "\n";
    return 2;
  }

  std::unique_ptr<StreamBackend> backend = make_model_stream_backend(cfg);
  std::map<std::string, std::vector<std::uint8_t>> golden;
  std::vector<BlockRun> runs;
  std::vector<std::string> skipped;
  out << fmt::format("{} on QPE-DRAM, backend model, config hash {}\n", n.name, config_hash(cfg));
  out << "clocks: PE clocks at " << cfg.pe_clock_mhz << " MHz from the host's start to the host hearing the last PE; "
         "'ARM free' takes the element-wise operations as instant (as the thesis's Tables 5.5-5.8), 'ARM timed' "
         "charges Table 5.9's clocks\n"
         "approximate: an MLA task in a stream is timed as if the PEs busy at its start ran it in step, and DMA traffic "
         "does not contend at the router (model/README.md, QPE-DRAM)\n\n";
  out << fmt::format("{:<10} {:<15} {:<6} {:<9} {:>12} {:>12} {:>10} {:>10} {:>8}  {}\n", "block", "strategy", "reuse",
                     "operation", "ARM free", "ARM timed", "ARM clk", "DRAM ops", "MLA", "data");
  bool all_ok = true;
  for (std::size_t i = 0; i < n.blocks.size(); ++i) {
    const mapper::OperationBlock& b = n.blocks[i];
    if (!req.layers.empty() && std::find(req.layers.begin(), req.layers.end(), b.name()) == req.layers.end()) continue;
    for (mapper::Strategy st : strategies) {
      std::string why;
      if (!mapper::distributable(b, split.blocks[i], st, &why)) {
        skipped.push_back(fmt::format("{} {}: {}", b.name(), mapper::to_string(st), why));
        continue;
      }
      BlockRun r;
      try {
        r = run_block(b, split.blocks[i], st, cfg, *backend, req.seed, golden);
      } catch (const std::exception& e) {
        err << "s2cosim run-net: " << b.name() << " " << mapper::to_string(st) << ": " << e.what() << "\n";
        all_ok = false;
        continue;
      }
      all_ok = all_ok && r.completed && r.data_match;
      for (const StreamRow& row : r.streams)
        out << fmt::format("{:<10} {:<15} {:<6} {:<9} {:>12} {:>12} {:>10} {:>10} {:>8}  {}\n", r.block,
                           mapper::to_string(r.strategy), mapper::to_string(r.reuse), row.operation, row.cycles,
                           row.cycles_arm_timed, row.arm_cycles, row.dram_ops, row.mla_tasks,
                           !row.completed ? "incomplete" : r.data_match ? "ok" : "MISMATCH " + r.first_difference);
      out.flush();
      runs.push_back(std::move(r));
    }
  }

  // thesis Table 5.5 layout: the core operation's clocks per strategy
  out << "\nclocks per operation and strategy (thesis Table 5.5 layout; core operation, ARM free)\n";
  out << fmt::format("{:<10} {:>24} {:>24} {:>24}  {}\n", "operation", "nofuse_noreuse", "fuse_noreuse", "fuse_reuse",
                     "ranking vs thesis");
  std::map<std::string, std::map<int, const BlockRun*>> by_block;
  std::vector<std::string> order;
  for (const BlockRun& r : runs) {
    if (!by_block.count(r.block)) order.push_back(r.block);
    by_block[r.block][static_cast<int>(r.strategy)] = &r;
  }
  for (const std::string& name : order) {
    std::string line = fmt::format("{:<10}", name);
    std::vector<std::pair<std::uint64_t, int>> model_rank, thesis_rank;
    for (int k = 0; k < 3; ++k) {
      const auto it = by_block[name].find(k);
      const auto thesis = thesis_mapping_clocks(n.name, req.target, name, mapper::to_string(mapper::Strategy(k)));
      std::string cell = "-";
      if (it != by_block[name].end()) {
        const std::uint64_t m = it->second->core_cycles;
        cell = std::to_string(m);
        if (thesis) {
          cell += " (" + pct((double(m) - double(*thesis)) / double(*thesis)) + ")";
          model_rank.push_back({m, k});
          thesis_rank.push_back({*thesis, k});
        }
      }
      line += fmt::format(" {:>24}", cell);
    }
    std::string rank = "-";
    if (model_rank.size() >= 2) {
      std::sort(model_rank.begin(), model_rank.end());
      std::sort(thesis_rank.begin(), thesis_rank.end());
      bool same = true;
      for (std::size_t k = 0; k < model_rank.size(); ++k) same = same && model_rank[k].second == thesis_rank[k].second;
      rank = same ? "same" : "DIFFERS";
    }
    out << line << "  " << rank << "\n";
  }
  out << "(in brackets: deviation from the thesis's Table 5.5 clocks, where it gives them)\n";
  for (const std::string& s : skipped) out << "not run: " << s << "\n";

  if (!req.json_out.empty()) {
    nlohmann::json j;
    j["network"] = n.name;
    j["target"] = req.target;
    j["backend"] = req.backend;
    j["seed"] = req.seed;
    j["config"] = to_json(cfg);
    j["config_hash"] = config_hash(cfg);
    j["operations"] = nlohmann::json::array();
    for (const BlockRun& r : runs) {
      nlohmann::json o;
      o["name"] = r.block;
      o["strategy"] = mapper::to_string(r.strategy);
      o["reuse"] = mapper::to_string(r.reuse);
      o["model_cycles"] = r.core_cycles;
      o["model_block_cycles"] = r.block_cycles;
      o["model_block_cycles_arm_timed"] = r.block_cycles_arm_timed;
      o["arm_cycles"] = r.arm_cycles;
      o["completed"] = r.completed;
      o["data_match"] = r.data_match;
      if (!r.first_difference.empty()) o["first_difference"] = r.first_difference;
      const auto thesis = thesis_mapping_clocks(n.name, req.target, r.block, mapper::to_string(r.strategy));
      if (thesis) {
        o["thesis_cycles"] = *thesis;
        o["thesis_deviation"] = (double(r.core_cycles) - double(*thesis)) / double(*thesis);
      }
      o["streams"] = nlohmann::json::array();
      for (const StreamRow& row : r.streams)
        o["streams"].push_back({{"operation", row.operation},
                                {"model_cycles", row.cycles},
                                {"model_cycles_arm_timed", row.cycles_arm_timed},
                                {"arm_cycles", row.arm_cycles},
                                {"dram_ops", row.dram_ops},
                                {"mla_tasks", row.mla_tasks}});
      o["model_wall_s"] = r.wall_s;
      j["operations"].push_back(o);
    }
    std::ofstream f(req.json_out);
    f << j.dump(2) << "\n";
    if (!f) {
      err << "s2cosim run-net: cannot write " << req.json_out << "\n";
      return 2;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace s2
