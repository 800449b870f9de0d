// s2cosim design-report: the thesis's question (5.4, would a smaller MAC array be the better chip?) answered
// from runs already made. It reads `run-net --whole --energy` JSON reports (one network on one chip per
// report, in any MAC shapes and strategies, merged shards included) and, optionally, the PE's synthesized
// area per MAC shape (`tools/synth.sh --json`), and puts every design point (network, chip, MAC shape,
// strategy) side by side: the whole network's clocks (thesis Table 5.10's sum, ARM timed), its energy per
// component and one PE's logic area, each against the reference MAC shape (16x4) in the same strategy.
// Nothing is run here: the figures are the reports' own, summed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/comparators.h"
#include "model/energy_table.h"

namespace s2 {

struct DesignReportRequest {
  std::vector<std::string> reports;  // run-net --whole --energy --json reports
  std::string synth_json;            // tools/synth.sh --json: one PE's area per MAC shape (optional)
  std::string reference_mac = "16x4";
  std::string json_out, html_out, junit_out, csv_out;
};

// One PE's logic per MAC shape, as tools/synth.sh measures it (the SRAM's storage not counted).
struct PeArea {
  std::uint64_t cells = 0, flops = 0, transistors = 0;
  std::uint64_t mla_transistors = 0;  // the MAC array's own share
};
struct SynthAreas {
  std::string yosys, date, commit, note;
  std::map<std::string, PeArea> by_mac;  // "16x4" -> area
};
// Reads tools/synth.sh's --json; throws std::runtime_error naming the file and the field of a malformed one.
SynthAreas parse_synth_areas(const std::string& text, const std::string& path);

// One network on one chip in one MAC shape and one strategy (the strategy asked: a block it does not apply to
// ran the next that does, as run-net --whole runs it).
struct DesignPoint {
  std::string network, chip, mac, strategy;
  std::string report;          // the file it came from
  std::string config_hash;     // the run's whole configuration
  std::uint64_t clocks = 0;    // the network's clocks, Table 5.10's sum (model, ARM timed)
  std::map<std::string, std::uint64_t> category_clocks;  // Table 5.10's categories
  EnergyBreakdown energy;      // summed over the blocks charged
  std::map<std::string, EnergyBreakdown> energy_by_kind;  // the same per kind of block: "CONV", "FC", "POOL" (its name's stem)
  std::size_t blocks = 0, blocks_charged = 0;
  Status status = Status::Pass;  // the worst of its blocks' (a block without energy: error)
  std::string message;           // why it is not pass
  std::optional<PeArea> area;    // one PE's logic in this MAC shape, where synthesized
};

// The design points of one run-net JSON report. `family_hash`: the configuration's hash with the MAC shape set
// to the reference's, which every report of one comparison shares. Throws std::runtime_error naming the file
// and the field (not a run-net --whole report, no energy table, a shard, a run a signal stopped, ...).
struct DesignReportFile {
  std::vector<DesignPoint> points;
  std::string energy_table_hash, energy_table_line, family_hash;
  EnergyTable energy_table;  // the table the report was charged with
};
DesignReportFile read_design_report_file(const std::string& text, const std::string& path, const std::string& reference_mac);

// Exit code: 0 every design point passed, 1 one did not (a block failed or had no energy), 2 bad input (nothing
// written; the file, the field and what was expected on `err`), 3 an output could not be written.
int design_report(const DesignReportRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
