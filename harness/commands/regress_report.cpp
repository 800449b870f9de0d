#include "harness/commands/regress_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

#include "harness/stimulus/task_vectors.h"
#include "model/json_field.h"

#ifndef S2COSIM_VERSION
#define S2COSIM_VERSION "0.0"
#endif

namespace s2 {

namespace {

std::string cycles_cell(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string delta_cell(const std::optional<double>& d) { return d ? fmt::format("{:+.2f}%", *d * 100.0) : "-"; }

std::string pe_cell(const Task& t) { return t.all_pes() ? "all" : std::to_string(t.pe); }

nlohmann::ordered_json phases_json(const std::optional<PhaseCycles>& p) {
  if (!p) return nullptr;
  return {{"compute", p->compute},
          {"output", p->output},
          {"a_wait", p->a_wait},
          {"b_wait", p->b_wait},
          {"setup", p->setup}};
}

nlohmann::ordered_json mismatch_json(const std::optional<Mismatch>& m) {
  if (!m) return nullptr;
  nlohmann::ordered_json j = {
      {"backend", m->backend}, {"pe", m->pe}, {"missing", m->missing}, {"differing", m->differing}};
  if (!m->missing) {
    j["index"] = m->index;
    j["tile"] = m->tile;
    j["row"] = m->row;
    j["column"] = m->column;
    j["expected"] = m->expected;
    j["got"] = m->got;
    j["unwritten"] = m->unwritten;
  }
  return j;
}

nlohmann::ordered_json data_json(const DataCheck& d) {
  if (!d.checked) return nullptr;
  nlohmann::ordered_json per_pe = nlohmann::ordered_json::array();
  for (const Mismatch& m : d.first_per_pe) per_pe.push_back(mismatch_json(m));
  return {{"match", d.match},     {"differing", d.differing},        {"unwritten", d.unwritten},
          {"bad_pes", d.bad_pes}, {"first", mismatch_json(d.first)}, {"first_per_pe", per_pe}};
}

nlohmann::ordered_json activity_delta_json(const ActivityComparison& a) {
  if (a.counts.empty()) return nullptr;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const CountDelta& d : a.counts) j[d.count] = json_or_null(d.delta);
  return j;
}

}  // namespace

ResultSet results_of(const RunResult& r, const std::function<std::string(const TaskComparison&)>& replay) {
  ResultSet rs;
  rs.command = "regress";
  rs.title = fmt::format("{} on {}", r.vectors_path.empty() ? std::string("tasks") : r.vectors_path,
                         r.backends == BackendSelection::Both ? std::string("both backends") : "the " + std::string(to_string(r.backends)));
  rs.config = to_json(r.cfg);
  rs.config_hash = config_hash(r.cfg);
  rs.policy = r.policy;
  rs.hardware = hw_config_line(r.cfg);
  rs.total = r.tasks.size();
  for (const TaskComparison& c : r.tasks) {
    const Task& t = c.task;
    CheckResult k;
    k.name = t.id;
    k.group = r.vectors_path.empty() ? std::string(to_string(t.op)) : r.vectors_path;
    k.status = c.status;
    k.labels = {{"op", to_string(t.op)},       {"shape", shape_string(t)}, {"pe", pe_cell(t)},
                {"a_src", a_src_string(t)},    {"seed", std::to_string(t.seed)},
                {"data", to_string(t.data)}};
    if (!t.source_file.empty()) k.labels.emplace_back("source", fmt::format("{}:{}", t.source_file, t.source_line));
    k.rtl_cycles = c.rtl_cycles;
    k.model_cycles = c.model_cycles;
    k.delta = c.delta;
    if (t.thesis_hdl_clocks) {
      k.thesis_cycles = t.thesis_hdl_clocks;
      k.thesis_source = "the HDL prototype's clocks, thesis Tables 5.1-5.4";
    }
    if (c.status != Status::Pass) {
      std::vector<std::string> parts;
      if (!c.error.empty()) parts.push_back(c.error);
      if (c.status == Status::Deviation && c.delta && c.rtl_cycles && c.model_cycles)
        parts.push_back(fmt::format("delta {} (RTL {} clk, model {} clk)", delta_cell(c.delta), *c.rtl_cycles, *c.model_cycles));
      // the first flag says what went wrong; the rest are in the table's details and the JSON
      if (!c.flags.empty())
        parts.push_back(c.flags.size() == 1 ? c.flags[0] : fmt::format("{} (and {} more flags)", c.flags[0], c.flags.size() - 1));
      if (const std::string d = data_cell(c); d != "ok" && d != "-") parts.push_back(d);
      for (const std::string& p : parts) k.message += (k.message.empty() ? "" : "; ") + p;
    }
    if (replay) k.replay = replay(c);
    k.rtl_wall_s = c.rtl_wall_s;
    k.model_wall_s = c.model_wall_s;
    k.activity = c.activity;
    k.index = rs.checks.size();
    rs.checks.push_back(std::move(k));
  }
  return rs;
}

RunSummary summarize(const RunResult& r) { return summarize(results_of(r)); }

namespace {
// The first mismatch in short, for a table cell.
std::string brief(const Mismatch& m) {
  if (m.missing) return fmt::format("{} PE {}: no results", m.backend, m.pe);
  const std::string got = m.unwritten ? std::string("unwritten") : std::to_string(m.got);
  return fmt::format("{} PE {} tile {} ({},{}): got {}, want {}; {} differ", m.backend, m.pe, m.tile, m.row, m.column,
                     got, m.expected, m.differing);
}
}  // namespace

std::string data_cell(const TaskComparison& c) {
  std::string s;
  if (c.rtl_data.checked && !c.rtl_data.match && c.rtl_data.first) s = brief(*c.rtl_data.first);
  if (c.model_data.checked && !c.model_data.match && c.model_data.first) {
    if (!s.empty()) s += " | ";
    s += brief(*c.model_data.first);
  }
  if (!s.empty()) return s;
  if (c.rtl_data.checked || c.model_data.checked) return "ok";
  return "-";
}

std::string format_table(const RunResult& r) {
  const std::vector<std::string> head = {"task",    "op",        "shape", "pe",   "a_src",
                                         "RTL clk", "model clk", "delta", "data", "status"};
  std::vector<std::vector<std::string>> rows;
  for (const TaskComparison& c : r.tasks) {
    const Task& t = c.task;
    rows.push_back({t.id, to_string(t.op), shape_string(t), pe_cell(t), a_src_string(t), cycles_cell(c.rtl_cycles),
                    cycles_cell(c.model_cycles), delta_cell(c.delta), data_cell(c), to_string(c.status)});
  }
  std::vector<std::size_t> w(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
  // numbers right-aligned, text left-aligned
  const std::vector<bool> right = {false, false, false, false, false, true, true, true, false, false};
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) s += "  ";
      const bool last = i + 1 == cells.size();
      if (right[i])
        s += fmt::format("{:>{}}", cells[i], w[i]);
      else
        s += last ? cells[i] : fmt::format("{:<{}}", cells[i], w[i]);
    }
    return s + "\n";
  };
  std::string out = line(head);
  std::size_t total = 0;
  for (std::size_t x : w) total += x;
  out += std::string(total + 2 * (w.size() - 1), '-') + "\n";
  for (const auto& row : rows) out += line(row);

  // details of every task that did not pass
  std::string details;
  for (const TaskComparison& c : r.tasks) {
    if (c.status == Status::Pass && c.flags.empty()) continue;
    const Task& t = c.task;
    details +=
        fmt::format("{} ({}): {}\n", t.id,
                    t.source_file.empty() ? std::string("-") : fmt::format("{}:{}", t.source_file, t.source_line),
                    to_string(c.status));
    if (!c.error.empty()) details += "  error: " + c.error + "\n";
    for (const std::string& f : c.flags) details += "  " + f + "\n";
    for (const Mismatch& m : c.rtl_data.first_per_pe) details += "  rtl data: " + describe(m) + "\n";
    for (const Mismatch& m : c.model_data.first_per_pe) details += "  model data: " + describe(m) + "\n";
    if (c.status == Status::Deviation && c.delta)
      details +=
          fmt::format("  delta {} (RTL {} clk, model {} clk)\n", delta_cell(c.delta), *c.rtl_cycles, *c.model_cycles);
  }
  if (!details.empty()) out += "\n" + details;
  return out;
}

