// `s2cosim snn`'s records: a layout's record in the journal (its `layouts[]` entry and its check, as the
// results section writes a check) and read back for --resume; the percentages relative to original_mac and
// serial_arm, made from the entries of the layouts at hand (the run's, a resumed run's, every shard's); and the
// JSON report made of the entries. The run (commands/snn_runner.h), --resume and `s2cosim merge` all use these,
// so that a resumed run's and a merged report equal an uninterrupted run's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/outputs/result.h"

namespace s2 {

// A finished layout as the journal keeps it.
struct SnnLayoutRecord {
  nlohmann::ordered_json entry;  // its layouts[] entry (docs/contracts.md, Contract 3), percentages null
  CheckResult check;             // its results.checks[] entry (index: its position in the whole run)
};
nlohmann::ordered_json snn_layout_record_json(const SnnLayoutRecord& r);
// Throws std::invalid_argument naming the field of a malformed record.
SnnLayoutRecord snn_layout_record_from_json(const nlohmann::ordered_json& j);

// Fills `memory_percent_of_original_mac` and `time_percent_of_serial_arm` of every entry that has them from the
// original_mac's and serial_arm's entries among `layouts` (null where that layout is not among them or did not
// finish). The time is the RTL's clocks per timestep, else the model's.
void fill_snn_percentages(nlohmann::ordered_json& layouts);

// The JSON report: `head` (command, layer, target, system, backend, budget_bytes, ...), then `layouts` (in the
// run's order, percentages filled) and `results`.
nlohmann::ordered_json snn_report_json(const nlohmann::ordered_json& head, nlohmann::ordered_json layouts, const ResultSet& results);

// The HTML report's figures (the SNN paper's Figure 10: SRAM by kind, clocks per timestep by where the PEs' time
// went) from the entries at hand, so that a run's, a resumed run's and a merged report draw the same.
std::vector<ReportFigure> snn_report_figures(const nlohmann::ordered_json& layouts);

// The report's fields that make two shards parts of one run (beside the results' configuration hash, title,
// total and policy, which merge compares for every command).
std::vector<std::string> snn_identity_fields();

}  // namespace s2
