#include "harness/commands/snn_runner.h"
#include "harness/commands/snn_records.h"
#include "harness/commands/snn_sweep.h"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/check/comparators.h"
#include "harness/outputs/output_files.h"
#include "harness/outputs/result.h"
#include "harness/outputs/snn_outputs.h"
#include "harness/session/journal.h"
#include "harness/stimulus/snn_files.h"
#include "mapper/snn/layouts.h"
#include "model/json_field.h"

namespace s2 {
namespace {

using mapper::SnnLayout;
using mapper::SnnPlan;

// One backend's run of a layout's stream.
struct SnnRun {
  std::optional<StreamResult> result;
  std::vector<std::int32_t> currents;  // what the stream left in DRAM
  std::string error;
  bool data_match = false;
  std::string first_difference;
  double wall_s = 0;
  bool completed() const { return result && result->completed; }
};

SnnRun run_layout(StreamBackend& b, const SnnPlan& plan, const SnnLayer& layer, const std::vector<std::int32_t>& golden,
                  const StreamRunOptions& opt) {
  SnnRun r;
  SystemMemory mem = plan.memory;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    r.result = b.run(plan.stream, mem, opt);
    if (r.result->completed) {
      r.currents = mapper::snn_plan_currents(plan, layer, mem);
      const std::vector<std::int32_t>& got = r.currents;
      r.data_match = got == golden;
      for (std::size_t k = 0; k < got.size() && r.first_difference.empty(); ++k)
        if (got[k] != golden[k])
          r.first_difference = fmt::format("I[{}][{}] = {}, golden {}", k / std::size_t(layer.post), k % std::size_t(layer.post), got[k], golden[k]);
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// A layout's plan, runs and verdict.
struct LayoutCheck {
  SnnLayout layout = SnnLayout::SerialArm;
  std::optional<SnnPlan> plan;
  SnnRun model, rtl;
  CheckResult c;
  nlohmann::ordered_json entry;  // its layouts[] entry, percentages null
  bool taken = false;            // from the journal (--resume): entry and c are the record's, no runs
  bool done = false;             // run or taken
};

// "1 (Dominant)" or "4 (Dominant + 3 Subordinates)"
std::string pes_label(const SnnPlan& p) {
  return p.subordinates() == 0 ? "1 (Dominant)" : fmt::format("{} (Dominant + {} Subordinates)", p.pes.size(), p.subordinates());
}

nlohmann::ordered_json memory_json(const mapper::SnnMemory& m) {
  return {{"weights", m.weights}, {"spikes", m.spikes}, {"spike_map", m.spike_map}, {"index", m.index}, {"currents", m.currents},
          {"buffers", m.buffers}};
}

std::string replay(const SnnRequest& req, SnnLayout l) {
  const SnnDraw& d = req.draw;
  const std::string layer = !req.weights_file.empty()
                                ? "--weights " + shell_quote(req.weights_file) + " --spikes " + shell_quote(req.spikes_file)
                                : fmt::format("--pre {} --post {} --delays {} --density {} --rate {} --timesteps {} --seed {}", d.pre,
                                              d.post, d.delays, d.density, d.rate, d.timesteps, d.seed);
  std::string s = fmt::format("{} snn {} --layout {} --target {} --backend {}", shell_quote(program_name()), layer,
                              mapper::to_string(l), req.target, req.backend);
  if (!req.preset.empty()) s += " --preset " + shell_quote(req.preset);
  if (req.budget_bytes) s += fmt::format(" --budget-bytes {}", req.budget_bytes);
  if (!req.config_file.empty()) s += " --config " + shell_quote(req.config_file);
  if (!req.mac.empty()) s += " --mac " + req.mac;
  for (const std::string& f : req.flaws) s += " --flaw " + f;
  if (req.policy.deviation_bound != CheckPolicy{}.deviation_bound) s += fmt::format(" --deviation-bound {}", req.policy.deviation_bound);
  return s;
}

// The layout planned and run on the chosen backends (the RTL's watchdog from the model's clocks), and judged.
// The backends, made once (SystemC elaborates one model per process) on first use.
struct SnnBackends {
  std::unique_ptr<StreamBackend> model, rtl;
};

void check_layout(const SnnRequest& req, const SnnLayer& layer, const std::vector<std::int32_t>& golden, const HwConfig& cfg,
                  SnnBackends& be, LayoutCheck& k) {
  k.c.name = mapper::to_string(k.layout);
  k.c.group = "snn";
  k.c.replay = replay(req, k.layout);
  try {
    if (req.backend != "rtl") {
      if (!be.model) be.model = make_model_stream_backend(cfg);
      k.model = run_layout(*be.model, *k.plan, layer, golden, StreamRunOptions{});
    }
    if (req.backend != "model") {
      StreamRunOptions opt;
      opt.watchdog_cycles = k.model.completed() ? req.policy.stream_budget.cycles(k.model.result->cycles)
                                                : stream_cycle_bound(k.plan->stream, cfg);
      if (!be.rtl) be.rtl = make_rtl_stream_backend(cfg, req.rtl_sim);
      k.rtl = run_layout(*be.rtl, *k.plan, layer, golden, opt);
    }
  } catch (const std::exception& e) {
    k.c.status = Status::Error;
    k.c.message = e.what();
    return;
  }
  CheckResult& c = k.c;
  if (k.model.result) c.model_cycles = k.model.result->cycles;
  if (k.rtl.result) c.rtl_cycles = k.rtl.result->cycles;
  c.model_wall_s = k.model.wall_s;
  c.rtl_wall_s = k.rtl.wall_s;
  if (k.model.completed() && k.rtl.completed()) c.delta = cycle_delta(k.rtl.result->cycles, k.model.result->cycles);
  // the counts of the runs that finished, and the model's against the RTL's
  c.activity = finished_activity(k.model.result ? &*k.model.result : nullptr, k.rtl.result ? &*k.rtl.result : nullptr);
  const ActivityComparison counts = compare_activity(c.activity, req.policy);
  Findings f;
  f.error = !k.model.error.empty() || !k.rtl.error.empty();
  f.hang = (k.model.result && !k.model.result->completed) || (k.rtl.result && !k.rtl.result->completed);
  f.mismatch = (k.model.completed() && !k.model.data_match) || (k.rtl.completed() && !k.rtl.data_match);
  f.delta = c.delta;
  f.activity_deviation = counts.deviates();
  c.status = classify(f, req.policy.deviation_bound);
  if (c.status == Status::Error)
    c.message = !k.model.error.empty() ? "model: " + k.model.error : "RTL: " + k.rtl.error;
  else if (c.status == Status::Hang)
    c.message = k.model.result && !k.model.result->completed ? "MODEL HANG " + k.model.result->stalled : "RTL HANG " + k.rtl.result->stalled;
  else if (c.status == Status::Mismatch)
    c.message = k.model.completed() && !k.model.data_match ? "model currents differ from the golden ones: " + k.model.first_difference
                                                           : "RTL currents differ from the golden ones: " + k.rtl.first_difference;
  else if (c.status == Status::Deviation && c.delta && std::fabs(*c.delta) > req.policy.deviation_bound)
    c.message = fmt::format("delta {:+.2f}% (model {} clk, RTL {} clk)", 100 * *c.delta, *c.model_cycles, *c.rtl_cycles);
  if (counts.deviates())
    c.message += (c.message.empty() ? "" : "; ") + fmt::format("activity counts differ by more than {:g}%: {}",
                                                               100 * req.policy.activity_deviation_bound, counts.describe());
  c.labels = {{"layout", c.name},
              {"PEs", pes_label(*k.plan)},
              {"SRAM bytes", std::to_string(k.plan->sram.total())},
              {"MLA tasks", std::to_string(k.plan->mla_tasks)},
              {"steps per multiplication", std::to_string(k.plan->steps_per_batch)}};
}

// The clocks per timestep a run took.
std::optional<double> per_step(const SnnRun& r, const SnnLayer& l) {
  return r.completed() ? std::optional<double>(double(r.result->cycles) / double(l.timesteps)) : std::nullopt;
}

// A layout's layouts[] entry; its percentages relative to original_mac and serial_arm are left null here and
// made from the entries at hand when the report is (commands/snn_records.h), so that a resumed or merged run's
// are the same.
nlohmann::ordered_json layout_json(const LayoutCheck& k, const SnnLayer& l) {
  nlohmann::ordered_json j;
  j["layout"] = k.c.name;
  j["status"] = to_string(k.c.status);
  j["message"] = k.c.message;
  if (!k.plan) return j;
  const SnnPlan& p = *k.plan;
  j["pes"] = p.pes.size();
  j["pes_dominant"] = 1;
  j["pes_subordinate"] = p.subordinates();
  j["memory_bytes"] = p.sram.total();
  j["memory"] = memory_json(p.sram);
  nlohmann::ordered_json per_pe = nlohmann::ordered_json::array();
  for (const mapper::SnnPe& pe : p.pes)
    per_pe.push_back({{"pe", pe.pe}, {"qpe", pe.pe / kPesPerQpe}, {"role", pe.dominant ? "dominant" : "subordinate"},
                      {"operand_a", pe.dominant ? "builds" : pe.neighbour_operand ? "neighbour" : "dma_copy"},
                      {"memory_bytes", pe.sram.total()}, {"memory", memory_json(pe.sram)}});
  j["per_pe"] = per_pe;
  j["memory_percent_of_original_mac"] = nullptr;
  j["steps_per_multiplication"] = p.steps_per_batch;
  j["mla_tasks"] = p.mla_tasks;
  j["model_cycles_per_timestep"] = json_or_null(per_step(k.model, l));
  j["rtl_cycles_per_timestep"] = json_or_null(per_step(k.rtl, l));
  j["delta"] = json_or_null(k.c.delta);
  const SnnRun& any = k.model.completed() ? k.model : k.rtl;
  if (any.completed()) {
    j["arm_cycles_per_timestep"] = double(any.result->arm_cycles) / double(l.timesteps);
    if (k.model.completed()) {
      j["mla_cycles_per_timestep"] = double(k.model.result->pe_time[static_cast<std::size_t>(PeTime::Mla)]) / double(l.timesteps);
      nlohmann::ordered_json shares;  // where the PEs' time went (Figure 10's time bars)
      for (std::size_t i = 0; i < k.model.result->pe_time.size(); ++i)
        shares[to_string(static_cast<PeTime>(i))] = double(k.model.result->pe_time[i]) / double(l.timesteps);
      j["model_pe_cycles_per_timestep"] = shares;
    }
  }
  j["time_percent_of_serial_arm"] = nullptr;
  j["data_match"] = (k.model.completed() || k.rtl.completed()) &&
                    (!k.model.completed() || k.model.data_match) && (!k.rtl.completed() || k.rtl.data_match);
  j["model_data_match"] = k.model.completed() ? nlohmann::ordered_json(k.model.data_match) : nlohmann::ordered_json(nullptr);
  j["rtl_data_match"] = k.rtl.completed() ? nlohmann::ordered_json(k.rtl.data_match) : nlohmann::ordered_json(nullptr);
  j["replay"] = k.c.replay;
  return j;
}

// --currents: what a backend computed (the first layout's that finished, the RTL's before the model's); none if
// no run finished. A layout taken from the journal left the golden currents if its record says they matched;
// if they did not, they are not kept and `why` says so.
const std::vector<std::int32_t>* backend_currents(const std::vector<LayoutCheck>& checks, const std::vector<std::int32_t>& golden,
                                                  std::string& why) {
  for (const LayoutCheck& k : checks) {
    if (k.taken) {
      for (const char* key : {"rtl_data_match", "model_data_match"})
        if (k.entry.contains(key) && k.entry.at(key).is_boolean()) {
          if (k.entry.at(key).get<bool>()) return &golden;
          why = "the first finished layout, " + k.c.name + ", was taken from the journal, which does not keep currents that differ from the golden ones";
          return nullptr;
        }
      continue;
    }
    if (k.rtl.completed()) return &k.rtl.currents;
    if (k.model.completed()) return &k.model.currents;
  }
  why = "no layout's run finished";
  return nullptr;
}

std::string cell(const std::optional<double>& v, const char* f = "{:.0f}") { return v ? fmt::format(fmt::runtime(f), *v) : "-"; }

// The console's table, from the layouts' entries (percentages filled).
void print_table(const nlohmann::ordered_json& layouts, std::ostream& out) {
  out << fmt::format("{:<14} {:>4} {:>9} {:>6} {:>5} {:>10} {:>10} {:>8} {:>9} {:>7}  {:<5} {}\n", "layout", "PEs", "SRAM B",
                     "%orig", "MMs", "model/step", "RTL/step", "delta", "ARM/step", "%serial", "data", "status");
  for (const nlohmann::ordered_json& j : layouts) {
    auto num = [&](const char* key) { return j.contains(key) && !j[key].is_null() ? std::optional<double>(j[key].get<double>()) : std::nullopt; };
    auto count = [&](const char* key) { return j.contains(key) ? j[key].dump() : std::string("-"); };
    const std::optional<double> delta = num("delta");
    const std::string data = !j.contains("data_match") ? "-" : j["data_match"].get<bool>() ? "ok" : "DIFFER";
    out << fmt::format("{:<14} {:>4} {:>9} {:>6} {:>5} {:>10} {:>10} {:>8} {:>9} {:>7}  {:<5} {}\n", j["layout"].get<std::string>(),
                       count("pes"), count("memory_bytes"), cell(num("memory_percent_of_original_mac"), "{:.1f}"), count("mla_tasks"),
                       cell(num("model_cycles_per_timestep"), "{:.1f}"), cell(num("rtl_cycles_per_timestep"), "{:.1f}"),
                       delta ? fmt::format("{:+.2f}%", 100 * *delta) : "-", cell(num("arm_cycles_per_timestep"), "{:.1f}"),
                       cell(num("time_percent_of_serial_arm"), "{:.1f}"), data, j["status"].get<std::string>());
    if (const std::string m = j["message"].get<std::string>(); !m.empty()) out << "    " << m << "\n";
  }
}

// What a run works on: the configuration, the layer and its golden currents, every layout of the run in order
// (each planned; this shard's are run), the shard and the journal's file.
struct SnnSetup {
  HwConfig cfg;
  SnnLayer layer;
  std::uint64_t budget = 0;
  std::vector<std::int32_t> golden;
  std::vector<LayoutCheck> checks;
  Shard shard;
  std::string journal_file;
  std::optional<EnergyTable> energy;  // --energy
};

// The request's inputs checked before anything runs; false (said on `err`) for bad input.
bool check_request(const SnnRequest& req, std::vector<SnnLayout>& layouts, SnnSetup& s, std::ostream& err) {
  try {
    validate(req.policy);
    s.shard = parse_shard(req.shard);
    if (!req.energy.empty()) s.energy = energy_table_named(req.energy);
    if (req.target != "qpe" && req.target != "s2") throw std::invalid_argument("--target " + req.target + ": expected qpe or s2");
    if (req.target == "qpe" && !req.preset.empty())
      throw std::invalid_argument("--preset " + req.preset + ": a chip preset needs --target s2");
    if (req.layout == "all") {
      layouts.assign(std::begin(mapper::kSnnLayouts), std::end(mapper::kSnnLayouts));
    } else if (const auto l = mapper::snn_layout_named(req.layout)) {
      layouts = {*l};
    } else {
      throw std::invalid_argument("--layout " + req.layout + ": expected all, serial_arm, original_mac, operand_stack, echelon or echelon_mixed");
    }
  } catch (const std::exception& e) {
    err << "s2cosim snn: " << e.what() << "\n";
    return false;
  }
  if (req.weights_file.empty() != req.spikes_file.empty()) {
    err << "s2cosim snn: --weights and --spikes go together (a layer's two files)\n";
    return false;
  }
  s.journal_file = journal_path(req.json_out, req.journal);
  return check_paths({{"--json", req.json_out}, {"--junit", req.junit_out}, {"--html", req.html_out}, {"--currents", req.currents_out},
                      {"--journal", s.journal_file}},
                     {{"--weights", req.weights_file}, {"--spikes", req.spikes_file}, {"--resume", req.resume},
                      {"--energy", req.energy == "default" ? std::string() : req.energy}},
                     err, s.journal_file,
                     req.resume);
}

// The request checked, the configuration built, the layer drawn or read, and every layout planned before
// anything runs (one the budget or the system cannot hold is the request's fault). Returns 0 or kExitBadInput.
int prepare(const SnnRequest& req, SnnSetup& s, std::ostream& err) {
  std::vector<SnnLayout> layouts;
  if (!check_request(req, layouts, s, err)) return kExitBadInput;
  try {
    s.cfg = build_hw_config(req.config_file, req.mac, req.flaws);
    if (req.target == "qpe") {
      s.cfg.chip = qpe_dram_chip();
    } else {
      if (!req.preset.empty() || s.cfg.chip.qpes() == 1) apply_preset(s.cfg, req.preset.empty() ? "prototype" : req.preset);
      validate(s.cfg);
    }
    s.layer = req.weights_file.empty() ? draw_snn_layer(req.draw) : read_snn_layer(req.weights_file, req.spikes_file);
    if (!req.save_layer_dir.empty()) save_snn_layer(s.layer, req.save_layer_dir);
  } catch (const std::exception& e) {
    err << "s2cosim snn: " << e.what() << "\n";
    return kExitBadInput;
  }
  s.budget = req.budget_bytes ? req.budget_bytes : std::uint64_t(s.cfg.sram_mla_budget_bytes);
  s.golden = snn_currents(s.layer);
  s.checks.resize(layouts.size());
  bool planned = true;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    s.checks[i].layout = layouts[i];
    s.checks[i].c.index = i;
    try {
      s.checks[i].plan = mapper::plan_snn_layer(s.layer, layouts[i], s.cfg, s.budget);
    } catch (const std::invalid_argument& e) {
      err << "s2cosim snn: " << e.what() << "\n";
      planned = false;
    }
  }
  if (!planned) {
    err << "s2cosim snn: nothing run (--budget-bytes " << s.budget << ", --target " << req.target
        << (req.preset.empty() ? "" : " --preset " + req.preset) << "; or --layout one that fits)\n";
    return kExitBadInput;
  }
  return 0;
}

ResultSet results_head(const SnnRequest& req, const SnnSetup& s) {
  ResultSet results;
  results.command = "snn";
  results.title = fmt::format("SNN layer {} pre x {} post, {} delays, {} steps on {}, backend {}", s.layer.pre, s.layer.post,
                              s.layer.delays, s.layer.timesteps, s.cfg.chip.name, req.backend);
  results.config = to_json(s.cfg);
  results.config_hash = config_hash(s.cfg);
  results.policy = req.policy;
  results.hardware = hw_config_line(s.cfg);
  results.total = s.checks.size();
  results.shard = s.shard;
  results.notes.push_back("currents bit-exact against the golden reference computed from the synapse list; delta = (model - RTL) / RTL "
                          "(thesis equation 5.1) over the whole stream, spike loads and current stores included");
  results.notes.push_back("a layout one PE's budget holds runs on one PE (the Dominant); a larger one on a Dominant and the fewest "
                          "Subordinates that hold it (docs/snn.md); weights preloaded in SRAM; ARM clocks of the SNN operations are "
                          "assumptions (docs/snn.md)");
  for (const std::string& a : s.cfg.chip.assumptions) results.notes.push_back("assumption (preset " + s.cfg.chip.name + "): " + a);
  return results;
}

// The run's journal: every finished layout goes to it as it finishes, after a first record naming the run;
// --resume takes the layouts a journal of the same run holds.
struct SnnSession {
  nlohmann::ordered_json header;
  std::string hash, policy;
  std::map<std::string, std::pair<SnnLayoutRecord, std::string>> resumed;  // layout -> its last whole record, fingerprint
  ResumeTally tally;
  Journal journal;

  // what made a layout's record: the layout, the run (the header: the layer and its content, target, system,
  // backend, budget, configuration, flaws, deviation bound), the policy and the version
  std::string fingerprint(const std::string& layout) const {
    return journal_fingerprint(fmt::format("snn {} {} {}", layout, header.dump(), policy), hash);
  }
};

// A hash of the layer's content (sizes, weights, spikes): a journal of the same files edited since is another run's.
std::string layer_hash(const SnnLayer& l) {
  std::string bytes = fmt::format("{} {} {} {}\n", l.delays, l.pre, l.post, l.timesteps);
  bytes.append(reinterpret_cast<const char*>(l.weights.data()), l.weights.size());
  bytes.append(reinterpret_cast<const char*>(l.spikes.data()), l.spikes.size());
  return text_hash(bytes);
}

nlohmann::ordered_json journal_header(const SnnRequest& req, const SnnSetup& s) {
  nlohmann::ordered_json h{{"journal", "snn"}};
  if (req.weights_file.empty()) {
    const SnnDraw& d = req.draw;
    h["pre"] = d.pre;
    h["post"] = d.post;
    h["delays"] = d.delays;
    h["timesteps"] = d.timesteps;
    h["density"] = d.density;
    h["rate"] = d.rate;
    h["seed"] = d.seed;
  } else {
    h["weights"] = req.weights_file;
    h["spikes"] = req.spikes_file;
  }
  h["layer_hash"] = layer_hash(s.layer);
  h["layouts"] = req.layout;
  h["target"] = req.target;
  h["system"] = s.cfg.chip.name;
  h["backend"] = req.backend;
  h["budget_bytes"] = s.budget;
  h["config_hash"] = config_hash(s.cfg);
  h["flaws"] = flaws_string(s.cfg);
  h["deviation_bound"] = req.policy.deviation_bound;
  if (!s.shard.whole()) h["shard"] = req.shard;  // a shard's journal resumes that shard only
  return h;
}

// Opens the journal and reads what --resume takes; throws naming the file (and line) for bad input.
void open_journal(const SnnRequest& req, const SnnSetup& s, SnnSession& j) {
  j.hash = config_hash(s.cfg);
  j.policy = policy_hash(req.policy);
  j.header = journal_header(req, s);
  const ResumedJournal records = open_run_journal(j.journal, s.journal_file, req.resume, j.header, j.tally);
  for (const JournalRecord& jr : records.records) {
    SnnLayoutRecord r;
    try {
      r = snn_layout_record_from_json(jr.record);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: {}", req.resume, jr.line, e.what()));
    }
    bool ours = false;
    for (std::size_t i = 0; i < s.checks.size(); ++i) ours = ours || (s.shard.takes(i) && mapper::to_string(s.checks[i].layout) == r.check.name);
    if (!ours) {
      ++j.tally.unknown;
      continue;
    }
    const std::string layout = r.check.name;
    j.resumed[layout] = {std::move(r), jr.fingerprint};
  }
  j.journal.start(j.header);
}

// This shard's layouts in order, each taken from the journal (a whole record with this run's fingerprint) or
// run, and journalled as it finishes. Returns the signal that stopped the run before a layout (0: none).
int run_layouts(const SnnRequest& req, SnnSetup& s, SnnSession& j) {
  SnnBackends backends;
  for (std::size_t i = 0; i < s.checks.size(); ++i) {
    if (!s.shard.takes(i)) continue;
    if (const int sig = StopOnSignal::signal()) return sig;
    if (j.journal.failed()) return 0;
    LayoutCheck& k = s.checks[i];
    const std::string fingerprint = j.fingerprint(mapper::to_string(k.layout));
    if (const auto it = j.resumed.find(mapper::to_string(k.layout)); it != j.resumed.end()) {
      if (it->second.second != fingerprint) {
        ++j.tally.changed;  // another version or policy made it: run again
      } else {
        k.entry = it->second.first.entry;
        k.c = it->second.first.check;
        k.c.index = i;
        k.c.replay = replay(req, k.layout);  // as this run's program is called
        k.entry["replay"] = k.c.replay;
        k.taken = true;
        ++j.tally.taken;
      }
    }
    if (!k.taken) {
      check_layout(req, s.layer, s.golden, s.cfg, backends, k);
      k.entry = layout_json(k, s.layer);
    }
    k.done = true;
    // a continued journal holds the taken records already
    if (!(k.taken && j.journal.continues())) j.journal.append(snn_layout_record_json({k.entry, k.c}), fingerprint);
  }
  return 0;
}

// The console, the JSON report, --currents, HTML and JUnit, of the layouts that finished. False if an output
// could not be written (said on `err`).
bool write_reports(const SnnRequest& req, const SnnSetup& s, const SnnSession& j, int stopped, ResultSet& results,
                   std::ostream& out, std::ostream& err) {
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  results.energy_table = s.energy;
  for (const LayoutCheck& k : s.checks)
    if (k.done) {
      results.checks.push_back(k.c);
      CheckResult& c = results.checks.back();
      // the counts and their energy with the entry (the energy from this run's table, whatever the journal's was)
      nlohmann::ordered_json entry = k.entry;
      entry["activity"] = activity_json(c.activity);
      if (s.energy) {
        charge_energy(c, *s.energy, s.cfg.pe_clock_mhz);
        entry["energy_pj"] = c.energy ? nlohmann::ordered_json(to_json(*c.energy)) : nlohmann::ordered_json(nullptr);
      }
      layouts.push_back(std::move(entry));
    }
  results.stopped_by_signal = stopped;
  const SnnLayer& layer = s.layer;
  out << fmt::format("SNN layer: {} pre, {} post, {} delays, {} timesteps, {} synapses, {} spikes; budget {} bytes per PE\n", layer.pre,
                     layer.post, layer.delays, layer.timesteps, layer.synapses(), layer.spike_count(), s.budget);
  if (j.tally.on()) out << j.tally.line("layouts") << "\n";
  if (stopped)
    out << fmt::format("stopped by signal {} after {} layouts: what finished is reported below{}\n", stopped, results.checks.size(),
                       j.journal.on() ? " and in " + j.journal.path() + " (--resume it)" : "");
  fill_snn_percentages(layouts);
  results.figures = snn_report_figures(layouts);
  if (!req.quiet) print_table(layouts, out);
  out << "\n" << format_status_counts(results) << "\n";
  out << format_wall_and_speed(results) << "\n";  // the layouts run here (taken from a journal: their wall times then)
  if (const std::string counts = format_activity_and_energy(results); !counts.empty()) out << counts;
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;

  bool written = true;
  try {
    if (!req.currents_out.empty()) {
      std::string why;
      if (const auto* cur = backend_currents(s.checks, s.golden, why))
        write_snn_currents(req.currents_out, layer.timesteps, layer.post, *cur);
      else
        err << "s2cosim snn: " << why << ": " << req.currents_out << " not written\n";
    }
    if (!req.json_out.empty()) {
      nlohmann::ordered_json head;
      head["command"] = "snn";
      head["layer"] = {{"pre", layer.pre}, {"post", layer.post}, {"delays", layer.delays}, {"timesteps", layer.timesteps},
                       {"synapses", layer.synapses()}, {"spikes", layer.spike_count()}};
      if (req.weights_file.empty())
        head["layer"].update({{"seed", req.draw.seed}, {"density", req.draw.density}, {"rate", req.draw.rate}});
      else
        head["layer"].update({{"weights", req.weights_file}, {"spikes_file", req.spikes_file}});
      head["target"] = req.target;
      head["system"] = s.cfg.chip.name;
      head["backend"] = req.backend;
      head["budget_bytes"] = s.budget;
      if (stopped) head["stopped_by_signal"] = stopped;
      nlohmann::ordered_json report = snn_report_json(head, layouts, results);
      if (j.tally.on()) report["resume"] = j.tally.json();
      write_text_file(req.json_out, report.dump(2) + "\n");
    }
  } catch (const std::exception& e) {
    err << "s2cosim snn: " << e.what() << "\n";
    written = false;
  }
  return write_result_outputs(results, {req.html_out, req.junit_out, ""}, err) && written;
}

}  // namespace

int snn(const SnnRequest& req, std::ostream& out, std::ostream& err) {
  if (!req.sweep.empty()) {
    if (req.sweep != "fig9") {
      err << "s2cosim snn: --sweep " << req.sweep << ": expected fig9\n";
      return kExitBadInput;
    }
    SnnSweepRequest s;
    if (!req.sweep_densities.empty()) s.densities = req.sweep_densities;
    s.seed = req.draw.seed;
    s.json_out = req.json_out;
    s.html_out = req.html_out;
    return snn_figure9(s, out, err);
  }
  SnnSetup s;
  if (const int rc = prepare(req, s, err)) return rc;
  SnnSession j;
  try {
    open_journal(req, s, j);
  } catch (const std::exception& e) {
    err << "s2cosim snn: " << e.what() << "\n";
    return kExitBadInput;
  }
  const StopOnSignal stop_on_signal;  // from here to the outputs, a signal stops the run after the layout in hand
  const int stopped = run_layouts(req, s, j);
  ResultSet results = results_head(req, s);
  const bool written = write_reports(req, s, j, stopped, results, out, err);
  return finished_run_exit_code(stopped, j.journal, written, summarize(results).all_passed(), "snn run", err);
}

}  // namespace s2
