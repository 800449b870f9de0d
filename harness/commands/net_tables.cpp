#include "harness/commands/net_tables.h"

#include <algorithm>
#include <cmath>

#include <sys/resource.h>

#include <fmt/format.h>

#include "harness/commands/net_records.h"
#include "harness/commands/published_figures.h"
#include "harness/commands/regress.h"
#include "model/pe/arm_ops.h"

namespace s2 {

namespace {

bool target_is_chip(const RunNetRequest& req) { return req.target == "s2"; }

std::string system_of(const RunNetRequest& req, const HwConfig& cfg) {
  if (!target_is_chip(req)) return "QPE-DRAM";
  return fmt::format("the SpiNNaker2 chip '{}' ({} QPEs with PEs in a {}x{} mesh, {} DRAMs)", cfg.chip.name,
                     cfg.chip.qpes() - static_cast<int>(cfg.chip.routers_without_pes.size()), cfg.chip.mesh_cols,
                     cfg.chip.mesh_rows, cfg.chip.drams.size());
}

// A Table 5.10 category's cell beside the thesis's figure, counted into the tally.
std::string category_cell(const std::string& cat, std::uint64_t v, std::uint64_t thesis, const NetTargets& targets,
                          CategoryTally& tally) {
  if (thesis == 0) {
    if (cat != "sum") {
      ++tally.cells;
      tally.within += v == 0;
    }
    return v == 0 ? " (0 as thesis)" : " (thesis 0)";
  }
  const double dev = (double(v) - double(thesis)) / double(thesis);
  if (cat == "sum") {
    tally.sum_within = std::abs(dev) <= targets.thesis_sum_deviation;
  } else {
    ++tally.cells;
    tally.within += std::abs(dev) <= targets.thesis_category_deviation;
  }
  return " (" + pct(dev) + ")";
}

}  // namespace

std::string pct(double v) { return fmt::format("{:+.1f}%", 100.0 * v); }

NetReport::NetReport(const RunNetRequest& req_, const mapper::ParsedNetwork& n_, const HwConfig& cfg_, bool model_, bool rtl_)
    : req(req_), n(n_), cfg(cfg_), model(model_), rtl(rtl_), thesis_net(thesis_network(n_)),
      // the thesis's tables are for the 16x4 MAC array (Tables 5.11/5.12, the other arrays, are withheld) and,
      // on the chip, for the prototype
      thesis_mac(cfg_.mac_shape() == "16x4" && (!target_is_chip(req_) || cfg_.chip.name == "prototype")),
      table(thesis_table(thesis_net, req_.target)), system(system_of(req_, cfg_)) {}

std::optional<std::uint64_t> NetReport::published_clocks(const std::string& operation, const std::string& strategy) const {
  if (!thesis_mac) return std::nullopt;
  return thesis_mapping_clocks(thesis_net, req.target, operation, strategy);
}

std::optional<std::uint64_t> NetReport::thesis_clocks(const std::string& operation, const std::string& strategy) const {
  if (!core_clocks) return std::nullopt;
  return published_clocks(operation, strategy);
}

std::string workers_assumption(const mapper::ParsedNetwork& n) {
  // a layer's own worker count (workers=N) says how many PEs, not which
  if (std::none_of(n.blocks.begin(), n.blocks.end(), [](const mapper::OperationBlock& b) { return b.workers > 0; })) return "";
  return "assumption: a layer with a worker count (workers=N) runs on the PEs of the QPEs nearest a DRAM, in QPE order, each "
         "loading from its nearest DRAM (which PEs the OctopuScheduler paper used is not published)";
}

void print_head(const NetReport& rep, const mapper::Network& net, const std::vector<std::string>& input_notes,
                const std::vector<mapper::SplitChoice>& chosen, std::ostream& out) {
  const HwConfig& cfg = rep.cfg;
  const RunNetRequest& req = rep.req;
  out << fmt::format("{} on {}, backend {}, config hash {}\n", rep.n.name, rep.system, req.backend, config_hash(cfg));
  if (rep.core_clocks)
    out << "clocks: PE clocks at " << cfg.pe_clock_mhz << " MHz from the host's start to the host hearing the last PE; "
           "'ARM free' takes the element-wise operations as instant (as the thesis's Tables 5.5-5.8), 'ARM timed' "
           "charges "
        << arm_clocks_source(cfg) << " (model only); the RTL runs ARM free\n";
  else
    out << "clocks: PE clocks at " << cfg.pe_clock_mhz << " MHz from the host's start to the host hearing the last PE; "
           "every block runs once, 'ARM timed' (the element-wise operations charged "
        << arm_clocks_source(cfg)
        << ", as on the chip), "
           "the RTL too, and the two are compared; 'ARM free' (the thesis's Tables 5.5-5.8 convention) is not run: "
           "--core-clocks runs it as well\n";
  for (const std::string& a : cfg.chip.assumptions) out << "assumption (preset " << cfg.chip.name << "): " << a << "\n";
  if (const std::string w = workers_assumption(rep.n); !w.empty()) out << w << "\n";
  for (const std::string& note : net.notes) out << "import: " << note << "\n";
  for (const std::string& note : input_notes) out << "note: " << note << "\n";
  const bool biased = std::any_of(rep.n.blocks.begin(), rep.n.blocks.end(),
                                  [](const mapper::OperationBlock& b) { return b.core_op().bias != nullptr; });
  if (biased && cfg.arm_clock_model == "table5.9")
    out << "assumption: a layer's bias is added by the ARM in its first pass over the int32 sums, "
        << cfg.arm.bias_add_per_pixel << " clocks per pixel more (arm_clocks.bias_add_per_pixel; Table 5.9 has no bias)\n";
  if (!chosen.empty()) {
    out << "split: " << chosen.size() << " blocks as " << (req.split_file.empty() ? req.mapping_file : req.split_file) << " chooses (";
    for (std::size_t i = 0; i < chosen.size(); ++i) out << (i ? ", " : "") << chosen[i].operation;
    out << "), the others as the splitter finds\n";
  }
  if (req.schedule == "overlapped")
    out << "schedule: overlapped: in chip fuse_reuse each PE's MLA computes its next run into a second result area while its "
           "ARM finishes the last (a ReLU folded into the quantization's pass) and its DMA stores it (docs/usage.md, \"Overlap\"); "
           "the other strategies, and a block without room for the second area, run as the thesis's\n";
  if (target_is_chip(req) && cfg.mac_shape() != "16x4")
    out << "split: the 16x4 MAC array's scheme on the " << cfg.mac_shape() << " array too (thesis 5.4: \"the same split "
           "scheme\")\n";
  if (target_is_chip(req))
    out << "assumption: each DRAM holds a copy of the block's image and serves the PEs nearest it (model/README.md, "
           "The chip)\n";
  out << "\n";
  const std::string rtl_head = rep.rtl ? fmt::format(" {:>12} {:>8}", "RTL", rep.model ? "delta" : "") : "";
  out << fmt::format("{:<10} {:<15} {:<6} {:<9} {:>12} {:>12} {:>10} {:>10} {:>8}{}  {}\n", "block", "strategy", "reuse",
                     "operation", rep.model ? "ARM free" : "", rep.model ? "ARM timed" : "", rep.model ? "ARM clk" : "",
                     "DRAM ops", "MLA", rtl_head, "data");
}

void print_block_run(const NetReport& rep, const BlockRun& r, std::ostream& out) {
  const std::string strategy = mapper::to_string(r.strategy);
  if (!r.error.empty()) {
    out << fmt::format("{:<10} {:<15} ERROR {}\n", r.block, strategy, r.error);
    return;
  }
  const bool checked = !r.model || r.model->data_checked;
  const std::string problem = block_problem(r), data = !problem.empty() ? problem : checked ? "ok" : "not checked (timing only)";
  for (const StreamRow& row : r.streams) {
    std::string rtl_cells;
    if (rep.rtl) {
      std::string d;
      if (rep.model && row.rtl_cycles) d = pct(cycle_delta(*row.rtl_cycles, row.cycles).value_or(0.0));
      rtl_cells = fmt::format(" {:>12} {:>8}", row.rtl_cycles ? std::to_string(*row.rtl_cycles) : "-", d);
    }
    const auto num = [&](std::uint64_t v) { return rep.model ? std::to_string(v) : std::string(); };
    const std::string arm_free = r.arm_timed && rep.model ? "-" : num(row.cycles);  // no ARM-free run
    out << fmt::format("{:<10} {:<15} {:<6} {:<9} {:>12} {:>12} {:>10} {:>10} {:>8}{}  {}\n", r.block, strategy,
                       mapper::to_string(r.reuse), row.operation, arm_free, num(row.cycles_arm_timed),
                       num(row.arm_cycles), row.dram_ops, row.mla_tasks, rtl_cells, data);
  }
  if (r.model_core)
    out << fmt::format("{:<10} {:<15} time ({}): {}\n", r.block, strategy, r.model_core->cycles,
                       describe_time(time_report(*r.model_core, rep.cfg)));
  else if (const std::string t = model_time_key(r.arm_timed); r.record.contains(t))
    out << fmt::format("{:<10} {:<15} time ({}): {}\n", r.block, strategy, r.model ? r.model->core_cycles : 0,
                       describe_time(r.record.at(t), t));
  if (const std::optional<std::uint64_t> cycles = bounded_cycles(r); r.bound && cycles)
    out << fmt::format("{:<10} {:<15} bound: {} clocks, {} ({})\n", r.block, strategy, *cycles,
                       mapper::describe_bound(*r.bound, *cycles), mapper::bound_terms(*r.bound));
  if (!r.rtl_refused.empty())
    out << fmt::format("{:<10} {:<15} not on the RTL (model only): {}\n", r.block, strategy, r.rtl_refused);
  if (!r.schedule_note.empty()) out << fmt::format("{:<10} {:<15} schedule: {}\n", r.block, strategy, r.schedule_note);
  if (r.model && r.rtl)
    out << fmt::format("{:<10} {:<15} comparator: {} (core operation{}: model {}, RTL {}, delta {}){}\n", r.block, strategy,
                       to_string(r.status), r.arm_timed ? ", ARM timed" : "", r.model->core_cycles, r.rtl->core_cycles,
                       r.delta ? pct(*r.delta) : "-",
                       r.where.empty() ? "" : "; model - RTL by command, all PEs: " + r.where);
}

std::vector<bool> print_strategy_table(const NetReport& rep, const std::vector<BlockRun>& runs, std::ostream& out) {
  out << "\nclocks per operation and strategy (thesis " << rep.table << " layout; core operation, "
      << (rep.core_clocks ? "ARM free" : "ARM timed") << ", " << (rep.model ? "model" : "RTL") << ")\n";
  out << fmt::format("{:<10} {:>24} {:>24} {:>24}  {}\n", "operation", "nofuse_noreuse", "fuse_noreuse", "fuse_reuse",
                     "ranking vs thesis");
  std::map<std::string, std::map<int, const BlockRun*>> by_block;
  std::vector<std::string> order;
  std::vector<bool> ranked;
  for (const BlockRun& r : runs) {
    if (!r.error.empty()) continue;
    if (!by_block.count(r.block)) order.push_back(r.block);
    by_block[r.block][static_cast<int>(r.strategy)] = &r;
  }
  for (const std::string& name : order) {
    std::string line = fmt::format("{:<10}", name);
    std::vector<std::pair<std::uint64_t, int>> model_rank, thesis_rank;
    for (int k = 0; k < 3; ++k) {
      const auto it = by_block[name].find(k);
      const auto thesis = rep.thesis_clocks(name, mapper::to_string(mapper::Strategy(k)));
      std::string cell = "-";
      if (it != by_block[name].end()) {
        const BlockRun& br = *it->second;
        const std::uint64_t m = br.model ? br.model->core_cycles : br.rtl->core_cycles;
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
      ranked.push_back(same);
    }
    out << line << "  " << rank << "\n";
  }
  const bool any_thesis = std::any_of(runs.begin(), runs.end(), [&](const BlockRun& r) {
    return rep.published_clocks(r.block, mapper::to_string(r.strategy)).has_value();
  });
  if (any_thesis && rep.core_clocks) out << "(in brackets: deviation from the thesis's " << rep.table << " clocks, where it gives them)\n";
  else if (any_thesis)
    out << "(ARM timed: the thesis's " << rep.table << " clocks are the core operation's with the ARM free; --core-clocks runs "
           "the blocks ARM free too and compares with them)\n";
  else if (target_is_chip(rep.req) && rep.cfg.chip.name != "prototype")
    out << "(the thesis measured the prototype chip only: no comparison for '" << rep.cfg.chip.name << "')\n";
  else if (!rep.thesis_mac)
    out << "(the thesis's clocks for the " << rep.cfg.mac_shape() << " MAC array, Tables 5.11/5.12, are withheld from this "
           "project: no comparison)\n";
  else out << "(the project holds no thesis clocks for " << rep.n.name << " on this target: VGG-16's Tables 5.5 and 5.7 only)\n";
  return ranked;
}

CategoryTally print_category_table(const NetReport& rep, const std::map<std::string, std::map<std::string, double>>& category_cycles,
                                   const std::vector<std::string>& substituted, std::ostream& out) {
  CategoryTally tally;
  out << "\nclocks per category of operation (thesis Table 5.10 layout; every block run, ARM operations timed at "
      << arm_clocks_source(rep.cfg) << ", model)\n";
  std::string head = fmt::format("{:<10}", "category");
  for (const auto& [st, cats] : category_cycles) head += fmt::format(" {:>24}", st);
  out << head << "\n";
  // the thesis measured the whole network: a run of some of its blocks is not compared
  const bool compared = rep.thesis_mac && rep.req.layers.empty();
  for (const std::string& cat : network_categories()) {
    std::string line = fmt::format("{:<10}", cat);
    for (const auto& [st, cats] : category_cycles) {
      const auto it = cats.find(cat);
      const std::uint64_t v = it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second));
      std::string cell = std::to_string(v);
      const auto thesis = compared ? thesis_network_clocks(rep.thesis_net, cat) : std::nullopt;
      if (st == "fuse_reuse" && thesis) cell += category_cell(cat, v, *thesis, rep.req.policy.net, tally);
      line += fmt::format(" {:>24}", cell);
    }
    out << line << "\n";
  }
  if (compared && thesis_network_clocks(rep.thesis_net, "sum")) {
    out << "(in brackets: deviation from the thesis's Table 5.10, fuse_reuse; the thesis added Table 5.9 estimates to "
           "the simulated MLA clocks, the model runs the ARM operations in the streams and ";
    out << (rep.core_clocks ? "shares what they add among their categories by their ARM clocks)\n"
                            : "shares what they add, taken as the ARM clocks of a fused block's busiest PE's (no ARM-free "
                              "run), among their categories by their ARM clocks)\n");
  }
  for (const std::string& line : substituted) out << "strategy: " << line << "\n";
  return tally;
}

