#include "harness/commands/net_runner.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <thread>

#include <sys/resource.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/commands/net_block_run.h"
#include "harness/commands/net_data.h"
#include "harness/commands/net_records.h"
#include "harness/commands/net_tables.h"
#include "harness/commands/regress.h"
#include "harness/commands/regress_report.h"
#include "harness/outputs/output_files.h"
#include "harness/session/journal.h"
#include "harness/session/progress.h"
#include "harness/session/workers.h"
#include "mapper/distributor.h"
#include "mapper/network.h"
#include "mapper/onnx/import.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"

// run-net as a pipeline: the request checked and the network loaded and split (NetPlan), the journal opened
// (NetSession), the blocks run (NetRuns), then the records, the console's tables and the outputs.

namespace s2 {

std::string run_net_command_line(const RunNetRequest& req, const std::string& options, const std::string& hash) {
  std::string s = shell_quote(program_name()) + " run-net --net " + shell_quote(req.net) + " --target " + req.target;
  if (!req.preset.empty()) s += " --preset " + shell_quote(req.preset);
  s += options;
  if (!req.split_file.empty()) s += " --split " + shell_quote(req.split_file);
  if (!req.mapping_file.empty()) s += " --mapping " + shell_quote(req.mapping_file);
  if (req.schedule != "thesis") s += " --schedule " + req.schedule;
  if (!req.config_file.empty()) s += " --config " + shell_quote(req.config_file);
  if (!req.mac_shape.empty()) s += " --mac " + shell_quote(req.mac_shape);
  return s + " --expect-hash " + hash;
}

std::string run_net_replay(const RunNetRequest& req, const std::string& block, const std::string& strategy,
                           const std::string& hash, const std::string& mode) {
  std::string options = " --layers " + shell_quote(block) + " --strategy " + strategy + mode + " --backend " + req.backend;
  options += " --seed " + std::to_string(req.seed);
  if (req.timing_only) options += " --timing-only";
  if (!req.input_npy.empty()) options += " --input " + shell_quote(req.input_npy);
  if (!req.calibrate.empty()) options += " --calibrate " + shell_quote(req.calibrate);
  return run_net_command_line(req, options, hash);
}

namespace {

// A block as the run sees it, for its journal records' fingerprint: every operation with its shapes, window,
// padding, shift and weights, the blocks it reads, its workers, and its split.
std::string block_definition(const mapper::OperationBlock& b, const mapper::BlockSplit& split) {
  std::string d = fmt::format("{} {} workers {} inputs", mapper::to_string(b.kind), b.name(), b.workers);
  for (const std::string& in : b.inputs) d += " " + in;
  for (const mapper::Operation& op : b.ops) {
    d += fmt::format("; {} {} {}->{} {}x{} s{} p{} pool{} shift {}", op.name, mapper::to_string(op.kind), mapper::to_string(op.in),
                     mapper::to_string(op.out), op.Wf, op.Hf, op.stride, op.pad, static_cast<int>(op.pool), op.shift);
    if (op.weights)
      d += " weights " + text_hash(std::string_view(reinterpret_cast<const char*>(op.weights->data()), op.weights->size()));
    if (op.bias)
      d += " bias " + text_hash(std::string_view(reinterpret_cast<const char*>(op.bias->data()), 4 * op.bias->size()));
    if (op.shifts)
      d += " shifts " + text_hash(std::string_view(reinterpret_cast<const char*>(op.shifts->data()), op.shifts->size()));
    if (op.pad_end) d += fmt::format(" pad_end {}", op.pad_end);
    if (const mapper::ElementwiseSpec* e = op.elementwise.get()) {  // its table or parameters are its weights
      d += fmt::format(" {} shift {} {} {} relu {}", mapper::to_string(e->op), e->shift, e->shift_a, e->shift_b, e->relu);
      d += " table " + text_hash(std::string_view(reinterpret_cast<const char*>(e->table.data()), e->table.size()));
      d += " affine " + text_hash(std::string_view(reinterpret_cast<const char*>(e->scale.data()), 4 * e->scale.size())) +
           text_hash(std::string_view(reinterpret_cast<const char*>(e->offset.data()), 4 * e->offset.size()));
    }
  }
  d += fmt::format("; split {} {} {} {}", split.w.to_string(), split.h.to_string(), split.c.to_string(), split.d.to_string());
  if (split.schedule != mapper::Schedule::Thesis) d += std::string("; schedule ") + mapper::to_string(split.schedule);
  return d;
}


// What a run needs before a block runs: the request checked, the hardware, the network loaded, split and
// given its data.
struct NetPlan {
  HwConfig cfg;
  Shard shard;
  mapper::Target target = mapper::Target::Qpe;
  std::vector<mapper::Strategy> strategies;
  mapper::Network net;
  mapper::ParsedNetwork n;
  mapper::NetworkSplit split;
  std::vector<mapper::SplitChoice> chosen;  // --split, --mapping
  const mapper::SplitChoice* choice(const std::string& block) const {
    for (const mapper::SplitChoice& c : chosen)
      if (c.operation == block) return &c;
    return nullptr;
  }
  std::optional<NpyTensor> input;           // --input
  std::optional<NpyTensor> reference;       // --reference
  bool wants_output = false;                // --output or --reference
  std::vector<std::string> input_notes;     // conversions, calibration, a final activation left to the host
  NetworkData data;                         // --input: every block's data along the network
  std::optional<EnergyTable> energy;        // --energy
};

// The request's hardware, backend and strategies, and every output path checked against the others and the
// inputs (all writable) before anything is read or run. False: a path is refused (said on `err`).
bool check_request(const RunNetRequest& req, NetPlan& p, std::ostream& err) {
  p.cfg = build_hw_config(req.config_file, req.mac_shape, {});
  p.shard = parse_shard(req.shard);
  p.target = mapper::parse_target(req.target);
  if (req.backend != "model" && req.backend != "rtl" && req.backend != "both")
    throw std::invalid_argument("--backend " + req.backend + ": expected model, rtl or both");
  mapper::apply_target(p.cfg, p.target, req.preset);
  for (const std::string& s : req.strategies) {
    const mapper::Strategy st = mapper::parse_strategy(s);
    if (std::find(p.strategies.begin(), p.strategies.end(), st) != p.strategies.end())
      throw std::invalid_argument("--strategy " + s + ": given twice (each strategy runs once)");
    p.strategies.push_back(st);
  }
  if (!req.energy.empty()) p.energy = energy_table_named(req.energy);
  if (p.strategies.empty() && req.whole) p.strategies.push_back(mapper::Strategy::FuseReuse);  // Table 5.10's
  if (p.strategies.empty()) p.strategies.assign(std::begin(mapper::kAllStrategies), std::end(mapper::kAllStrategies));
  if (req.jobs > 1) {
    if (!p.shard.whole()) throw std::invalid_argument("--jobs " + std::to_string(req.jobs) + " with --shard " + req.shard + ": a shard runs in one process");
    if (!req.resume.empty()) throw std::invalid_argument("--jobs " + std::to_string(req.jobs) + " with --resume: resume with --jobs 1");
    if (req.program.empty()) throw std::invalid_argument("--jobs " + std::to_string(req.jobs) + ": the workers need the s2cosim program (run it from the command line)");
  }
  const std::string journal_file = journal_path(req.json_out, req.journal);
  const bool net_file = !mapper::is_builtin_network(req.net);
  return check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--csv", req.csv_out},
                      {"--output", req.output_npy}, {"--journal", journal_file}},
                     {{"--net", net_file ? req.net : ""}, {"--config", req.config_file}, {"--input", req.input_npy},
                      {"--reference", req.reference_npy}, {"--split", req.split_file}, {"--mapping", req.mapping_file}, {"--resume", req.resume},
                      {"--energy", req.energy == "default" ? std::string() : req.energy}},
                     err, journal_file, req.resume);
}

