// The hardware configuration shared by the model, the RTL adapter and every report.
// Plain data with the thesis's defaults (thesis 2.3, Figure 5.1); loaded in one place (load_hw_config),
// hashed and stamped into every report so model and RTL cannot drift apart silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace s2 {

// The prototype's known flaws (thesis 5.1.2; rtl_stubs/README.md, "The known flaws"). All off = correct hardware.
struct FlawSwitches {
  bool sram2clk = false;       // every SRAM access takes 2 PE clocks instead of 1
  bool neighbor_conv = false;  // conv with operand A from a neighbour PE: early stop / long run
  bool mm_wide_a = false;      // mm with operand A from a neighbour PE: hang when W_A is too large
};

// The DMA's pipeline, in PE clocks (rtl_stubs/dma.sv and the QPE's DRAM port; model/pe/dma.h says what
// each is). The RTL fixes them (validate() holds the configuration to them); the model follows them.
struct DmaClocks {
  int request_lead_cycles = 3;       // a load's request, or a store's last line, to the far end
  int line_lag_cycles = 3;           // a read line, from the NoC to the SRAM
  int idle_lag_cycles = 2;           // a load's last line written, to the DMA going idle
  int ack_lag_cycles = 5;            // a store's last acknowledgement, to the DMA going idle
  int ack_seen_cycles = 4;           // an acknowledgement, to a new store header
  int store_requests_in_flight = 2;  // store rows unacknowledged at most (dma.sv STORE_REQUESTS_IN_FLIGHT)
  // transfers with another PE's SRAM (rtl_stubs/dma_peer.sv)
  int peer_reads_in_flight = 32;     // lines asked for and not yet realigned (dma.sv READS_IN_FLIGHT)
  int peer_lead_cycles = 3;          // a line's packet past its last router, to the far NoC slave
  int peer_line_lag_cycles = 4;      // a read line past its last router back, to the DMA's realigner
  int peer_ack_lag_cycles = 3;       // an acknowledgement past its last router back, to the DMA
  int peer_idle_lag_cycles = 3;      // a load's last line written, or a store's last acknowledgement, to idle
};

// Thesis Table 5.9 ("average experimental value given by the supervisor"): the ARM's clocks as averages per
// word or pixel, what arm_clock_model "table5.9" charges (the thesis's tables reproduced as it computed them).
struct ArmOpClocks {
  double padding_per_word = 2.0;
  double quantization_per_pixel = 8.0;
  double relu_32bit_per_pixel = 8.0;
  double relu_8bit_per_pixel = 2.5;
  double maxpool_32bit_per_pixel = 18.75;
  double maxpool_8bit_per_pixel = 12.0;
  double elementwise_add_per_pixel = 8.0;
  // Not in Table 5.9 (the thesis's networks have no bias): a layer's per-channel bias, added to each int32
  // sum in the first ARM pass over the sums (ReLU or QUAN), costs this much more per pixel. An assumption:
  // one load and one add in that loop, the channel's bias held in a register across its plane.
  double bias_add_per_pixel = 2.0;
  // SNN synaptic processing on the ARM (MacInt8, PermuteWords, Copy8). Neither the thesis nor the SNN paper
  // gives these clocks: assumptions, each by analogy with a measured Table 5.9 loop. A spike-driven loop
  // tests each operand value (a byte load, compare and branch, as an 8-bit ReLU's pixel) and, for each
  // non-zero one, accumulates its weight row (a load of each, an add and a store, as an element-wise add).
  double spike_test_per_value = 2.5;
  double synapse_add_per_weight = 8.0;
  // Circle Reverse: each table entry read and compared, each moved word loaded and stored (two of
  // padding's one-store words), and each cycle's held word and bookkeeping
  double permute_entry_per_word = 2.0;
  double permute_move_per_word = 4.0;
  double permute_cycle_start = 8.0;
  // a copied 32-bit word: a load and a store
  double copy_per_word = 4.0;
  // A network's element-wise operations on int8 maps (docs/real_networks.md): assumptions by analogy with
  // Table 5.9's loops. Table8: an 8-bit ReLU's load, compare and store, and the dependent table load;
  // Affine8: QUAN's loop and a multiply (the channel's m and o in registers); AddScaled8: the element-wise
  // add's loop, two shifts and the rounding add; Mul8: the add's loop, a multiply and the rounding add;
  // ChannelMul8: as Affine8 (the channel's factor in a register).
  double table_per_pixel = 4.0;
  double affine_per_pixel = 9.0;
  double add_scaled_per_pixel = 11.0;
  double mul_per_pixel = 10.0;
  double channel_mul_per_pixel = 9.0;
};