std::string format_summary(const RunResult& r) {
  const RunSummary s = summarize(r);
  std::string counts;
  for (Status st : kAllStatuses)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", s.counts.at(st), to_string(st));
  std::string out = fmt::format("tasks: {} ({})\n", s.tasks, counts);
  out += fmt::format("|delta|: max {}, median {}\n",
                     s.max_abs_delta ? fmt::format("{:.2f}%", *s.max_abs_delta * 100.0) : "-",
                     s.median_abs_delta ? fmt::format("{:.2f}%", *s.median_abs_delta * 100.0) : "-");
  // simulated QPE clocks per wall second inside each backend
  double rtl_clocks = 0, model_clocks = 0;
  for (const TaskComparison& t : r.tasks) {
    rtl_clocks += double(t.rtl_cycles.value_or(0));
    model_clocks += double(t.model_cycles.value_or(0));
  }
  auto rate = [](double clocks, double wall) { return wall > 0 ? fmt::format(" ({:.2e} clocks/s)", clocks / wall) : std::string(); };
  out += fmt::format("wall: rtl {:.3f} s{}, model {:.3f} s{}, speed ratio (rtl/model) {}\n", s.rtl_wall_s, rate(rtl_clocks, s.rtl_wall_s),
                     s.model_wall_s, rate(model_clocks, s.model_wall_s), s.speed_ratio ? fmt::format("{:.1f}x", *s.speed_ratio) : "-");
  out += fmt::format("backends: {}\n", to_string(r.backends));
  out += "hardware: " + hw_config_line(r.cfg) + "\n";
  out += "config hash: " + config_hash(r.cfg) + "\n";
  out += "policy: " + policy_line(r.policy) + "\n";
  return out;
}

