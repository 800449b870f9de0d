// Random task streams for the chip (the chip counterpart of random_vectors.h), deterministic for a seed on
// every machine, and their suites (`s2cosim vectors chip-random`, read back by `s2cosim chip-regress`).
//
// A stream runs on a random subset of the chip's PEs (several per QPE, so that flows meet on shared
// routers, links and DRAMs) and mixes DMA loads and stores of random shapes (planes x rows x row_bytes,
// 1-byte rows to multi-KB transfers, many narrow rows of 1..16 bytes, addresses and strides at any
// alignment) with the DRAMs, other PEs' SRAMs and the PEs of storage QPEs; MLA tasks (small convolutions and
// matrix multiplications, operand A local or from a PE of the same QPE, their operands loaded by DMA or
// already in SRAM, their results through ARM operations and out by DMA); ARM operations; async DMA and MLA
// commands with wait_dma / wait_mla; and Syncs of random groups.
//
// Every stream is race-free, so that every backend that works must leave the same bytes whatever its
// timing: each PE's SRAM is split into zones (private scratch; a publish zone it fills once per address; a
// read-only zone; an inbox of slots each written by one other PE), each DRAM into a read-only part and a
// part per PE that it alone writes, each address once. Data another PE wrote is read only after a chain of
// Syncs orders the write (its command finished) before the read; an async command's regions are touched by
// nothing else of its PE until a wait or the engine's next command. find_stream_race checks this on any
// stream, independently of how the generator planned it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/task_stream.h"

namespace s2 {

// A C x R mesh of QPEs for random streams (not a SpiNNaker2 shape): DRAM 0 attached to every router of the
// west column, DRAM 1 (when C > 1) to every router of the east column, the host's agent at the centre.
ChipShape mesh_chip(int cols, int rows);

// The configuration of a system named in a chip suite: "mini", "prototype" (the presets of apply_preset),
// or "CxR" (mesh_chip, 1 <= C, R <= 6). Throws std::invalid_argument naming what was expected.
HwConfig chip_random_config(const std::string& system);

// How much a stream holds. Every PE of the stream stops taking new work once its commands' estimated clocks
// (serial, each on its own) exceed pe_clock_budget; Syncs still follow.
struct ChipRandomOptions {
  int min_pes = 3, max_pes = 12;       // active PEs (at most the chip's)
  int max_syncs = 6;                   // Sync events (each of a random group of at least 2 active PEs)
  int max_actions_per_segment = 5;     // actions a PE takes between two of its Syncs
  std::uint64_t pe_clock_budget = 30000;
};

// The stream of `seed` on cfg.chip. Deterministic: the same configuration, seed and options give the same
// stream on every machine. It passes check_stream, find_stream_race and find_unspecified_read.
TaskStream random_chip_stream(const HwConfig& cfg, std::uint64_t seed, const ChipRandomOptions& opt = {});

// What the stream of `seed` starts from: every DRAM (s.dram_bytes each) and the SRAM of every PE of the chip
// (cfg.sram_bytes each) filled with seeded bytes, so that no backend's leftovers or zeros can show.
SystemMemory random_chip_memory(const HwConfig& cfg, const TaskStream& s, std::uint64_t seed);

// One line without commas: PEs and QPEs, commands per kind, async ones, transfers with other PEs' SRAMs,
// bytes moved, Syncs and groups, and a hash of the whole stream (so that a suite row notices a generator that
// no longer makes the stream it was written with).
std::string chip_stream_summary(const TaskStream& s);

// The first pair of commands that may touch the same bytes (one of them writing) without being ordered by
// program order, the DMA's and MLA's waits, or a chain of Syncs; "" if there is none. Every command's
// regions: a DMA's both sides, an MLA's operands (A in the PE it names) and results, an ARM operation's source
// and destination planes.
std::string find_stream_race(const TaskStream& s, const HwConfig& cfg);

// The bytes of each PE's SRAM (chip PE -> sorted [lo, hi) ranges) a run of `s` leaves unspecified: the lanes
// of an MLA task's result rows past its width, up to the end of the row's last 4-result (128-bit) word, not
// written since. The contract defines results for x < Wo (conv) and j < W_B (mm) only (model/sram_layout.h);
// the RTL writes those words whole, the model only the results, so the bytes differ. Backends are compared
// without them, and no stream of random_chip_stream reads them (find_unspecified_read).
std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> chip_stream_unspecified(const TaskStream& s,
                                                                                            const HwConfig& cfg);
// The first command that reads (for its value: a DMA's source rows, an MLA's operand A and operand B's rows, an
// ARM operation's inputs) bytes an MLA task left unspecified; "" if none does.
std::string find_unspecified_read(const TaskStream& s, const HwConfig& cfg);

// The commands of `s` that write byte `addr` of `mem` ("PE 5 command 12 (dma_store STORE), ..."; "" if
// none): where to look when two runs leave different bytes there.
std::string chip_stream_writers(const TaskStream& s, const HwConfig& cfg, MemoryRef mem, std::uint64_t addr);

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
