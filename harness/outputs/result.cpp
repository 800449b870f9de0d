#include "harness/outputs/result.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/outputs/output_files.h"
#include "model/json_field.h"

namespace s2 {

Shard parse_shard(const std::string& s) {
  const auto bad = [&] {
    return std::invalid_argument("--shard '" + s + "': expected I/N with 1 <= I <= N <= 100000, e.g. 2/8");
  };
  const std::size_t slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size()) throw bad();
  const std::string a = s.substr(0, slash), b = s.substr(slash + 1);
  if (a.size() > 6 || b.size() > 6 || a.find_first_not_of("0123456789") != std::string::npos ||
      b.find_first_not_of("0123456789") != std::string::npos)
    throw bad();
  Shard sh{std::stoi(a), std::stoi(b)};
  if (sh.index < 1 || sh.count < 1 || sh.index > sh.count || sh.count > 100000) throw bad();
  return sh;
}

Status parse_status(const std::string& s) {
  for (Status st : kAllStatuses)
    if (s == to_string(st)) return st;
  throw std::invalid_argument("unknown status '" + s + "' (expected pass, mismatch, hang, early_stop, deviation or error)");
}

RunSummary summarize(const ResultSet& r) {
  RunSummary s;
  s.tasks = r.checks.size();
  for (Status st : kAllStatuses) s.counts[st] = 0;
  std::vector<double> abs;
  for (const CheckResult& c : r.checks) {
    ++s.counts[c.status];
    if (c.delta) abs.push_back(std::fabs(*c.delta));
    s.rtl_wall_s += c.rtl_wall_s;
    s.model_wall_s += c.model_wall_s;
  }
  if (!abs.empty()) {
    std::sort(abs.begin(), abs.end());
    s.max_abs_delta = abs.back();
    const std::size_t n = abs.size();
    s.median_abs_delta = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2.0;
  }
  if (s.rtl_wall_s > 0.0 && s.model_wall_s > 0.0) s.speed_ratio = s.rtl_wall_s / s.model_wall_s;
  return s;
}

std::string format_status_counts(const ResultSet& r) {
  const RunSummary s = summarize(r);
  std::string counts;
  for (Status st : kAllStatuses)
    if (s.counts.at(st)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", s.counts.at(st), to_string(st));
  std::string out = fmt::format("{} result{}{}", s.tasks, s.tasks == 1 ? "" : "s", counts.empty() ? "" : ": " + counts);
  if (!r.shard.whole()) out += fmt::format(" (shard {}/{} of {} in all)", r.shard.index, r.shard.count, r.total);
  return out;
}

std::string format_failures(const ResultSet& r) {
  std::string out;
  for (const CheckResult& c : r.checks) {
    if (c.status == Status::Pass) continue;
    out += fmt::format("{} {}: {}\n", to_string(c.status), c.name, c.message.empty() ? "-" : c.message);
    if (!c.where.empty()) out += "  where: " + c.where + "\n";
    if (!c.waves.empty()) out += "  waves: " + c.waves + "\n";
    if (!c.replay.empty()) out += "  rerun: " + c.replay + "\n";
  }
  return out;
}

nlohmann::ordered_json activity_json(const Activity& a, const std::vector<std::string>& unavailable) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Activity::Field& f : Activity::fields())
    j[f.name] = std::find(unavailable.begin(), unavailable.end(), f.name) != unavailable.end() ? nlohmann::ordered_json(nullptr)
                                                                                              : nlohmann::ordered_json(a.*f.member);
  return j;
}

void activity_from_json(const nlohmann::ordered_json& j, Activity& a, std::vector<std::string>& unavailable) {
  if (!j.is_object()) throw std::invalid_argument("expected an object of counts");
  a = Activity{};
  unavailable.clear();
  for (const Activity::Field& f : Activity::fields()) {
    if (!j.contains(f.name)) throw std::invalid_argument(std::string("count '") + f.name + "': missing");
    if (j.at(f.name).is_null()) unavailable.push_back(f.name);
    else a.*f.member = json_member<std::uint64_t>(j, f.name);
  }
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const Activity::Field& f : Activity::fields()) known = known || k == f.name;
    if (!known) throw std::invalid_argument("count '" + k + "': not a count of model/activity.h");
  }
}