namespace {
std::optional<double> vs(std::optional<std::uint64_t> ours, std::uint64_t reference) {
  if (!ours || reference == 0) return std::nullopt;
  return (static_cast<double>(*ours) - static_cast<double>(reference)) / static_cast<double>(reference);
}
}  // namespace

std::string format_neighbour_tables(const RunResult& r) {
  // tasks that differ only in the neighbour shift of operand A (thesis Tables 5.3 and 5.4)
  std::map<std::string, std::array<const TaskComparison*, kPesPerQpe>> groups;
  std::vector<std::string> order;
  for (const TaskComparison& c : r.tasks) {
    if (c.task.a_src_shift < 0 || c.task.a_src_shift >= kPesPerQpe) continue;
    const std::string key = fmt::format("{} {} pe={} seed={} data={}", to_string(c.task.op), shape_string(c.task),
                                        c.task.all_pes() ? std::string("all") : std::to_string(c.task.pe), c.task.seed,
                                        to_string(c.task.data));
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    if (!it->second[static_cast<std::size_t>(c.task.a_src_shift)]) it->second[static_cast<std::size_t>(c.task.a_src_shift)] = &c;
  }
  std::string out;
  for (const std::string& key : order) {
    const auto& g = groups[key];
    int n = 0;
    for (const TaskComparison* c : g) n += c != nullptr;
    if (n < 2 || !g[0]) continue;
    out += fmt::format("Neighbour-PE table (thesis Tables 5.3/5.4 layout): {}, flaws: {}\n", key, flaws_string(r.cfg));
    out += fmt::format("{:<22} {:>22} {:>22} {:>12} {}\n", "neighbour PE shift", "RTL clk (err to 0)",
                       "model clk (err to 0)", "deviation", "status");
    auto err = [](const std::optional<std::uint64_t>& v, const std::optional<std::uint64_t>& v0) -> std::string {
      if (!v) return "-";
      if (!v0 || *v0 == 0) return fmt::format("{}", *v);
      return fmt::format("{} ({:+.2f}%)", *v, 100.0 * (double(*v) - double(*v0)) / double(*v0));
    };
    for (int s = 0; s < kPesPerQpe; ++s) {
      const TaskComparison* c = g[static_cast<std::size_t>(s)];
      if (!c) continue;
      const bool rtl_ok = c->rtl_completed.value_or(false), rtl0_ok = g[0]->rtl_completed.value_or(false);
      out += fmt::format("{:<22} {:>22} {:>22} {:>12} {}\n", fmt::format("shift: {}", s),
                         rtl_ok ? err(c->rtl_cycles, rtl0_ok ? g[0]->rtl_cycles : std::nullopt) : "did not finish",
                         err(c->model_cycles, g[0]->model_cycles),
                         c->delta ? fmt::format("{:+.2f}%", 100.0 * *c->delta) : "-", to_string(c->status));
    }
  }
  return out;
}

