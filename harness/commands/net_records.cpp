#include "harness/commands/net_records.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/commands/net_runner.h"
#include "model/json_field.h"
#include "model/noc/mesh.h"

namespace s2 {

namespace {

// One backend's fields of a block run's record, each key prefixed with "model_" or "rtl_"; only the model
// times the block with ARM clocks too (block_cycles_arm_timed, activity_arm_timed: `arm_timed_too`).
// `compared_timed` (BlockRun::arm_timed): the runs compared are ARM timed and there is no ARM-free run, so the
// figures go under the ARM-timed keys alone (cycles_arm_timed, block_cycles_arm_timed, activity_arm_timed) and
// no ARM-free key is written. backend_run_from_json reads them back.
void put_backend_run(nlohmann::json& o, const std::string& prefix, const BackendRun& b, bool arm_timed_too, bool compared_timed) {
  if (compared_timed) {
    o[prefix + "cycles_arm_timed"] = b.core_cycles;
    o[prefix + "block_cycles_arm_timed"] = b.block_cycles;
  } else {
    o[prefix + "cycles"] = b.core_cycles;
    o[prefix + "block_cycles"] = b.block_cycles;
    if (arm_timed_too) o[prefix + "block_cycles_arm_timed"] = b.block_cycles_arm_timed;
  }
  o[prefix + "completed"] = b.completed;
  // not checked (--timing-only): null, not false, so that nobody reads a mismatch (or a match) into it
  o[prefix + "data_match"] = b.data_checked ? nlohmann::json(b.data_match) : nlohmann::json(nullptr);
  if (!b.first_difference.empty()) o[prefix + "first_difference"] = b.first_difference;
  if (!b.stalled.empty()) o[prefix + "stalled"] = b.stalled;
  o[prefix + "wall_s"] = b.wall_s;
  o[prefix + "simulated_cycles"] = b.simulated_cycles;
  if (b.qpe_clocks_simulated) {
    o[prefix + "qpe_clocks_evaluated"] = b.qpe_clocks_evaluated;
    o[prefix + "qpe_clocks_simulated"] = b.qpe_clocks_simulated;
  }
  if (compared_timed) {
    o[prefix + "activity_arm_timed"] = activity_json(b.activity, b.activity_unavailable);
    return;
  }
  o[prefix + "activity"] = activity_json(b.activity, b.activity_unavailable);
  if (b.activity_arm_timed) o[prefix + "activity_arm_timed"] = activity_json(*b.activity_arm_timed, b.activity_unavailable);
}

BackendRun backend_run_from_json(const nlohmann::json& o, const std::string& prefix, bool arm_timed_too, bool compared_timed) {
  BackendRun b;
  // the keys of the runs compared: ARM free, or ARM timed where there is no ARM-free run
  const std::string cycles = compared_timed ? "cycles_arm_timed" : "cycles", block = compared_timed ? "block_cycles_arm_timed" : "block_cycles",
                    activity = compared_timed ? "activity_arm_timed" : "activity";
  b.core_cycles = json_member<std::uint64_t>(o, (prefix + cycles).c_str());
  b.block_cycles = json_member_or<std::uint64_t>(o, (prefix + block).c_str(), 0);
  if (arm_timed_too)
    b.block_cycles_arm_timed = json_member_or<std::uint64_t>(o, (prefix + "block_cycles_arm_timed").c_str(), 0);
  b.completed = json_member_or<bool>(o, (prefix + "completed").c_str(), true);
  const auto match = o.find(prefix + "data_match");
  b.data_checked = match == o.end() || !match->is_null();
  b.data_match = b.data_checked && json_member_or<bool>(o, (prefix + "data_match").c_str(), false);
  b.first_difference = json_member_or<std::string>(o, (prefix + "first_difference").c_str(), "");
  b.stalled = json_member_or<std::string>(o, (prefix + "stalled").c_str(), "");
  b.wall_s = json_member_or<double>(o, (prefix + "wall_s").c_str(), 0.0);
  b.simulated_cycles = json_member_or<std::uint64_t>(o, (prefix + "simulated_cycles").c_str(), 0);
  b.qpe_clocks_evaluated = json_member_or<std::uint64_t>(o, (prefix + "qpe_clocks_evaluated").c_str(), 0);
  b.qpe_clocks_simulated = json_member_or<std::uint64_t>(o, (prefix + "qpe_clocks_simulated").c_str(), 0);
  // a record from before activity was counted has none: its counts are all unavailable
  const auto counts = [&](const std::string& key, Activity& a) {
    std::vector<std::string> unavailable;
    try {
      activity_from_json(o.at(key), a, unavailable);
    } catch (const std::exception& e) {
      throw std::invalid_argument("field '" + key + "': " + e.what());
    }
    return unavailable;
  };
  if (o.contains(prefix + activity)) {
    b.activity_unavailable = counts(prefix + activity, b.activity);
  } else {
    for (const Activity::Field& f : Activity::fields()) b.activity_unavailable.push_back(f.name);
  }
  if (compared_timed) {
    if (arm_timed_too && o.contains(prefix + activity)) b.activity_arm_timed = b.activity;
  } else if (o.contains(prefix + "activity_arm_timed")) {
    counts(prefix + "activity_arm_timed", b.activity_arm_timed.emplace());
  }
  return b;
}

}  // namespace

nlohmann::json time_report(const StreamResult& r, const HwConfig& cfg) {
  nlohmann::json j;
  const double total = double(r.cycles) * double(std::max<std::uint64_t>(r.active_pes, 1));
  double accounted = 0;
  for (std::size_t k = 0; k < r.pe_time.size(); ++k) {
    j["shares"][to_string(static_cast<PeTime>(k))] = double(r.pe_time[k]) / total;
    accounted += double(r.pe_time[k]);
  }
  j["shares"]["other"] = 1.0 - accounted / total;
  j["pes"] = r.active_pes;
  if (r.busiest_link_from >= 0)
    j["busiest_link"] = {{"from", qpe_name(cfg.chip, r.busiest_link_from)},
                         {"to", qpe_name(cfg.chip, r.busiest_link_to)},
                         {"packets", r.busiest_link_packets},
                         {"packets_per_cycle", double(r.busiest_link_packets) / double(std::max<std::uint64_t>(r.cycles, 1))}};
  std::size_t d = 0;
  for (std::size_t i = 1; i < r.dram_busy_cycles.size(); ++i)
    if (r.dram_busy_cycles[i] > r.dram_busy_cycles[d]) d = i;
  if (!r.dram_busy_cycles.empty())
    j["busiest_dram"] = {{"dram", d},
                         {"busy_cycles", r.dram_busy_cycles[d]},
                         {"busy_share", double(r.dram_busy_cycles[d]) / double(std::max<std::uint64_t>(r.cycles, 1))}};
  return j;
}

nlohmann::json bound_json(const mapper::BlockBound& b, std::optional<std::uint64_t> cycles) {
  nlohmann::json j = {{"cycles", b.cycles()},
                      {"bound_by", mapper::to_string(b.bound_by())},
                      {"macs_cycles", b.macs_cycles},
                      {"dram_cycles", b.dram_cycles},
                      {"links_cycles", b.links_cycles},
                      {"arm_cycles", b.arm_cycles},
                      {"host_cycles", b.host_cycles},
                      {"dram_bytes", b.dram_bytes},
                      {"storage_bytes", b.storage_bytes}};
  if (cycles) j["block_cycles"] = *cycles;
  if (cycles && b.cycles()) j["ratio"] = double(*cycles) / double(b.cycles());
  return j;
}

nlohmann::json operation_json(const BlockRun& r, const HwConfig& cfg, std::optional<std::uint64_t> thesis) {
  if (!r.record.is_null()) {
    nlohmann::json o = r.record;
    if (r.bound && !o.contains("bound"))  // a journal written before bounds were held
      o["bound"] = bound_json(*r.bound, bounded_cycles(r));
    return o;
  }
  nlohmann::json o;
  o["name"] = r.block;
  o["strategy"] = mapper::to_string(r.strategy);
  o["reuse"] = mapper::to_string(r.reuse);
  if (!r.error.empty()) {  // it threw: nothing ran to the end
    o["status"] = to_string(r.status);
    o["error"] = r.error;
    o["completed"] = false;
    o["data_match"] = false;
    o["streams"] = nlohmann::json::array();
    return o;
  }
  const BackendRun& main_run = r.model ? *r.model : *r.rtl;
  if (r.model) {
    put_backend_run(o, "model_", *r.model, true, r.arm_timed);
    o["arm_cycles"] = r.arm_cycles;
  }
  if (r.model_core) {
    nlohmann::json& t = o[model_time_key(r.arm_timed)] = time_report(*r.model_core, cfg);
    if (!r.phases.is_null()) t["phases"] = r.phases;
  }
  if (!r.categories.empty()) o["category_cycles"] = r.categories;
  if (r.rtl) put_backend_run(o, "rtl_", *r.rtl, false, r.arm_timed);
  if (r.delta) o["delta"] = *r.delta;
  o["status"] = to_string(r.status);
  if (!r.asked.empty()) o["asked_strategy"] = r.asked;
  if (!r.where.empty()) o["deviation_where"] = r.where;
  if (!r.rtl_refused.empty()) o["rtl_refused"] = r.rtl_refused;
  if (r.schedule != "thesis") o["schedule"] = r.schedule;
  if (!r.schedule_note.empty()) o["schedule_note"] = r.schedule_note;
  if (!r.rtl_simulations.empty()) {
    nlohmann::json& sims = o["rtl_simulations"] = nlohmann::json::array();
    for (const RtlSimulationRun& s : r.rtl_simulations)
      sims.push_back({{"threads", s.sim.resolved_threads()}, {"eval", s.sim.active_only ? "active" : "all"}, {"wall_s", s.wall_s},
                      {"same", s.difference.empty()}, {"difference", s.difference}});
  }
  if (!r.waves.empty()) o["waves"] = r.waves;
  if (!r.activity_findings.empty()) o["activity_findings"] = r.activity_findings;
  if (r.bound) o["bound"] = bound_json(*r.bound, bounded_cycles(r));
  o["completed"] = (!r.model || r.model->completed) && (!r.rtl || r.rtl->completed);
  // RTL results against the golden block where the RTL ran (contract 3), else the model's
  if (!main_run.data_checked) o["data_match"] = nullptr;  // --timing-only (the model alone)
  else o["data_match"] = main_run.data_match && (!r.rtl || r.rtl->data_match);
  const std::string diff = r.rtl && !r.rtl->first_difference.empty() ? r.rtl->first_difference : main_run.first_difference;
  if (!diff.empty()) o["first_difference"] = diff;
  if (thesis) {
    o["thesis_cycles"] = *thesis;
    o["thesis_deviation"] = (double(main_run.core_cycles) - double(*thesis)) / double(*thesis);
  }
  o["streams"] = nlohmann::json::array();
  for (const StreamRow& row : r.streams) {
    nlohmann::json sj = {{"operation", row.operation}, {"dram_ops", row.dram_ops}, {"mla_tasks", row.mla_tasks}};
    if (r.model) {
      if (!r.arm_timed) sj["model_cycles"] = row.cycles;
      sj["model_cycles_arm_timed"] = row.cycles_arm_timed;
      sj["arm_cycles"] = row.arm_cycles;
    }
    if (row.rtl_cycles) sj[r.arm_timed ? "rtl_cycles_arm_timed" : "rtl_cycles"] = *row.rtl_cycles;
    o["streams"].push_back(sj);
  }
  return o;
}

std::string describe_time(const nlohmann::json& t, const std::string& field) {
  try {
    const nlohmann::json& sh = t.at("shares");
    auto share = [&](const char* k) { return 100 * json_field<double>(sh.at(k)); };
    std::string s = fmt::format(
        "{} PEs' clocks: MLA {:.0f}%, DRAM {:.0f}%, NoC {:.0f}%, sync {:.0f}%, ARM {:.0f}%, other {:.0f}%",
        json_field<std::uint64_t>(t.at("pes")), share("mla"), share("dram"), share("noc"), share("sync"), share("arm"),
        share("other"));
    if (t.contains("busiest_dram")) {
      const nlohmann::json& d = t.at("busiest_dram");
      s += fmt::format("; busiest DRAM {} ({:.0f}% busy)", json_field<std::size_t>(d.at("dram")),
                       100 * json_field<double>(d.at("busy_share")));
    }
    if (t.contains("busiest_link")) {
      const nlohmann::json& l = t.at("busiest_link");
      s += fmt::format("; busiest link {} -> {} ({} packets, {:.2f} per clock)", json_field<std::string>(l.at("from")),
                       json_field<std::string>(l.at("to")), json_field<std::uint64_t>(l.at("packets")),
                       json_field<double>(l.at("packets_per_cycle")));
    }
    return s;
  } catch (const std::exception& e) {
    throw std::invalid_argument("field '" + field + "': " + e.what());
  }
}

BlockRun block_run_from_json(const nlohmann::json& o) {
  if (!o.is_object()) throw std::invalid_argument("expected a JSON object");
  BlockRun r;
  r.record = o;
  r.block = json_member<std::string>(o, "name");
  r.strategy = mapper::parse_strategy(json_member<std::string>(o, "strategy"));
  const std::string reuse = json_member_or<std::string>(o, "reuse", "none");
  r.reuse = reuse == "ifmap" ? mapper::Reuse::Ifmap : reuse == "filter" ? mapper::Reuse::Filter : mapper::Reuse::None;
  r.arm_cycles = json_member_or<std::uint64_t>(o, "arm_cycles", 0);
  // a record of ARM-timed runs alone (BlockRun::arm_timed) has the ARM-timed keys of the runs compared and no
  // ARM-free one
  r.arm_timed = o.contains("model_cycles_arm_timed") || o.contains("rtl_cycles_arm_timed");
  if (r.arm_timed)
    for (const char* k : {"model_cycles", "rtl_cycles", "model_block_cycles", "rtl_block_cycles", "model_activity", "rtl_activity", "model_time"})
      if (o.contains(k))
        throw std::invalid_argument(std::string("field '") + k + "': an ARM-free figure in the record of ARM-timed runs alone "
                                    "(model_cycles_arm_timed or rtl_cycles_arm_timed)");
  if (o.contains(r.arm_timed ? "model_cycles_arm_timed" : "model_cycles")) r.model = backend_run_from_json(o, "model_", true, r.arm_timed);
  if (o.contains(r.arm_timed ? "rtl_cycles_arm_timed" : "rtl_cycles")) r.rtl = backend_run_from_json(o, "rtl_", false, r.arm_timed);
  if (o.contains("delta")) r.delta = json_member<double>(o, "delta");
  r.asked = json_member_or<std::string>(o, "asked_strategy", "");
  r.error = json_member_or<std::string>(o, "error", "");
  if (o.contains("status")) {
    try {
      r.status = parse_status(json_member<std::string>(o, "status"));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("field 'status': ") + e.what());
    }
    if (r.status == Status::Deviation && (!r.model || !r.rtl))
      throw std::invalid_argument("field 'status': a deviation needs model_cycles and rtl_cycles");
  } else {
    r.status = block_status(r, CheckPolicy{}.deviation_bound);  // a journal written before every block run had a status (and a policy)
  }
  r.where = json_member_or<std::string>(o, "deviation_where", "");
  r.rtl_refused = json_member_or<std::string>(o, "rtl_refused", "");
  if (o.contains("rtl_simulations")) {
    if (!o.at("rtl_simulations").is_array()) throw std::invalid_argument("field 'rtl_simulations': expected a list");
    for (const nlohmann::json& s : o.at("rtl_simulations")) {
      if (!s.is_object()) throw std::invalid_argument("field 'rtl_simulations': expected a list of objects");
      RtlSimulationRun sr;
      sr.sim.threads = json_member<int>(s, "threads");
      const std::string eval = json_member<std::string>(s, "eval");
      if (eval != "active" && eval != "all")
        throw std::invalid_argument("field 'rtl_simulations': 'eval' expected active or all, got '" + eval + "'");
      sr.sim.active_only = eval == "active";
      sr.wall_s = json_member<double>(s, "wall_s");
      sr.difference = json_member_or<std::string>(s, "difference", "");
      r.rtl_simulations.push_back(sr);
    }
  }
  r.waves = json_member_or<std::string>(o, "waves", "");
  r.activity_findings = json_member_or<std::vector<std::string>>(o, "activity_findings", {});
  if (r.model && r.rtl)  // the deltas again (the status and findings are the record's)
    r.activity_delta = compare_activity(r.model->activity, r.rtl->activity, r.model->activity_unavailable,
                                        r.rtl->activity_unavailable, CheckPolicy{});
  if (r.status == Status::Error && r.error.empty()) throw std::invalid_argument("field 'error': an error status needs its message");
  if (r.error.empty() && !r.model && !r.rtl) throw std::invalid_argument("field 'model_cycles': a block run needs model_cycles or rtl_cycles");
  if (o.contains("category_cycles")) {
    const nlohmann::json& cats = o.at("category_cycles");
    if (!cats.is_object()) throw std::invalid_argument("field 'category_cycles': expected an object");
    for (const auto& [cat, v] : cats.items()) r.categories[cat] = json_member<double>(cats, cat.c_str());
  }
  if (!o.contains("streams") || !o.at("streams").is_array()) throw std::invalid_argument("field 'streams': expected a list");
  for (const auto& sj : o.at("streams")) {
    if (!sj.is_object()) throw std::invalid_argument("field 'streams': expected a list of objects");
    StreamRow row;
    row.operation = json_member<std::string>(sj, "operation");
    row.dram_ops = json_member_or<std::uint64_t>(sj, "dram_ops", 0);
    row.mla_tasks = json_member_or<std::uint64_t>(sj, "mla_tasks", 0);
    row.cycles_arm_timed = json_member_or<std::uint64_t>(sj, "model_cycles_arm_timed", 0);
    row.cycles = r.arm_timed ? row.cycles_arm_timed : json_member_or<std::uint64_t>(sj, "model_cycles", 0);
    row.arm_cycles = json_member_or<std::uint64_t>(sj, "arm_cycles", 0);
    const char* rtl_key = r.arm_timed ? "rtl_cycles_arm_timed" : "rtl_cycles";
    if (sj.contains(rtl_key)) row.rtl_cycles = json_member<std::uint64_t>(sj, rtl_key);
    row.completed = json_member_or<bool>(o, "completed", true);
    r.streams.push_back(row);
  }
  // a record from before simulated_cycles: what those runs simulated (every stream twice on the model)
  if (!o.contains("model_simulated_cycles") && r.model)
    for (const StreamRow& row : r.streams) r.model->simulated_cycles += row.cycles + row.cycles_arm_timed;
  if (!o.contains("rtl_simulated_cycles") && r.rtl)
    for (const StreamRow& row : r.streams) r.rtl->simulated_cycles += row.rtl_cycles.value_or(0);
  if (const std::string t = model_time_key(r.arm_timed); o.contains(t)) describe_time(o.at(t), t);  // refuses a time report it cannot print
  return r;
}