nlohmann::ordered_json activity_json(const BackendActivity& a) {
  return {{"model", a.model ? activity_json(*a.model, a.model_unavailable) : nlohmann::ordered_json(nullptr)},
          {"rtl", a.rtl ? activity_json(*a.rtl, a.rtl_unavailable) : nlohmann::ordered_json(nullptr)}};
}

BackendActivity backend_activity_from_json(const nlohmann::ordered_json* j) {
  BackendActivity b;
  if (!j || j->is_null()) return b;
  if (!j->is_object()) throw std::invalid_argument("field 'activity': expected an object");
  const auto side = [&](const char* who, std::optional<Activity>& out, std::vector<std::string>& unavailable) {
    if (!j->contains(who) || j->at(who).is_null()) return;
    try {
      activity_from_json(j->at(who), out.emplace(), unavailable);
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("field 'activity.") + who + "': " + e.what());
    }
  };
  side("model", b.model, b.model_unavailable);
  side("rtl", b.rtl, b.rtl_unavailable);
  return b;
}

EnergyBreakdown run_energy(const Activity& a, const EnergyTable& t, double pe_clock_mhz) {
  const double pe_seconds = static_cast<double>(a.pe_busy_cycles + a.pe_idle_cycles) / (pe_clock_mhz * 1e6);
  return energy_of(a, t, pe_seconds, 1);
}

void charge_energy(CheckResult& c, const EnergyTable& t, double pe_clock_mhz, const std::optional<Activity>& model) {
  const BackendActivity& b = c.activity;
  // the model where it observed every count, else a backend that did; failing both, the model's partial counts
  // (what neither observed is not charged; format_activity_and_energy names it)
  const bool use_model = b.model && (b.model_unavailable.empty() || !(b.rtl && b.rtl_unavailable.empty()));
  if (use_model) {
    c.energy = run_energy(model ? *model : *b.model, t, pe_clock_mhz);
    c.energy_from = "model";
  } else if (b.rtl) {
    c.energy = run_energy(*b.rtl, t, pe_clock_mhz);
    c.energy_from = "rtl";
  }
}

std::string energy_table_line(const EnergyTable& t) {
  return fmt::format("energy table '{}' (hash {}{})", t.name, energy_table_hash(t),
                     t.calibrated ? ", calibrated" : ", estimates, uncalibrated: compare ratios, not absolute figures");
}

std::string format_energy(double pj) {
  const double a = std::fabs(pj);
  if (a >= 1e9) return fmt::format("{:.3g} mJ", pj / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g} uJ", pj / 1e6);
  if (a >= 1e3) return fmt::format("{:.3g} nJ", pj / 1e3);
  return fmt::format("{:.3g} pJ", pj);
}

