#include "harness/commands/snn_records.h"

#include <optional>
#include <stdexcept>

#include "harness/outputs/snn_figures.h"
#include "model/json_field.h"

namespace s2 {

nlohmann::ordered_json snn_layout_record_json(const SnnLayoutRecord& r) {
  return {{"layout", r.check.name}, {"entry", r.entry}, {"check", check_json(r.check)}};
}

SnnLayoutRecord snn_layout_record_from_json(const nlohmann::ordered_json& j) {
  SnnLayoutRecord r;
  const std::string layout = json_member<std::string>(j, "layout");
  if (!j.contains("entry") || !j.at("entry").is_object()) throw std::invalid_argument("field 'entry': expected an object");
  r.entry = j.at("entry");
  if (json_member_or<std::string>(r.entry, "layout", "") != layout)
    throw std::invalid_argument("field 'entry': its layout is not '" + layout + "'");
  if (!j.contains("check")) throw std::invalid_argument("field 'check': missing");
  try {
    r.check = check_from_json(j.at("check"));
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("field 'check': ") + e.what());
  }
  if (r.check.name != layout) throw std::invalid_argument("field 'check': its name is not '" + layout + "'");
  return r;
}

namespace {

std::optional<double> number(const nlohmann::ordered_json& entry, const char* key) {
  if (!entry.contains(key) || !entry.at(key).is_number()) return std::nullopt;
  return entry.at(key).get<double>();
}

// A layout's clocks per timestep: the RTL's if its run finished, else the model's.
std::optional<double> reference_per_step(const nlohmann::ordered_json& entry) {
  if (auto v = number(entry, "rtl_cycles_per_timestep")) return v;
  return number(entry, "model_cycles_per_timestep");
}

const nlohmann::ordered_json* entry_of(const nlohmann::ordered_json& layouts, const std::string& layout) {
  for (const nlohmann::ordered_json& e : layouts)
    if (e.is_object() && e.contains("layout") && e.at("layout") == layout) return &e;
  return nullptr;
}

nlohmann::ordered_json percent(std::optional<double> mine, std::optional<double> base) {
  return mine && base && *base > 0 ? nlohmann::ordered_json(100.0 * *mine / *base) : nlohmann::ordered_json(nullptr);
}

}  // namespace

void fill_snn_percentages(nlohmann::ordered_json& layouts) {
  const nlohmann::ordered_json* orig = entry_of(layouts, "original_mac");
  const nlohmann::ordered_json* serial = entry_of(layouts, "serial_arm");
  const std::optional<double> orig_bytes = orig ? number(*orig, "memory_bytes") : std::nullopt;
  const std::optional<double> serial_step = serial ? reference_per_step(*serial) : std::nullopt;
  for (nlohmann::ordered_json& e : layouts) {
    if (!e.is_object()) continue;
    if (e.contains("memory_percent_of_original_mac"))
      e["memory_percent_of_original_mac"] = percent(number(e, "memory_bytes"), orig_bytes);
    if (e.contains("time_percent_of_serial_arm")) e["time_percent_of_serial_arm"] = percent(reference_per_step(e), serial_step);
  }
}

nlohmann::ordered_json snn_report_json(const nlohmann::ordered_json& head, nlohmann::ordered_json layouts, const ResultSet& results) {
  nlohmann::ordered_json j = head;
  fill_snn_percentages(layouts);
  j["layouts"] = std::move(layouts);
  j["results"] = results_json(results);
  return j;
}

std::vector<ReportFigure> snn_report_figures(const nlohmann::ordered_json& layouts) {
  std::vector<SnnFigureLayout> fig;
  for (const nlohmann::ordered_json& e : layouts) {
    if (!e.contains("memory") || !e.contains("pes")) continue;  // not planned
    SnnFigureLayout f;
    f.name = e.value("layout", "");
    f.pes = e.at("pes").get<int>();
    const nlohmann::ordered_json& m = e.at("memory");
    f.memory = {m.at("weights").get<std::uint64_t>(), m.at("spikes").get<std::uint64_t>(), m.at("spike_map").get<std::uint64_t>(),
                m.at("index").get<std::uint64_t>(),   m.at("currents").get<std::uint64_t>(), m.at("buffers").get<std::uint64_t>()};
    for (const char* k : {"rtl_cycles_per_timestep", "model_cycles_per_timestep"})
      if (!f.cycles_per_timestep && e.contains(k) && e.at(k).is_number()) f.cycles_per_timestep = e.at(k).get<double>();
    if (e.contains("model_pe_cycles_per_timestep")) {
      SnnPeTime t{};
      for (std::size_t i = 0; i < t.size(); ++i)
        t[i] = static_cast<std::uint64_t>(e.at("model_pe_cycles_per_timestep").value(to_string(static_cast<PeTime>(i)), 0.0));
      f.pe_time = t;
    }
    fig.push_back(f);
  }
  return snn_figure10_figures(fig);
}

std::vector<std::string> snn_identity_fields() { return {"layer", "target", "system", "backend", "budget_bytes"}; }

}  // namespace s2