// The ARM kernels' clocks, counted from their Cortex-M4F code (model/pe/arm_kernels/arm_kernels.c, compiled by
// arm-none-eabi-gcc -O2 and counted by tools/arm_clocks.py with the Cortex-M4 TRM's timings; vectors/arm_clocks.json,
// docs/arm_clocks.md): what arm_clock_model "counted" (the default) charges. Per kernel, `call`: its code outside
// its loops; each other field: one iteration of the loop of that name (the loop's own code, with its inner loops'
// setup and the difference of their last iteration). A test holds these defaults to vectors/arm_clocks.json.
struct ArmRowKernelClocks {  // plane > row > pixel
  double call = 0, plane = 0, row = 0, pixel = 0;
};
struct ArmPoolKernelClocks {  // plane > output row > output > window row > window pixel
  double call = 0, plane = 0, output_row = 0, output = 0, window_row = 0, window_pixel = 0;
};
struct ArmKernelClocks {
  struct ZeroSpan {  // zero_span: a run of bytes zeroed, bytes to a word boundary, words, the bytes left
    double call = 19, head_byte = 6, word = 4, tail_byte = 5;
  } zero_span;
  struct Pad {  // s2k_pad: the border's rows whole (zero_span each), the rows between its sides byte by byte
    double call = 65, plane = 39, top_row = 9, side_row = 9, left_byte = 5, right_byte = 4, bottom_row = 9;
  } pad;
  ArmRowKernelClocks relu32{35, 8, 7, 9};                  // s2k_relu32
  ArmRowKernelClocks relu32_bias{54, 28, 11, 12};          // s2k_relu32_bias
  ArmRowKernelClocks quantize{52, 28, 11, 12};             // s2k_quantize
  ArmRowKernelClocks quantize_bias{70, 44, 22, 16};        // s2k_quantize_bias
  ArmRowKernelClocks quantize_shift{63, 40, 20, 18};       // s2k_quantize_shift
  ArmRowKernelClocks quantize_bias_shift{77, 44, 30, 21};  // s2k_quantize_bias_shift
  // the same to [0, 127] (USAT): a ReLU on the int32 sums folded into the quantization's pass
  ArmRowKernelClocks quantize_relu{52, 28, 11, 12};             // s2k_quantize_relu
  ArmRowKernelClocks quantize_bias_relu{70, 44, 22, 16};        // s2k_quantize_bias_relu
  ArmRowKernelClocks quantize_shift_relu{63, 40, 20, 18};       // s2k_quantize_shift_relu
  ArmRowKernelClocks quantize_bias_shift_relu{77, 44, 30, 21};  // s2k_quantize_bias_shift_relu
  ArmPoolKernelClocks maxpool8{83, 27, 35, 12, 6, 9};      // s2k_maxpool8
  ArmPoolKernelClocks avgpool8{80, 29, 28, 24, 8, 6};      // s2k_avgpool8
  // a max pooling folded into the quantization, each of the quantization's eight kernels (QuantizeMaxPool)
  ArmPoolKernelClocks quantize_maxpool{89, 32, 29, 20, 7, 10};         // s2k_quantize_maxpool
  ArmPoolKernelClocks quantize_maxpool_bias{100, 37, 31, 20, 7, 11};   // s2k_quantize_maxpool_bias
  ArmPoolKernelClocks quantize_maxpool_shift{91, 37, 36, 18, 6, 11};   // s2k_quantize_maxpool_shift
  ArmPoolKernelClocks quantize_maxpool_bias_shift{104, 41, 41, 20, 7, 11}; // s2k_quantize_maxpool_bias_shift
  ArmPoolKernelClocks quantize_maxpool_relu{89, 32, 29, 20, 7, 10};    // s2k_quantize_maxpool_relu
  ArmPoolKernelClocks quantize_maxpool_bias_relu{100, 37, 31, 20, 7, 11}; // s2k_quantize_maxpool_bias_relu
  ArmPoolKernelClocks quantize_maxpool_shift_relu{91, 37, 36, 18, 6, 11}; // s2k_quantize_maxpool_shift_relu
  ArmPoolKernelClocks quantize_maxpool_bias_shift_relu{104, 41, 41, 20, 7, 11}; // s2k_quantize_maxpool_bias_shift_relu
  ArmRowKernelClocks add_int32{50, 22, 11, 12};            // s2k_add_int32
  ArmRowKernelClocks add_int8{51, 22, 10, 10};             // s2k_add_int8
  ArmRowKernelClocks add_int8_relu{51, 22, 10, 10};        // s2k_add_int8_relu (USAT: the ReLU after it folded in)
  // the shortcut's addition folded into the quantization, each of its four kernels, to int8 and to [0, 127]
  ArmRowKernelClocks quantize_add{66, 32, 18, 15};  // s2k_quantize_add
  ArmRowKernelClocks quantize_add_bias{84, 49, 31, 19};  // s2k_quantize_add_bias
  ArmRowKernelClocks quantize_add_shift{77, 41, 26, 21};  // s2k_quantize_add_shift
  ArmRowKernelClocks quantize_add_bias_shift{86, 43, 34, 25};  // s2k_quantize_add_bias_shift
  ArmRowKernelClocks quantize_add_relu{66, 32, 18, 15};  // s2k_quantize_add_relu
  ArmRowKernelClocks quantize_add_bias_relu{84, 49, 31, 19};  // s2k_quantize_add_bias_relu
  ArmRowKernelClocks quantize_add_shift_relu{77, 41, 26, 21};  // s2k_quantize_add_shift_relu
  ArmRowKernelClocks quantize_add_bias_shift_relu{86, 43, 34, 25};  // s2k_quantize_add_bias_shift_relu
  ArmRowKernelClocks relu8{40, 11, 6, 9};                  // s2k_relu8
  struct MacInt8 {  // s2k_mac_int8: row > value (tested; a spike enters the planes) > plane > weight
    double call = 56, row = 32, value_spike = 35, value_no_spike = 14, plane = 11, weight = 9;
  } mac_int8;
  struct PermuteWords {  // s2k_permute_words: plane > {word cleared, entry (a cycle started, or placed) > word moved}
    double call = 43, plane = 22, clear_word = 5, entry_cycle_start = 13, entry_placed = 11, moved_word = 16;
  } permute_words;
  struct Copy8 {  // s2k_copy8: plane > row > byte, or for rows of one byte (a column) plane > byte
    double call = 42, plane = 20, column_plane = 15, row = 8, pixel = 7, column_byte = 9;
  } copy8;
  ArmRowKernelClocks table8{41, 13, 6, 11};        // s2k_table8
  ArmRowKernelClocks affine8{50, 17, 7, 12};       // s2k_affine8
  ArmRowKernelClocks add_scaled8{74, 30, 17, 16};  // s2k_add_scaled8
  ArmRowKernelClocks mul8{65, 28, 12, 14};         // s2k_mul8
  ArmRowKernelClocks channel_mul8{49, 15, 9, 9};   // s2k_channel_mul8
};

