// run-net's console report: the run's head (system, clocks, assumptions, notes), a block run's lines, the
// clocks per operation and strategy in the thesis's Table 5.5-5.8 layout, per category in Table 5.10's
// (--whole), the OctopuScheduler MLP beside the silicon's figures, the targets and the backends' speed.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/commands/net_block_run.h"
#include "harness/commands/net_runner.h"
#include "mapper/network.h"
#include "mapper/parser.h"
#include "mapper/splitter.h"

namespace s2 {

// What the tables read: the request, the network, the hardware, the backends that ran, and which of the
// published figures apply (published_figures.h).
struct NetReport {
  const RunNetRequest& req;
  const mapper::ParsedNetwork& n;
  const HwConfig& cfg;
  bool model = false, rtl = false;
  std::string thesis_net;   // the thesis's network the network is (its layers), or ""
  bool thesis_mac = false;  // the thesis's tables apply: the 16x4 MAC array and, on the chip, the prototype
  std::string table;        // the thesis table of the layout ("Table 5.5", ...)
  std::string system;       // "QPE-DRAM" or the chip and its shape, in words
  // core-clock mode (set once, before any block runs: run-net's core_clock_mode): the blocks' ARM-free runs are
  // made and compared (BlockRun::arm_timed false); else each backend runs every stream once, ARM timed
  bool core_clocks = true;

  NetReport(const RunNetRequest& req, const mapper::ParsedNetwork& n, const HwConfig& cfg, bool model, bool rtl);
  // the thesis's clocks for an operation in a strategy (Tables 5.5-5.8: the core operation, ARM free), where they
  // apply to this network, target and hardware; whether the run compares with them is core-clock mode's
  std::optional<std::uint64_t> published_clocks(const std::string& operation, const std::string& strategy) const;
  // published_clocks where the run compares with them: in core-clock mode (an ARM-timed run has no figure to
  // compare with them)
  std::optional<std::uint64_t> thesis_clocks(const std::string& operation, const std::string& strategy) const;
};

// "assumption: ..." for a network whose layers have a worker count (workers=N), "" if none has.
std::string workers_assumption(const mapper::ParsedNetwork& n);

// The run's head: what runs on what, what the clocks are, the assumptions and notes, the table's head.
void print_head(const NetReport& rep, const mapper::Network& net, const std::vector<std::string>& input_notes,
                const std::vector<mapper::SplitChoice>& chosen, std::ostream& out);
// A block run's lines: a row per stream, where the time went, the comparator.
void print_block_run(const NetReport& rep, const BlockRun& r, std::ostream& out);

// The core operation's clocks per strategy in the thesis's layout, each beside the thesis's; returns per
// operation with two strategies or more against the thesis whether they rank as the thesis's ("same").
std::vector<bool> print_strategy_table(const NetReport& rep, const std::vector<BlockRun>& runs, std::ostream& out);

// --whole: the clocks per category in Table 5.10's layout, beside the thesis's; what came within the
// policy's tolerances.
struct CategoryTally {
  int cells = 0, within = 0;
  std::optional<bool> sum_within;
};
CategoryTally print_category_table(const NetReport& rep, const std::map<std::string, std::map<std::string, double>>& category_cycles,
                                   const std::vector<std::string>& substituted, std::ostream& out);

// The block runs against the chip's limits (bound_sums of operations[]), per strategy asked: the clocks and the
// bounds summed, their ratio and how many blocks each term bounds; nothing if no run was held to a bound.
void print_bound_table(const nlohmann::json& operations, std::ostream& out);

// The network's layers beside the silicon's figures where it is the OctopuScheduler MLP on the spinnaker2
// preset (model runs only); returns their JSON (null if none).
nlohmann::json print_silicon(const NetReport& rep, const std::vector<BlockRun>& runs, std::ostream& out);

// How fast each backend simulated: every stream run it made (in core-clock mode the model's ARM-free and
// ARM-timed runs), wall seconds inside it.
struct Speeds {
  double model_wall = 0, simulated = 0, rtl_wall = 0, rtl_simulated = 0;
  std::uint64_t rtl_qpe_clocks_evaluated = 0, rtl_qpe_clocks_simulated = 0;  // BackendRun's, summed
  double model_rate() const { return model_wall > 0 ? simulated / model_wall : 0.0; }
  double rtl_rate() const { return rtl_wall > 0 ? rtl_simulated / rtl_wall : 0.0; }
};
Speeds speeds(const std::vector<BlockRun>& runs);

// The targets as far as this run measured them, then the runs skipped; `wall_s`: the run so far.
void print_targets(const NetReport& rep, const std::vector<BlockRun>& runs, const std::vector<bool>& ranked,
                   const CategoryTally& categories, const Speeds& speed, double wall_s,
                   const std::vector<std::string>& skipped, std::ostream& out);
// The backends' speed and the peak memory.
void print_speed(const NetReport& rep, const Speeds& speed, std::ostream& out);

std::string pct(double v);

}  // namespace s2
