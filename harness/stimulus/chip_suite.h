// A chip suite: a CSV row per random chip stream (chip_random.h), which `s2cosim vectors chip-random` writes and
// `s2cosim chip-regress` reads back, generates again from its seed and system and runs; each row carries the
// stream's summary, so that a generator that no longer makes the same stream is noticed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/task_stream.h"

namespace s2 {

// One line without commas: PEs and QPEs, commands per kind, async ones, transfers with other PEs' SRAMs,
// bytes moved, Syncs and groups, and a hash of the whole stream (so that a suite row notices a generator that
// no longer makes the stream it was written with).
std::string chip_stream_summary(const TaskStream& s);

// A chip suite: one row per stream.
struct ChipSuiteRow {
  std::string id;
  std::uint64_t seed = 0;
  std::string system;   // mini | prototype | CxR
  std::string summary;  // chip_stream_summary of the stream when the suite was written
  int line = 0;         // where it came from (reader)
};

// The suite of `count` streams of `seed`, dealt round robin over `systems` (each as chip_random_config
// takes it), as CSV: a header comment saying how it was made (`command`), "id,seed,system,summary", a row per
// stream.
std::string chip_suite_csv(std::uint64_t seed, int count, const std::vector<std::string>& systems, const std::string& command);
std::vector<ChipSuiteRow> chip_suite_rows(std::uint64_t seed, int count, const std::vector<std::string>& systems);

// Reads a suite file (at most kMaxChipSuiteBytes); throws VectorError (harness/stimulus/task_vectors.h) listing every
// problem as "FILE:LINE: field 'NAME': expected ..., got '...'", or std::runtime_error if it cannot be read.
inline constexpr std::uintmax_t kMaxChipSuiteBytes = 4u << 20;
std::vector<ChipSuiteRow> read_chip_suite(const std::string& path);
std::vector<ChipSuiteRow> parse_chip_suite(const std::string& text, const std::string& name);

}  // namespace s2