// --output, --reference: the output is the last block's, as the whole network computes it; the reference
// has its size. False: --output is not writable (said on `err`).
bool check_output_request(const RunNetRequest& req, NetPlan& p, std::ostream& err) {
  const mapper::OperationBlock& last = p.n.blocks.back();
  if (p.wants_output) {
    const std::string opt = req.output_npy.empty() ? "--reference" : "--output";
    if (req.input_npy.empty()) throw std::invalid_argument(opt + " needs --input (the network's output for a real input)");
    if (!p.shard.whole()) throw std::invalid_argument(opt + ": a shard may not run the last block; run it unsharded");
    if (!req.layers.empty() && std::find(req.layers.begin(), req.layers.end(), last.name()) == req.layers.end())
      throw std::invalid_argument(opt + ": --layers leaves out the network's last block, " + last.name());
    if (!check_writable(req.output_npy, err)) return false;
  }
  if (!req.reference_npy.empty()) {
    p.reference = read_npy(req.reference_npy);
    const std::uint64_t values = static_cast<std::uint64_t>(last.out().elements());
    if (p.reference->size() != values)
      throw std::invalid_argument(fmt::format("--reference {}: {} {}, expected {} values (the output of {})", req.reference_npy,
                                              p.reference->is_float ? "float" : "int8", p.reference->shape_text(), values,
                                              last.name()));
    if (p.reference->is_float && !p.net.output_exponent)
      throw std::invalid_argument("--reference " + req.reference_npy + ": a float reference needs the network's output "
                                  "scale, which " + p.net.name + " does not have (a layer list: give an int8 reference)");
  }
  return true;
}

