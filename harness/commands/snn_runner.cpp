#include "harness/commands/snn_runner.h"
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
#include "harness/outputs/snn_figures.h"
#include "harness/outputs/snn_outputs.h"
#include "harness/stimulus/snn_files.h"
#include "mapper/snn_layouts.h"
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
      if (!be.rtl) be.rtl = make_rtl_stream_backend(cfg);
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
  Findings f;
  f.error = !k.model.error.empty() || !k.rtl.error.empty();
  f.hang = (k.model.result && !k.model.result->completed) || (k.rtl.result && !k.rtl.result->completed);
  f.mismatch = (k.model.completed() && !k.model.data_match) || (k.rtl.completed() && !k.rtl.data_match);
  f.delta = c.delta;
  c.status = classify(f, req.policy.deviation_bound);
  if (c.status == Status::Error)
    c.message = !k.model.error.empty() ? "model: " + k.model.error : "RTL: " + k.rtl.error;
  else if (c.status == Status::Hang)
    c.message = k.model.result && !k.model.result->completed ? "MODEL HANG " + k.model.result->stalled : "RTL HANG " + k.rtl.result->stalled;
  else if (c.status == Status::Mismatch)
    c.message = k.model.completed() && !k.model.data_match ? "model currents differ from the golden ones: " + k.model.first_difference
                                                           : "RTL currents differ from the golden ones: " + k.rtl.first_difference;
  else if (c.status == Status::Deviation)
    c.message = fmt::format("delta {:+.2f}% (model {} clk, RTL {} clk)", 100 * *c.delta, *c.model_cycles, *c.rtl_cycles);
  c.labels = {{"layout", c.name},
              {"PEs", pes_label(*k.plan)},
              {"SRAM bytes", std::to_string(k.plan->sram.total())},
              {"MLA tasks", std::to_string(k.plan->mla_tasks)},
              {"steps per multiplication", std::to_string(k.plan->steps_per_batch)}};
}

// The clocks per timestep a run took (the RTL's, else the model's), and the model's MLA and ARM shares.
std::optional<double> per_step(const SnnRun& r, const SnnLayer& l) {
  return r.completed() ? std::optional<double>(double(r.result->cycles) / double(l.timesteps)) : std::nullopt;
}
std::optional<double> reference_per_step(const LayoutCheck& k, const SnnLayer& l) {
  if (auto v = per_step(k.rtl, l)) return v;
  return per_step(k.model, l);
}

nlohmann::ordered_json layout_json(const LayoutCheck& k, const SnnLayer& l, const std::map<SnnLayout, const LayoutCheck*>& by) {
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
  const auto orig = by.find(SnnLayout::OriginalMac);
  j["memory_percent_of_original_mac"] = orig != by.end() && orig->second->plan
                                            ? nlohmann::ordered_json(100.0 * double(p.sram.total()) / double(orig->second->plan->sram.total()))
                                            : nlohmann::ordered_json(nullptr);
  j["steps_per_multiplication"] = p.steps_per_batch;
  j["mla_tasks"] = p.mla_tasks;
  j["model_cycles_per_timestep"] = json_or_null(per_step(k.model, l));
  j["rtl_cycles_per_timestep"] = json_or_null(per_step(k.rtl, l));
  j["delta"] = json_or_null(k.c.delta);
  const SnnRun& any = k.model.completed() ? k.model : k.rtl;
  if (any.completed()) {
    j["arm_cycles_per_timestep"] = double(any.result->arm_cycles) / double(l.timesteps);
    if (k.model.completed())
      j["mla_cycles_per_timestep"] = double(k.model.result->pe_time[static_cast<std::size_t>(PeTime::Mla)]) / double(l.timesteps);
  }
  const auto serial = by.find(SnnLayout::SerialArm);
  const std::optional<double> mine = reference_per_step(k, l);
  const std::optional<double> base = serial != by.end() ? reference_per_step(*serial->second, l) : std::nullopt;
  j["time_percent_of_serial_arm"] = mine && base ? nlohmann::ordered_json(100.0 * *mine / *base) : nlohmann::ordered_json(nullptr);
  j["data_match"] = (k.model.completed() || k.rtl.completed()) &&
                    (!k.model.completed() || k.model.data_match) && (!k.rtl.completed() || k.rtl.data_match);
  j["model_data_match"] = k.model.completed() ? nlohmann::ordered_json(k.model.data_match) : nlohmann::ordered_json(nullptr);
  j["rtl_data_match"] = k.rtl.completed() ? nlohmann::ordered_json(k.rtl.data_match) : nlohmann::ordered_json(nullptr);
  j["replay"] = k.c.replay;
  return j;
}