std::string format_activity_and_energy(const ResultSet& r) {
  std::string out;
  std::size_t both = 0, counted = 0;
  // events and clocks apart: each is judged by its own bound (activity_comparator.h)
  std::optional<double> worst_event, worst_clock;
  std::string event_at, clock_at;
  for (const CheckResult& c : r.checks) {
    counted += c.activity.model || c.activity.rtl;
    const ActivityComparison a = compare_activity(c.activity, r.policy);
    if (a.counts.empty()) continue;
    ++both;
    std::string count;
    if (const auto d = a.worst(&count, false); d && (!worst_event || *d > *worst_event)) worst_event = d, event_at = c.name + " " + count;
    if (const auto d = a.worst(&count, true); d && (!worst_clock || *d > *worst_clock)) worst_clock = d, clock_at = c.name + " " + count;
  }
  if (!counted) return out;
  const auto worst = [](const std::optional<double>& w, const std::string& at, const char* of) {
    return !w ? std::string("-") : *w == 0 ? std::string("0: all equal") : std::isinf(*w) ? "inf, " + at : fmt::format("{:.3f}%{}, {}", 100 * *w, of, at);
  };
  if (both)
    out += fmt::format("activity: model against RTL on {} checks, max |event count delta| {} (bound {:g}%), max |clock count delta| "
                       "{} (bound {:g}% of the span)\n",
                       both, worst(worst_event, event_at, ""), 100 * r.policy.activity_deviation_bound,
                       worst(worst_clock, clock_at, " of the span"), 100 * r.policy.deviation_bound);
  // the counts a backend could not observe: not compared; charged only from a backend that has them
  for (const char* who : {"model", "rtl"}) {
    std::vector<std::string> unavailable;
    for (const CheckResult& c : r.checks)
      for (const std::string& k : who[0] == 'm' ? c.activity.model_unavailable : c.activity.rtl_unavailable)
        if (std::find(unavailable.begin(), unavailable.end(), k) == unavailable.end()) unavailable.push_back(k);
    if (unavailable.empty()) continue;
    std::string names;
    for (const std::string& k : unavailable) names += (names.empty() ? "" : ", ") + k;
    out += fmt::format("activity not available from the {} (not compared): {}\n", who[0] == 'm' ? "model" : "RTL", names);
  }
  if (!r.energy_table) return out;
  EnergyBreakdown sum;
  std::size_t charged = 0;
  for (const CheckResult& c : r.checks)
    if (c.energy) sum += *c.energy, ++charged;
  out += "energy: " + energy_table_line(*r.energy_table) + "\n";
  if (!charged) return out + "energy: no check has counts to charge\n";
  const double total = sum.total();
  const auto pct = [&](double v) { return total > 0 ? 100 * v / total : 0.0; };
  out += fmt::format("energy of {} checks: {} = MAC {:.1f}%, SRAM {:.1f}%, NoC {:.1f}%, DRAM {:.1f}%, ARM {:.1f}%, static {:.1f}%\n",
                     charged, format_energy(total), pct(sum.mac), pct(sum.sram), pct(sum.noc), pct(sum.dram), pct(sum.arm),
                     pct(sum.static_pj));
  return out;
}

namespace {

nlohmann::ordered_json shard_json(const Shard& s) { return {{"index", s.index}, {"count", s.count}}; }

Shard shard_from(const nlohmann::ordered_json& j) {
  Shard s{json_member<int>(j, "index"), json_member<int>(j, "count")};
  if (s.count < 1 || s.index < 1 || s.index > s.count) throw std::invalid_argument("expected 1 <= index <= count");
  return s;
}

}  // namespace

nlohmann::ordered_json check_json(const CheckResult& c) {
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const auto& [k, v] : c.labels) labels[k] = v;
  return {{"index", c.index},
          {"name", c.name},
          {"group", c.group},
          {"status", to_string(c.status)},
          {"labels", labels},
          {"rtl_cycles", json_or_null(c.rtl_cycles)},
          {"model_cycles", json_or_null(c.model_cycles)},
          {"delta", json_or_null(c.delta)},
          {"thesis_cycles", json_or_null(c.thesis_cycles)},
          {"thesis_source", c.thesis_source},
          {"message", c.message},
          {"where", c.where},
          {"replay", c.replay},
          {"waves", c.waves},
          {"rtl_wall_s", c.rtl_wall_s},
          {"model_wall_s", c.model_wall_s},
          {"activity", activity_json(c.activity)},
          {"energy_pj", c.energy ? nlohmann::ordered_json(to_json(*c.energy)) : nlohmann::ordered_json(nullptr)},
          {"energy_from", c.energy ? nlohmann::ordered_json(c.energy_from) : nlohmann::ordered_json(nullptr)}};
}

