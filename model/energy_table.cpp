#include "model/energy_table.h"

#include "model/hw_config.h"
#include "model/json_field.h"
#include "model/text_file.h"

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace s2 {

namespace {

constexpr std::array<EnergyComponent, 5> kComponents{EnergyComponent::mac, EnergyComponent::sram, EnergyComponent::noc,
                                                     EnergyComponent::dram, EnergyComponent::arm};
constexpr double kMaxPj = 1e6;  // a microjoule per access: beyond any hardware, so a typo
constexpr double kMaxMw = 1e6;  // a kilowatt per PE

// The counts that are time, charged by the static part, not per access.
bool is_time_count(const std::string& name) { return name == "pe_busy_cycles" || name == "pe_idle_cycles"; }

const Activity::Field* find_count(const std::string& name) {
  for (const auto& f : Activity::fields())
    if (name == f.name) return &f;
  return nullptr;
}

std::string chargeable_counts() {
  std::string s;
  for (const auto& f : Activity::fields()) {
    if (is_time_count(f.name)) continue;
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

std::string component_names() {
  std::string s;
  for (EnergyComponent c : kComponents) s += std::string(s.empty() ? "" : ", ") + component_name(c);
  return s;
}

[[noreturn]] void refuse(const std::string& field, const std::string& expected) {
  throw std::invalid_argument("energy table field '" + field + "': expected " + expected);
}

[[noreturn]] void missing(const std::string& field) {
  throw std::invalid_argument("energy table field '" + field +
                              "': missing (every field must be given but 'calibrated', 'note' and an entry's 'unit')");
}

template <typename T>
T member(const nlohmann::json& j, const char* key, const std::string& in) {
  if (!j.contains(key)) missing(in + key);
  try {
    return json_field<T>(j.at(key));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("energy table field '" + in + key + "': " + e.what());
  }
}

std::optional<double> number_or_null(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) missing(key);
  if (j.at(key).is_null()) return std::nullopt;
  if (!j.at(key).is_number()) refuse(key, "a number, or null where the source states none, got " + j.at(key).dump());
  return j.at(key).get<double>();
}

void only_keys(const nlohmann::json& j, std::initializer_list<const char*> keys, const std::string& where) {
  if (!j.is_object()) {
    if (where.empty()) throw std::invalid_argument("energy table: expected a JSON object of fields, got " + std::string(j.type_name()));
    refuse(where, "a JSON object of fields, got " + std::string(j.type_name()));
  }
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : keys) known = known || key == k;
    if (!known) {
      std::string list;
      for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("unknown energy table field '" + (where.empty() ? "" : where + ".") + key +
                                  "' (expected " + list + ")");
    }
    (void)value;
  }
}

EnergyEntry make_entry(double pj, EnergyComponent c, std::string source) { return {pj, c, std::move(source)}; }

}  // namespace

const char* component_name(EnergyComponent c) {
  switch (c) {
    case EnergyComponent::mac: return "mac";
    case EnergyComponent::sram: return "sram";
    case EnergyComponent::noc: return "noc";
    case EnergyComponent::dram: return "dram";
    case EnergyComponent::arm: return "arm";
  }
  return "?";
}