void print_bound_table(const nlohmann::json& operations, std::ostream& out) {
  const std::map<std::string, BoundSum> sums = bound_sums(operations);
  if (sums.empty()) return;
  out << "\nthe chip's limits (each block's lower bound from its work alone, the largest of its MACs, DRAM, links and ARM "
         "terms: docs/usage.md, \"The chip's limits\"; clocks ARM timed)\n";
  out << fmt::format("{:<15} {:>7} {:>14} {:>14} {:>7}  {}\n", "strategy", "blocks", "clocks", "bounds", "ratio", "blocks bound by");
  for (const auto& [st, s] : sums) {
    std::string by;
    for (const auto& [term, n] : s.bound_by) by += (by.empty() ? "" : ", ") + term + " " + std::to_string(n);
    out << fmt::format("{:<15} {:>7} {:>14} {:>14} {:>7}  {}\n", st, s.blocks, s.block_cycles, s.bound_cycles,
                       s.bound_cycles ? fmt::format("{:.2f}x", double(s.block_cycles) / double(s.bound_cycles)) : "-", by);
  }
}

nlohmann::json print_silicon(const NetReport& rep, const std::vector<BlockRun>& runs, std::ostream& out) {
  if (!rep.model || !target_is_chip(rep.req) || rep.cfg.chip.name != "spinnaker2") return nullptr;
  const std::optional<SiliconFigures> paper = silicon_figures(rep.n);
  if (!paper) return nullptr;
  const double mhz = rep.cfg.pe_clock_mhz;
  out << fmt::format("\nagainst silicon (the OctopuScheduler paper's Table II: this MLP on the taped-out SpiNNaker2, batch 1; "
                     "model clocks in microseconds at the preset's assumed {:.0f} MHz PE clock)\n", mhz);
  const bool free_run = rep.core_clocks;  // the blocks' ARM-free runs were made (the RTL's too)
  out << fmt::format("{:<10} {:<10} {:>8} {:>16} {:>16} {:>14} {:>12} {:>14}\n", "block", "paper", "workers", "model ARM free",
                     "model ARM timed", free_run ? "RTL ARM free" : "RTL ARM timed", "silicon", "model/silicon");
  double model_sum = 0, silicon_sum = 0;
  nlohmann::json silicon = nlohmann::json::array();
  for (const SiliconLayer& l : paper->layers) {
    const auto it = std::find_if(runs.begin(), runs.end(), [&](const BlockRun& r) { return r.block == l.block && r.model; });
    if (it == runs.end()) continue;
    const double free_us = double(it->model->block_cycles) / mhz, timed_us = double(it->model->block_cycles_arm_timed) / mhz;
    const std::string time_key = model_time_key(it->arm_timed);
    const nlohmann::json phases = !it->phases.is_null() ? it->phases
                                  : it->record.contains(time_key) ? it->record[time_key].value("phases", nlohmann::json())
                                                                  : nlohmann::json();
    const std::string workers = phases.is_null() ? "-" : std::to_string(phases.value("pes", 0)) + " (" + std::to_string(l.workers) + ")";
    const std::string rtl_us = it->rtl ? fmt::format("{:.1f} us", double(it->rtl->block_cycles) / mhz) : "-";
    const std::string free_cell = it->arm_timed ? std::string("-") : fmt::format("{:.1f} us", free_us);
    out << fmt::format("{:<10} {:<10} {:>8} {:>16} {:>13.1f} us {:>14} {:>9.0f} us {:>14.2f}\n", l.block, l.paper, workers,
                       free_cell, timed_us, rtl_us, l.us, timed_us / l.us);
    model_sum += timed_us;
    silicon_sum += l.us;
    nlohmann::json row = {{"block", l.block}, {"paper_layer", l.paper}, {"silicon_us", l.us}, {"model_us_arm_timed", timed_us}};
    if (!it->arm_timed) row["model_us_arm_free"] = free_us;
    if (it->rtl) row[it->arm_timed ? "rtl_us_arm_timed" : "rtl_us_arm_free"] = double(it->rtl->block_cycles) / mhz;
    if (l.weight_fetch_us && l.mla_us && !phases.is_null()) {
      const double fetch = phases.value("weight_fetch_cycles", 0.0) / mhz, mla = phases.value("mla_cycles", 0.0) / mhz;
      out << fmt::format("{:<10} weight fetch: model {:.1f} us per worker (mean of {}), silicon {:.0f} us on average; MLA: model {:.1f} us "
                         "per worker, silicon {:.0f} us\n",
                         l.block, fetch, phases.value("pes", 0), *l.weight_fetch_us, mla, *l.mla_us);
      row["model_weight_fetch_us"] = fetch;
      row["silicon_weight_fetch_us"] = *l.weight_fetch_us;
      row["model_mla_us"] = mla;
      row["silicon_mla_us"] = *l.mla_us;
    }
    silicon.push_back(row);
  }
  out << fmt::format("the three layers: model {:.1f} us (ARM timed), silicon {:.0f} us ({:.2f}); the whole model on silicon: {:.0f} us\n",
                     model_sum, silicon_sum, silicon_sum > 0 ? model_sum / silicon_sum : 0.0, paper->whole_model_us);
  out << fmt::format("not predicted: setup {:.0f} us, softmax {:.0f} us (on an ARM; this network has none), cleanup {:.0f} us, and the "
                     "scheduler's overhead per layer ({:.0f} us on average by the paper: loading the layer's description from DRAM, "
                     "waking the workers, storing time stamps), which the model has no software for; the paper does not break the "
                     "rest of a layer's time down further than weight fetch and MLA\n",
                     paper->setup_us, paper->softmax_us, paper->cleanup_us, paper->scheduling_us_per_layer);
  return silicon;
}

