// What no mapping of a block can beat: the work a block's layer implies (its MACs, the bytes it must read and
// write, the ARM passes over its results) over the rates the chip has for it (its MAC arrays, DRAMs, routers
// and ARM cores). A bound, never an estimate: every term leaves out what a mapping could avoid, and the
// rates are the hardware's peaks (docs/usage.md, "The chip's limits").
//
// The bound is for mappings that run a network block by block, as every strategy here does: a block's input
// comes from DRAM or the storage QPEs, and its output leaves the PEs that compute it for one of them.
#pragma once

#include <cstdint>
#include <string>

#include "mapper/parser.h"
#include "model/hw_config.h"

namespace s2::mapper {

// What a block's layer implies, whatever the mapping.
struct BlockWork {
  std::uint64_t mac_ops = 0;  // the core operation's multiply-accumulates (a strided convolution's kept outputs only)
  // int8 weights (convolution, MM) and an element-wise block's table, parameters or per-channel factors: they
  // sit in DRAM (the block's image) and are read at least once
  std::uint64_t weight_bytes = 0;
  std::uint64_t bias_bytes = 0;  // a layer's int32 bias, in DRAM beside its weights
  // the main input's bytes its outputs depend on (a stride longer than the window skips some; the rows after
  // the last window are not read), before any padding
  std::uint64_t input_read_bytes = 0;
  std::uint64_t second_map_bytes = 0;    // an element-wise block's second map (Add, Mul)
  std::uint64_t shortcut_map_bytes = 0;  // a residual block's shortcut map, which MAT_ELE adds
  std::uint64_t output_bytes = 0;        // the int8 output
};
BlockWork block_work(const OperationBlock& b);
// ARM clocks of the passes over a block's results no mapping avoids, summed over the PEs that make them: every
// result quantized, pooled, added to its shortcut and put through its element-wise operation, each at its
// kernel's clocks (cfg.arm_clock_model) as if one command did the whole map (a split only adds calls, planes
// and rows). Left out, as a mapping may avoid them or fold them into another pass: a ReLU (the quantization's
// saturation can clamp at 0), padding, a D split's partial sums. A max pooling after the quantization is
// charged with it as the cheaper of the two passes and the folded one (QuantizeMaxPool), and so is the shortcut's
// addition after it (QuantizeAdd).
double arm_pass_clocks(const OperationBlock& b, const HwConfig& cfg);

// Where a block's maps may lie: the network's input is in DRAM, and its output goes there; every other map
// may be in DRAM or the storage QPEs.
struct BlockEnds {
  bool input_is_network_input = false;       // its main input (OperationBlock::inputs[0]) is, or has channels of, it
  bool second_map_is_network_input = false;  // its second map (inputs[1]: a shortcut, an Add's or Mul's B) is
  bool output_is_network_output = false;     // its output is the network's (the last block's)
};
BlockEnds block_ends(const ParsedNetwork& n, const OperationBlock& b);

// Every PE of the chip's QPEs, the storage QPEs' too: what the MACs and ARM terms spread the work over.
int chip_pes(const HwConfig& cfg);

enum class BoundTerm { Macs, Dram, Links, Arm };
const char* to_string(BoundTerm t);  // "MACs", "DRAM", "links", "ARM"

struct BlockBound {
  BlockWork work;
  double arm_clocks_all_pes = 0;  // arm_pass_clocks
  // PE clocks each term needs (rounded up)
  std::uint64_t macs_cycles = 0;   // MACs over every PE's MAC array at a MAC per unit per clock
  std::uint64_t dram_cycles = 0;   // bytes that must cross a DRAM over all DRAMs' rate
  std::uint64_t links_cycles = 0;  // packets that must pass a storage QPE's or a DRAM's router over those routers' rate
  std::uint64_t arm_cycles = 0;    // the ARM passes over every PE's ARM
  // added to the largest term: the host's start to the nearest PE, and its end back (host_path_cycles each way)
  std::uint64_t host_cycles = 0;
  // the maps kept in the storage QPEs for the DRAM and links terms: the choice that lets both be least
  bool input_in_storage = false, second_map_in_storage = false, output_in_storage = false;
  std::uint64_t dram_bytes = 0, storage_bytes = 0;
  std::uint64_t cycles() const;       // host_cycles + work_cycles()
  std::uint64_t work_cycles() const;  // the largest of the four terms
  BoundTerm bound_by() const;         // that term (the first of equals, in the enum's order)
};
BlockBound block_bound(const OperationBlock& b, const BlockEnds& ends, const HwConfig& cfg);

// "1.9x its bound of 444000, bound by the MACs" for a block run of `cycles`.
std::string describe_bound(const BlockBound& bound, std::uint64_t cycles);
// "MACs 444000, DRAM 12000, links 3000, ARM 50000; host 24"
std::string bound_terms(const BlockBound& bound);

}  // namespace s2::mapper