void check_block_record(const nlohmann::json& record) { block_run_from_json(record); }

std::map<std::string, std::map<std::string, double>> category_sums(const nlohmann::json& operations) {
  std::map<std::string, std::map<std::string, double>> sums;
  for (const nlohmann::json& o : operations) {
    if (!o.contains("category_cycles")) continue;
    const std::string st = o.contains("asked_strategy") ? o.at("asked_strategy").get<std::string>() : o.at("strategy").get<std::string>();
    for (const auto& [cat, v] : o.at("category_cycles").items()) {
      sums[st][cat] += v.get<double>();
      sums[st]["sum"] += v.get<double>();
    }
  }
  return sums;
}

std::map<std::string, BoundSum> bound_sums(const nlohmann::json& operations) {
  std::map<std::string, BoundSum> sums;
  for (const nlohmann::json& o : operations) {
    if (!o.contains("bound") || !o.at("bound").contains("block_cycles")) continue;
    const nlohmann::json& b = o.at("bound");
    BoundSum& s = sums[o.contains("asked_strategy") ? o.at("asked_strategy").get<std::string>() : o.at("strategy").get<std::string>()];
    ++s.blocks;
    s.block_cycles += json_field<std::uint64_t>(b.at("block_cycles"));
    s.bound_cycles += json_field<std::uint64_t>(b.at("cycles"));
    ++s.bound_by[json_field<std::string>(b.at("bound_by"))];
  }
  return sums;
}

nlohmann::json run_net_report_json(nlohmann::json head, const nlohmann::json& operations, const ResultSet& results) {
  for (const auto& [st, s] : bound_sums(operations)) {
    nlohmann::json& j = head["bound_sums"][st] = {{"blocks", s.blocks}, {"block_cycles", s.block_cycles}, {"bound_cycles", s.bound_cycles},
                                                  {"bound_by", s.bound_by}};
    if (s.bound_cycles) j["ratio"] = double(s.block_cycles) / double(s.bound_cycles);
  }
  if (head.value("whole", false)) {
    for (const auto& [st, cats] : category_sums(operations))
      for (const std::string& cat : network_categories()) {
        const auto it = cats.find(cat);
        head["category_cycles"][st][cat] = it == cats.end() ? 0 : static_cast<std::uint64_t>(std::llround(it->second));
      }
  }
  head["total"] = results.total;
  head["operations"] = operations;
  head["results"] = results_json(results);
  return head;
}

}  // namespace s2