// --threads 2,1 / --rtl-eval active,all: each other way of simulating the RTL against the run of record's, over
// the block runs that ran both: the same results, and the wall-time ratio (the targets where one
// applies: 2 threads over 1, active QPEs only over every QPE). Returns whether there was any.
template <typename Target>
bool print_rtl_simulation_targets(const NetReport& rep, const std::vector<BlockRun>& runs, Target& target, std::ostream& out) {
  const RunNetRequest& req = rep.req;
  const CheckPolicy& policy = req.policy;
  for (std::size_t k = 0; k < req.rtl_sim_others.size(); ++k) {
    const RtlSimOptions& rec = req.rtl_sim;
    const RtlSimOptions& alt = req.rtl_sim_others[k];
    double rec_wall = 0, alt_wall = 0;
    int n = 0, same = 0;
    for (const BlockRun& r : runs)
      if (r.rtl && r.rtl_simulations.size() > k) {
        ++n;
        same += r.rtl_simulations[k].difference.empty();
        rec_wall += r.rtl->wall_s;
        alt_wall += r.rtl_simulations[k].wall_s;
      }
    if (!n) continue;
    target(same == n, fmt::format("the RTL gives the same results with {} as with {}: {} of {} block runs", alt.describe(),
                                  rec.describe(), same, n));
    const double ratio = rec_wall > 0 ? alt_wall / rec_wall : 0.0;
    const std::string figure = fmt::format("{:.2f}x ({:.1f} s against {:.1f} s, {} block run{})", ratio, rec_wall, alt_wall, n,
                                           n == 1 ? "" : "s");
    const bool same_eval = rec.active_only == alt.active_only, same_threads = rec.resolved_threads() == alt.resolved_threads();
    if (same_eval && rec.resolved_threads() == 2 && alt.resolved_threads() == 1)
      target(ratio >= policy.net.rtl_two_thread_speedup,
             fmt::format("the RTL on 2 threads at least {:g}x as fast as on 1: {}", policy.net.rtl_two_thread_speedup, figure));
    else if (same_threads && rec.active_only && !alt.active_only)
      target(ratio >= policy.net.rtl_active_speedup,
             fmt::format("the RTL evaluating active QPEs only at least {:g}x as fast as every QPE every clock: {}",
                         policy.net.rtl_active_speedup, figure));
    else
      out << fmt::format("  the RTL with {} against {}: {}\n", rec.describe(), alt.describe(), figure);
  }
  return !req.rtl_sim_others.empty();
}