// The figures and their arithmetic (docs/energy.md): s = (22/45) x (0.8/0.9)^2 = 0.38628..., each figure
// worked out with the exact s and rounded to four significant digits (tests/energy_table_test.cpp redoes the
// arithmetic). vectors/energy/default.json must equal to_json of this.
EnergyTable default_energy_table() {
  EnergyTable t;
  t.name = "default";
  t.voltage_v = 0.80;
  t.frequency_mhz = 250.0;
  t.calibrated = false;
  t.note =
      "Stated estimates, uncalibrated: SpiNNaker2's 22 nm FDSOI PE at 0.80 V and 250 MHz, scaled from 45 nm, 0.9 V "
      "figures (M. Horowitz, \"Computing's energy problem (and what we can do about it)\", ISSCC 2014) by "
      "s = (22/45) x (0.8/0.9)^2 = 0.3863 (the node linearly, the voltage squared, as CNNergy scales its 45 nm "
      "data); the DRAM from typical published LPDDR4 figures; the static power a placeholder. No figure is "
      "measured on SpiNNaker2: absolute energies are uncalibrated, the ratios between strategies and MAC shapes "
      "are what this table is for.";
  const std::string horowitz = "Horowitz ISSCC 2014, 45 nm 0.9 V: ";
  const std::string mac =
      horowitz + "8-bit multiply 0.2 pJ + 32-bit add (the accumulator) 0.1 pJ = 0.3 pJ; x s = (22/45) x (0.8/0.9)^2 "
                 "= 0.3863: 0.1159 pJ per MAC (estimate)";
  t.entries["mac_ops"] = make_entry(0.1159, EnergyComponent::mac, mac);
  t.entries["mac_padding_ops"] =
      make_entry(0.1159, EnergyComponent::mac,
            mac + "; a padding lane's MAC charged as a useful one (its operands switch too; a lane gated off would "
                  "cost less)");
  const std::string sram_read =
      horowitz + "64-bit read of a 32 KB SRAM 20 pJ (the PE's 128 KB are four 32 KB banks) = 2.5 pJ per byte; x s = "
                 "(22/45) x (0.8/0.9)^2 = 0.3863: 0.9657 pJ per byte (estimate)";
  const std::string sram_write = sram_read + "; a write charged as a read (no write figure cited)";
  for (const char* c : {"sram_read_bytes_mla_a", "sram_read_bytes_mla_b", "sram_read_bytes_dma", "sram_read_bytes_arm"})
    t.entries[c] = make_entry(0.9657, EnergyComponent::sram, sram_read);
  for (const char* c : {"sram_write_bytes_mla_out", "sram_write_bytes_dma", "sram_write_bytes_arm"})
    t.entries[c] = make_entry(0.9657, EnergyComponent::sram, sram_write);
  const std::string buffer =
      "a write and a read of the 195-bit packet (128-bit payload + 67-bit header: rtl_stubs/s2_pkg.svh noc_pkt_t) "
      "in a router's buffer, each estimated as a 32 KB SRAM access (Horowitz ISSCC 2014, 45 nm 0.9 V: 20 pJ per "
      "64 bits = 0.3125 pJ per bit): 2 x 195 x 0.3125 = 121.9 pJ; x s = (22/45) x (0.8/0.9)^2 = 0.3863: 47.08 pJ";
  t.entries["noc_packets"] =
      make_entry(47.08, EnergyComponent::noc,
            "the packet in the first router it enters: " + buffer +
                " per packet (estimate; a router's few-packet buffer likely costs less than a 32 KB SRAM)");
  t.entries["noc_packet_hops"] =
      make_entry(62.49, EnergyComponent::noc,
            "the packet in the next router: " + buffer +
                "; plus 1 mm of link (hop length assumed) at about 0.1 pJ per bit per mm (on-chip wire, 45 nm 0.9 V, "
                "after Horowitz ISSCC 2014): 195 x 0.1 = 19.5 pJ, x (0.8/0.9)^2 = 0.7901 only (a wire's capacitance "
                "per mm does not shrink with the node) = 15.41 pJ; 47.08 + 15.41 = 62.49 pJ per packet-hop (estimate)");
  const std::string dram =
      "typical published LPDDR4 figures, 4-6 pJ per bit for an access, interface and DRAM core together; 5 pJ/bit "
      "x 8 = 40 pJ per byte (not scaled: the DRAM is a chip of its own; estimate)";
  t.entries["dram_read_bytes"] = make_entry(40.0, EnergyComponent::dram, dram);
  t.entries["dram_write_bytes"] = make_entry(40.0, EnergyComponent::dram, dram + "; a write charged as a read");
  t.entries["arm_cycles"] =
      make_entry(27.04, EnergyComponent::arm,
            horowitz + "about 70 pJ of overhead per instruction of a simple core (fetch, decode, register file, "
                       "control; the operation itself, 0.1 pJ for a 32-bit add, left out); one instruction per ARM "
                       "clock assumed; 70 x s = (22/45) x (0.8/0.9)^2 = 0.3863: 27.04 pJ per clock (estimate)");
  t.static_mw_per_pe = 0.1;
  t.static_source =
      "placeholder, not derived from any source: 0.1 mW per PE (22 nm FDSOI leakage depends on the body bias and "
      "the temperature, neither modelled); replace with a measured figure";
  return t;
}