// Figure 10's bars: per planned layout, its PEs and SRAM, its clocks per timestep and the model's PE-time shares.
std::vector<SnnFigureLayout> figure10(const std::vector<LayoutCheck>& checks, const SnnLayer& l) {
  std::vector<SnnFigureLayout> fig;
  for (const LayoutCheck& k : checks) {
    if (!k.plan) continue;
    SnnFigureLayout f{k.c.name, static_cast<int>(k.plan->pes.size()), k.plan->sram, reference_per_step(k, l), std::nullopt};
    if (k.model.completed()) f.pe_time = k.model.result->pe_time;
    fig.push_back(f);
  }
  return fig;
}

// --currents: what a backend computed (the first layout's that finished, the RTL's before the model's); none if
// no run finished.
const std::vector<std::int32_t>* backend_currents(const std::vector<LayoutCheck>& checks) {
  for (const LayoutCheck& k : checks) {
    if (k.rtl.completed()) return &k.rtl.currents;
    if (k.model.completed()) return &k.model.currents;
  }
  return nullptr;
}

std::string cell(const std::optional<double>& v, const char* f = "{:.0f}") { return v ? fmt::format(fmt::runtime(f), *v) : "-"; }

void print_table(const std::vector<LayoutCheck>& checks, const SnnLayer& l, const std::map<SnnLayout, const LayoutCheck*>& by,
                 std::ostream& out) {
  out << fmt::format("{:<14} {:>4} {:>9} {:>6} {:>5} {:>10} {:>10} {:>8} {:>9} {:>7}  {:<5} {}\n", "layout", "PEs", "SRAM B",
                     "%orig", "MMs", "model/step", "RTL/step", "delta", "ARM/step", "%serial", "data", "status");
  for (const LayoutCheck& k : checks) {
    const nlohmann::ordered_json j = layout_json(k, l, by);
    auto num = [&](const char* key) { return j.contains(key) && !j[key].is_null() ? std::optional<double>(j[key].get<double>()) : std::nullopt; };
    const std::string data = !j.contains("data_match") ? "-" : j["data_match"].get<bool>() ? "ok" : "DIFFER";
    out << fmt::format("{:<14} {:>4} {:>9} {:>6} {:>5} {:>10} {:>10} {:>8} {:>9} {:>7}  {:<5} {}\n", k.c.name, k.plan ? std::to_string(k.plan->pes.size()) : "-",
                       k.plan ? std::to_string(k.plan->sram.total()) : "-", cell(num("memory_percent_of_original_mac"), "{:.1f}"),
                       k.plan ? std::to_string(k.plan->mla_tasks) : "-", cell(num("model_cycles_per_timestep"), "{:.1f}"),
                       cell(num("rtl_cycles_per_timestep"), "{:.1f}"),
                       k.c.delta ? fmt::format("{:+.2f}%", 100 * *k.c.delta) : "-", cell(num("arm_cycles_per_timestep"), "{:.1f}"),
                       cell(num("time_percent_of_serial_arm"), "{:.1f}"), data, to_string(k.c.status));
    if (!k.c.message.empty()) out << "    " << k.c.message << "\n";
  }
}

