#include "harness/commands/chip_regress.h"

#include "harness/outputs/output_files.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/stimulus/chip_random.h"
#include "harness/stimulus/chip_suite.h"
#include "harness/stimulus/stream_checks.h"
#include "harness/check/comparators.h"
#include "harness/session/progress.h"
#include "harness/commands/regress_report.h"
#include "harness/outputs/result.h"
#include "harness/commands/regress.h"
#include "model/json_field.h"

namespace s2 {
namespace {

// What the two runs left in memory, compared.
struct MemoryCompare {
  std::size_t differing = 0;    // compared bytes that differ
  std::size_t unspecified = 0;  // bytes the contract leaves unspecified that differ (not compared)
  std::size_t memories = 0;     // memories with a compared difference
  std::string first;            // the first compared difference, in words
};

std::string byte_hex(std::uint8_t b) { return fmt::format("{:#04x}", b); }

MemoryCompare compare_memory(const TaskStream& s, const HwConfig& cfg, const SystemMemory& model, const SystemMemory& rtl) {
  MemoryCompare m;
  auto note_first = [&](MemoryRef mem, std::size_t at, std::uint8_t mv, std::uint8_t rv) {
    if (!m.first.empty()) return;
    const std::string writers = chip_stream_writers(s, cfg, mem, at);
    m.first = fmt::format("{} byte {:#x}: model {}, RTL {} ({})", to_string(mem), at, byte_hex(mv), byte_hex(rv),
                          writers.empty() ? "no command writes it" : "written by " + writers);
  };
  for (std::size_t d = 0; d < model.drams.size() && d < rtl.drams.size(); ++d) {
    const auto &a = model.drams[d], &b = rtl.drams[d];
    std::size_t n = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (a[i] != b[i]) {
        note_first({MemoryRef::Kind::Dram, static_cast<int>(d)}, i, a[i], b[i]);
        ++n;
      }
    n += std::max(a.size(), b.size()) - std::min(a.size(), b.size());
    m.differing += n;
    m.memories += n > 0;
  }
  const auto unspecified = chip_stream_unspecified(s, cfg);
  for (const auto& [pe, a] : model.sram) {
    const auto it = rtl.sram.find(pe);
    if (it == rtl.sram.end()) continue;
    const auto& b = it->second;
    std::vector<char> skip(a.size(), 0);
    if (const auto u = unspecified.find(pe); u != unspecified.end())
      for (const auto& [lo, hi] : u->second)
        std::fill(skip.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(lo, a.size())),
                  skip.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(hi, a.size())), 1);
    std::size_t n = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      if (a[i] == b[i]) continue;
      if (skip[i]) {
        ++m.unspecified;
        continue;
      }
      note_first({MemoryRef::Kind::Sram, pe}, i, a[i], b[i]);
      ++n;
    }
    m.differing += n;
    m.memories += n > 0;
  }
  return m;
}

// One backend's run of a stream.
struct Run {
  std::optional<StreamResult> result;
  SystemMemory memory;
  std::string error;
  double wall_s = 0;
  bool completed() const { return result && result->completed; }
};

Run run_on(StreamBackend& b, const TaskStream& s, const SystemMemory& start, const StreamRunOptions& opt) {
  Run r;
  r.memory = start;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    r.result = b.run(s, r.memory, opt);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// Model minus RTL clocks at each PE's end, largest |difference| first.
struct PeDelta {
  int pe = 0;
  std::uint64_t model = 0, rtl = 0;
  std::int64_t clocks() const { return static_cast<std::int64_t>(model) - static_cast<std::int64_t>(rtl); }
};
std::vector<PeDelta> pe_deltas(const TaskStream& s, const StreamResult& model, const StreamResult& rtl) {
  std::vector<PeDelta> v;
  for (std::size_t p = 0; p < s.pe.size() && p < model.pe_end_cycle.size() && p < rtl.pe_end_cycle.size(); ++p)
    if (!s.pe[p].empty()) v.push_back({static_cast<int>(p), model.pe_end_cycle[p], rtl.pe_end_cycle[p]});
  std::stable_sort(v.begin(), v.end(), [](const PeDelta& a, const PeDelta& b) { return std::llabs(a.clocks()) > std::llabs(b.clocks()); });
  return v;
}
std::string describe(const std::vector<PeDelta>& v, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < n; ++i) {
    const std::optional<double> d = cycle_delta(v[i].rtl, v[i].model);
    out += fmt::format("{}PE {} {:+} clocks ({})", i ? ", " : "", v[i].pe, v[i].clocks(), d ? fmt::format("{:+.1f}%", 100 * *d) : "-");
  }
  return out;
}