CheckResult check_from_json(const nlohmann::ordered_json& cj) {
  if (!cj.is_object()) throw std::invalid_argument("expected a JSON object");
  CheckResult c;
  c.index = json_member<std::size_t>(cj, "index");
  c.name = json_member<std::string>(cj, "name");
  c.group = json_member_or<std::string>(cj, "group", "");
  c.status = parse_status(json_member<std::string>(cj, "status"));
  if (cj.contains("labels")) {
    if (!cj.at("labels").is_object()) throw std::invalid_argument("field 'labels': expected an object");
    for (const auto& [key, v] : cj.at("labels").items()) c.labels.emplace_back(key, json_member<std::string>(cj.at("labels"), key.c_str()));
  }
  c.rtl_cycles = json_member_opt<std::uint64_t>(cj, "rtl_cycles");
  c.model_cycles = json_member_opt<std::uint64_t>(cj, "model_cycles");
  c.delta = json_member_opt<double>(cj, "delta");
  c.thesis_cycles = json_member_opt<std::uint64_t>(cj, "thesis_cycles");
  c.thesis_source = json_member_or<std::string>(cj, "thesis_source", "");
  c.message = json_member_or<std::string>(cj, "message", "");
  c.where = json_member_or<std::string>(cj, "where", "");
  c.replay = json_member_or<std::string>(cj, "replay", "");
  c.waves = json_member_or<std::string>(cj, "waves", "");
  c.rtl_wall_s = json_member_or<double>(cj, "rtl_wall_s", 0.0);
  c.model_wall_s = json_member_or<double>(cj, "model_wall_s", 0.0);
  // a report from before activity was counted has none
  const auto a = cj.find("activity");
  c.activity = backend_activity_from_json(a != cj.end() ? &*a : nullptr);
  if (const auto e = cj.find("energy_pj"); e != cj.end() && !e->is_null()) {
    try {
      c.energy = energy_breakdown_from_json(*e);
    } catch (const std::exception& ex) {
      throw std::invalid_argument(std::string("field 'energy_pj': ") + ex.what());
    }
    c.energy_from = json_member<std::string>(cj, "energy_from");
  }
  return c;
}

nlohmann::ordered_json results_json(const ResultSet& r) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const CheckResult& c : r.checks) checks.push_back(check_json(c));
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  const RunSummary s = summarize(r);
  for (Status st : kAllStatuses) counts[to_string(st)] = s.counts.at(st);
  nlohmann::ordered_json cats = nlohmann::ordered_json::array();
  for (const CategoryClocks& c : r.categories)
    cats.push_back({{"strategy", c.strategy}, {"category", c.category}, {"clocks", c.clocks}, {"thesis", json_or_null(c.thesis)}});
  nlohmann::ordered_json j = {{"command", r.command},   {"title", r.title},   {"config_hash", r.config_hash},
                              {"policy", to_json(r.policy)},
                              {"hardware", r.hardware}, {"total", r.total},   {"shard", shard_json(r.shard)},
                              {"counts", counts},       {"notes", r.notes},   {"categories", cats},
                              {"checks", checks}};
  if (r.energy_table) {
    j["energy_table"] = to_json(*r.energy_table);
    j["energy_table_hash"] = energy_table_hash(*r.energy_table);
  }
  if (r.stopped_by_signal) j["stopped_by_signal"] = r.stopped_by_signal;
  return j;
}