// The network loaded (an ONNX model calibrated on its input), parsed, split, and with --input every block's
// data computed along it. False: an output is refused (said on `err`).
bool load_and_map(const RunNetRequest& req, NetPlan& p, std::ostream& err) {
  if (req.timing_only) {  // clocks without data: nothing to compare with the RTL, no output to give
    if (req.backend != "model")
      throw std::invalid_argument("--timing-only runs the model alone (--backend model): the RTL always computes its data, "
                                  "and model and RTL are compared on data too");
    if (!req.input_npy.empty() || !req.output_npy.empty() || !req.reference_npy.empty() || !req.calibrate.empty())
      throw std::invalid_argument("--timing-only computes no data: it takes no --input, --output, --reference or --calibrate");
  }
  p.wants_output = !req.output_npy.empty() || !req.reference_npy.empty();
  if (!req.input_npy.empty()) p.input = read_npy(req.input_npy);
  if (p.input && !p.input->converted_from.empty())
    p.input_notes.push_back("--input " + req.input_npy + ": " + p.input->converted_from + " read as float32" +
                            (p.input->converted_from == "uint8" ? " (values 0..255 as they are: scale them as the model "
                                                                  "was trained, e.g. to [0, 1], if it expects that)"
                                                                : ""));
  p.net = load_run_net_network(req, p.input ? &*p.input : nullptr, p.input_notes);
  if (!p.net.host_activation.empty())
    p.input_notes.push_back(fmt::format("the model's final {} is left to the host: the network's output is its input (int8 * "
                                        "2^-exponent); apply {} to that", p.net.host_activation, p.net.host_activation));
  p.n = mapper::parse_network(p.net);
  if (!check_output_request(req, p, err)) return false;
  // thesis 5.4 compares the MAC arrays on SpiNNaker2 with "the same split scheme": the 16x4 one
  HwConfig split_cfg = p.cfg;
  if (p.target == mapper::Target::SpiNNaker2) set_mac_shape(split_cfg, "16x4");
  if (!req.split_file.empty() && !req.mapping_file.empty())
    throw std::invalid_argument("--split and --mapping: give one (a mapping is a split file with options)");
  if (!req.split_file.empty()) p.chosen = mapper::read_split_file(req.split_file);
  if (!req.mapping_file.empty()) p.chosen = mapper::read_split_file(req.mapping_file);
  p.split = mapper::split_network(p.n, mapper::split_rules(p.target, split_cfg), p.chosen);
  const mapper::Schedule schedule = mapper::parse_schedule(req.schedule);
  for (mapper::BlockSplit& s : p.split.blocks) {
    const mapper::SplitChoice* c = p.choice(s.name);
    s.schedule = c && c->schedule ? *c->schedule : schedule;
  }
  for (const std::string& l : req.layers)
    if (!p.n.find(l)) throw std::invalid_argument("--layers: " + p.n.name + " has no operation block " + l);
  check_expected_hash(p.cfg, req.expect_hash);
  if (p.input) p.data = golden_chain(p.n, p.split, p.cfg, network_input(p.net, *p.input, req.input_npy), req.seed);
  return true;
}

// Whether the request runs a block (--layers, or every block).
bool wanted(const RunNetRequest& req, const mapper::OperationBlock& b) {
  return req.layers.empty() || std::find(req.layers.begin(), req.layers.end(), b.name()) != req.layers.end();
}

// The run's block runs: every block it wants in every strategy (a shard's are those with k % N == I - 1).
std::size_t block_runs(const RunNetRequest& req, const NetPlan& p) {
  std::size_t n = 0;
  for (const mapper::OperationBlock& b : p.n.blocks) n += wanted(req, b) ? p.strategies.size() : 0;
  return n;
}

// Core-clock mode (NetReport::core_clocks), decided once before any block runs, for the whole run (every shard
// alike): asked for (--core-clocks), or a run that is not --whole whose report compares a block run with the
// thesis's Tables 5.5-5.8 (a published figure for one of the block runs it makes, in any shard). A --whole run's
// Table 5.10 figures are ARM timed, and so are its blocks' unless asked.
bool core_clock_mode(const RunNetRequest& req, const NetPlan& p, const NetReport& rep) {
  if (req.core_clocks) return true;
  if (req.whole) return false;
  for (const mapper::OperationBlock& b : p.n.blocks)
    if (wanted(req, b))
      for (mapper::Strategy st : p.strategies)
        if (rep.published_clocks(b.name(), mapper::to_string(st))) return true;
  return false;
}

// The options that give a block's rerun (run_net_replay) the run's core-clock mode where the block alone would
// not have it: --core-clocks unless the block alone compares with a published figure (not --whole); a --whole run
// without core-clock mode reruns --whole (the block alone might compare with one).
std::string replay_mode(const RunNetRequest& req, const NetReport& rep, const BlockRun& r) {
  if (rep.core_clocks) return req.core_clocks || !rep.published_clocks(r.block, mapper::to_string(r.strategy)) ? " --core-clocks" : "";
  return req.whole ? " --whole" : "";
}

// The run's journal: every finished block run goes to it as it finishes, after a first record naming the
// run; --resume takes the runs a journal of the same run holds.
struct NetSession {
  nlohmann::ordered_json header;
  std::string hash;    // the configuration's
  std::string policy;  // the check policy's hash: a run judged by another bound is run again
  // (block, strategy) -> the last whole record and its fingerprint
  std::map<std::pair<std::string, std::string>, std::pair<nlohmann::json, std::string>> resumed;
  ResumeTally tally;
  Journal journal;

  // what made a block run: the block's operations, inputs and split, the strategy it ran, the seed and input
  // data (the header's, but for the shard, which deals the runs and changes none: a worker's runs are the run's),
  // the configuration, the policy and the version
  std::string fingerprint(const NetPlan& p, std::size_t block, mapper::Strategy st) const {
    nlohmann::ordered_json made = header;
    made.erase("shard");
    return journal_fingerprint(fmt::format("run-net {} {} {} {}", block_definition(p.n.blocks[block], p.split.blocks[block]),
                                           mapper::to_string(st), made.dump(), policy),
                               hash);
  }
};

