// Random task streams for the chip (the chip counterpart of random_vectors.h), deterministic for a seed on
// every machine. Their suites (`s2cosim vectors chip-random`, read back by `s2cosim chip-regress`) are
// chip_suite.h.
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
// nothing else of its PE until a wait or the engine's next command. find_stream_race (stream_checks.h) checks
// this on any stream, independently of how the generator planned it.
#pragma once

#include <cstdint>
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

}  // namespace s2