ResultSet results_from_json(const nlohmann::ordered_json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected a JSON object");
  ResultSet r;
  r.command = json_member<std::string>(j, "command");
  r.title = json_member<std::string>(j, "title");
  r.config_hash = json_member<std::string>(j, "config_hash");
  r.hardware = json_member_or<std::string>(j, "hardware", "");
  // a report from before the policy was stamped was judged by the defaults, which have not changed
  if (j.contains("policy")) {
    try {
      r.policy = check_policy_from_json(j.at("policy"));
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("field 'policy': ") + e.what());
    }
  }
  r.total = json_member<std::size_t>(j, "total");
  if (!j.contains("shard")) throw std::invalid_argument("field 'shard': missing");
  try {
    r.shard = shard_from(j.at("shard"));
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("field 'shard': ") + e.what());
  }
  r.notes = json_member_or<std::vector<std::string>>(j, "notes", {});
  r.stopped_by_signal = json_member_or<int>(j, "stopped_by_signal", 0);
  if (j.contains("energy_table")) {
    try {
      r.energy_table = energy_table_from_json(j.at("energy_table"));
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("field 'energy_table': ") + e.what());
    }
  }
  if (j.contains("categories")) {
    if (!j.at("categories").is_array()) throw std::invalid_argument("field 'categories': expected a list");
    for (const auto& c : j.at("categories"))
      r.categories.push_back({json_member<std::string>(c, "strategy"), json_member<std::string>(c, "category"),
                              json_member<std::uint64_t>(c, "clocks"), json_member_opt<std::uint64_t>(c, "thesis")});
  }
  if (!j.contains("checks") || !j.at("checks").is_array()) throw std::invalid_argument("field 'checks': expected a list");
  std::size_t k = 0;
  for (const auto& cj : j.at("checks")) {
    try {
      r.checks.push_back(check_from_json(cj));
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("checks[{}]: {}", k, e.what()));
    }
    ++k;
  }
  return r;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::string results_csv(const ResultSet& r) {
  std::vector<std::string> label_names;
  for (const CheckResult& c : r.checks)
    for (const auto& [k, v] : c.labels)
      if (std::find(label_names.begin(), label_names.end(), k) == label_names.end()) label_names.push_back(k);
  std::string out = "name,group";
  for (const std::string& k : label_names) {
    out += ',';
    out += csv_field(k);
  }
  out += ",status,rtl_cycles,model_cycles,delta,thesis_cycles,message,where,replay,waves";
  // the counts (model_<count>, rtl_<count>; empty where a backend has none or could not observe one) and the
  // energy per component, when the run has them
  const bool counts = std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.activity.model || c.activity.rtl; });
  const bool energy = r.energy_table.has_value();
  static constexpr const char* kComponents[] = {"mac", "sram", "noc", "dram", "arm", "static", "total"};
  if (counts)
    for (const char* who : {"model", "rtl"})
      for (const Activity::Field& f : Activity::fields()) out += fmt::format(",{}_{}", who, f.name);
  if (energy) {
    out += ",energy_from";
    for (const char* k : kComponents) out += fmt::format(",energy_pj_{}", k);
  }
  out += "\n";
  for (const CheckResult& c : r.checks) {
    out += csv_field(c.name) + "," + csv_field(c.group);
    for (const std::string& k : label_names) {
      std::string v;
      for (const auto& [lk, lv] : c.labels)
        if (lk == k) v = lv;
      out += ',';
      out += csv_field(v);
    }
    out += fmt::format(",{},{},{},{},{},{},{},{},{}\n", to_string(c.status),
                       c.rtl_cycles ? std::to_string(*c.rtl_cycles) : "", c.model_cycles ? std::to_string(*c.model_cycles) : "",
                       c.delta ? fmt::format("{:.6f}", *c.delta) : "", c.thesis_cycles ? std::to_string(*c.thesis_cycles) : "",
                       csv_field(c.message), csv_field(c.where), csv_field(c.replay), csv_field(c.waves));
    out.pop_back();  // the row goes on
    if (counts)
      for (const auto* side : {&c.activity.model, &c.activity.rtl}) {
        const std::vector<std::string>& unavailable = side == &c.activity.model ? c.activity.model_unavailable : c.activity.rtl_unavailable;
        for (const Activity::Field& f : Activity::fields()) {
          out += ',';
          if (*side && std::find(unavailable.begin(), unavailable.end(), f.name) == unavailable.end())
            out += std::to_string((**side).*f.member);
        }
      }
    if (energy) {
      out += "," + c.energy_from;
      if (c.energy) {
        const nlohmann::ordered_json e = to_json(*c.energy);
        for (const char* k : kComponents) out += fmt::format(",{:.6g}", e.at(k).get<double>());
      } else {
        out += std::string(std::size(kComponents), ',');
      }
    }
    out += '\n';
  }
  return out;
}