std::string pct(const std::optional<double>& d) { return d ? fmt::format("{:+.2f}%", 100 * *d) : "-"; }
std::string clocks_cell(const Run& r) {
  if (!r.result) return r.error.empty() ? "-" : "error";
  return r.result->completed ? std::to_string(r.result->cycles) : "hang";
}

std::string replay(const ChipRegressRequest& req, const std::string& id) {
  std::string s = shell_quote(program_name()) + " chip-regress " + shell_quote(req.suite) + " --stream " + shell_quote(id) +
                  " --backend " + req.backend;
  if (req.policy.deviation_bound != CheckPolicy{}.deviation_bound)
    s += fmt::format(" --deviation-bound {}", req.policy.deviation_bound);
  return s;
}

nlohmann::ordered_json run_json(const Run& r) {
  if (!r.result && r.error.empty()) return nullptr;
  nlohmann::ordered_json j;
  j["completed"] = r.completed();
  j["cycles"] = r.result ? json_or_null(std::optional<std::uint64_t>(r.result->cycles)) : nullptr;
  if (r.result && !r.result->completed) j["stalled"] = r.result->stalled;
  if (!r.error.empty()) j["error"] = r.error;
  j["wall_s"] = r.wall_s;
  return j;
}


// The suite's rows, every --stream among them, and the outputs, checked before anything runs. False (said on
// `err`) for bad input.
bool load_suite(const ChipRegressRequest& req, std::vector<ChipSuiteRow>& rows, std::ostream& err) {
  try {
    validate(req.policy);
    rows = read_chip_suite(req.suite);
    std::set<std::string> ids;
    for (const ChipSuiteRow& r : rows) ids.insert(r.id);
    for (const std::string& id : req.streams)
      if (!ids.count(id)) throw std::invalid_argument("--stream " + id + ": " + req.suite + " has no stream with this id");
  } catch (const std::exception& e) {
    err << "s2cosim chip-regress: " << e.what() << "\n";
    return false;
  }
  return check_paths({{"--json", req.json_out}, {"--junit", req.junit_out}, {"--html", req.html_out}}, {{"suite", req.suite}}, err);
}

// Each system's configuration, and its backends (made once, on first use).
struct ChipSystems {
  std::map<std::string, HwConfig> cfgs;
  std::map<std::string, std::unique_ptr<StreamBackend>> models, rtls;
};

// The result records' title, configurations (every system's), policy and notes; the checks come as the streams run.
ResultSet chip_results_head(const ChipRegressRequest& req, const std::vector<ChipSuiteRow>& rows, const ChipSystems& systems) {
  nlohmann::json config = nlohmann::json::object();
  for (const auto& [sys, cfg] : systems.cfgs) config[sys] = to_json(cfg);
  ResultSet results;
  results.command = "chip-regress";
  results.title = fmt::format("{} on backend {}", req.suite, req.backend);
  results.config = config;
  results.config_hash = text_hash(config.dump());
  results.policy = req.policy;
  const auto& cfgs = systems.cfgs;
  results.hardware = hw_config_line(cfgs.begin()->second) + "; systems: ";
  for (auto it = cfgs.begin(); it != cfgs.end(); ++it)
    results.hardware += (it == cfgs.begin() ? "" : ", ") + fmt::format("{} ({}x{} QPEs, {} DRAMs)", it->first, it->second.chip.mesh_cols,
                                                                      it->second.chip.mesh_rows, it->second.chip.drams.size());
  results.total = rows.size();
  results.notes.push_back(
      "bit-exact: every DRAM and every PE's SRAM after the run, but for the bytes the contract leaves unspecified: the lanes of "
      "an MLA task's result rows past its width up to the row's last 128-bit word (results are defined for x < Wo, j < W_B; "
      "the RTL writes those words whole, the model only the results; their differences are counted as 'unspecified "
      "bytes differing', and no stream reads them)");
  results.notes.push_back("clocks: PE clocks from the host's start to the host hearing the last PE, ARM operations free on "
                          "both backends; delta = (model - RTL) / RTL (thesis equation 5.1)");
  return results;
}

// One stream's runs and what their comparison found.
struct StreamCheck {
  CheckResult c;
  Run model, rtl;
  std::optional<MemoryCompare> mem;
  std::vector<PeDelta> per_pe;
  std::vector<CommandDeviation> by_command, by_place;
  std::size_t pes = 0, commands = 0;
};

