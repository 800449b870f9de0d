// run-net's block run: one operation block in one strategy, distributed (mapper/distributor.h) and run on the
// model and/or the RTL, its output checked against the golden block, the two compared; and run-net's policy
// numbers, in one place. The runs compared are ARM timed (each stream once on each backend), or in core-clock
// mode ARM free, the model running every stream ARM timed too (run_block).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backends/backend.h"
#include "harness/check/check_policy.h"
#include "harness/check/comparators.h"
#include "harness/outputs/result.h"
#include "harness/stimulus/block_data.h"
#include "mapper/block_bound.h"
#include "mapper/distributor.h"

namespace s2 {

// One backend's run of a block's streams. core_cycles, block_cycles and activity are of the runs compared
// (BlockRun::arm_timed says which: ARM free in core-clock mode, else ARM timed).
struct BackendRun {
  std::uint64_t core_cycles = 0, block_cycles = 0, block_cycles_arm_timed = 0;
  bool completed = true, data_match = false;
  // false: run with --timing-only (model only): no data computed, so none checked; data_match means nothing
  bool data_checked = true;
  std::string first_difference, stalled;
  double wall_s = 0;
  // RTL: QPE NoC clocks evaluated, of those simulated (StreamResult's; how it was simulated, like wall_s)
  std::uint64_t qpe_clocks_evaluated = 0, qpe_clocks_simulated = 0;
  // PE clocks the backend simulated for the block: every run it made (the model in core-clock mode: ARM free
  // and ARM timed, once where they are one run)
  std::uint64_t simulated_cycles = 0;
  // what the backend counted over the block's streams (StreamResult::activity, summed) in the runs compared; the
  // model's ARM-timed runs too (their idle clocks include the ARM's time: what the energy's static part charges;
  // the same counts where the runs compared are ARM timed)
  Activity activity;
  std::optional<Activity> activity_arm_timed;
  std::vector<std::string> activity_unavailable;
};

// The block's RTL run again, simulated another way (run-net --threads 2,1 / --rtl-eval active,all): its wall
// time, and what differed from the run of record (nothing, or the RTL simulation is wrong).
struct RtlSimulationRun {
  RtlSimOptions sim;
  double wall_s = 0;
  std::string difference;  // "" : every stream's result and every memory equal to the run of record's
};
// How the run of record's RTL is simulated, and other ways to simulate it, each with its backend.
struct RtlSimCompare {
  RtlSimOptions record;
  std::vector<std::pair<RtlSimOptions, StreamBackend*>> others;
};

struct StreamRow {
  std::string operation;  // the stream's operation (nofuse) or the block's core operation (fused)
  // cycles: the model's run compared (BlockRun::arm_timed: ARM timed, the same as cycles_arm_timed; else ARM free)
  std::uint64_t cycles = 0, cycles_arm_timed = 0, arm_cycles = 0, dram_ops = 0, mla_tasks = 0;
  std::optional<std::uint64_t> rtl_cycles;  // the RTL's run (ARM timed or free as the model's run compared)
  bool completed = false;
};

struct BlockRun {
  std::string block;
  mapper::Strategy strategy;
  mapper::Reuse reuse = mapper::Reuse::None;
  std::vector<StreamRow> streams;
  std::uint64_t arm_cycles = 0;
  std::optional<BackendRun> model, rtl;
  // The runs compared are ARM timed: each backend ran every stream once with its ARM operations charged their
  // ARM clocks (what the chip does), and no ARM-free run was made: core_cycles, block_cycles, activity and
  // StreamRow::cycles are ARM-timed figures. False (core-clock mode, run-net --core-clocks or a comparison with
  // thesis Tables 5.5-5.8): they are ARM free (the thesis's core-operation clocks), the RTL ran ARM free, and
  // the model ran every stream ARM timed too.
  bool arm_timed = false;
  std::vector<RtlSimulationRun> rtl_simulations;  // the RTL run again, simulated other ways
  std::optional<double> delta;  // equation 5.1, core operation, of the runs compared
  Status status = Status::Pass;  // hang, mismatch, deviation (both backends) or pass; error if it threw
  std::string error;             // what it threw
  std::string asked;             // --whole: the strategy this block run stands for, where another ran
  std::string waves;             // --waves: the directory of the failing stream's waveform (a file per QPE)
  std::string where;            // a deviation: the commands of the core stream where model and RTL part
  std::string rtl_refused;      // why the RTL could not run the block (it ran on the model only)
  // how its PEs worked through their pieces (mapper::Schedule as it ran) and, where that is not the one asked,
  // why (BlockStreams::schedule_note)
  std::string schedule = "thesis", schedule_note;
  std::optional<StreamResult> model_core;  // the model's run of the core stream (the run compared): where the time goes
  nlohmann::json phases;  // the model's core stream: a worker's clocks on weight loads and MLA tasks (phase_clocks)
  std::map<std::string, double> categories;  // model, ARM timed: the block's clocks per Table 5.10 category (share_categories)
  nlohmann::json record;  // taken from a journal (--resume): its record, reported as it stands
  // the counts: model against RTL, and each backend's against what the block implies (block_activity_floor)
  ActivityComparison activity_delta;
  std::vector<std::string> activity_findings;  // one line each: a count off, or below its floor, or clocks below the bound
  // what no mapping of the block can beat on this chip (mapper/block_bound.h); run-net sets it for every block run
  std::optional<mapper::BlockBound> bound;
};
// How a finding of a count below its block's floor reads ("model activity below what the block implies: ..."):
// the journal keeps findings as text, and run-net's targets tell the floors' from the comparison's by it.
inline constexpr const char* kBelowBlockFloor = "activity below what the block implies";

// How a finding of clocks below the block's bound reads: the bound or the backend is wrong.
inline constexpr const char* kBelowBound = "clocks below the block's bound";
// The ARM-timed clocks of the block's run the bound is held against: the model's, else the RTL's where it ran ARM
// timed; none for a run that threw or an RTL run made ARM free.
std::optional<std::uint64_t> bounded_cycles(const BlockRun& r);
// Sets r.bound and adds a finding (kBelowBound) for each backend whose ARM-timed clocks are below it, with the
// status that follows.
void check_block_bound(BlockRun& r, const mapper::BlockBound& bound, double deviation_bound);

// What a block's work implies about its counts (a lower bound per count; activity_comparator.h): every MAC of
// its core operation issued; its weights read from DRAM at least once, its input too where it is in DRAM (the
// rows and columns its windows read: a stride longer than the window skips some, and those after the last
// window are not read), its output written to DRAM where it goes there.
ActivityFloor block_activity_floor(const mapper::OperationBlock& b, const mapper::BlockResidency& where);
// Both backends' counts as the reports hold them.
BackendActivity block_activity(const BlockRun& r);

// The comparators' status of a block run: hang (a backend did not finish), mismatch (a backend's output
// differs from the golden block), deviation (both ran and |delta| is above the bound, or a count deviates:
// activity_findings), else pass.
Status block_status(const BlockRun& r, double deviation_bound);
// What kept a block run from passing on its data, in one line: what it threw, a backend that did not finish
// (and what it waited for), a backend whose output differs from the golden block; "" if none of these.
std::string block_problem(const BlockRun& r);

// --waves: where the waveform of a failing block run goes.
struct WaveRequest {
  std::string dir;  // empty: no waveforms
  std::uint64_t window = 2000;
  std::ostream* err = nullptr;
};

// The block's output as a backend left it (run-net --output): the RTL's where it ran to the end, else the model's.
struct BlockOutput {
  std::vector<std::uint8_t> bytes;
  std::string backend;  // "RTL" | "model" | "" (none finished)
};

// Runs the block's streams on the model and, if given, on the RTL, each on its own copy of the block's DRAM
// image. `core_clocks` (core-clock mode): the model runs every stream ARM free and ARM timed, the RTL ARM free,
// and the ARM-free runs are compared (the figure thesis Tables 5.5-5.8 give); else each backend runs every
// stream once, ARM timed, and those runs are compared (BlockRun::arm_timed). `golden_cache` holds each block's
// golden output, computed once; `output`, if given, gets the block's output. `timing_only` (the model alone,
// run-net --timing-only): no data staged, computed or checked, clocks and counts only
// (StreamRunOptions::timing_only); the run's data_checked is false.
BlockRun run_block(const mapper::OperationBlock& b, const mapper::BlockSplit& s, mapper::Strategy strategy,
                   const mapper::BlockResidency& where, const HwConfig& cfg, StreamBackend* model, StreamBackend* rtl,
                   std::uint64_t seed, const BlockInputs& data,
                   std::map<std::string, std::vector<std::uint8_t>>& golden_cache, const WaveRequest& waves,
                   BlockOutput* output, const CheckPolicy& policy, const RtlSimCompare& rtl_sims = {},
                   bool timing_only = false, bool core_clocks = true);

}  // namespace s2
