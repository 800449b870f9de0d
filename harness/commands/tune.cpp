#include "harness/commands/tune.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/commands/net_block_run.h"
#include "harness/commands/net_records.h"
#include "harness/commands/net_runner.h"
#include "harness/outputs/output_files.h"
#include "harness/outputs/result.h"
#include "harness/session/journal.h"
#include "harness/session/workers.h"
#include "mapper/block_bound.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"
#include "mapper/storage_plan.h"
#include "model/energy_table.h"
#include "model/hw_config.h"

namespace s2 {

namespace {

// One mapping of a block: its split, strategy and schedule.
struct Candidate {
  mapper::BlockSplit split;
  mapper::Strategy strategy = mapper::Strategy::FuseReuse;
  mapper::Schedule schedule = mapper::Schedule::Thesis;
  std::string parts() const {
    return fmt::format("{} {} {} {}", split.w.to_string(), split.h.to_string(), split.c.to_string(), split.d.to_string());
  }
  std::string describe() const {
    return fmt::format("{} {} {}", parts(), mapper::to_string(strategy), mapper::to_string(schedule));
  }
};

struct Judged {
  Candidate c;
  std::uint64_t cycles = 0;
  double energy_pj = 0;
  bool ok = false;        // ran to the end on the model
  bool pruned = false;    // its own bound could not beat the best: not run
  std::string error;
};

// The splits tried for a convolution block: the splitter's first, then output rows, columns and filters per part
// in other counts (balanced, in multiples of a fused pooling's stride; filter parts of a power of two MAC-row
// groups), each checked to fit the SRAM budget (split_block_as), at most `most`: first those whose MAC lanes
// (padding included) spread over as many of the `pes` as they have pieces take the fewest clocks, then the
// fewest pieces. (An order to try them in, not a judgement: the model judges.)
std::vector<mapper::BlockSplit> splits_to_try(const mapper::OperationBlock& b, const mapper::BlockSplit& first,
                                              const mapper::SplitRules& rules, int most, int pes) {
  std::vector<mapper::BlockSplit> found{first};
  const mapper::Operation& conv = b.core_op();
  if (conv.groups != 1 || first.d.count() != 1) return found;  // (the splitter's alone: no fuse_reuse for these)
  const int step = b.fused_pool() ? b.fused_pool()->stride : 1;
  std::set<std::string> seen{fmt::format("{} {} {}", first.w.to_string(), first.h.to_string(), first.c.to_string())};
  std::vector<int> counts{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
  std::vector<int> filters;
  for (int f = rules.mac_rows; f <= conv.out.D; f *= 2) filters.push_back(f);
  std::vector<mapper::BlockSplit> more;
  for (int f : filters)
    for (int nh : counts)
      for (int nw : {1, 2, 4}) {
        mapper::SplitChoice c;
        c.operation = b.name();
        c.source = "tune";
        c.w = mapper::balanced_parts(conv.out.W, nw, step);
        c.h = mapper::balanced_parts(conv.out.H, nh, step);
        for (int at = 0; at < conv.out.D; at += f) c.c.sizes.push_back(std::min(f, conv.out.D - at));
        if (c.w.sizes.empty() || c.h.sizes.empty()) continue;
        if (!seen.insert(fmt::format("{} {} {}", c.w.to_string(), c.h.to_string(), c.c.to_string())).second) continue;
        try {
          more.push_back(mapper::split_block_as(b, rules, c));
        } catch (const std::invalid_argument&) {  // does not fit the SRAM budget
        }
      }
  const auto spread = [&](const mapper::BlockSplit& s) {
    return 1.0 / (std::max(s.mac_utilization, 1e-9) * double(std::min<std::uint64_t>(s.pieces, std::uint64_t(pes))));
  };
  std::sort(more.begin(), more.end(), [&](const mapper::BlockSplit& x, const mapper::BlockSplit& y) {
    return std::pair{spread(x), x.pieces} < std::pair{spread(y), y.pieces};
  });
  for (const mapper::BlockSplit& s : more) {
    if (static_cast<int>(found.size()) >= most) break;
    found.push_back(s);
  }
  return found;
}

// A lower bound on the candidate's clocks: its MAC lanes (padding included: the split's MAC utilisation) over
// the PEs its strategy uses (chip fuse_reuse: the computation QPEs' PEs), or the block's bound, whichever is more.
std::uint64_t candidate_bound(const Candidate& c, const mapper::BlockBound& block, const HwConfig& cfg) {
  if (c.split.mac_utilization <= 0) return block.cycles();
  int pes = 0;
  if (c.strategy == mapper::Strategy::FuseReuse && !cfg.chip.double_qpe_blocks.empty())
    for (const DoubleQpeBlock& db : cfg.chip.double_qpe_blocks) pes += db.qpes() * cfg.pes_per_qpe;
  else
    pes = mapper::chip_pes(cfg);
  const double lanes = double(block.work.mac_ops) / c.split.mac_utilization;
  const auto macs = static_cast<std::uint64_t>(std::ceil(lanes / (double(pes) * cfg.mac_rows * cfg.mac_cols)));
  return std::max(block.cycles(), block.host_cycles + macs);
}

double objective_of(const Judged& j, const std::string& objective) { return objective == "energy" ? j.energy_pj : double(j.cycles); }

// The whole network's Table 5.10 sum on the model (run-net --whole --timing-only), with the mapping file if given.
std::optional<std::uint64_t> whole_sum(const TuneRequest& req, const std::string& mapping, std::ostream& err) {
  RunNetRequest r;
  r.net = req.net, r.target = req.target, r.preset = req.preset, r.config_file = req.config_file, r.mac_shape = req.mac_shape;
  r.whole = r.timing_only = true;
  r.mapping_file = mapping;
  r.json_out = req.out + (mapping.empty() ? ".default.json" : ".tuned.json");
  if (req.jobs > 1) {  // run-net --jobs: its workers get this command line
    r.jobs = req.jobs, r.program = req.program;
    r.command_line = {"run-net", "--net", req.net, "--target", req.target, "--whole", "--timing-only"};
    for (const auto& [opt, value] : {std::pair{"--preset", req.preset}, std::pair{"--config", req.config_file},
                                     std::pair{"--mac", req.mac_shape}, std::pair{"--mapping", mapping}})
      if (!value.empty()) r.command_line.insert(r.command_line.end(), {opt, value});
  }
  std::ostringstream out;
  if (run_net(r, out, err) != 0) return std::nullopt;
  std::ifstream in(r.json_out);
  nlohmann::json j;
  in >> j;
  std::filesystem::remove(r.json_out);
  std::filesystem::remove(r.json_out + ".jsonl");
  std::uint64_t sum = 0;
  for (const auto& [st, cats] : j.at("category_cycles").items()) sum += cats.value("sum", std::uint64_t{0});
  return sum;
}

// A block's candidates, the reference first, and its bound.
struct BlockCandidates {
  std::size_t block = 0;  // in the network
  mapper::BlockBound bound;
  std::vector<Candidate> candidates;
};

// --jobs: the candidates are judged in req.jobs worker processes (tune --shard I/J), given what `journal` holds
// so far (a copy: the journal is this process's, locked); their records are appended to `journal` and `held`.
// A worker that fails loses nothing of the others': what no worker judged is judged here afterwards.
void judge_in_workers(const TuneRequest& req, std::size_t candidates, const nlohmann::ordered_json& header, Journal& journal,
                      std::map<std::string, nlohmann::ordered_json>& held, std::ostream& err) {
  const std::string dir = make_worker_dir();
  std::vector<std::string> args = without_options(req.command_line, {"--jobs", "--json", "--journal", "--shard"});
  if (!held.empty()) {
    std::filesystem::copy_file(journal.path(), dir + "/held.jsonl");
    args.insert(args.end(), {"--journal", dir + "/held.jsonl"});
  }
  const std::vector<WorkerRun> workers = run_workers_with_progress(req.program, args, req.jobs, dir, candidates, held.size(), err);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerRun& w = workers[i];
    std::size_t taken = 0;
    try {
      for (const JournalRecord& r : read_journal_of_run(w.journal, header).records)
        if (held.emplace(r.fingerprint, r.record).second) {
          journal.append(r.record, r.fingerprint);
          ++taken;
        }
    } catch (const std::exception& e) {
      err << "s2cosim tune: worker " << i + 1 << ": " << e.what() << "\n";
    }
    if (w.exit_code != 0)
      err << fmt::format("s2cosim tune: worker {} of {} exited with {} after {} candidates; what it did not judge is judged "
                         "here. Its last lines:\n{}\n", i + 1, req.jobs, w.exit_code, taken, last_lines(w.log, 20));
  }
  remove_worker_dir(dir);
}

}  // namespace

int tune_network(const TuneRequest& req, std::ostream& out, std::ostream& err) {
  try {
    if (req.out.empty()) throw std::invalid_argument("--out: the mapping file to write is needed");
    if (req.objective != "clocks" && req.objective != "energy")
      throw std::invalid_argument("--objective " + req.objective + ": expected clocks or energy");
    const Shard shard = parse_shard(req.shard.empty() ? "1/1" : req.shard);
    const bool worker = !shard.whole();
    if (worker && req.jobs > 1) throw std::invalid_argument("--jobs with --shard: a worker runs in one process");
    if (worker && req.json_out.empty()) throw std::invalid_argument("--shard " + req.shard + ": a worker's journal goes beside --json F (F.jsonl); give --json");
    if (req.jobs > 1 && req.program.empty())
      throw std::invalid_argument("--jobs " + std::to_string(req.jobs) + ": the workers need the s2cosim program (run it from the command line)");
    HwConfig cfg = build_hw_config(req.config_file, req.mac_shape, {});
    const mapper::Target target = mapper::parse_target(req.target);
    mapper::apply_target(cfg, target, req.preset);
    const mapper::ParsedNetwork n = mapper::parse_network(mapper::load_network(req.net));
    for (const std::string& l : req.layers)
      if (!n.find(l)) throw std::invalid_argument("--layers: " + n.name + " has no operation block " + l);
    HwConfig split_cfg = cfg;
    if (target == mapper::Target::SpiNNaker2) set_mac_shape(split_cfg, "16x4");  // (run-net's rule)
    const mapper::SplitRules rules = mapper::split_rules(target, split_cfg);
    const mapper::NetworkSplit split = mapper::split_network(n, rules);
    const std::vector<mapper::BlockResidency> residency = mapper::storage_residency(n, split, cfg);
    const EnergyTable energy = default_energy_table();
    const int pes = mapper::chip_pes(cfg);

    // the candidates: per convolution block the reference first (the splitter's split in fuse_reuse, else
    // fuse_noreuse, as --whole runs it, the thesis's schedule), then each split in fuse_reuse overlapped and in
    // fuse_noreuse
    std::vector<BlockCandidates> blocks;
    std::size_t total = 0;
    for (std::size_t i = 0; i < n.blocks.size(); ++i) {
      const mapper::OperationBlock& b = n.blocks[i];
      if (b.kind != mapper::BlockKind::Convolution) continue;
      if (!req.layers.empty() && std::find(req.layers.begin(), req.layers.end(), b.name()) == req.layers.end()) continue;
      BlockCandidates bc{i, mapper::block_bound(b, mapper::block_ends(n, b), cfg), {}};
      const std::vector<mapper::BlockSplit> splits = splits_to_try(b, split.blocks[i], rules, req.max_candidates, pes);
      for (std::size_t k = 0; k < splits.size(); ++k)
        for (const auto& [st, sc] : {std::pair{mapper::Strategy::FuseReuse, mapper::Schedule::Thesis},
                                     std::pair{mapper::Strategy::FuseReuse, mapper::Schedule::Overlapped},
                                     std::pair{mapper::Strategy::FuseNoreuse, mapper::Schedule::Thesis}}) {
          if (k > 0 && st == mapper::Strategy::FuseReuse && sc == mapper::Schedule::Thesis) continue;
          Candidate c{splits[k], st, sc};
          c.split.schedule = sc;
          if (mapper::distributable(b, c.split, c.strategy, cfg, nullptr)) bc.candidates.push_back(c);
        }
      total += bc.candidates.size();
      blocks.push_back(std::move(bc));
    }

    // the journal: a stopped search takes what it holds; a worker writes its own beside its --json and reads
    // the search's (--journal) for what is judged already
    const std::string journal_file = worker ? req.json_out + ".jsonl" : req.journal.empty() ? req.out + ".jsonl" : req.journal;
    const std::string hash = config_hash(cfg);
    nlohmann::ordered_json header = {{"journal", "tune"}, {"network", n.name}, {"target", req.target}, {"preset", req.preset},
                                     {"config_hash", hash}, {"objective", req.objective}};
    const bool resume = !worker && std::filesystem::exists(journal_file) && std::filesystem::file_size(journal_file) > 0;
    Journal journal(journal_file, resume ? journal_file : "");
    std::map<std::string, nlohmann::ordered_json> held;  // fingerprint -> record
    if (journal.continues())
      for (const JournalRecord& r : read_journal_of_run(journal_file, header, &journal).records) held[r.fingerprint] = r.record;
    if (worker && !req.journal.empty() && std::filesystem::exists(req.journal))
      for (const JournalRecord& r : read_journal_of_run(req.journal, header).records) held[r.fingerprint] = r.record;
    journal.start(header);
    if (!worker)
      out << fmt::format("tune {} on {} '{}': {} per block, {} candidates judged by the model (timing only{}), config hash {}{}\n",
                         n.name, req.target, cfg.chip.name, req.objective, total,
                         req.jobs > 1 ? fmt::format(", {} processes", req.jobs) : "", hash,
                         held.empty() ? "" : fmt::format("; {} candidates from {}", held.size(), journal_file));
    out.flush();
    if (req.jobs > 1) judge_in_workers(req, total, header, journal, held, err);

    auto model = make_model_stream_backend(cfg);
    std::map<std::string, std::vector<std::uint8_t>> golden;
    CheckPolicy policy;
    // A block's candidates judged in order (a worker: those of its shard, by their index k over every block),
    // each taken from the journal or run on the model; one whose own bound cannot beat the best so far is pruned
    // (a worker's best is over fewer candidates, so what it prunes the whole search prunes too). Returns the
    // index of the best in `judged`.
    std::size_t k = 0;
    const auto judge = [&](const BlockCandidates& bc, std::vector<Judged>& judged) {
      const mapper::OperationBlock& b = n.blocks[bc.block];
      std::optional<std::size_t> best;
      for (const Candidate& c : bc.candidates) {
        if (!shard.takes(k++)) continue;
        Judged j;
        j.c = c;
        const bool reference = &c == &bc.candidates.front();
        if (best && req.objective == "clocks" && !reference && candidate_bound(c, bc.bound, cfg) >= judged[*best].cycles) {
          j.pruned = true;
          judged.push_back(j);
          continue;
        }
        const std::string fp = journal_fingerprint(fmt::format("tune {} {} seed {}", b.name(), c.describe(), req.seed), hash);
        if (const auto h = held.find(fp); h != held.end()) {
          j.cycles = h->second.value("cycles", std::uint64_t{0});
          j.energy_pj = h->second.value("energy_pj", 0.0);
          j.ok = h->second.value("ok", false);
        } else {
          const BlockRun r = run_block(b, c.split, c.strategy, c.strategy == mapper::Strategy::FuseReuse ? residency[bc.block] : mapper::BlockResidency{},
                                       cfg, model.get(), nullptr, req.seed, {}, golden, WaveRequest{}, nullptr, policy, {}, true, false);
          j.ok = r.error.empty() && r.model && r.model->completed;
          j.error = r.error;
          if (j.ok) {
            j.cycles = r.model->block_cycles_arm_timed;
            j.energy_pj = run_energy(r.model->activity, energy, cfg.pe_clock_mhz).total();
          }
          journal.append(nlohmann::ordered_json{{"block", b.name()}, {"candidate", c.describe()}, {"cycles", j.cycles},
                                                {"energy_pj", j.energy_pj}, {"ok", j.ok}},
                         fp);
        }
        judged.push_back(j);
        if (j.ok && (!best || objective_of(j, req.objective) < objective_of(judged[*best], req.objective))) best = judged.size() - 1;
      }
      return best;
    };
    if (worker) {
      for (const BlockCandidates& bc : blocks) {
        std::vector<Judged> judged;
        judge(bc, judged);
        if (journal.failed()) break;
      }
      return journal.failed() ? kExitOutput : kExitPass;
    }

    // the mapping found, and the fall-backs the whole network's run may need: each block's best that keeps the
    // storage plan (fuse_reuse where the reference is), and the reference itself
    std::ostringstream mapping, keeping_plan, reference_mapping;
    const std::string head = fmt::format("# s2cosim tune --net {} --target {}{} --objective {}: run-net --mapping this file (config hash {})\n",
                           req.net, req.target, req.preset.empty() ? "" : " --preset " + req.preset, req.objective, hash);
    mapping << head;
    keeping_plan << head;
    reference_mapping << head;
    nlohmann::json rows = nlohmann::json::array();
    out << fmt::format("\n{:<10} {:>10} {:>10} {:>7} {:>9}  {}\n", "block", "default", "found", "found/", "bound", "mapping found (W H C D parts, strategy, schedule)");
    out << fmt::format("{:<10} {:>10} {:>10} {:>7} {:>9}\n", "", "clocks", "clocks", "default", "ratio");
    int failed = 0;
    for (const BlockCandidates& bc : blocks) {
      const mapper::OperationBlock& b = n.blocks[bc.block];
      std::vector<Judged> judged;
      const std::optional<std::size_t> best = judge(bc, judged);
      if (judged.empty()) continue;  // (no strategy distributes it)
      const Judged& reference = judged.front();
      if (!best || !reference.ok) {
        ++failed;
        err << "s2cosim tune: " << b.name() << ": " << (reference.error.empty() ? "no candidate ran to the end" : reference.error) << "\n";
        continue;
      }
      const Judged& found = judged[*best];
      const Candidate& c = found.c;
      const auto line = [&](const Judged& j) {
        return fmt::format("{:<10} {:<14} {:<14} {:<12} {:<9} strategy={} schedule={}  # {} clocks, {:.0f} pJ; default {} clocks\n",
                           b.name(), j.c.split.w.to_string(), j.c.split.h.to_string(), j.c.split.c.to_string(),
                           j.c.split.d.to_string(), mapper::to_string(j.c.strategy), mapper::to_string(j.c.schedule), j.cycles,
                           j.energy_pj, reference.cycles);
      };
      mapping << line(found);
      const Judged* same_plan = &reference;
      for (const Judged& x : judged)
        if (x.ok && x.c.strategy == reference.c.strategy && objective_of(x, req.objective) < objective_of(*same_plan, req.objective))
          same_plan = &x;
      keeping_plan << line(*same_plan);
      reference_mapping << line(reference);
      const double ratio = double(found.cycles) / double(std::max<std::uint64_t>(1, bc.bound.cycles()));
      out << fmt::format("{:<10} {:>10} {:>10} {:>7.3f} {:>8.2f}x  {}\n", b.name(), reference.cycles, found.cycles,
                         double(found.cycles) / double(std::max<std::uint64_t>(1, reference.cycles)), ratio, c.describe());
      int ran = 0, pruned = 0;
      for (const Judged& x : judged) ran += !x.pruned, pruned += x.pruned;
      rows.push_back({{"block", b.name()},
                      {"default", {{"mapping", reference.c.describe()}, {"cycles", reference.cycles}, {"energy_pj", reference.energy_pj}}},
                      {"found", {{"mapping", c.describe()}, {"cycles", found.cycles}, {"energy_pj", found.energy_pj}}},
                      {"bound", bound_json(bc.bound, found.cycles)},
                      {"candidates_run", ran},
                      {"candidates_pruned", pruned}});
      out.flush();
    }
    const auto write_mapping = [&](const std::string& text) {
      std::ofstream f(req.out);
      f << text;
      if (!f) throw std::runtime_error(req.out + ": cannot write the mapping");
    };
    write_mapping(mapping.str());
    out << "\nmapping written to " << req.out << " (run-net --mapping " << req.out << "); journal " << journal_file << "\n";
    nlohmann::json report = {{"command", "tune"}, {"network", n.name}, {"target", req.target}, {"chip", cfg.chip.name},
                             {"objective", req.objective}, {"config_hash", hash}, {"mapping", req.out}, {"blocks", rows}};
    if (req.verify && req.layers.empty()) {
      // the exact judge on the whole network: both mappings run --whole, as run-net runs them
      // each block was judged alone; where the blocks together are slower than the default (a block given another
      // strategy moves its neighbours' maps to DRAM), the mapping that keeps the storage plan, else the reference
      const std::optional<std::uint64_t> before = whole_sum(req, "", err);
      std::optional<std::uint64_t> after = whole_sum(req, req.out, err);
      std::string taken = "the blocks' best";
      for (const auto& [text, name] : {std::pair{keeping_plan.str(), "each block's best in its default strategy"},
                                       std::pair{reference_mapping.str(), "the default mapping (nothing found faster together)"}}) {
        if (!before || !after || *after <= *before) break;
        write_mapping(text);
        after = whole_sum(req, req.out, err);
        taken = name;
      }
      if (before && after) report["mapping_taken"] = taken;
      if (before && after && taken != "the blocks' best") out << "mapping: " << taken << " (the blocks' best were slower together)\n";
      if (!before || !after) {
        ++failed;
        err << "s2cosim tune: the whole network did not run to the end with " << (!before ? "the default" : "the found") << " mapping\n";
      } else {
        out << fmt::format("whole network (run-net --whole --timing-only, Table 5.10's sum): default {} clocks, with the mapping {} "
                           "({:.3f}x)\n", *before, *after, double(*after) / double(std::max<std::uint64_t>(1, *before)));
        report["whole"] = {{"default_cycles", *before}, {"tuned_cycles", *after}, {"ratio", double(*after) / double(*before)}};
      }
    }
    if (!req.json_out.empty() && !write_outputs({{req.json_out, [&] { return report.dump(2) + "\n"; }}}, err)) return kExitOutput;
    return failed ? kExitFail : kExitPass;
  } catch (const std::invalid_argument& e) {
    err << "s2cosim tune: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::runtime_error& e) {
    err << "s2cosim tune: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace s2