Speeds speeds(const std::vector<BlockRun>& runs) {
  Speeds s;
  for (const BlockRun& r : runs) {
    if (r.rtl) {
      s.rtl_wall += r.rtl->wall_s;
      s.rtl_qpe_clocks_evaluated += r.rtl->qpe_clocks_evaluated;
      s.rtl_qpe_clocks_simulated += r.rtl->qpe_clocks_simulated;
      s.rtl_simulated += double(r.rtl->simulated_cycles);
    }
    if (!r.model) continue;
    s.model_wall += r.model->wall_s;
    s.simulated += double(r.model->simulated_cycles);
  }
  return s;
}

void print_targets(const NetReport& rep, const std::vector<BlockRun>& runs, const std::vector<bool>& ranked,
                   const CategoryTally& categories, const Speeds& speed, double wall_s,
                   const std::vector<std::string>& skipped, std::ostream& out) {
  const CheckPolicy& policy = rep.req.policy;
  int thesis_cells = 0, thesis_within = 0, compared = 0, compared_ok = 0;
  std::vector<std::string> compared_ops, failed_ops;  // operations compared; those with a run not passing
  for (const BlockRun& r : runs) {
    if (!r.error.empty()) continue;
    const BackendRun& main_run = r.model ? *r.model : *r.rtl;
    if (const auto thesis = rep.thesis_clocks(r.block, mapper::to_string(r.strategy))) {
      ++thesis_cells;
      thesis_within += std::abs(double(main_run.core_cycles) - double(*thesis)) <= policy.net.thesis_block_deviation * double(*thesis);
    }
    if (r.model && r.rtl) {
      ++compared;
      compared_ok += r.status == Status::Pass;
      if (std::find(compared_ops.begin(), compared_ops.end(), r.block) == compared_ops.end()) compared_ops.push_back(r.block);
      if (r.status != Status::Pass) failed_ops.push_back(r.block);
    }
  }
  // the activity counts: each backend's against its block's floor, model against RTL (check_block_activity)
  int floored = 0, floors_held = 0, counts_compared = 0, counts_within = 0, bounded = 0, bounds_held = 0;
  std::optional<double> worst_event, worst_clock;
  std::string worst_event_count;
  for (const BlockRun& r : runs) {
    if (!r.error.empty()) continue;
    if (r.bound && bounded_cycles(r)) {
      ++bounded;
      bounds_held += std::none_of(r.activity_findings.begin(), r.activity_findings.end(),
                                  [](const std::string& f) { return f.find(kBelowBound) != std::string::npos; });
    }
    ++floored;
    floors_held += std::none_of(r.activity_findings.begin(), r.activity_findings.end(),
                                [](const std::string& f) { return f.find(kBelowBlockFloor) != std::string::npos; });
    if (r.activity_delta.counts.empty()) continue;
    ++counts_compared;
    counts_within += !r.activity_delta.deviates();
    std::string which;
    if (const auto w = r.activity_delta.worst(&which, false); w && (!worst_event || *w > *worst_event)) worst_event = w, worst_event_count = which;
    if (const auto w = r.activity_delta.worst(nullptr, true); w && (!worst_clock || *w > *worst_clock)) worst_clock = w;
  }
  const int ranked_same = static_cast<int>(std::count(ranked.begin(), ranked.end(), true));
  out << "\ntargets (measured by this run):\n";
  auto target = [&](bool met, const std::string& what) { out << fmt::format("  [{}] {}\n", met ? "met " : "MISS", what); };
  if (thesis_cells)
    target(thesis_within == thesis_cells, fmt::format("{} within {:g}% of the thesis's {} clocks: {} of {} operation-strategy cells",
                                                      rep.model ? "model" : "RTL", 100 * policy.net.thesis_block_deviation,
                                                      rep.table, thesis_within, thesis_cells));
  if (!ranked.empty())
    target(ranked_same == static_cast<int>(ranked.size()),
           fmt::format("strategies rank as in the thesis: {} of {} operations (among the strategies run)", ranked_same, ranked.size()));
  if (compared) {
    std::string ops;
    for (const std::string& o : compared_ops)
      if (std::find(failed_ops.begin(), failed_ops.end(), o) == failed_ops.end()) ops += (ops.empty() ? "" : ", ") + o;
    target(compared_ok == compared, fmt::format("model within {:g}% of the RTL and bit-exact: {} of {} operation-strategy runs "
                                                "(operations passing on every strategy run: {})",
                                                100 * policy.deviation_bound, compared_ok, compared, ops.empty() ? "none" : ops));
  }
  if (counts_compared)
    target(counts_within == counts_compared,
           fmt::format("model's activity counts within {:g}% of the RTL's (busy and idle clocks within {:g}% of the span): {} of {} "
                       "block runs ({}; worst clock count {})",
                       100 * policy.activity_deviation_bound, 100 * policy.deviation_bound, counts_within, counts_compared,
                       !worst_event ? std::string("no event count compared")
                       : *worst_event == 0 ? std::string("every event count equal")
                                           : fmt::format("worst event count {} {:.3f}%", worst_event_count, 100 * *worst_event),
                       worst_clock ? fmt::format("{:.3f}% of the span", 100 * *worst_clock) : "-"));
  if (bounded)
    target(bounds_held == bounded, fmt::format("every block run at or above its bound (the chip's limits): {} of {} block runs",
                                               bounds_held, bounded));
  if (floored)
    target(floors_held == floored, fmt::format("every count at least what its block implies (MACs, weights and input read from DRAM, "
                                               "output written): {} of {} block runs", floors_held, floored));
  if (categories.cells)
    target(categories.within == categories.cells,
           fmt::format("whole network within {:g}% of Table 5.10 per category: {} of {} categories",
                       100 * policy.net.thesis_category_deviation, categories.within, categories.cells));
  if (categories.sum_within)
    target(*categories.sum_within,
           fmt::format("whole network within {:g}% of Table 5.10's sum", 100 * policy.net.thesis_sum_deviation));
  const RunNetRequest& req = rep.req;
  if (req.whole && rep.model && !rep.rtl && req.layers.empty()) {  // (the model alone: with the RTL the wall time is the RTL's)
    const double bound = req.timing_only ? policy.net.whole_timing_only_wall_seconds : policy.net.whole_model_wall_seconds;
    target(wall_s < bound, fmt::format("whole network on the model, {}, in under {:g} s wall: {:.1f} s",
                                       req.timing_only ? "timing only (no data)" : "data checked", bound, wall_s));
  }
  if (req.whole && rep.model && rep.rtl && req.layers.empty()) {  // (this process's wall time: a resumed run's is its rest)
    const double bound = policy.net.whole_both_wall_seconds;
    target(wall_s < bound, fmt::format("whole network on both backends in under {:g} min wall: {:.1f} min", bound / 60, wall_s / 60));
  }
  const bool both_rates = speed.model_rate() > 0 && speed.rtl_rate() > 0;
  if (both_rates && target_is_chip(req))
    target(speed.model_rate() >= policy.net.chip_speed_ratio * speed.rtl_rate(),
           fmt::format("model at least {:g}x the RTL's simulated chip clocks per wall second on these runs: {:.0f}x",
                       policy.net.chip_speed_ratio, speed.model_rate() / speed.rtl_rate()));
  const bool sims = print_rtl_simulation_targets(rep, runs, target, out);
  if (!thesis_cells && ranked.empty() && !compared && !categories.cells && !floored && !(both_rates && target_is_chip(req)) && !sims)
    out << "  none measured: no thesis clocks for these operations, and no RTL run (--backend both)\n";
  for (const std::string& s : skipped) out << "not run: " << s << "\n";
}