// Calls f(kernel, field, value) for every field of `k` (const or not), in the order of vectors/arm_clocks.json's
// model_fields: JSON, validation and the test against the counts walk this one list.
template <typename K, typename F>
void each_arm_kernel_field(K& k, F f) {
  auto row = [&](const char* kernel, auto& r) {
    f(kernel, "call", r.call), f(kernel, "plane", r.plane), f(kernel, "row", r.row), f(kernel, "pixel", r.pixel);
  };
  auto pool = [&](const char* kernel, auto& r) {
    f(kernel, "call", r.call), f(kernel, "plane", r.plane), f(kernel, "output_row", r.output_row);
    f(kernel, "output", r.output), f(kernel, "window_row", r.window_row), f(kernel, "window_pixel", r.window_pixel);
  };
  f("zero_span", "call", k.zero_span.call), f("zero_span", "head_byte", k.zero_span.head_byte);
  f("zero_span", "word", k.zero_span.word), f("zero_span", "tail_byte", k.zero_span.tail_byte);
  f("pad", "call", k.pad.call), f("pad", "plane", k.pad.plane), f("pad", "top_row", k.pad.top_row);
  f("pad", "side_row", k.pad.side_row), f("pad", "left_byte", k.pad.left_byte);
  f("pad", "right_byte", k.pad.right_byte), f("pad", "bottom_row", k.pad.bottom_row);
  row("relu32", k.relu32), row("relu32_bias", k.relu32_bias), row("quantize", k.quantize);
  row("quantize_bias", k.quantize_bias), row("quantize_shift", k.quantize_shift);
  row("quantize_bias_shift", k.quantize_bias_shift);
  row("quantize_relu", k.quantize_relu), row("quantize_bias_relu", k.quantize_bias_relu);
  row("quantize_shift_relu", k.quantize_shift_relu), row("quantize_bias_shift_relu", k.quantize_bias_shift_relu);
  pool("maxpool8", k.maxpool8), pool("avgpool8", k.avgpool8);
  pool("quantize_maxpool", k.quantize_maxpool), pool("quantize_maxpool_bias", k.quantize_maxpool_bias);
  pool("quantize_maxpool_shift", k.quantize_maxpool_shift), pool("quantize_maxpool_bias_shift", k.quantize_maxpool_bias_shift);
  pool("quantize_maxpool_relu", k.quantize_maxpool_relu), pool("quantize_maxpool_bias_relu", k.quantize_maxpool_bias_relu);
  pool("quantize_maxpool_shift_relu", k.quantize_maxpool_shift_relu);
  pool("quantize_maxpool_bias_shift_relu", k.quantize_maxpool_bias_shift_relu);
  row("add_int32", k.add_int32), row("add_int8", k.add_int8), row("add_int8_relu", k.add_int8_relu);
  row("quantize_add", k.quantize_add), row("quantize_add_bias", k.quantize_add_bias);
  row("quantize_add_shift", k.quantize_add_shift), row("quantize_add_bias_shift", k.quantize_add_bias_shift);
  row("quantize_add_relu", k.quantize_add_relu), row("quantize_add_bias_relu", k.quantize_add_bias_relu);
  row("quantize_add_shift_relu", k.quantize_add_shift_relu), row("quantize_add_bias_shift_relu", k.quantize_add_bias_shift_relu);
  row("relu8", k.relu8);
  f("mac_int8", "call", k.mac_int8.call), f("mac_int8", "row", k.mac_int8.row);
  f("mac_int8", "value_spike", k.mac_int8.value_spike), f("mac_int8", "value_no_spike", k.mac_int8.value_no_spike);
  f("mac_int8", "plane", k.mac_int8.plane), f("mac_int8", "weight", k.mac_int8.weight);
  f("permute_words", "call", k.permute_words.call), f("permute_words", "plane", k.permute_words.plane);
  f("permute_words", "clear_word", k.permute_words.clear_word);
  f("permute_words", "entry_cycle_start", k.permute_words.entry_cycle_start);
  f("permute_words", "entry_placed", k.permute_words.entry_placed);
  f("permute_words", "moved_word", k.permute_words.moved_word);
  f("copy8", "call", k.copy8.call), f("copy8", "plane", k.copy8.plane), f("copy8", "column_plane", k.copy8.column_plane);
  f("copy8", "row", k.copy8.row), f("copy8", "pixel", k.copy8.pixel), f("copy8", "column_byte", k.copy8.column_byte);
  row("table8", k.table8), row("affine8", k.affine8), row("add_scaled8", k.add_scaled8);
  row("mul8", k.mul8), row("channel_mul8", k.channel_mul8);
}