// The request's inputs checked before anything runs; false (said on `err`) for bad input.
bool check_request(const SnnRequest& req, std::vector<SnnLayout>& layouts, std::ostream& err) {
  try {
    validate(req.policy);
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
  return check_paths({{"--json", req.json_out}, {"--junit", req.junit_out}, {"--html", req.html_out}, {"--currents", req.currents_out}},
                     {{"--weights", req.weights_file}, {"--spikes", req.spikes_file}}, err);
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
  std::vector<SnnLayout> layouts;
  if (!check_request(req, layouts, err)) return kExitBadInput;
  HwConfig cfg;
  SnnLayer layer;
  try {
    cfg = build_hw_config(req.config_file, req.mac, req.flaws);
    if (req.target == "qpe") {
      cfg.chip = qpe_dram_chip();
    } else {
      if (!req.preset.empty() || cfg.chip.qpes() == 1) apply_preset(cfg, req.preset.empty() ? "prototype" : req.preset);
      validate(cfg);
    }
    layer = req.weights_file.empty() ? draw_snn_layer(req.draw) : read_snn_layer(req.weights_file, req.spikes_file);
    if (!req.save_layer_dir.empty()) save_snn_layer(layer, req.save_layer_dir);
  } catch (const std::exception& e) {
    err << "s2cosim snn: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::uint64_t budget = req.budget_bytes ? req.budget_bytes : std::uint64_t(cfg.sram_mla_budget_bytes);
  const std::vector<std::int32_t> golden = snn_currents(layer);
  ResultSet results;
  results.command = "snn";
  results.title = fmt::format("SNN layer {} pre x {} post, {} delays, {} steps on {}, backend {}", layer.pre, layer.post, layer.delays,
                              layer.timesteps, cfg.chip.name, req.backend);
  results.config = to_json(cfg);
  results.config_hash = config_hash(cfg);
  results.policy = req.policy;
  results.hardware = hw_config_line(cfg);
  results.total = layouts.size();
  results.notes.push_back("currents bit-exact against the golden reference computed from the synapse list; delta = (model - RTL) / RTL "
                          "(thesis equation 5.1) over the whole stream, spike loads and current stores included");
  results.notes.push_back("a layout one PE's budget holds runs on one PE (the Dominant); a larger one on a Dominant and the fewest "
                          "Subordinates that hold it (docs/snn.md); weights preloaded in SRAM; ARM clocks of the SNN operations are "
                          "assumptions (docs/snn.md)");
  for (const std::string& a : cfg.chip.assumptions) results.notes.push_back("assumption (preset " + cfg.chip.name + "): " + a);

  // every layout planned before anything runs: one the budget or the system cannot hold is the request's fault
  std::vector<LayoutCheck> checks(layouts.size());
  bool planned = true;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    checks[i].layout = layouts[i];
    checks[i].c.index = i;
    try {
      checks[i].plan = mapper::plan_snn_layer(layer, layouts[i], cfg, budget);
    } catch (const std::invalid_argument& e) {
      err << "s2cosim snn: " << e.what() << "\n";
      planned = false;
    }
  }
  if (!planned) {
    err << "s2cosim snn: nothing run (--budget-bytes " << budget << ", --target " << req.target
        << (req.preset.empty() ? "" : " --preset " + req.preset) << "; or --layout one that fits)\n";
    return kExitBadInput;
  }
  SnnBackends backends;
  for (LayoutCheck& k : checks) check_layout(req, layer, golden, cfg, backends, k);
  std::map<SnnLayout, const LayoutCheck*> by;
  for (const LayoutCheck& k : checks) by[k.layout] = &k;
  out << fmt::format("SNN layer: {} pre, {} post, {} delays, {} timesteps, {} synapses, {} spikes; budget {} bytes per PE\n", layer.pre,
                     layer.post, layer.delays, layer.timesteps, layer.synapses(), layer.spike_count(), budget);
  if (!req.quiet) print_table(checks, layer, by, out);
  nlohmann::ordered_json jl = nlohmann::ordered_json::array();
  for (const LayoutCheck& k : checks) {
    jl.push_back(layout_json(k, layer, by));
    results.checks.push_back(k.c);
  }
  results.figures = snn_figure10_figures(figure10(checks, layer));
  out << "\n" << format_status_counts(results) << "\n";
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;

  bool written = true;
  try {
    if (!req.currents_out.empty()) {
      if (const auto* cur = backend_currents(checks))
        write_snn_currents(req.currents_out, layer.timesteps, layer.post, *cur);
      else
        err << "s2cosim snn: no layout's run finished: " << req.currents_out << " not written\n";
    }
    if (!req.json_out.empty()) {
      nlohmann::ordered_json j;
      j["command"] = "snn";
      j["layer"] = {{"pre", layer.pre}, {"post", layer.post}, {"delays", layer.delays}, {"timesteps", layer.timesteps},
                    {"synapses", layer.synapses()}, {"spikes", layer.spike_count()}};
      if (req.weights_file.empty())
        j["layer"].update({{"seed", req.draw.seed}, {"density", req.draw.density}, {"rate", req.draw.rate}});
      else
        j["layer"].update({{"weights", req.weights_file}, {"spikes_file", req.spikes_file}});
      j["target"] = req.target;
      j["system"] = cfg.chip.name;
      j["backend"] = req.backend;
      j["budget_bytes"] = budget;
      j["layouts"] = jl;
      j["results"] = results_json(results);
      write_text_file(req.json_out, j.dump(2) + "\n");
    }
  } catch (const std::exception& e) {
    err << "s2cosim snn: " << e.what() << "\n";
    written = false;
  }
  if (!write_result_outputs(results, {req.html_out, req.junit_out, ""}, err) || !written) return kExitOutput;
  return summarize(results).all_passed() ? kExitPass : kExitFail;
}

}  // namespace s2