void open_journal(const RunNetRequest& req, const NetPlan& p, const NetReport& rep, NetSession& s) {
  s.hash = config_hash(p.cfg);
  s.policy = policy_hash(req.policy);
  s.header = {{"journal", "run-net"},       {"network", p.n.name},  {"target", req.target},
              {"backend", req.backend},     {"seed", req.seed},     {"config_hash", s.hash},
              {"split_file", req.split_file}, {"whole", req.whole}};
  if (!req.mapping_file.empty()) s.header["mapping_file"] = req.mapping_file;
  if (req.timing_only) s.header["timing_only"] = true;  // a timing-only journal resumes only a timing-only run
  // a journal of ARM-timed runs alone resumes only such a run (a core-clock run's header is as it ever was)
  if (!rep.core_clocks) s.header["core_clocks"] = false;
  if (!p.shard.whole()) s.header["shard"] = req.shard;  // a shard's journal resumes that shard only
  if (!req.input_npy.empty()) {  // a run on real data resumes only a run on the same data
    const std::vector<std::int8_t>& x = p.data.blocks.front().input;
    s.header["input"] = req.input_npy;
    if (!req.calibrate.empty()) s.header["calibrate"] = req.calibrate;
    s.header["input_hash"] = text_hash(std::string_view(reinterpret_cast<const char*>(x.data()), x.size()));
  }
  const ResumedJournal records = open_run_journal(s.journal, journal_path(req.json_out, req.journal), req.resume, s.header, s.tally);
  for (const JournalRecord& jr : records.records) {
    const nlohmann::json record = nlohmann::json::parse(jr.record.dump());
    try {
      const BlockRun br = block_run_from_json(record);  // refuses a malformed record before anything runs
      s.resumed[{br.block, mapper::to_string(br.strategy)}] = {record, jr.fingerprint};
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: {}", req.resume, jr.line, e.what()));
    }
  }
  s.journal.start(s.header);
}

// What the blocks' runs gave: the block runs (each with its index in the whole run), what was skipped or
// substituted, the network's output (--output), and whether a signal stopped the run.
struct NetRuns {
  std::vector<BlockRun> runs;
  std::vector<std::size_t> run_index;  // of runs[i] in the whole run
  std::vector<std::string> skipped, substituted;
  std::size_t total_runs = 0, shard_runs = 0;
  BlockOutput network_output;  // --output: the last block's output, and the strategy it ran
  std::string output_strategy;
  bool all_ok = true;
  int stopped = 0;
};

// --whole: a block runs the strategy its mapping names, if any; a block the strategy does not apply to runs the
// next that does (fuse_noreuse, then nofuse_noreuse).
mapper::Strategy strategy_for(const RunNetRequest& req, const mapper::OperationBlock& b, const mapper::BlockSplit& split,
                              mapper::Strategy asked, const HwConfig& cfg) {
  if (req.whole && split.strategy) asked = *split.strategy;
  if (req.whole)
    for (mapper::Strategy s : {asked, mapper::Strategy::FuseNoreuse, mapper::Strategy::NofuseNoreuse})
      if (static_cast<int>(s) <= static_cast<int>(asked) && mapper::distributable(b, split, s, cfg, nullptr)) return s;
  return asked;
}

// One block in one strategy: taken from the journal if a run of the same block, strategy and data is there,
// else run; what it throws makes it an error (the run goes on). `taken`: it came from the journal.
BlockRun take_or_run(const RunNetRequest& req, const NetPlan& p, const NetReport& rep, NetSession& s, NetRuns& nr, std::size_t i,
                     mapper::Strategy st, StreamBackend* model, StreamBackend* rtl, const RtlSimCompare& rtl_sims,
                     const std::vector<mapper::BlockResidency>& residency,
                     std::map<std::string, std::vector<std::uint8_t>>& golden, bool& taken, std::ostream& err) {
  const mapper::OperationBlock& b = p.n.blocks[i];
  try {
    const auto done = s.resumed.find({b.name(), mapper::to_string(st)});
    if (done != s.resumed.end() && done->second.second != s.fingerprint(p, i, st)) ++s.tally.changed;  // run again
    if (done != s.resumed.end() && done->second.second == s.fingerprint(p, i, st)) {
      taken = true;
      ++s.tally.taken;
      BlockRun r = block_run_from_json(done->second.first);
      r.bound = mapper::block_bound(b, mapper::block_ends(p.n, b), p.cfg);  // (its record says if it was held to it)
      return r;
    }
    // --output: the network's last block, in the first strategy that runs it
    const bool keep = p.wants_output && i + 1 == p.n.blocks.size() && nr.output_strategy.empty();
    BlockRun r = run_block(b, p.split.blocks[i], st, st == mapper::Strategy::FuseReuse ? residency[i] : mapper::BlockResidency{},
                           p.cfg, model, rtl, req.seed, p.data.blocks.empty() ? BlockInputs{} : p.data.blocks[i], golden,
                           WaveRequest{req.waves_dir, req.waves_window, &err}, keep ? &nr.network_output : nullptr,
                           req.policy, rtl_sims, req.timing_only, rep.core_clocks);
    if (keep) nr.output_strategy = mapper::to_string(st);
    check_block_bound(r, mapper::block_bound(b, mapper::block_ends(p.n, b), p.cfg), req.policy.deviation_bound);
    return r;
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << b.name() << " " << mapper::to_string(st) << ": " << e.what() << "\n";
    BlockRun r;
    r.block = b.name();
    r.strategy = st;
    r.arm_timed = !rep.core_clocks;
    r.error = e.what();
    r.status = Status::Error;
    return r;
  }
}