std::string format_thesis_comparison(const RunResult& r) {
  std::vector<const TaskComparison*> rows;
  for (const TaskComparison& c : r.tasks)
    if (c.task.thesis_hdl_clocks) rows.push_back(&c);
  if (rows.empty()) return {};
  std::string out =
      "Against the thesis's measurements (Tables 5.1-5.4; the HDL prototype had the 2-clock SRAM flaw, so compare "
      "with --flaw sram2clk):\n";
  if (!r.cfg.flaws.sram2clk) out += "NOTE: sram2clk is off in this run; these deviations are not like for like.\n";
  out += fmt::format("{:<36} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}\n", "task", "HDL clk", "RTL clk", "RTL/HDL",
                     "model clk", "model/HDL", "thesis sim", "sim/HDL");
  double worst = 0.0;
  int within = 0, n = 0;
  for (const TaskComparison* c : rows) {
    const std::uint64_t hdl = c->task.thesis_hdl_clocks;
    const std::uint64_t sim = c->task.thesis_sim_clocks;  // 0 = not given
    const auto d = vs(c->rtl_cycles, hdl);
    if (d) {
      ++n;
      worst = std::max(worst, std::fabs(*d));
      if (std::fabs(*d) <= 0.10) ++within;
    }
    out += fmt::format("{:<36} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}\n", c->task.id, hdl, cycles_cell(c->rtl_cycles),
                       delta_cell(d), cycles_cell(c->model_cycles), delta_cell(vs(c->model_cycles, hdl)),
                       sim ? std::to_string(sim) : std::string("-"),
                       sim ? delta_cell((static_cast<double>(sim) - static_cast<double>(hdl)) / static_cast<double>(hdl))
                           : std::string("-"));
  }
  out += fmt::format("RTL against HDL: {} of {} rows within 10%, max |deviation| {:.2f}%\n", within, n, worst * 100.0);
  return out;
}