void print_speed(const NetReport& rep, const Speeds& speed, std::ostream& out) {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const bool both_rates = speed.model_rate() > 0 && speed.rtl_rate() > 0;
  if (rep.model)
    out << fmt::format("\nmodel speed: {:.0f} simulated PE clocks in {:.1f} s wall inside the model ({:.2e} clocks per "
                       "second; each block's streams run {}, {}); peak memory {:.0f} MB\n",
                       speed.simulated, speed.model_wall, speed.model_rate(),
                       rep.core_clocks ? "ARM free and ARM timed, once where no ARM command tells them apart" : "once, ARM timed",
                       rep.req.timing_only ? "without data (--timing-only)" : "and its data checked", double(usage.ru_maxrss) / 1024.0);
  if (rep.rtl && speed.rtl_wall > 0)
    out << fmt::format("RTL speed: {:.0f} simulated PE clocks in {:.1f} s wall inside the RTL ({:.2e} clocks per second; "
                       "each block's streams run once, {}, and its data checked; {}{}){}\n",
                       speed.rtl_simulated, speed.rtl_wall, speed.rtl_rate(), rep.core_clocks ? "ARM free" : "ARM timed",
                       rtl_sim_as_run(rep.req).describe(),
                       speed.rtl_qpe_clocks_simulated
                           ? fmt::format(": {:.1f}% of the QPEs' clocks evaluated",
                                         100.0 * double(speed.rtl_qpe_clocks_evaluated) / double(speed.rtl_qpe_clocks_simulated))
                           : "",
                       both_rates ? fmt::format("; the model is {:.0f}x as fast", speed.model_rate() / speed.rtl_rate()) : "");
}

}  // namespace s2