// --jobs: the block runs in req.jobs worker processes of s2cosim at once, each a shard of this run; their
// finished records go into the session as a resumed journal's do, so that run_blocks takes them (and runs what
// a worker did not finish) and the run is reported as one process reports it.
void run_in_workers(const RunNetRequest& req, const NetPlan& p, NetSession& s, std::ostream& err) {
  // the workers write their own reports and journals; the network's output is this process's (the last block
  // is run here again); a shard's worker takes its RTL's share of the cores
  std::vector<std::string> args = without_options(
      req.command_line, {"--jobs", "--json", "--journal", "--html", "--junit", "--csv", "--output", "--reference"});
  if (req.backend != "model" && req.rtl_sim.threads == 0) args.insert(args.end(), {"--threads", std::to_string(rtl_sim_as_run(req).threads)});
  const std::string dir = make_worker_dir();
  const std::vector<WorkerRun> workers = run_workers_with_progress(req.program, args, req.jobs, dir, block_runs(req, p), 0, err);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerRun& w = workers[i];
    nlohmann::ordered_json header = s.header;
    header["shard"] = fmt::format("{}/{}", i + 1, req.jobs);
    std::size_t taken = 0;
    try {
      for (const JournalRecord& jr : read_journal_of_run(w.journal, header).records) {
        const nlohmann::json record = nlohmann::json::parse(jr.record.dump());
        const BlockRun br = block_run_from_json(record);
        // --output, --reference: the network's output is computed here, by running the last block again
        if (p.wants_output && br.block == p.n.blocks.back().name()) continue;
        s.resumed[{br.block, mapper::to_string(br.strategy)}] = {record, jr.fingerprint};
        ++taken;
      }
    } catch (const std::exception& e) {
      err << "s2cosim run-net: worker " << i + 1 << ": " << e.what() << "\n";
    }
    if (w.exit_code != 0 && w.exit_code != 1)  // (1: a check failed, which the report says)
      err << fmt::format("s2cosim run-net: worker {} of {} exited with {} after {} block runs; what it did not finish runs "
                         "here. Its last lines:\n{}\n", i + 1, req.jobs, w.exit_code, taken, last_lines(w.log, 20));
  }
  remove_worker_dir(dir);
}

// The block runs in order, each with its index k in the whole run (--shard deals them round robin), each
// printed and journalled as it finishes; SIGINT / SIGTERM stop after the block in hand. `golden`: every
// block's golden output, computed once.
NetRuns run_blocks(const RunNetRequest& req, const NetPlan& p, const NetReport& rep, StreamBackend* model, StreamBackend* rtl,
                   const RtlSimCompare& rtl_sims, std::map<std::string, std::vector<std::uint8_t>>& golden, NetSession& s, std::ostream& out,
                   std::ostream& err) {
  NetRuns nr;
  nr.total_runs = block_runs(req, p);
  for (std::size_t k = 0; k < nr.total_runs; ++k) nr.shard_runs += p.shard.takes(k);
  // fuse_reuse on the chip: which blocks read their input from, and leave their output in, the storage QPEs
  const std::vector<mapper::BlockResidency> residency = mapper::storage_residency(p.n, p.split, p.cfg);
  Progress progress(nr.shard_runs, err);
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.n.blocks.size() && !nr.stopped; ++i) {
    const mapper::OperationBlock& b = p.n.blocks[i];
    if (!wanted(req, b)) continue;
    for (mapper::Strategy asked : p.strategies) {
      const std::size_t index = k++;
      if (!p.shard.takes(index)) continue;
      const mapper::Strategy st = strategy_for(req, b, p.split.blocks[i], asked, p.cfg);
      // a signal stops the run before a block it would run (one a journal or a worker holds is still taken)
      const bool held = s.resumed.count({b.name(), mapper::to_string(st)}) > 0;
      if (!held && ((nr.stopped = StopOnSignal::signal()) != 0 || s.journal.failed())) break;
      if (std::string why; !mapper::distributable(b, p.split.blocks[i], st, p.cfg, &why)) {
        nr.skipped.push_back(fmt::format("{} {}: {}", b.name(), mapper::to_string(st), why));
        continue;
      }
      if (st != asked)
        nr.substituted.push_back(fmt::format("{} ran {} for {}", b.name(), mapper::to_string(st), mapper::to_string(asked)));
      bool taken = false;
      BlockRun r = take_or_run(req, p, rep, s, nr, i, st, model, rtl, rtl_sims, residency, golden, taken, err);
      if (st != asked) r.asked = mapper::to_string(asked);
      nr.all_ok = nr.all_ok && r.status == Status::Pass;
      progress.clear();  // the block's lines go to the terminal first, the progress line after them
      print_block_run(rep, r, out);
      out.flush();
      // a continued journal holds the taken records already
      if (!(taken && s.journal.continues()))
        s.journal.append(operation_json(r, p.cfg, rep.thesis_clocks(r.block, mapper::to_string(r.strategy))),
                         s.fingerprint(p, i, st));
      progress.step(nr.runs.size() + 1, fmt::format("{} {} {}", r.block, mapper::to_string(r.strategy), to_string(r.status)));
      nr.runs.push_back(std::move(r));
      nr.run_index.push_back(index);
    }
  }
  progress.clear();
  return nr;
}