// A QPE's place in the chip's mesh: column x (0 = west), row y (0 = north).
struct QpeCoord {
  int x = 0, y = 0;
  bool operator==(const QpeCoord& o) const { return x == o.x && y == o.y; }
};

// A DRAM interface and the QPE routers it is wired to (thesis 2.3.4: 7 clocks to its neighbouring QPE). A
// packet to or from the DRAM enters or leaves the mesh at the attached router nearest its PE's QPE (fewest
// hops; the first listed wins a tie).
struct DramPort {
  std::vector<QpeCoord> attach;
};

// Thesis 4.4: four computation QPEs (a QPE block) twice, around a storage QPE and a DRAM.
struct DoubleQpeBlock {
  int dram = 0;
  QpeCoord storage_qpe;
  // the thesis's: 2 QPE blocks of 4 QPEs (Figure 4.16); a smaller chip may have 1 or 2 blocks of 1 to 4,
  // every double QPE block as many QPEs as the others (the ring gives each the same share)
  std::vector<std::vector<QpeCoord>> qpe_blocks;
  int qpes() const {
    int n = 0;
    for (const auto& b : qpe_blocks) n += static_cast<int>(b.size());
    return n;
  }
};

// The system's shape: a mesh of QPEs, its DRAMs, its host agents and, for SpiNNaker2's data reuse
// distribution, its storage QPEs and double QPE blocks. QPE-DRAM is the 1x1 case with one DRAM.
struct ChipShape {
  std::string name = "prototype";
  int mesh_cols = 6, mesh_rows = 6;
  std::vector<DramPort> drams;
  // the routers that relay host traffic; a QPE's agent is the nearest one (thesis 3.4: one per 3x3 block)
  std::vector<QpeCoord> host_agents;
  std::vector<DoubleQpeBlock> double_qpe_blocks;  // empty: no storage QPEs (QPE-DRAM)
  // what of a storage QPE's PE SRAM may keep feature maps (thesis 4.4: "if the storage QPE has enough
  // space"): all of it by default, as a storage PE runs no MLA task (model/README.md, "The chip")
  int storage_pe_bytes = 128 * 1024;
  // mesh positions with a router but no PEs (a mesh that is not a full rectangle of QPEs)
  std::vector<QpeCoord> routers_without_pes;
  // what the shape assumes where no published figure exists: printed with every report that uses it
  std::vector<std::string> assumptions;
  int qpes() const { return mesh_cols * mesh_rows; }
  bool has_pes(int qpe) const {
    for (QpeCoord c : routers_without_pes)
      if (qpe_index(c) == qpe) return false;
    return true;
  }
  int qpe_index(QpeCoord c) const { return c.y * mesh_cols + c.x; }
  QpeCoord qpe_coord(int index) const { return {index % mesh_cols, index / mesh_cols}; }
};