nlohmann::ordered_json task_json(const TaskComparison& c) {
  const Task& t = c.task;
  nlohmann::ordered_json pes = nlohmann::ordered_json::array();
  for (const PeComparison& p : c.pes) {
    nlohmann::ordered_json phase_delta = nullptr;
    if (!p.phase_deltas.empty()) {
      phase_delta = nlohmann::ordered_json::object();
      for (const PhaseDelta& d : p.phase_deltas) phase_delta[d.phase] = json_or_null(d.delta);
    }
    pes.push_back({
        {"pe", p.pe},
        {"rtl_cycles", json_or_null(p.rtl_cycles)},
        {"model_cycles", json_or_null(p.model_cycles)},
        {"delta", json_or_null(p.delta)},
        {"state",
         c.rtl_ran && c.rtl_error.empty() ? nlohmann::ordered_json(p.rtl_state) : nlohmann::ordered_json(nullptr)},
        {"model_state", c.model_ran && c.model_error.empty() ? nlohmann::ordered_json(p.model_state)
                                                             : nlohmann::ordered_json(nullptr)},
        {"rtl_done", c.rtl_cycles ? nlohmann::ordered_json(p.rtl_done) : nlohmann::ordered_json(nullptr)},
        {"model_done", c.model_cycles ? nlohmann::ordered_json(p.model_done) : nlohmann::ordered_json(nullptr)},
        {"rtl_phases", phases_json(p.rtl_phases)},
        {"model_phases", phases_json(p.model_phases)},
        {"phase_delta", phase_delta},
        {"rtl_data_ok", json_or_null(p.rtl_data_ok)},
        {"model_data_ok", json_or_null(p.model_data_ok)},
        {"rtl_differing", p.rtl_differing},
        {"rtl_unwritten", p.rtl_unwritten},
        {"model_differing", p.model_differing},
        {"long_run", p.long_run},
    });
  }
  std::optional<Mismatch> first = c.rtl_data.first ? c.rtl_data.first : c.model_data.first;
  return {
      {"id", t.id},
      {"status", to_string(c.status)},
      {"op", to_string(t.op)},
      {"shape", shape_string(t)},
      {"pe", t.all_pes() ? nlohmann::ordered_json("all") : nlohmann::ordered_json(t.pe)},
      {"a_src", a_src_string(t)},
      {"seed", t.seed},
      {"data", to_string(t.data)},
      {"source", t.source_file.empty() ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(fmt::format("{}:{}", t.source_file, t.source_line))},
      {"rtl_cycles", json_or_null(c.rtl_cycles)},
      {"model_cycles", json_or_null(c.model_cycles)},
      {"delta", json_or_null(c.delta)},
      {"data_match", json_or_null(c.data_match())},
      {"thesis_hdl_clocks", t.thesis_hdl_clocks ? nlohmann::ordered_json(t.thesis_hdl_clocks) : nlohmann::ordered_json(nullptr)},
      {"rtl_vs_thesis_hdl", json_or_null(vs(c.rtl_cycles, t.thesis_hdl_clocks))},
      {"thesis_sim_clocks", t.thesis_sim_clocks ? nlohmann::ordered_json(t.thesis_sim_clocks) : nlohmann::ordered_json(nullptr)},
      {"model_data_match", json_or_null(c.model_data_match())},
      {"rtl_completed", json_or_null(c.rtl_completed)},
      {"model_completed", json_or_null(c.model_completed)},
      {"rtl_budget_cycles",
       c.rtl_cycles ? nlohmann::ordered_json(c.rtl_budget_cycles) : nlohmann::ordered_json(nullptr)},
      {"rtl_elapsed_cycles",
       c.rtl_cycles ? nlohmann::ordered_json(c.rtl_elapsed_cycles) : nlohmann::ordered_json(nullptr)},
      {"pes", pes},
      {"first_mismatch", mismatch_json(first)},
      {"rtl_data", data_json(c.rtl_data)},
      {"model_data", data_json(c.model_data)},
      {"hung_pes", c.hung_pes},
      {"early_stop_pes", c.early_stop_pes},
      {"long_run_pes", c.long_run_pes},
      {"flags", c.flags},
      {"activity", activity_json(c.activity)},
      {"activity_delta", activity_delta_json(c.activity_delta)},
      {"activity_floor", c.activity_floor},
      {"error", c.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.error)},
      {"rtl_error", c.rtl_error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.rtl_error)},
      {"model_error", c.model_error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.model_error)},
  };
}