// The result records every output reads (harness/outputs/result.h): a block run each, and the network's output.
ResultSet result_records(const RunNetRequest& req, const NetPlan& p, const NetReport& rep, const NetRuns& nr,
                         const std::optional<CheckResult>& output_check,
                         const std::map<std::string, std::map<std::string, double>>& category_cycles) {
  const HwConfig& cfg = p.cfg;
  ResultSet results;
  results.command = "run-net";
  results.title = fmt::format("{} on {}, backend {}", p.n.name, rep.system, req.backend);
  results.config = to_json(cfg);
  results.config_hash = config_hash(cfg);
  results.policy = req.policy;
  results.hardware = hw_config_line(cfg);
  results.total = nr.total_runs + (output_check ? 1 : 0);
  results.shard = p.shard;
  results.stopped_by_signal = nr.stopped;
  for (const std::string& a : cfg.chip.assumptions) results.notes.push_back("assumption (preset " + cfg.chip.name + "): " + a);
  if (p.energy) {
    results.energy_table = p.energy;
    results.notes.push_back("energy: " + energy_table_line(*p.energy) +
                            "; charged on the model's ARM-timed counts where the model ran, else on the RTL's (" +
                            (rep.core_clocks ? "ARM free" : "ARM timed") + ")");
  }
  if (const std::string w = workers_assumption(p.n); !w.empty()) results.notes.push_back(w);
  std::vector<std::string> notes;  // sorted, as merge sorts the notes of shards
  for (const std::string& line : nr.substituted) notes.push_back("strategy: " + line);
  for (const std::string& line : nr.skipped) notes.push_back("not run: " + line);
  std::sort(notes.begin(), notes.end());
  results.notes.insert(results.notes.end(), notes.begin(), notes.end());
  for (std::size_t i = 0; i < nr.runs.size(); ++i) {
    const BlockRun& r = nr.runs[i];
    CheckResult c;
    c.index = nr.run_index[i];
    c.name = r.block + " " + mapper::to_string(r.strategy);
    c.group = p.n.name;
    c.status = r.status;
    c.labels = {{"block", r.block}, {"strategy", mapper::to_string(r.strategy)}, {"reuse", mapper::to_string(r.reuse)}};
    if (!r.asked.empty()) c.labels.emplace_back("for", r.asked);
    if (r.model) c.model_cycles = r.model->core_cycles, c.model_wall_s = r.model->wall_s;
    if (r.rtl) c.rtl_cycles = r.rtl->core_cycles, c.rtl_wall_s = r.rtl->wall_s;
    c.delta = r.delta;
    if (const auto t = rep.thesis_clocks(r.block, mapper::to_string(r.strategy))) {
      c.thesis_cycles = *t;
      c.thesis_source = "thesis " + rep.table;
    }
    c.message = block_problem(r);
    if (c.message.empty() && r.status == Status::Deviation)
      c.message = fmt::format("delta {} (core operation{}: model {} clk, RTL {} clk)", pct(*r.delta), r.arm_timed ? ", ARM timed" : "",
                              r.model->core_cycles, r.rtl->core_cycles);
    if (r.model && !r.model->data_checked) c.message += (c.message.empty() ? "" : "; ") + std::string("data not checked (--timing-only)");
    if (!r.rtl_refused.empty()) c.message += (c.message.empty() ? "" : "; ") + ("not on the RTL (model only): " + r.rtl_refused);
    c.where = r.where;
    c.waves = r.waves;
    c.replay = run_net_replay(req, r.block, mapper::to_string(r.strategy), config_hash(cfg), replay_mode(req, rep, r));
    for (const std::string& f : r.activity_findings) c.message += (c.message.empty() ? "" : "; ") + f;
    c.activity = block_activity(r);
    if (p.energy) charge_energy(c, *p.energy, cfg.pe_clock_mhz, r.model ? r.model->activity_arm_timed : std::nullopt);
    results.checks.push_back(std::move(c));
  }
  if (output_check) results.checks.push_back(*output_check);
  if (req.whole && rep.model)
    for (const auto& [st, cats] : category_cycles)
      for (const std::string& cat : network_categories()) {
        const auto it = cats.find(cat);
        CategoryClocks cc{st, cat, it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second)), std::nullopt};
        if (st == "fuse_reuse" && rep.thesis_mac && req.layers.empty()) cc.thesis = thesis_network_clocks(rep.thesis_net, cat);
        results.categories.push_back(cc);
      }
  return results;
}