nlohmann::ordered_json to_json(const EnergyTable& t) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::object();
  for (const auto& f : Activity::fields()) {
    const auto it = t.entries.find(f.name);
    if (it == t.entries.end()) continue;
    entries[f.name] = {{"pj_per_unit", it->second.pj_per_unit},
                       {"unit", f.unit},
                       {"component", component_name(it->second.component)},
                       {"source", it->second.source}};
  }
  // entries whose name is no count (a table made in code, not read): kept, so validate() can name them
  for (const auto& [name, e] : t.entries)
    if (!find_count(name))
      entries[name] = {{"pj_per_unit", e.pj_per_unit}, {"component", component_name(e.component)}, {"source", e.source}};
  return {{"name", t.name},
          {"voltage_v", json_or_null(t.voltage_v)},
          {"frequency_mhz", json_or_null(t.frequency_mhz)},
          {"calibrated", t.calibrated},
          {"note", t.note},
          {"entries", entries},
          {"static", {{"mw_per_pe", t.static_mw_per_pe}, {"source", t.static_source}}}};
}

EnergyTable energy_table_from_json(const nlohmann::json& j) {
  only_keys(j, {"name", "voltage_v", "frequency_mhz", "calibrated", "note", "entries", "static"}, "");
  EnergyTable t;
  t.name = member<std::string>(j, "name", "");
  t.voltage_v = number_or_null(j, "voltage_v");
  t.frequency_mhz = number_or_null(j, "frequency_mhz");
  t.calibrated = j.contains("calibrated") ? member<bool>(j, "calibrated", "") : false;
  t.note = j.contains("note") ? member<std::string>(j, "note", "") : "";
  if (!j.contains("entries")) missing("entries");
  const nlohmann::json& entries = j.at("entries");
  if (!entries.is_object())
    refuse("entries", "an object of counts, each {\"pj_per_unit\", \"component\", \"source\"}, got " +
                          std::string(entries.type_name()));
  for (const auto& [name, e] : entries.items()) {
    const std::string where = "entries." + name;
    const Activity::Field* count = find_count(name);
    if (!count) refuse(where, "a count of model/activity.h: " + chargeable_counts());
    if (is_time_count(name))
      refuse(where, "a count charged per access (" + name +
                        " is time, which the static part charges: 'static.mw_per_pe'); one of " + chargeable_counts());
    only_keys(e, {"pj_per_unit", "unit", "component", "source"}, where);
    EnergyEntry entry;
    entry.pj_per_unit = member<double>(e, "pj_per_unit", where + ".");
    if (e.contains("unit") && member<std::string>(e, "unit", where + ".") != count->unit)
      refuse(where + ".unit", "\"" + std::string(count->unit) + "\" (the unit of " + name + "), or no unit, got " +
                                  e.at("unit").dump());
    const std::string component = member<std::string>(e, "component", where + ".");
    bool known = false;
    for (EnergyComponent c : kComponents)
      if (component == component_name(c)) entry.component = c, known = true;
    if (!known) refuse(where + ".component", "one of " + component_names() + ", got \"" + component + "\"");
    entry.source = member<std::string>(e, "source", where + ".");
    t.entries[name] = entry;
  }
  if (!j.contains("static")) missing("static");
  const nlohmann::json& st = j.at("static");
  only_keys(st, {"mw_per_pe", "source"}, "static");
  t.static_mw_per_pe = member<double>(st, "mw_per_pe", "static.");
  t.static_source = member<std::string>(st, "source", "static.");
  validate(t);
  return t;
}

void validate(const EnergyTable& t) {
  auto need = [](bool ok, const std::string& field, const std::string& expected) {
    if (!ok) refuse(field, expected);
  };
  need(!t.name.empty(), "name", "a non-empty name");
  if (t.voltage_v)
    need(std::isfinite(*t.voltage_v) && *t.voltage_v > 0 && *t.voltage_v <= 10, "voltage_v",
         "a supply voltage above 0 and at most 10 (V), or null");
  if (t.frequency_mhz)
    need(std::isfinite(*t.frequency_mhz) && *t.frequency_mhz > 0 && *t.frequency_mhz <= 10000, "frequency_mhz",
         "a clock above 0 and at most 10000 (MHz), or null");
  for (const auto& [name, e] : t.entries) {
    const std::string where = "entries." + name;
    need(find_count(name) != nullptr && !is_time_count(name), where,
         "a count of model/activity.h charged per access: " + chargeable_counts());
    need(std::isfinite(e.pj_per_unit) && e.pj_per_unit >= 0 && e.pj_per_unit <= kMaxPj, where + ".pj_per_unit",
         "a finite number of picojoules from 0 to 1000000");
    need(!e.source.empty(), where + ".source", "where the figure comes from (a non-empty string)");
  }
  need(std::isfinite(t.static_mw_per_pe) && t.static_mw_per_pe >= 0 && t.static_mw_per_pe <= kMaxMw,
       "static.mw_per_pe", "a finite number of milliwatts from 0 to 1000000");
  need(!t.static_source.empty(), "static.source", "where the figure comes from (a non-empty string)");
}