// The SpiNNaker2 prototype (thesis 2.3.4, 3.4, 4.4; model/README.md, "The chip"): 6x6 QPEs, a DRAM on the
// west and east edges of each half, agents and storage QPEs in the centre.
ChipShape prototype_chip();
// QPE-DRAM (thesis 3.3): one QPE, one DRAM, the host.
ChipShape qpe_dram_chip();
// A 2x2 chip scaled down from the prototype for fast regression, not a thesis shape: the two halves'
// DRAMs, storage QPEs and computation QPEs of the prototype with one QPE each.
ChipShape mini_chip();
// The taped-out SpiNNaker2 (152 PEs in 38 QPEs, 2 LPDDR4 channels); what is not published is an assumption
// listed in its `assumptions` (apply_preset also sets the clocks and the DRAM's rate it assumes).
ChipShape spinnaker2_chip();

struct HwConfig {
  int pes_per_qpe = 4;                 // thesis 2.3.4; the model and the RTL are built for 4 (kPesPerQpe)
  int mac_rows = 4;                    // MAC rows: filters (conv) or rows of A (mm) per tile
  int mac_cols = 16;                   // MAC columns: output pixels (conv) or columns of B (mm) per tile
  int accumulator_bits = 29;           // two's-complement, wraps; stored as its 32-bit sign extension [2, 32]
  // The ranges validate() holds each field to are in [brackets].
  double pe_clock_mhz = 250.0;         // PE, SRAM, DMA, ARM (Figure 5.1) [1, 5000]
  double noc_clock_mhz = 500.0;        // NoC router (Figure 5.1) [1, 10000], twice pe_clock_mhz
  int sram_bytes = 128 * 1024;         // four 32 KB banks [1, 131072]
  int sram_mla_budget_bytes = 96 * 1024;  // what the splitter may use for MLA data (thesis 5.2.1)
  int sram_access_cycles = 1;          // PE clocks one access occupies the port (flaw sram2clk: 2) [1, 16]
  int router_latency_noc_cycles = 4;   // thesis 2.3.3 [2, 8]
  int router_out_fifo_packets = 4;     // per router output port [1, 8]
  int noc_if_out_fifo_packets = 4;     // PE -> router FIFO [1, 8]
  int noc_payload_bytes = 16;          // 128-bit payload, the SRAM's and operand A's width (thesis 2.3.1-2.3.2)
  int operand_a_buffer_words = 2;      // 128-bit operand-A words the MLA holds or has in flight
  int tile_setup_cycles = 1;           // MLA clock per tile to clear accumulators and rewind fetch units
  // QPE-DRAM (thesis 3.3, Figure 5.1, Appendix B)
  int dram_latency_cycles = 7;         // PE clocks from the DRAM to the NoC [0, 10000]
  int dram_cycles_per_op = 2;          // PE clocks per DRAM operation [1, 1024]
  int dram_bytes_per_op = 16;          // bytes per DRAM operation
  // false (the thesis's Appendix B: T_DRAM = bytes / (f * 16 / 2)): a request takes its bytes at 16 per 2
  // clocks, whatever their alignment; true: every 16-byte aligned DRAM word a request touches is a whole
  // operation (a DRAM whose interface moves aligned words: narrow rows cost up to twice as much)
  bool dram_aligned_words = false;
  int host_latency_cycles = 10;        // host interface, each way [0, 100000]
  DmaClocks dma;
  // the system a task stream runs on: QPE-DRAM (the thesis's validation and Table 5.5), or a chip preset
  // (apply_preset: the prototype's 6x6 mesh, thesis 2.3.4) for run-net --target s2
  ChipShape chip = qpe_dram_chip();
  // What the ARM's element-wise operations cost: "counted" (the default), the clocks of their kernels' compiled
  // code, loop by loop (arm_kernels); "table5.9", the thesis's averages per word or pixel (arm), as the thesis
  // computed its Table 5.10 (docs/arm_clocks.md)
  std::string arm_clock_model = "counted";
  // ARM element-wise operations, average ARM clocks (thesis Table 5.9): per 32-bit word for padding,
  // per input pixel for the others [0, 10000] each
  ArmOpClocks arm;
  ArmKernelClocks arm_kernels;  // [0, 10000] each
  // model only: how the MLAs' tile schedule is worked out (model/README.md, "How the model keeps time"):
  // "event": a PE that shares no router and no SRAM port with another advances tile by tile, each tile's
  // clocks worked out once per tile shape; PEs that contend are resolved clock by clock as in "clock".
  // "clock": every PE clock by clock (the reference the event schedule is tested against).
  std::string model_schedule = "event";
  // model only: clocks of a task resolved clock by clock before the steady state is extrapolated
  long long model_resolve_window_cycles = 20000;  // [1, 10^8]
  FlawSwitches flaws;