// run-net's JSON report's head (contract 3): what ran, how fast, and what it found beside the operations.
nlohmann::json report_head(const RunNetRequest& req, const NetPlan& p, const NetReport& rep, const NetRuns& nr, const Speeds& speed,
                           const nlohmann::json& silicon, const nlohmann::json& output_record, const ResumeTally& tally) {
  nlohmann::json head;
  head["network"] = p.n.name;
  head["target"] = req.target;
  head["backend"] = req.backend;
  head["seed"] = req.seed;
  // which runs were made and compared: core-clock mode's ARM-free runs (the model's ARM-timed runs beside them),
  // or one ARM-timed run per stream on each backend
  head["core_clocks"] = rep.core_clocks;
  head["compared_arm_timing"] = rep.core_clocks ? "free" : "timed";
  head["config"] = to_json(p.cfg);
  head["config_hash"] = config_hash(p.cfg);
  if (speed.model_rate() > 0) head["model_clocks_per_s"] = speed.model_rate();
  if (speed.rtl_rate() > 0) {
    head["rtl_clocks_per_s"] = speed.rtl_rate();
    // how the RTL was simulated: like the speeds, not part of what it computed
    head["rtl_simulation"] = {{"threads", rtl_sim_as_run(req).resolved_threads()},
                              {"eval", req.rtl_sim.active_only ? "active" : "all"},
                              {"qpe_clocks_evaluated", speed.rtl_qpe_clocks_evaluated},
                              {"qpe_clocks_simulated", speed.rtl_qpe_clocks_simulated}};
  }
  if (req.jobs > 1) head["jobs"] = req.jobs;  // (the walls and speeds are the workers', summed)
  if (!req.split_file.empty()) head["split_file"] = req.split_file;
  if (!req.mapping_file.empty()) head["mapping_file"] = req.mapping_file;
  if (nr.stopped) head["stopped_by_signal"] = nr.stopped;  // the operations that finished before the stop
  if (req.whole) head["whole"] = true;
  if (req.timing_only) head["timing_only"] = true;  // no data computed or checked: every data_match is null
  if (!req.layers.empty()) head["layers"] = req.layers;  // some blocks only (design-report refuses it as a whole network)
  if (!silicon.is_null()) head["silicon"] = silicon;
  if (!req.input_npy.empty()) head["input"] = req.input_npy;
  if (!output_record.is_null()) head["output"] = output_record;
  if (tally.on()) head["resume"] = tally.json();
  return head;
}

}  // namespace