// A row's stream generated again (refused if it is not the stream the row was written with), run from its
// seeded memory on each backend (the RTL's watchdog from the model's clocks), and compared.
void run_stream(const ChipRegressRequest& req, const ChipSuiteRow& row, const HwConfig& cfg, ChipSystems& systems,
                StreamCheck& k) {
  const TaskStream s = random_chip_stream(cfg, row.seed);
  for (const auto& cmds : s.pe) k.pes += !cmds.empty(), k.commands += cmds.size();
  k.c.labels.emplace_back("PEs", std::to_string(k.pes));
  k.c.labels.emplace_back("commands", std::to_string(k.commands));
  if (const std::string now = chip_stream_summary(s); now != row.summary)
    throw std::runtime_error(fmt::format("{}:{}: the generator makes another stream from this row than the suite was "
                                         "written with (now: {}); regenerate the suite with the command in its header",
                                         req.suite, row.line, now));
  const SystemMemory start = random_chip_memory(cfg, s, row.seed);
  if (req.backend != "rtl") {
    auto& b = systems.models[row.system];
    if (!b) b = make_model_stream_backend(cfg);
    k.model = run_on(*b, s, start, StreamRunOptions{false});
  }
  if (req.backend != "model") {
    auto& b = systems.rtls[row.system];
    if (!b) b = make_rtl_stream_backend(cfg, req.rtl_sim);
    StreamRunOptions opt{false};
    // a hang is a stream that runs far past what the model needs (or past the bound no run may reach)
    opt.watchdog_cycles = k.model.completed() ? req.policy.stream_budget.cycles(k.model.result->cycles) : stream_cycle_bound(s, cfg);
    k.rtl = run_on(*b, s, start, opt);
  }
  if (k.model.completed() && k.rtl.completed()) {
    const StreamResult &m = *k.model.result, &r = *k.rtl.result;
    k.mem = compare_memory(s, cfg, k.model.memory, k.rtl.memory);
    k.c.delta = cycle_delta(r.cycles, m.cycles);
    k.per_pe = pe_deltas(s, m, r);
    k.by_command = command_deviation(s, m, r);
    k.by_place = place_deviation(s, m, r, cfg);
  }
}

// The stream's status by the comparators' rule, its message, and on a deviation where the clocks part.
void judge_stream(const ChipRegressRequest& req, StreamCheck& k) {
  CheckResult& c = k.c;
  const Run &model = k.model, &rtl = k.rtl;
  if (model.result) c.model_cycles = model.result->cycles;
  if (rtl.result) c.rtl_cycles = rtl.result->cycles;
  // the counts of the runs that finished, and the model's against the RTL's
  c.activity = finished_activity(model.result ? &*model.result : nullptr, rtl.result ? &*rtl.result : nullptr);
  const ActivityComparison counts = compare_activity(c.activity, req.policy);
  c.model_wall_s = model.wall_s;
  c.rtl_wall_s = rtl.wall_s;
  if (c.status != Status::Error) {
    Findings f;
    f.error = !model.error.empty() || !rtl.error.empty();
    f.hang = (model.result && !model.result->completed) || (rtl.result && !rtl.result->completed);
    f.mismatch = k.mem && k.mem->differing > 0;
    f.delta = c.delta;
    f.activity_deviation = counts.deviates();
    c.status = classify(f, req.policy.deviation_bound);
    if (c.status == Status::Error)
      c.message = !model.error.empty() ? "model: " + model.error : "RTL: " + rtl.error;
    else if (c.status == Status::Hang)
      c.message = model.result && !model.result->completed ? "MODEL HANG " + model.result->stalled : "RTL HANG " + rtl.result->stalled;
    else if (c.status == Status::Mismatch)
      c.message = fmt::format("{} bytes differ in {} memor{}; first: {}", k.mem->differing, k.mem->memories,
                              k.mem->memories == 1 ? "y" : "ies", k.mem->first);
    else if (c.status == Status::Deviation && c.delta && std::abs(*c.delta) > req.policy.deviation_bound)
      c.message = fmt::format("delta {} (model {} clk, RTL {} clk)", pct(c.delta), *c.model_cycles, *c.rtl_cycles);
    if (c.status == Status::Deviation && counts.deviates())
      c.message += (c.message.empty() ? "" : "; ") + fmt::format("activity counts differ by more than {:g}%: {}",
                                                                 100 * req.policy.activity_deviation_bound, counts.describe());
  }
  if (k.mem) c.labels.emplace_back("unspecified bytes differing", std::to_string(k.mem->unspecified));
  if (c.delta && std::abs(*c.delta) > req.policy.deviation_bound) {
    c.where = "by command: " + describe_command_deviation(k.by_command);
    if (const std::string places = describe_place_deviation(k.by_place); !places.empty()) c.where += "; by place, " + places;
    c.where += "; by PE: " + describe(k.per_pe, 3);
  }
}