  // PE clocks a packet takes from one QPE router to the next (thesis 2.3.4: 4 NoC clocks)
  int hop_cycles() const { return (router_latency_noc_cycles + noc_clocks_per_pe_clock() - 1) / noc_clocks_per_pe_clock(); }
  // validate() holds this to 2, what the tile schedule and the RTL step
  int noc_clocks_per_pe_clock() const { return static_cast<int>(noc_clock_mhz / pe_clock_mhz + 0.5); }
  int sram_cycles_per_access() const { return flaws.sram2clk ? 2 * sram_access_cycles : sram_access_cycles; }
  std::string mac_shape() const { return std::to_string(mac_cols) + "x" + std::to_string(mac_rows); }
};

nlohmann::json to_json(const ChipShape& chip);
ChipShape chip_shape_from_json(const nlohmann::json& j);  // fields missing keep the prototype's
// Throws std::invalid_argument naming the first field of `chip` the hardware cannot have.
void validate(const ChipShape& chip);
// Sets the system's shape of a named preset; throws std::invalid_argument listing the presets.
void apply_preset(HwConfig& cfg, const std::string& name);

nlohmann::json to_json(const HwConfig& cfg);
// {kernel: {field: clocks}}, the configuration's "arm_kernel_clocks" (vectors/arm_clocks.json's model_fields)
nlohmann::json arm_kernel_clocks_json(const ArmKernelClocks& k);
// Fields missing from `j` keep their defaults; unknown fields are an error (typos must not pass silently).
HwConfig hw_config_from_json(const nlohmann::json& j);
// Throws std::invalid_argument naming the first field whose value the hardware cannot have.
void validate(const HwConfig& cfg);
// Reads a JSON file of HwConfig fields (see hw_config_from_json); throws std::runtime_error naming the file.
inline constexpr std::uintmax_t kMaxConfigFileBytes = 1u << 20;
HwConfig load_hw_config(const std::string& path);
// The same for the text of such a file; `path` names it in messages.
HwConfig parse_hw_config(const std::string& text, const std::string& path);
// A short stable hash of the configuration (FNV-1a over its canonical JSON), stamped into reports.
std::string config_hash(const HwConfig& cfg);
// The same hash (FNV-1a, 16 hex digits) of any bytes: run-net's journal names the input data it ran on with it.
std::string text_hash(std::string_view text);
// Parses "16x4" (columns x rows) into cfg; throws std::invalid_argument with what was expected.
void set_mac_shape(HwConfig& cfg, const std::string& shape);
// Switches a flaw on by its name (rtl_stubs/README.md, "The known flaws"); throws std::invalid_argument listing the known names.
void enable_flaw(HwConfig& cfg, const std::string& name);
// The configuration every command builds from its options: defaults, then the JSON file (if any), then the
// MAC shape (if any), then the flaws. Throws std::invalid_argument / std::runtime_error for the user.
HwConfig build_hw_config(const std::string& config_file, const std::string& mac_shape,
                         const std::vector<std::string>& flaws);

}  // namespace s2
