#include "map_report.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/outputs/output_files.h"
#include "harness/commands/regress_report.h"
#include "harness/commands/net_records.h"
#include "harness/commands/published_figures.h"
#include "harness/commands/regress.h"
#include "mapper/block_bound.h"
#include "mapper/distributor.h"
#include "mapper/split_check.h"
#include "model/pe/arm_ops.h"
#include "model/task_stream.h"

namespace s2 {

namespace {

// pooling and element-wise blocks run on the ARM: no MAC utilisation
bool on_arm(mapper::BlockKind k) { return k == mapper::BlockKind::Pooling || k == mapper::BlockKind::Elementwise; }


std::string bytes_cell(std::uint64_t aligned, std::uint64_t raw) {
  if (aligned == raw) return fmt::format("{}", aligned);
  return fmt::format("{} [{} ({:.2f}%)]", aligned, raw, aligned ? 100.0 * double(raw) / double(aligned) : 0.0);
}

std::string ops_of(const mapper::OperationBlock& b) {
  std::string s;
  for (const auto& o : b.ops) s += (s.empty() ? "" : " ") + o.name;
  return s;
}

}  // namespace

std::string format_split(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& s) {
  std::string t = fmt::format(
      "split of {} for {} (at least {} pieces; SRAM budget {} bytes after alignment{})\n", n.name,
      s.rules.target == mapper::Target::Qpe ? "QPE-DRAM" : "SpiNNaker2", s.rules.min_pieces, s.rules.budget_bytes,
      s.rules.second_filter_buffer ? ", room kept for a second filter buffer" : "");
  t += "sizes in bytes: aligned (equations 2.5/2.6) [before alignment (share)]; MAC = equation 5.3, SRAM = equation 5.2\n\n";
  t += fmt::format("{:<11} {:<14} {:<14} {:<11} {:<9} {:>7}  {:>5}  {:>5}  {}\n", "operation", "W parts", "H parts",
                   "C parts", "D parts", "pieces", "MAC", "SRAM", "block");
  for (std::size_t i = 0; i < s.blocks.size(); ++i) {
    const mapper::BlockSplit& b = s.blocks[i];
    const bool mm = b.kind == mapper::BlockKind::MatMul;
    t += fmt::format("{:<11} {:<14} {:<14} {:<11} {:<9} {:>7}  {:>5}  {:>5.2f}  {}\n", b.name, b.w.to_string(),
                     b.h.to_string(), mm ? "-" : b.c.to_string(), mm ? "-" : b.d.to_string(), b.pieces,
                     on_arm(b.kind) ? "ARM" : fmt::format("{:.2f}", b.mac_utilization),
                     b.sram_utilization_max, ops_of(n.blocks[i]));
  }
  t += "\npieces by shape (as thesis Table G.2)\n";
  t += fmt::format("{:<11} {:>6}  {:<30} {:<26} {:<22} {:<24} {:>5} {:>5}\n", "operation", "count", "piece",
                   "input", "weight", "output", "MAC", "SRAM");
  std::uint64_t pieces = 0, shapes = 0, fitting = 0, largest = 0;
  double worst_sram = 0, min_mac = 1;
  for (const mapper::BlockSplit& b : s.blocks) {
    pieces += b.pieces;
    worst_sram = std::max(worst_sram, b.sram_utilization_max);
    if (!on_arm(b.kind)) min_mac = std::min(min_mac, b.mac_utilization);
    for (const mapper::PieceGroup& g : b.groups) {
      // checked here, not assumed from the splitter: the aligned piece (and a second filter buffer) fits
      const std::uint64_t need = mapper::piece_footprint_bytes(g.aligned, b.kind, s.rules);
      ++shapes;
      fitting += need <= s.rules.budget_bytes;
      largest = std::max(largest, need);
      const bool mm = b.kind == mapper::BlockKind::MatMul;
      // MM: the input is operand A (the vector), the weight operand B
      const std::uint64_t in_a = mm ? g.aligned.operand_a_bytes : g.aligned.operand_b_bytes;
      const std::uint64_t in_r = mm ? g.raw.operand_a_bytes : g.raw.operand_b_bytes;
      const std::uint64_t w_a = mm ? g.aligned.operand_b_bytes : g.aligned.operand_a_bytes;
      const std::uint64_t w_r = mm ? g.raw.operand_b_bytes : g.raw.operand_a_bytes;
      t += fmt::format("{:<11} {:>6}  {:<30} {:<26} {:<22} {:<24} {:>5} {:>5.2f}\n", b.name, g.count, g.shape,
                       bytes_cell(in_a, in_r), w_a ? bytes_cell(w_a, w_r) : "-",
                       bytes_cell(g.aligned.result_bytes, g.raw.result_bytes),
                       on_arm(b.kind) ? "ARM" : fmt::format("{:.2f}", g.mac_utilization),
                       g.sram_utilization);
    }
  }
  t += fmt::format("\n{} blocks, {} pieces; {} of {} piece shapes fit the {}-byte budget after alignment (largest "
                   "{} bytes); largest SRAM share before alignment {:.2f}; lowest MAC utilisation {:.2f}\n",
                   s.blocks.size(), pieces, fitting, shapes, s.rules.budget_bytes, largest, worst_sram, min_mac);
  // the split targets, as far as the thesis gives figures for this network and target
  t += "\ntargets (measured by this split):\n";
  t += fmt::format("  [{}] every split piece fits {} bytes after alignment: {} of {} piece shapes\n",
                   fitting == shapes ? "met " : "MISS", s.rules.budget_bytes, fitting, shapes);
  int with_thesis = 0, at_least = 0;
  std::string below;
  const std::string thesis_net = thesis_network(n);  // the thesis's figures go by the network's layers
  for (const mapper::BlockSplit& b : s.blocks) {
    const auto thesis = thesis_mac_utilization(thesis_net, mapper::to_string(s.rules.target), b.name);
    if (!thesis) continue;
    ++with_thesis;
    // the thesis prints two decimals (0.88 for 28/32)
    if (b.mac_utilization + 0.005 >= *thesis) ++at_least;
    else below += fmt::format(" {} {:.2f} < {:.2f}", b.name, b.mac_utilization, *thesis);
  }
  if (with_thesis)
    t += fmt::format("  [{}] MAC utilisation at least thesis Table G.2's: {} of {} operations{}\n",
                     at_least == with_thesis ? "met " : "MISS", at_least, with_thesis, below.empty() ? "" : ":" + below);
  else
    t += "  (the project holds no thesis MAC utilisation for " + n.name + " on this target: VGG-16's Table G.2 only)\n";
  return t;
}

std::string format_bounds(const mapper::ParsedNetwork& n, const HwConfig& cfg) {
  std::string t = fmt::format("\nthe chip's limits on '{}' (a lower bound per block from its work alone, PE clocks: no mapping that runs the "
                              "network block by block beats it; docs/usage.md, \"The chip's limits\")\n", cfg.chip.name);
  t += fmt::format("{:<11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6}  {:<8} {}\n", "operation", "bound", "MACs", "DRAM", "links", "ARM",
                   "host", "bound by", "kept in the storage QPEs");
  std::uint64_t sum = 0;
  for (const mapper::OperationBlock& b : n.blocks) {
    const mapper::BlockBound bound = mapper::block_bound(b, mapper::block_ends(n, b), cfg);
    sum += bound.cycles();
    std::string kept;
    for (const auto& [in, what] : {std::pair{bound.input_in_storage, "input"}, std::pair{bound.second_map_in_storage, "second map"},
                                   std::pair{bound.output_in_storage, "output"}})
      if (in) kept += (kept.empty() ? "" : ", ") + std::string(what);
    t += fmt::format("{:<11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6}  {:<8} {}\n", b.name(), bound.cycles(), bound.macs_cycles,
                     bound.dram_cycles, bound.links_cycles, bound.arm_cycles, bound.host_cycles, mapper::to_string(bound.bound_by()),
                     kept.empty() ? "-" : kept);
  }
  t += fmt::format("sum of the blocks' bounds: {} clocks ({} blocks; the ARM term at {})\n", sum, n.blocks.size(), arm_clocks_source(cfg));
  return t;
}

std::string split_json(const mapper::ParsedNetwork& n, const mapper::NetworkSplit& s, const HwConfig& cfg) {
  nlohmann::json j;
  j["tool"] = "s2cosim";
  j["version"] = tool_version();
  j["network"] = n.name;
  j["target"] = mapper::to_string(s.rules.target);
  j["min_pieces"] = s.rules.min_pieces;
  j["sram_budget_bytes"] = s.rules.budget_bytes;
  j["second_filter_buffer"] = s.rules.second_filter_buffer;
  nlohmann::json ops = nlohmann::json::array();
  for (std::size_t i = 0; i < s.blocks.size(); ++i) {
    const mapper::BlockSplit& b = s.blocks[i];
    const mapper::OperationBlock& blk = n.blocks[i];
    nlohmann::json o;
    o["name"] = b.name;
    o["block"] = mapper::to_string(b.kind);
    nlohmann::json names = nlohmann::json::array();
    for (const auto& op : blk.ops) names.push_back(op.name);
    o["block_operations"] = names;
    o["inputs"] = blk.inputs;
    o["pieces"] = b.pieces;
    o["mac_utilization"] = on_arm(b.kind) ? nlohmann::json(nullptr) : nlohmann::json(b.mac_utilization);
    o["sram_utilization"] = b.sram_utilization_max;
    o["split"] = {{"w", b.w.sizes}, {"h", b.h.sizes}, {"c", b.c.sizes}, {"d", b.d.sizes}};
    o["aligned_bytes_moved"] = b.aligned_bytes_moved;
    o["partial_sum_adds"] = b.partial_sum_adds;
    o["bound"] = bound_json(mapper::block_bound(blk, mapper::block_ends(n, blk), cfg), std::nullopt);
    nlohmann::json groups = nlohmann::json::array();
    for (const mapper::PieceGroup& g : b.groups) {
      auto sizes = [](const AlignedSizes& a) {
        return nlohmann::json{{"operand_a_bytes", a.operand_a_bytes}, {"operand_b_bytes", a.operand_b_bytes},
                              {"result_bytes", a.result_bytes}, {"total_bytes", a.total()}};
      };
      groups.push_back({{"count", g.count}, {"shape", g.shape}, {"aligned", sizes(g.aligned)}, {"raw", sizes(g.raw)},
                        {"mac_utilization", g.mac_utilization}, {"sram_utilization", g.sram_utilization}});
    }
    o["piece_groups"] = groups;
    ops.push_back(o);
  }
  j["operations"] = ops;
  j["config"] = to_json(cfg);
  j["config_hash"] = config_hash(cfg);
  return j.dump(2) + "\n";
}

int map_network(const MapRequest& req, std::ostream& out, std::ostream& err) {
  try {
    HwConfig cfg = build_hw_config(req.config_file, req.mac_shape, {});
    const mapper::Target target = mapper::parse_target(req.target);
    mapper::apply_target(cfg, target, req.preset);
    if (!check_paths({{"--json", req.json_out}},
                     {{"--net", req.net}, {"--config", req.config_file}, {"--split", req.split_file}}, err))
      return kExitBadInput;
    const mapper::ParsedNetwork n = mapper::parse_network(mapper::load_network(req.net));
    const std::vector<mapper::SplitChoice> chosen = req.split_file.empty() ? std::vector<mapper::SplitChoice>{}
                                                                           : mapper::read_split_file(req.split_file);
    const mapper::NetworkSplit s = mapper::split_network(n, mapper::split_rules(target, cfg), chosen);
    out << format_split(n, s) << format_bounds(n, cfg);
    if (!chosen.empty()) out << "split: " << chosen.size() << " blocks as " << req.split_file << " chooses, the others searched\n";
    out << "hardware: " << cfg.mac_shape() << " MAC array, config hash " << config_hash(cfg) << "\n";
    if (!req.json_out.empty() && !write_outputs({{req.json_out, [&] { return split_json(n, s, cfg); }}}, err)) return kExitOutput;
    if (req.verify) {
      out << "\nsplitter validation (thesis 5.1.1): each block's core operation whole and from its pieces, seeded int8 data\n";
      bool all = true;
      for (std::size_t i = 0; i < s.blocks.size(); ++i) {
        const mapper::SplitCheck c = mapper::check_split(n.blocks[i], s.blocks[i], 2026 + i, cfg.accumulator_bits);
        all = all && c.exact;
        out << fmt::format("  {:<11} {:>6} pieces {:>10} results  {}\n", s.blocks[i].name, c.pieces, c.results,
                           c.exact ? "exact" : "DIFFERS: " + c.first_difference);
        out.flush();
      }
      out << (all ? "every block recombines exactly\n" : "some blocks do not recombine exactly\n");
      // what run-net would refuse: every strategy of every block distributed as run-net distributes it on
      // this target (its chip for s2) and its streams checked as the backends check them (a padding
      // larger than the map reads beyond the block's DRAM image, ...)
      const HwConfig& run_cfg = cfg;
      const std::vector<mapper::BlockResidency> residency = mapper::storage_residency(n, s, run_cfg);
      const StreamLimits limits = stream_limits(run_cfg);
      std::size_t refused = 0, runs = 0;
      for (std::size_t i = 0; i < s.blocks.size(); ++i)
        for (mapper::Strategy st : mapper::kAllStrategies) {
          if (!mapper::distributable(n.blocks[i], s.blocks[i], st, run_cfg, nullptr)) continue;
          ++runs;
          try {
            const mapper::BlockStreams bs = mapper::distribute(
                n.blocks[i], s.blocks[i], st, run_cfg, st == mapper::Strategy::FuseReuse ? residency[i] : mapper::BlockResidency{});
            for (const TaskStream& stream : bs.streams) check_stream(stream, limits);
          } catch (const std::exception& e) {
            ++refused;
            out << fmt::format("  {:<11} {:<15} the run would refuse it: {}\n", n.blocks[i].name(), mapper::to_string(st), e.what());
          }
        }
      out << fmt::format("{} of {} block runs would be refused by run-net on {}\n", refused, runs,
                         target == mapper::Target::Qpe ? "QPE-DRAM" : "the chip '" + cfg.chip.name + "'");
      if (!all || refused) return 1;
    }
  } catch (const std::exception& e) {
    err << "s2cosim: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace s2