// The stream's record in the JSON report's streams[].
nlohmann::ordered_json stream_json(const ChipSuiteRow& row, const StreamCheck& k) {
  nlohmann::ordered_json rec;
  rec["id"] = row.id;
  rec["seed"] = row.seed;
  rec["system"] = row.system;
  rec["summary"] = row.summary;
  rec["status"] = to_string(k.c.status);
  rec["message"] = k.c.message;
  rec["model"] = run_json(k.model);
  rec["rtl"] = run_json(k.rtl);
  rec["delta"] = json_or_null(k.c.delta);
  if (k.mem) {
    rec["bit_exact"] = k.mem->differing == 0;
    rec["bytes_differing"] = k.mem->differing;
    rec["first_difference"] = k.mem->first;
    rec["unspecified_bytes_differing"] = k.mem->unspecified;
  } else {
    rec["bit_exact"] = nullptr;
  }
  nlohmann::ordered_json jpe = nlohmann::ordered_json::array(), jcmd = nlohmann::ordered_json::array(),
                         jplace = nlohmann::ordered_json::array();
  for (const PeDelta& d : k.per_pe)
    jpe.push_back({{"pe", d.pe}, {"model", d.model}, {"rtl", d.rtl}, {"clocks", d.clocks()}, {"delta", json_or_null(cycle_delta(d.rtl, d.model))}});
  for (const CommandDeviation& d : k.by_command) jcmd.push_back({{"what", d.what}, {"clocks", d.clocks}, {"commands", d.commands}});
  for (const CommandDeviation& d : k.by_place) jplace.push_back({{"what", d.what}, {"clocks", d.clocks}, {"commands", d.commands}});
  rec["per_pe"] = jpe;
  rec["per_command"] = jcmd;
  rec["per_place"] = jplace;
  rec["replay"] = k.c.replay;
  return rec;
}

// What the streams came to, over every stream run.
struct ChipTally {
  std::size_t compared_data = 0, bit_exact = 0, unspecified_streams = 0;
  std::size_t with_delta = 0, within = 0;  // streams with both clocks; of those, |delta| within the bound
};

// The summary after the table: counts, deltas within the bound, bit-exactness, wall, failures to rerun.
void print_chip_summary(const ChipRegressRequest& req, const ResultSet& results, const ChipTally& t, std::ostream& out) {
  const RunSummary sum = summarize(results);
  std::string worst_id;
  double worst = -1;
  for (const CheckResult& c : results.checks)
    if (c.delta && std::abs(*c.delta) > worst) worst = std::abs(*c.delta), worst_id = c.name;
  out << "\n" << format_status_counts(results) << "\n";
  out << fmt::format("streams: {}; within {:.1f}%: {} of {} with both clocks; worst |delta| {}{}; median |delta| {}\n",
                     results.checks.size(), 100 * req.policy.deviation_bound, t.within, t.with_delta,
                     sum.max_abs_delta ? fmt::format("{:.2f}%", 100 * *sum.max_abs_delta) : "-",
                     worst_id.empty() ? "" : " (" + worst_id + ")",
                     sum.median_abs_delta ? fmt::format("{:.2f}%", 100 * *sum.median_abs_delta) : "-");
  out << fmt::format("bit-exact: {} of {} compared{}\n", t.bit_exact, t.compared_data,
                     t.unspecified_streams ? fmt::format(" ({} with MLA padding lanes that differ, unspecified, not compared: "
                                                         "'ok*' above)",
                                                         t.unspecified_streams)
                                           : "");
  // simulated PE clocks per wall second inside each backend (a stream's clocks: the host's start to its end)
  out << format_wall_and_speed(results)
      << (req.backend != "model" ? "; RTL simulated with " + req.rtl_sim.describe() : std::string()) << "\n";
  out << format_activity_and_energy(results);
  if (const std::string f = format_failures(results); !f.empty()) out << "\nto rerun a failure:\n" << f;
}