namespace {

// A record's field that is itself JSON (an object, a list or null); errors name the field.
const nlohmann::ordered_json& member(const nlohmann::ordered_json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw std::invalid_argument(std::string("field '") + key + "': missing");
  return j.at(key);
}

std::optional<Mismatch> mismatch_from(const nlohmann::ordered_json& j) {
  if (j.is_null()) return std::nullopt;
  Mismatch m;
  m.backend = json_member<std::string>(j, "backend");
  m.pe = json_member<int>(j, "pe");
  m.missing = json_member<bool>(j, "missing");
  m.differing = json_member<std::size_t>(j, "differing");
  if (!m.missing) {
    m.index = json_member<std::size_t>(j, "index");
    m.tile = json_member<std::uint64_t>(j, "tile");
    m.row = json_member<int>(j, "row");
    m.column = json_member<int>(j, "column");
    m.expected = json_member<std::int32_t>(j, "expected");
    m.got = json_member<std::int32_t>(j, "got");
    m.unwritten = json_member<bool>(j, "unwritten");
  }
  return m;
}

DataCheck data_from(const nlohmann::ordered_json& j) {
  DataCheck d;
  if (j.is_null()) return d;
  d.checked = true;
  d.match = json_member<bool>(j, "match");
  d.differing = json_member<std::size_t>(j, "differing");
  d.unwritten = json_member<std::size_t>(j, "unwritten");
  d.bad_pes = json_member<std::vector<int>>(j, "bad_pes");
  d.first = mismatch_from(member(j, "first"));
  for (const auto& m : member(j, "first_per_pe"))
    if (auto mm = mismatch_from(m)) d.first_per_pe.push_back(*mm);
  return d;
}

std::optional<PhaseCycles> phases_from(const nlohmann::ordered_json& j) {
  if (j.is_null()) return std::nullopt;
  return PhaseCycles{json_member<std::uint64_t>(j, "compute"), json_member<std::uint64_t>(j, "output"),
                     json_member<std::uint64_t>(j, "a_wait"), json_member<std::uint64_t>(j, "b_wait"),
                     json_member<std::uint64_t>(j, "setup")};
}

std::uint64_t phase_of(const PhaseCycles& p, const std::string& name) {
  if (name == "compute") return p.compute;
  if (name == "output") return p.output;
  if (name == "a_wait") return p.a_wait;
  if (name == "b_wait") return p.b_wait;
  return p.setup;
}

}  // namespace

TaskComparison task_comparison_from_json(const nlohmann::ordered_json& j, const Task& t) {
  TaskComparison c;
  c.task = t;
  const std::string status = json_member<std::string>(j, "status");
  bool known = false;
  for (Status st : kAllStatuses)
    if (status == to_string(st)) c.status = st, known = true;
  if (!known) throw std::runtime_error("unknown status '" + status + "'");
  c.rtl_cycles = json_member_opt<std::uint64_t>(j, "rtl_cycles");
  c.model_cycles = json_member_opt<std::uint64_t>(j, "model_cycles");
  c.delta = json_member_opt<double>(j, "delta");
  c.rtl_completed = json_member_opt<bool>(j, "rtl_completed");
  c.model_completed = json_member_opt<bool>(j, "model_completed");
  c.rtl_budget_cycles = json_member_opt<std::uint64_t>(j, "rtl_budget_cycles").value_or(0);
  c.rtl_elapsed_cycles = json_member_opt<std::uint64_t>(j, "rtl_elapsed_cycles").value_or(0);
  c.rtl_data = data_from(member(j, "rtl_data"));
  c.model_data = data_from(member(j, "model_data"));
  c.hung_pes = json_member<std::vector<int>>(j, "hung_pes");
  c.early_stop_pes = json_member<std::vector<int>>(j, "early_stop_pes");
  c.long_run_pes = json_member<std::vector<int>>(j, "long_run_pes");
  c.flags = json_member<std::vector<std::string>>(j, "flags");
  c.error = json_member_opt<std::string>(j, "error").value_or("");
  c.rtl_error = json_member_opt<std::string>(j, "rtl_error").value_or("");
  c.model_error = json_member_opt<std::string>(j, "model_error").value_or("");
  // a record from before activity was counted has none
  const auto a = j.find("activity");
  c.activity = backend_activity_from_json(a != j.end() ? &*a : nullptr);
  c.activity_floor = json_member_or<std::vector<std::string>>(j, "activity_floor", {});
  c.activity_delta = compare_activity(c.activity, CheckPolicy{});  // the deltas again (the status and flags are the record's)
  for (const auto& pj : member(j, "pes")) {
    PeComparison p;
    p.pe = json_member<int>(pj, "pe");
    p.rtl_cycles = json_member_opt<std::uint64_t>(pj, "rtl_cycles");
    p.model_cycles = json_member_opt<std::uint64_t>(pj, "model_cycles");
    p.delta = json_member_opt<double>(pj, "delta");
    if (auto s = json_member_opt<std::string>(pj, "state")) p.rtl_state = *s, c.rtl_ran = true;
    if (auto s = json_member_opt<std::string>(pj, "model_state")) p.model_state = *s, c.model_ran = true;
    p.rtl_done = json_member_opt<bool>(pj, "rtl_done").value_or(false);
    p.model_done = json_member_opt<bool>(pj, "model_done").value_or(false);
    p.rtl_phases = phases_from(member(pj, "rtl_phases"));
    p.model_phases = phases_from(member(pj, "model_phases"));
    if (const auto& pd = member(pj, "phase_delta"); !pd.is_null() && p.rtl_phases && p.model_phases) {
      for (const auto& [phase, d] : pd.items())
        p.phase_deltas.push_back({phase, phase_of(*p.rtl_phases, phase), phase_of(*p.model_phases, phase),
                                  d.is_null() ? std::nullopt : std::optional<double>(json_field<double>(d))});
    }
    p.rtl_data_ok = json_member_opt<bool>(pj, "rtl_data_ok");
    p.model_data_ok = json_member_opt<bool>(pj, "model_data_ok");
    p.rtl_differing = json_member<std::size_t>(pj, "rtl_differing");
    p.rtl_unwritten = json_member<std::size_t>(pj, "rtl_unwritten");
    p.model_differing = json_member<std::size_t>(pj, "model_differing");
    p.long_run = json_member<bool>(pj, "long_run");
    c.pes.push_back(std::move(p));
  }
  if (!c.rtl_error.empty()) c.rtl_ran = true;
  if (!c.model_error.empty()) c.model_ran = true;
  if (const auto w = j.find("wall_s"); w != j.end()) {
    if (w->contains("rtl")) c.rtl_wall_s = json_field<double>(w->at("rtl"));
    if (w->contains("model")) c.model_wall_s = json_field<double>(w->at("model"));
  }
  return c;
}

