// run-net's records: a block run's record in the JSON report (contract 3, operations[]) and the journal,
// read back for --resume; where the core stream's time went; the JSON report made of the records.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/commands/net_block_run.h"

namespace s2 {

// Where the core stream's time went: the shares of the PEs' clocks (PEs with work, from the host's start
// to the stream's end) and the busiest link and DRAM.
nlohmann::json time_report(const StreamResult& r, const HwConfig& cfg);
// time_report's JSON in one line; throws std::invalid_argument naming the field (`field`) of a malformed one.
std::string describe_time(const nlohmann::json& t, const std::string& field = "model_time");
// The record's key of the core stream's time report: "model_time" (its ARM-free run), or "model_time_arm_timed"
// where the runs compared are ARM timed (BlockRun::arm_timed: no ARM-free run).
inline std::string model_time_key(bool arm_timed) { return arm_timed ? "model_time_arm_timed" : "model_time"; }
// A block run's record in run-net's JSON (contract 3, operations[]) and journal, with the thesis's clocks
// for it if there are any.
nlohmann::json operation_json(const BlockRun& r, const HwConfig& cfg, std::optional<std::uint64_t> thesis);
// A block run's bound (contract 3's operations[].bound): its clocks, the term that sets it, each term, and the run's
// ratio to it (of `cycles`, bounded_cycles)
nlohmann::json bound_json(const mapper::BlockBound& b, std::optional<std::uint64_t> cycles);
// A block run as its record holds it (for --resume): what the reports read, not the model's time line.
// Throws std::invalid_argument naming the field of a malformed record.
BlockRun block_run_from_json(const nlohmann::json& o);

}  // namespace s2
