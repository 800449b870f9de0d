// Checks of any chip task stream, however it was made (harness/stimulus/chip_random.h's generator promises
// streams that pass them; tests/chip_random_test.cpp holds it to that): races between PEs' commands, reads of
// bytes an MLA task left unspecified; and, for a run that went wrong, which commands wrote a byte.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/hw_config.h"
#include "model/task_stream.h"

namespace s2 {

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

}  // namespace s2
