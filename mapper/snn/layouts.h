// An SNN layer's synaptic processing (model/snn_layer.h) as task streams, in the layouts of Huang et al. 2023
// ("Efficient synaptic processing ... Echelon Reorder", sections 2.2 and 3): the data each layout keeps in
// SRAM, where the spikes come from and the currents go, and the commands of the PE that runs it.
//
// Common to every layout (docs/snn.md): the layer's weights are preloaded in the PE's SRAM in the layout's form
// (the paper: "preloads the split weight rectangular group"); the spike train sits in DRAM time-major, s[t]
// a row of `pre` bytes, after D - 1 rows of zeros (the spikes before t = 0); each step's window of it is loaded
// by the DMA, and each step's currents are stored to DRAM as rows of `post` int32 values. Everything else is
// the layout's:
//   serial_arm     the ARM alone: for each spike of step t, its weight rows of every delay added into the ring
//                  buffer's slots t + d (MacInt8), slot t stored and cleared; weights dense, unaligned
//   original_mac   one MLA matrix multiplication per delay and step: the step's spikes (operand A, one row)
//                  times W_d (operand B, pre x post), its result added by the ARM into ring slot t + d
//   operand_stack  one multiplication per D steps: the shifted spike map (operand A: D rows of D x pre values,
//                  row r of step t0 + r holding s[t0 + r - d] for each delay) times the weight-delay map
//                  (operand B: the D matrices stacked, delay D - 1 first), giving D steps' currents at once
//   echelon        operand_stack's map with its rows in echelon order (mapper/snn/echelon.h), cut into 16-column
//                  aligned rectangles; the spike map's columns permuted to match on the ARM (Circle Reverse);
//                  one multiplication per rectangle and row group, the ARM adding each into the currents
//   echelon_mixed  echelon with the last post mod 16 columns on the ARM (MacInt8, unpadded), not the MLA
// Every ARM operation's clocks are the ARM model's (model/pe/arm_ops.h: counted from its kernel by default).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/snn_layer.h"
#include "model/task_stream.h"

namespace s2::mapper {

enum class SnnLayout { SerialArm, OriginalMac, OperandStack, Echelon, EchelonMixed };
inline constexpr SnnLayout kSnnLayouts[] = {SnnLayout::SerialArm, SnnLayout::OriginalMac, SnnLayout::OperandStack,
                                            SnnLayout::Echelon, SnnLayout::EchelonMixed};
const char* to_string(SnnLayout l);
std::optional<SnnLayout> snn_layout_named(const std::string& name);

// What a layout keeps in a PE's SRAM, in bytes by kind (the paper's Figure 10 memory bars).
struct SnnMemory {
  std::uint64_t weights = 0;    // the layer's weights in the layout's form, alignment padding included
  std::uint64_t spikes = 0;     // the input placeholder: the steps' spike window the DMA loads
  std::uint64_t spike_map = 0;  // operand A as the MLA reads it (the layouts that use the MLA)
  std::uint64_t index = 0;      // echelon's permutation table (the paper's "reversed order")
  std::uint64_t currents = 0;   // the ring buffer (serial_arm, original_mac) or the multiplication's result
  std::uint64_t buffers = 0;    // anything else (original_mac: each multiplication's result before the add)
  std::uint64_t total() const { return weights + spikes + spike_map + index + currents + buffers; }
  SnnMemory& operator+=(const SnnMemory& o) {
    weights += o.weights;
    spikes += o.spikes;
    spike_map += o.spike_map;
    index += o.index;
    currents += o.currents;
    buffers += o.buffers;
    return *this;
  }
};

// A PE of a plan and what it keeps. The Dominant takes the spikes in, builds operand A and gathers the
// currents; a Subordinate holds weights and computes partial currents (mapper/snn/deployment.h). A plan on
// one PE has the Dominant only, doing both.
struct SnnPe {
  int pe = 0;                     // chip PE index (QPE q's PE p is q x 4 + p)
  bool dominant = true;
  bool neighbour_operand = false; // a Subordinate whose MLA reads operand A from the Dominant's SRAM (same QPE)
  SnnMemory sram;
};

// A layer laid out on the system of cfg.chip (QPE-DRAM or a chip): its stream, the memories it starts from, and
// where its currents land.
struct SnnPlan {
  SnnLayout layout = SnnLayout::SerialArm;
  int steps_per_batch = 1;            // timesteps one pass of the stream's loop covers
  TaskStream stream;
  SystemMemory memory;                // DRAM 0: spikes then currents; the PEs' SRAMs: the weights preloaded
  std::uint64_t currents_dram = 0;    // [timesteps][post] int32, rows of post x 4 bytes
  std::vector<SnnPe> pes;             // the Dominant first, then the Subordinates
  SnnMemory sram;                     // summed over the PEs
  std::uint64_t mla_tasks = 0;        // in the whole stream
  std::vector<std::string> notes;     // what the layout assumes, for the report
  int subordinates() const { return static_cast<int>(pes.size()) - 1; }
};

// Lays `layer` out in `layout` on as few PEs as hold it within `budget_bytes` of SRAM each: one PE (the Dominant
// doing everything) if it fits, else one Dominant and Subordinates (mapper/snn/deployment.h). Throws
// std::invalid_argument if the layer is bad or no deployment on the system fits (saying why).
SnnPlan plan_snn_layer(const SnnLayer& layer, SnnLayout layout, const HwConfig& cfg, std::uint64_t budget_bytes);

// The PEs a plan takes, in order: the Dominant (PE 0 of the QPE nearest DRAM 0, where the spikes and the currents
// are), its QPE's other PEs (they read operand A as neighbours), then the other QPEs' PEs by hops from it.
std::vector<int> snn_pe_order(const HwConfig& cfg);

// The currents the plan's stream left in DRAM: [timesteps][post] int32.
std::vector<std::int32_t> snn_plan_currents(const SnnPlan& plan, const SnnLayer& layer, const SystemMemory& after);

}  // namespace s2::mapper