std::string chip_json(const ChipRegressRequest& req, const ResultSet& results, const ChipTally& t,
                      const nlohmann::ordered_json& streams) {
  const RunSummary sum = summarize(results);
  nlohmann::ordered_json j;
  j["command"] = "chip-regress";
  j["suite"] = req.suite;
  j["backend"] = req.backend;
  j["deviation_threshold"] = req.policy.deviation_bound;
  j["summary"] = {{"streams", results.checks.size()},
                  {"with_both_clocks", t.with_delta},
                  {"within_threshold", t.within},
                  {"max_abs_delta", json_or_null(sum.max_abs_delta)},
                  {"median_abs_delta", json_or_null(sum.median_abs_delta)},
                  {"data_compared", t.compared_data},
                  {"bit_exact", t.bit_exact},
                  {"model_wall_s", sum.model_wall_s},
                  {"rtl_wall_s", sum.rtl_wall_s}};
  j["streams"] = streams;
  j["results"] = results_json(results);
  return j.dump(2) + "\n";
}

}  // namespace

int chip_regress(const ChipRegressRequest& req, std::ostream& out, std::ostream& err) {
  std::vector<ChipSuiteRow> rows;
  if (!load_suite(req, rows, err)) return kExitBadInput;
  ChipSystems systems;
  for (const ChipSuiteRow& r : rows) systems.cfgs.try_emplace(r.system, chip_random_config(r.system));
  ResultSet results = chip_results_head(req, rows, systems);

  std::vector<const ChipSuiteRow*> chosen;
  for (const ChipSuiteRow& r : rows)
    if (req.streams.empty() || std::find(req.streams.begin(), req.streams.end(), r.id) != req.streams.end()) chosen.push_back(&r);

  if (!req.quiet)
    out << fmt::format("{:<8} {:<10} {:>4} {:>5} {:>10} {:>10} {:>8}  {:<10} {}\n", "stream", "system", "PEs", "cmds", "model",
                       "RTL", "delta", "data", "status");
  nlohmann::ordered_json streams = nlohmann::ordered_json::array();
  ChipTally tally;
  Progress progress(chosen.size(), err);
  for (std::size_t n = 0; n < chosen.size(); ++n) {
    const ChipSuiteRow& row = *chosen[n];
    StreamCheck k;
    k.c.index = static_cast<std::size_t>(&row - rows.data());
    k.c.name = row.id;
    k.c.group = row.system;
    k.c.replay = replay(req, row.id);
    k.c.labels = {{"system", row.system}, {"seed", std::to_string(row.seed)}};
    try {
      run_stream(req, row, systems.cfgs.at(row.system), systems, k);
    } catch (const std::exception& e) {
      k.c.status = Status::Error;
      k.c.message = e.what();
    }
    judge_stream(req, k);
    if (k.mem) {
      ++tally.compared_data;
      tally.bit_exact += k.mem->differing == 0;
      tally.unspecified_streams += k.mem->unspecified > 0;
    }
    if (k.c.delta) {
      ++tally.with_delta;
      tally.within += std::abs(*k.c.delta) <= req.policy.deviation_bound;
    }
    k.c.labels.emplace_back("stream", row.summary);
    streams.push_back(stream_json(row, k));

    const std::string data = !k.mem ? "-" : k.mem->differing ? "DIFFER" : k.mem->unspecified ? "ok*" : "ok";
    progress.step(n + 1, row.id + " " + to_string(k.c.status));
    if (!req.quiet) {
      progress.clear();
      out << fmt::format("{:<8} {:<10} {:>4} {:>5} {:>10} {:>10} {:>8}  {:<10} {}\n", row.id, row.system, k.pes, k.commands,
                         clocks_cell(k.model), clocks_cell(k.rtl), pct(k.c.delta), data, to_string(k.c.status));
    }
    results.checks.push_back(std::move(k.c));
  }
  progress.clear();
  print_chip_summary(req, results, tally, out);

  bool written = true;
  try {
    if (!req.json_out.empty()) write_text_file(req.json_out, chip_json(req, results, tally, streams));
  } catch (const std::exception& e) {
    err << "s2cosim chip-regress: " << e.what() << "\n";
    written = false;
  }
  // every output is tried, whatever became of the others
  if (!write_result_outputs(results, {req.html_out, req.junit_out, ""}, err) || !written) return kExitOutput;
  return summarize(results).all_passed() ? kExitPass : kExitFail;
}

}  // namespace s2
