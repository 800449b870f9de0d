// The one result record every command produces and every output reads. A regression's task, a network's
// block run in one strategy, a bench task and a flaw-limit probe each become a `CheckResult`; a command's
// run is a `ResultSet`. The console's status lines, the "results" section of every JSON report, the CSV,
// the HTML report, the JUnit XML and `s2cosim merge` all read this, so a new output is written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/check_policy.h"
#include "harness/check/comparators.h"
#include "model/activity.h"
#include "model/energy_table.h"

namespace s2 {

struct CheckResult {
  std::string name;   // unique in the run: a task id, "CONV_9 fuse_reuse", a probe
  std::string group;  // what it belongs to (JUnit's classname): the vectors' op, the network, the bench suite
  Status status = Status::Pass;
  // what the check is, in the hardware's words (op, shape, strategy, reuse, ...), in the order shown
  std::vector<std::pair<std::string, std::string>> labels;
  std::optional<std::uint64_t> rtl_cycles, model_cycles;
  std::optional<double> delta;  // equation 5.1, (model - rtl) / rtl
  // what the thesis measured or simulated for the same thing, and where it says so ("Table 5.7")
  std::optional<std::uint64_t> thesis_cycles;
  std::string thesis_source;
  std::string message;  // why it did not pass, in one line (empty when it passed)
  std::string where;    // the deviation locator's attribution, if it ran
  std::string replay;   // one command line that reruns exactly this check
  std::string waves;    // the waveform of the failure, if one was written
  double rtl_wall_s = 0.0, model_wall_s = 0.0;
  std::size_t index = 0;  // position in the whole (unsharded) run: merge orders by it
  // what each backend counted (model/activity.h) where it ran, and the counts it could not observe
  BackendActivity activity;
  // with an energy table (--energy): the energy of one backend's counts and time, and which ("rtl", "model")
  std::optional<EnergyBreakdown> energy;
  std::string energy_from;
};

// A shard of a run: `--shard I/N` runs the checks whose index k has k % N == I - 1 (round robin, so that long
// and short checks spread over the shards).
struct Shard {
  int index = 1, count = 1;  // 1-based
  bool takes(std::size_t k) const { return static_cast<int>(k % static_cast<std::size_t>(count)) == index - 1; }
  bool whole() const { return count == 1; }
};
// Parses "I/N" (1 <= I <= N <= 100000); throws std::invalid_argument naming what was expected.
Shard parse_shard(const std::string& s);

// Thesis Table 5.10's layout for --whole: clocks per category of operation and strategy.
struct CategoryClocks {
  std::string strategy, category;
  std::uint64_t clocks = 0;
  std::optional<std::uint64_t> thesis;
};

// A command's own figure in its HTML report (the SNN paper's Figure 10 panels, outputs/snn_figures.h): drawn from
// data the JSON holds, so it is in neither the JSON nor the JUnit.
struct ReportFigure {
  std::string title, caption;  // caption: what is drawn and how, in one line
  std::string svg;             // self-contained, every input string in it escaped
};

struct ResultSet {
  std::string command;  // regress | run-net | bench | flaw-limit
  std::string title;    // what was run, e.g. "vectors/smoke.csv on both backends"
  nlohmann::json config;
  std::string config_hash, hardware;  // hardware: hw_config_line
  CheckPolicy policy;                 // what the checks were judged by, stamped beside the configuration
  std::vector<CheckResult> checks;
  std::size_t total = 0;  // checks in the whole run (all shards)
  Shard shard;
  std::vector<Shard> merged_shards;  // set by merge (shown in the HTML; not in the JSON, which equals the unsharded run's)
  int stopped_by_signal = 0;
  std::vector<std::string> notes;  // what a reader must know: approximations, assumptions, substitutions
  std::vector<CategoryClocks> categories;
  std::vector<ReportFigure> figures;  // in the HTML only, after the summary
  std::optional<EnergyTable> energy_table;  // what the checks' energy was charged by (--energy), stamped whole
};

// Counts per status (all six, zeros included), |delta| statistics and wall sums.
struct RunSummary {
  std::size_t tasks = 0;
  std::map<Status, std::size_t> counts;
  std::optional<double> max_abs_delta, median_abs_delta;
  double rtl_wall_s = 0.0, model_wall_s = 0.0;
  std::optional<double> speed_ratio;  // rtl_wall_s / model_wall_s
  bool all_passed() const { return tasks > 0 && counts.at(Status::Pass) == tasks; }
};
RunSummary summarize(const ResultSet& r);

// One backend's counts as reports write them: count name -> value, null for a count it could not observe;
// and back (throws std::invalid_argument naming the count).
nlohmann::ordered_json activity_json(const Activity& a, const std::vector<std::string>& unavailable);
void activity_from_json(const nlohmann::ordered_json& j, Activity& a, std::vector<std::string>& unavailable);
// Both backends' as a report's `activity`: {"model": counts or null, "rtl": counts or null}; and back (a
// missing or null `j`, a record from before counts: nothing).
nlohmann::ordered_json activity_json(const BackendActivity& a);
BackendActivity backend_activity_from_json(const nlohmann::ordered_json* j);

// The energy of one backend's counts: each count charged by `t`, and static power per PE over the clocks each
// PE had work (pe_busy_cycles + pe_idle_cycles) at `pe_clock_mhz`.
EnergyBreakdown run_energy(const Activity& a, const EnergyTable& t, double pe_clock_mhz);
// Sets c.energy from the model's counts where it ran and observed every count (the reference), else from the
// RTL's where it did, else from what the model observed (c.energy_from says which); nothing without counts.
// `model` replaces c.activity.model as what is charged (run-net: the model's ARM-timed run, whose idle clocks
// hold the ARM's time).
void charge_energy(CheckResult& c, const EnergyTable& t, double pe_clock_mhz, const std::optional<Activity>& model = std::nullopt);
// "energy table 'default' (hash 0123..., estimates, uncalibrated: compare ratios, not absolute figures)"
std::string energy_table_line(const EnergyTable& t);
// "12.3 nJ" / "4.56 uJ" / "7.89 mJ" from picojoules
std::string format_energy(double pj);
// The console's lines on the counts and the energy ("" when no check has counts): how far the model's counts
// are from the RTL's at most, events and clocks apart, over which checks; with a table, the run's energy per component and its stamp.
std::string format_activity_and_energy(const ResultSet& r);
// "wall: model 1.2 s (3.40e+05 simulated PE clocks per second), RTL 9.8 s (...)": each backend's wall seconds
// and simulated clocks per wall second, summed over the checks (their model_cycles / rtl_cycles); no newline.
std::string format_wall_and_speed(const ResultSet& r);

// Parses "pass", "mismatch", ...; throws std::invalid_argument for anything else.
Status parse_status(const std::string& s);

// "11 results: 10 pass, 1 deviation" (statuses with a count only; "0 results" for none).
std::string format_status_counts(const ResultSet& r);
// One paragraph per check that did not pass: status, message, the locator's attribution, the rerun line
// and the waveform. Empty when every check passed.
std::string format_failures(const ResultSet& r);

// The "results" section of every JSON report, and back (merge); from_json throws std::invalid_argument
// naming the field of a malformed one.
nlohmann::ordered_json results_json(const ResultSet& r);
ResultSet results_from_json(const nlohmann::ordered_json& j);
// One check of it (results.checks[k]), and back; a command whose journal records hold their check (snn) uses
// these too.
nlohmann::ordered_json check_json(const CheckResult& c);
CheckResult check_from_json(const nlohmann::ordered_json& j);

// One row per check: name, group, the labels (columns: every label name in first-seen order), status,
// rtl_cycles, model_cycles, delta, thesis_cycles, message, where, replay, waves.
std::string results_csv(const ResultSet& r);
// JUnit XML as CI dashboards read it (the Jenkins xUnit / Ant layout, tests/junit/junit.xsd): one
// testsuite per run, one testcase per check; a check that is not `pass` is a <failure> (an `error` one an
// <error>) carrying the comparator's message, the locator's attribution and the rerun line.
std::string results_junit(const ResultSet& r);
// A self-contained HTML report (harness/outputs/html_report.cpp).
std::string results_html(const ResultSet& r);
// A self-contained HTML page of figures alone, for a command with no checks (`snn --sweep fig9`): the title,
// the tool's version, the notes and the figures as results_html shows them.
std::string figures_html(const std::string& title, const std::vector<std::string>& notes, const std::vector<ReportFigure>& figures);

// Text for XML or HTML, in an attribute or between tags: & < > " ' escaped, control characters XML 1.0 does
// not allow replaced by '?'.
std::string xml_escape(const std::string& s);
// The word for a shell: as is when safe, else in single quotes.
std::string shell_quote(const std::string& s);
// The program name replay lines start with (the CLI sets it to how it was called, e.g. build/s2cosim).
const std::string& program_name();
void set_program_name(const std::string& name);

// The outputs a command was asked for (an empty path: not written).
struct ResultOutputs {
  std::string html, junit, csv;
};
// Each output written whatever became of the others, failures said on `err`; false if one failed.
bool write_result_outputs(const ResultSet& r, const ResultOutputs& out, std::ostream& err);

}  // namespace s2