std::string results_junit(const ResultSet& r) {
  const RunSummary s = summarize(r);
  const std::size_t errors = s.counts.at(Status::Error), failures = s.tasks - s.counts.at(Status::Pass) - errors;
  double time = 0;
  for (const CheckResult& c : r.checks) time += c.rtl_wall_s + c.model_wall_s;
  const std::string suite = "s2cosim " + r.command + (r.title.empty() ? "" : ": " + r.title);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                     xml_escape(suite), s.tasks, failures, errors, time);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3f}\">\n",
                     xml_escape(suite), s.tasks, failures, errors, time);
  out += "    <properties>\n";
  const std::pair<const char*, std::string> props[] = {
      {"tool", std::string("s2cosim ") + tool_version()}, {"command", r.command}, {"config_hash", r.config_hash},
      {"policy", policy_line(r.policy)}, {"hardware", r.hardware}, {"shard", fmt::format("{}/{}", r.shard.index, r.shard.count)}};
  for (const auto& [k, v] : props) out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", k, xml_escape(v));
  // the counts' agreement and the energy, as the console says them
  if (const std::string a = format_activity_and_energy(r); !a.empty())
    out += fmt::format("      <property name=\"activity_and_energy\" value=\"{}\"/>\n", xml_escape(a));
  out += "    </properties>\n";
  for (const CheckResult& c : r.checks) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(c.group), xml_escape(c.name),
                       c.rtl_wall_s + c.model_wall_s);
    if (c.status == Status::Pass) {  // a note on a pass (data not checked, model only ...) as its output
      out += c.message.empty() ? "/>\n" : fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(c.message));
      continue;
    }
    std::string body = c.message;
    if (!c.where.empty()) body += "\nwhere: " + c.where;
    if (!c.waves.empty()) body += "\nwaves: " + c.waves;
    if (!c.replay.empty()) body += "\nrerun: " + c.replay;
    const char* element = c.status == Status::Error ? "error" : "failure";
    out += fmt::format(">\n      <{} type=\"{}\" message=\"{}\">{}</{}>\n    </testcase>\n", element, to_string(c.status),
                       xml_escape(c.message), xml_escape(body), element);
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string format_wall_and_speed(const ResultSet& r) {
  const RunSummary sum = summarize(r);
  double model_clocks = 0, rtl_clocks = 0;
  for (const CheckResult& c : r.checks) {
    model_clocks += double(c.model_cycles.value_or(0));
    rtl_clocks += double(c.rtl_cycles.value_or(0));
  }
  auto rate = [](double clocks, double wall) {
    return wall > 0 ? fmt::format(" ({:.2e} simulated PE clocks per second)", clocks / wall) : std::string();
  };
  return fmt::format("wall: model {:.1f} s{}, RTL {:.1f} s{}", sum.model_wall_s, rate(model_clocks, sum.model_wall_s),
                     sum.rtl_wall_s, rate(rtl_clocks, sum.rtl_wall_s));
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default:
        // XML 1.0 allows no other control characters, not even escaped
        if (static_cast<unsigned char>(c) < 0x20) out += '?';
        else out += c;
    }
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,/:=+@%") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

namespace {
std::string& program_name_storage() {
  static std::string name = "s2cosim";
  return name;
}
}  // namespace

const std::string& program_name() { return program_name_storage(); }
void set_program_name(const std::string& name) { program_name_storage() = name; }

bool write_result_outputs(const ResultSet& r, const ResultOutputs& out, std::ostream& err) {
  return write_outputs({{out.html, [&] { return results_html(r); }},
                        {out.junit, [&] { return results_junit(r); }},
                        {out.csv, [&] { return results_csv(r); }}},
                       err);
}

}  // namespace s2