EnergyTable load_energy_table(const std::string& path) {
  return parse_energy_table(read_text_file(path, kMaxEnergyTableFileBytes, "energy table file"), path);
}

EnergyTable parse_energy_table(const std::string& text, const std::string& path) {
  // the keys leading to the value being parsed, so that a number beyond a double (1e999, which JSON cannot
  // otherwise say is infinite) is refused naming its field
  std::vector<std::string> keys;
  const nlohmann::json::parser_callback_t track = [&keys](int depth, nlohmann::json::parse_event_t event,
                                                          nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth >= 1) {
      keys.resize(static_cast<std::size_t>(depth - 1));
      keys.push_back(parsed.get<std::string>());
    }
    return true;
  };
  try {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text, track);
    } catch (const nlohmann::json::out_of_range& e) {
      if (e.id != 406 || keys.empty()) throw;
      std::string field;
      for (const std::string& k : keys) field += (field.empty() ? "" : ".") + k;
      throw std::invalid_argument("energy table field '" + field + "': expected a finite number, got one beyond a double (" +
                                  e.what() + ")");
    }
    return energy_table_from_json(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string energy_table_hash(const EnergyTable& t) { return text_hash(to_json(t).dump()); }

double& EnergyBreakdown::operator[](EnergyComponent c) {
  switch (c) {
    case EnergyComponent::mac: return mac;
    case EnergyComponent::sram: return sram;
    case EnergyComponent::noc: return noc;
    case EnergyComponent::dram: return dram;
    case EnergyComponent::arm: return arm;
  }
  return mac;
}

EnergyBreakdown& EnergyBreakdown::operator+=(const EnergyBreakdown& o) {
  mac += o.mac;
  sram += o.sram;
  noc += o.noc;
  dram += o.dram;
  arm += o.arm;
  static_pj += o.static_pj;
  return *this;
}

EnergyBreakdown energy_of(const Activity& a, const EnergyTable& t, double seconds, int pes) {
  if (!std::isfinite(seconds) || seconds < 0)
    throw std::invalid_argument("energy: expected a run's time of 0 seconds or more, got " + std::to_string(seconds));
  if (pes < 0) throw std::invalid_argument("energy: expected 0 PEs or more, got " + std::to_string(pes));
  EnergyBreakdown e;
  for (const auto& f : Activity::fields()) {
    const auto it = t.entries.find(f.name);
    if (it == t.entries.end()) continue;
    e[it->second.component] += static_cast<double>(a.*f.member) * it->second.pj_per_unit;
  }
  // mW x s = mJ = 1e9 pJ
  e.static_pj = t.static_mw_per_pe * pes * seconds * 1e9;
  return e;
}

nlohmann::ordered_json to_json(const EnergyBreakdown& e) {
  return {{"mac", e.mac},   {"sram", e.sram},           {"noc", e.noc},       {"dram", e.dram},
          {"arm", e.arm},   {"static", e.static_pj},    {"total", e.total()}};
}

EnergyTable energy_table_named(const std::string& name) {
  return name == "default" ? default_energy_table() : load_energy_table(name);
}

EnergyBreakdown energy_breakdown_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected an object of picojoules per component");
  EnergyBreakdown e;
  const auto pj = [&](const char* key) {
    const double v = json_member<double>(j, key);
    if (!std::isfinite(v) || v < 0) throw std::invalid_argument(std::string("field '") + key + "': expected picojoules >= 0");
    return v;
  };
  e.mac = pj("mac");
  e.sram = pj("sram");
  e.noc = pj("noc");
  e.dram = pj("dram");
  e.arm = pj("arm");
  e.static_pj = pj("static");
  const double total = pj("total");
  if (std::fabs(total - e.total()) > 1e-6 * std::max(1.0, total))
    throw std::invalid_argument("field 'total': not the sum of the components");
  return e;
}

}  // namespace s2