nlohmann::ordered_json task_journal_json(const TaskComparison& c) {
  nlohmann::ordered_json j = task_json(c);
  j["wall_s"] = {{"rtl", c.rtl_wall_s}, {"model", c.model_wall_s}};
  return j;
}

nlohmann::ordered_json regress_report_json(const nlohmann::ordered_json& tasks, const ResultSet& results,
                                           const std::string& vectors, const std::string& backends) {
  const RunSummary s = summarize(results);
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (Status st : kAllStatuses) counts[to_string(st)] = s.counts.at(st);
  nlohmann::ordered_json j = {
      {"tool", "s2cosim"},
      {"version", tool_version()},
      {"command", "regress"},
      {"config", results.config},
      {"config_hash", results.config_hash},
      {"policy", to_json(results.policy)},
      {"vectors", vectors},
      {"backends", backends},
      {"tasks", tasks},
      {"summary",
       {
           {"tasks", s.tasks},
           {"counts", counts},
           {"all_passed", s.all_passed()},
           {"max_abs_delta", json_or_null(s.max_abs_delta)},
           {"median_abs_delta", json_or_null(s.median_abs_delta)},
           {"rtl_wall_s", s.rtl_wall_s},
           {"model_wall_s", s.model_wall_s},
       }},
      {"results", results_json(results)},
  };
  if (results.stopped_by_signal) j["stopped_by_signal"] = results.stopped_by_signal;  // what finished before the stop
  return j;
}

nlohmann::ordered_json report_json(const RunResult& r, const ResultSet& results) {
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (const TaskComparison& c : r.tasks) tasks.push_back(task_json(c));
  return regress_report_json(tasks, results, r.vectors_path, to_string(r.backends));
}

nlohmann::ordered_json report_json(const RunResult& r) { return report_json(r, results_of(r)); }

}  // namespace s2