int run_net(const RunNetRequest& req, std::ostream& out, std::ostream& err) {
  const auto wall0 = std::chrono::steady_clock::now();
  NetPlan p;
  std::unique_ptr<StreamBackend> model, rtl;
  std::vector<std::unique_ptr<StreamBackend>> rtl_others;
  RtlSimCompare rtl_sims{req.rtl_sim, {}};
  try {
    if (!check_request(req, p, err) || !load_and_map(req, p, err)) return kExitBadInput;
    if (req.backend != "rtl") model = make_model_stream_backend(p.cfg);
    if (req.backend != "model") rtl = req.rtl_backend ? req.rtl_backend(p.cfg) : make_rtl_stream_backend(p.cfg, req.rtl_sim);
    if (req.backend != "model")
      for (const RtlSimOptions& sim : req.rtl_sim_others) {
        rtl_others.push_back(make_rtl_stream_backend(p.cfg, sim));
        rtl_sims.others.emplace_back(sim, rtl_others.back().get());
      }
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << e.what() << "\n";
    return kExitBadInput;
  }
  NetReport rep(req, p.n, p.cfg, model != nullptr, rtl != nullptr);
  rep.core_clocks = core_clock_mode(req, p, rep);
  print_head(rep, p.net, p.input_notes, p.chosen, out);
  NetSession s;
  try {
    open_journal(req, p, rep, s);
  } catch (const std::exception& e) {
    err << "s2cosim run-net: " << e.what() << "\n";
    return kExitBadInput;
  }
  const StopOnSignal stop_on_signal;  // from here to the outputs, a signal stops the run after the block in hand
  std::map<std::string, std::vector<std::uint8_t>> golden = std::move(p.data.golden);
  if (req.jobs > 1) {
    try {
      run_in_workers(req, p, s, err);
    } catch (const std::exception& e) {
      err << "s2cosim run-net: " << e.what() << "; the block runs run here, one after another\n";
    }
  }
  NetRuns nr = run_blocks(req, p, rep, model.get(), rtl.get(), rtl_sims, golden, s, out, err);

  // the network's output (--output, --reference): one more result record
  std::optional<CheckResult> output_check;
  nlohmann::json output_record;
  if (p.wants_output) {
    NetworkOutputCheck c = check_network_output(req, p.n, p.net, nr.network_output, nr.output_strategy, p.data.output,
                                                p.reference ? &*p.reference : nullptr, nr.total_runs, s.hash, out, err);
    if (c.write_failed) return kExitBadInput;
    nr.all_ok = nr.all_ok && c.check.status == Status::Pass;
    output_record = std::move(c.record);
    output_check = std::move(c.check);
  }
  // the block runs' records (contract 3, operations[]): the journal's, the JSON report's, and the Table 5.10
  // sums are made of them, so that merged shards sum the same numbers in the same order
  nlohmann::json operations = nlohmann::json::array();
  for (const BlockRun& r : nr.runs) operations.push_back(operation_json(r, p.cfg, rep.thesis_clocks(r.block, mapper::to_string(r.strategy))));
  std::map<std::string, std::map<std::string, double>> category_cycles;  // --whole: per strategy asked
  if (req.whole) category_cycles = category_sums(operations);
  if (s.tally.on()) out << "\n" << s.tally.line("block runs") << "\n";
  if (s.journal.failed() && !nr.stopped) out << fmt::format("\nstopped after {} block runs: {}\n", nr.runs.size(), s.journal.error());
  if (nr.stopped)
    out << fmt::format("\nstopped by signal {} after {} block runs: what finished is reported below{}\n", nr.stopped,
                       nr.runs.size(), s.journal.on() ? " and in " + s.journal.path() : "");

  // the console's tables: the thesis's layouts, the silicon's, the targets, the speed
  const std::vector<bool> ranked = print_strategy_table(rep, nr.runs, out);
  const CategoryTally categories = req.whole && rep.model ? print_category_table(rep, category_cycles, nr.substituted, out) : CategoryTally{};
  print_bound_table(operations, out);
  const nlohmann::json silicon = print_silicon(rep, nr.runs, out);
  const Speeds speed = speeds(nr.runs);
  print_targets(rep, nr.runs, ranked, categories, speed,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(), nr.skipped, out);
  print_speed(rep, speed, out);
  if (req.jobs > 1) {
    struct rusage workers {};
    getrusage(RUSAGE_CHILDREN, &workers);
    out << fmt::format("jobs: {} of {} block runs ran in {} worker processes at once (the walls inside the model and the RTL "
                       "above are theirs, summed); the largest worker's peak memory {:.0f} MB\n",
                       s.tally.taken, nr.total_runs, req.jobs, double(workers.ru_maxrss) / 1024.0);
  }

  // the result records and every output made of them
  const ResultSet results = result_records(req, p, rep, nr, output_check, category_cycles);
  if (const std::string counts = format_activity_and_energy(results); !counts.empty()) out << "\n" << counts;
  if (!p.shard.whole()) out << "\nshard: " << format_status_counts(results) << "\n";
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;
  std::string json_text;
  if (!req.json_out.empty())
    json_text = run_net_report_json(report_head(req, p, rep, nr, speed, silicon, output_record, s.tally), operations, results).dump(2) + "\n";
  // every output is tried, whatever became of the others; the block runs are in the journal already
  const bool json_written = write_outputs({{req.json_out, [&] { return json_text; }}}, err);
  const bool rest_written = write_result_outputs(results, {req.html_out, req.junit_out, req.csv_out}, err);
  if (nr.stopped) return StopOnSignal::exit_code(nr.stopped);
  if (s.journal.failed()) {
    err << "s2cosim run-net: " << s.journal.error() << ": the run stopped after the block in hand\n";
    return kExitOutput;
  }
  if (!json_written || !rest_written) return kExitOutput;
  return nr.all_ok ? kExitPass : kExitFail;
}

RtlSimOptions rtl_sim_as_run(const RunNetRequest& req) {
  RtlSimOptions sim = req.rtl_sim;
  if (req.jobs > 1 && sim.threads == 0)
    sim.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(req.jobs)));
  return sim;
}

int check_model(const std::string& path, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    err << "s2cosim check: " << path << ": no such file\n";
    return 2;
  }
  if (!path.ends_with(".onnx")) {
    err << "s2cosim check: " << path << ": expected an ONNX model (.onnx)\n";
    return 2;
  }
  const mapper::OnnxCheck c = mapper::check_onnx(path);
  for (const std::string& n : c.notes) out << "note: " << n << "\n";
  std::vector<std::string> problems = c.problems;
  if (c.network) {
    try {
      const mapper::ParsedNetwork p = mapper::parse_network(*c.network);
      HwConfig cfg = build_hw_config("", "", {});
      cfg.chip = qpe_dram_chip();
      const mapper::NetworkSplit split = mapper::split_network(p, mapper::split_rules(mapper::Target::Qpe, cfg), {});
      out << fmt::format("{}: {} layers, {} operation blocks on QPE-DRAM", path, c.network->layers.size(), split.blocks.size());
      if (!c.network->host_activation.empty()) out << "; its final " << c.network->host_activation << " on the host";
      out << "\n";
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  for (const std::string& p : problems) out << "will not map: " << p << "\n";
  if (!problems.empty()) {
    out << fmt::format("{}: {} problem{}; the network will not run until each is changed\n", path, problems.size(),
                       problems.size() == 1 ? "" : "s");
    return 1;
  }
  out << path << ": the network will run (s2cosim run-net --net " << path << " --input X.npy)\n";
  return 0;
}

}  // namespace s2
