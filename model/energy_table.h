// What an activity count costs in energy (issue 30, item 3): per count of model/activity.h an energy per unit,
// the component it belongs to (MAC array, SRAM, NoC, DRAM, ARM) and where the figure comes from; plus static
// power per PE. Plain data like the hardware configuration: a compiled-in default (equal to
// vectors/energy/default.json, a test checks it), read from JSON with errors naming file, field and what was
// expected, hashed and stamped into reports. docs/energy.md lists every figure with its source.
//
// Energy = sum over counts of count x pj_per_unit, by component, + static_mw_per_pe x PEs x seconds.
// None of the tables shipped is calibrated against SpiNNaker2 silicon: the absolute figures are estimates,
// the ratios between strategies and MAC shapes are what they are for.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/activity.h"

namespace s2 {

// Where a count's energy is booked; `static` (leakage and whatever else is charged by time) is the sixth
// component of a breakdown and is not an entry's.
enum class EnergyComponent { mac, sram, noc, dram, arm };
const char* component_name(EnergyComponent c);

struct EnergyEntry {
  double pj_per_unit = 0;  // picojoules per unit of the count (Activity::fields()'s `unit`) [0, 1e6]
  EnergyComponent component = EnergyComponent::mac;
  std::string source;      // the citation and the arithmetic that gives pj_per_unit; never empty
  bool operator==(const EnergyEntry&) const = default;
};

struct EnergyTable {
  std::string name = "default";
  // the operating point the figures hold for; nullopt where the source states none (JSON null)
  std::optional<double> voltage_v = 0.80;
  std::optional<double> frequency_mhz = 250.0;
  bool calibrated = false;  // true only for figures fitted to measurements of the chip itself
  std::string note;
  // count name (Activity::fields()) -> its energy; a count left out costs nothing. pe_busy_cycles and
  // pe_idle_cycles cannot be entries: they are time, which the static part charges.
  std::map<std::string, EnergyEntry> entries;
  double static_mw_per_pe = 0;  // static power per PE, milliwatts [0, 1e6]
  std::string static_source;
  bool operator==(const EnergyTable&) const = default;
};

// The compiled-in default: estimates for SpiNNaker2's 22 nm FDSOI PE at 0.80 V and 250 MHz scaled from cited
// 45 nm figures (docs/energy.md). Equal to vectors/energy/default.json.
EnergyTable default_energy_table();

// The table as JSON: {"name", "voltage_v", "frequency_mhz", "calibrated", "note", "entries": {COUNT:
// {"pj_per_unit", "unit", "component", "source"}}, "static": {"mw_per_pe", "source"}}, entries in the order
// of Activity::fields(). `unit` is written for the reader and, if a file gives it, must be the count's.
nlohmann::ordered_json to_json(const EnergyTable& t);
// Every field must be present except `calibrated` (false) and `note` (""), and `unit` in an entry; unknown
// fields, unknown counts, unknown components, figures out of range or not finite are refused: throws
// std::invalid_argument naming the field ("energy table field 'entries.mac_ops.pj_per_unit': expected ...").
EnergyTable energy_table_from_json(const nlohmann::json& j);
// Throws std::invalid_argument naming the first field the table cannot have.
void validate(const EnergyTable& t);

inline constexpr std::uintmax_t kMaxEnergyTableFileBytes = 1u << 20;
// Reads a JSON energy table; throws std::runtime_error "PATH: ..." (as load_hw_config).
EnergyTable load_energy_table(const std::string& path);
// The same for the text of such a file; `path` names it in messages.
EnergyTable parse_energy_table(const std::string& text, const std::string& path);
// What `--energy NAME` names: "default" the compiled-in table, anything else a JSON file (load_energy_table).
EnergyTable energy_table_named(const std::string& name);
// A short stable hash of the table (FNV-1a over its JSON, as config_hash), stamped into reports.
std::string energy_table_hash(const EnergyTable& t);

// Picojoules per component of one run's activity.
struct EnergyBreakdown {
  double mac = 0, sram = 0, noc = 0, dram = 0, arm = 0;
  double static_pj = 0;  // "static" in the JSON
  double total() const { return mac + sram + noc + dram + arm + static_pj; }
  double& operator[](EnergyComponent c);
  EnergyBreakdown& operator+=(const EnergyBreakdown& o);
  bool operator==(const EnergyBreakdown&) const = default;
};

// Each count times its entry's pj_per_unit, into its component, and static_mw_per_pe x pes x seconds into
// static. Throws std::invalid_argument if seconds is negative or not finite, or pes negative.
EnergyBreakdown energy_of(const Activity& a, const EnergyTable& t, double seconds, int pes);

// {"mac": .., "sram": .., "noc": .., "dram": .., "arm": .., "static": .., "total": ..} in picojoules (a
// report's `energy_pj`).
nlohmann::ordered_json to_json(const EnergyBreakdown& e);
// And back (a report's or a journal's); `total` is checked against the sum. Throws std::invalid_argument
// naming the field.
EnergyBreakdown energy_breakdown_from_json(const nlohmann::json& j);

}  // namespace s2
