// The hardware configuration shared by the model, the RTL adapter and every report.
// Plain data with the thesis's defaults (thesis 2.3, Figure 5.1); loaded in one place (load_hw_config),
// hashed and stamped into every report so model and RTL cannot drift apart silently.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace s2 {

// The prototype's known flaws (flaws.md). All off = correct hardware.
struct FlawSwitches {
  bool sram2clk = false;       // every SRAM access takes 2 PE clocks instead of 1
  bool neighbor_conv = false;  // conv with operand A from a neighbour PE: early stop / long run
  bool mm_wide_a = false;      // mm with operand A from a neighbour PE: hang when W_A is too large
};

// Thesis Table 5.9 ("average experimental value given by the supervisor").
struct ArmOpClocks {
  double padding_per_word = 2.0;
  double quantization_per_pixel = 8.0;
  double relu_32bit_per_pixel = 8.0;
  double relu_8bit_per_pixel = 2.5;
  double maxpool_32bit_per_pixel = 18.75;
  double maxpool_8bit_per_pixel = 12.0;
  double elementwise_add_per_pixel = 8.0;
};

struct HwConfig {
  int mac_rows = 4;                    // MAC rows: filters (conv) or rows of A (mm) per tile
  int mac_cols = 16;                   // MAC columns: output pixels (conv) or columns of B (mm) per tile
  int accumulator_bits = 29;           // two's-complement, wraps; stored as its 32-bit sign extension
  double pe_clock_mhz = 250.0;         // PE, SRAM, DMA, ARM (Figure 5.1)
  double noc_clock_mhz = 500.0;        // NoC router (Figure 5.1)
  int sram_bytes = 128 * 1024;         // four 32 KB banks
  int sram_mla_budget_bytes = 96 * 1024;  // what the splitter may use for MLA data (thesis 5.2.1)
  int sram_access_cycles = 1;          // PE clocks one access occupies the port (flaw sram2clk: 2)
  int router_latency_noc_cycles = 4;   // thesis 2.3.3
  int router_out_fifo_packets = 4;     // per router output port
  int noc_if_out_fifo_packets = 4;     // PE -> router FIFO
  int noc_payload_bytes = 16;          // hardware.md Decision: 128-bit payload
  int operand_a_buffer_words = 2;      // 128-bit operand-A words the MLA holds or has in flight
  int tile_setup_cycles = 1;           // MLA clock per tile to clear accumulators and rewind fetch units
  // QPE-DRAM (thesis 3.3, Figure 5.1, Appendix B)
  int dram_latency_cycles = 7;         // PE clocks from the DRAM to the NoC
  int dram_cycles_per_op = 2;          // PE clocks per DRAM operation
  int dram_bytes_per_op = 16;          // bytes per DRAM operation
  // false (the thesis's Appendix B: T_DRAM = bytes / (f * 16 / 2)): a request takes its bytes at 16 per 2
  // clocks, whatever their alignment; true: every 16-byte aligned DRAM word a request touches is a whole
  // operation (a DRAM whose interface moves aligned words: narrow rows cost up to twice as much)
  bool dram_aligned_words = false;
  int host_latency_cycles = 10;        // host interface, each way
  // ARM element-wise operations, average ARM clocks (thesis Table 5.9): per 32-bit word for padding,
  // per input pixel for the others
  ArmOpClocks arm;
  // model only: clocks of a task resolved clock by clock before the steady state is extrapolated
  long long model_resolve_window_cycles = 20000;
  FlawSwitches flaws;

  int sram_cycles_per_access() const { return flaws.sram2clk ? 2 * sram_access_cycles : sram_access_cycles; }
  std::string mac_shape() const { return std::to_string(mac_cols) + "x" + std::to_string(mac_rows); }
};

nlohmann::json to_json(const HwConfig& cfg);
// Fields missing from `j` keep their defaults; unknown fields are an error (typos must not pass silently).
HwConfig hw_config_from_json(const nlohmann::json& j);
// Throws std::invalid_argument naming the first field whose value the hardware cannot have.
void validate(const HwConfig& cfg);
// Reads a JSON file of HwConfig fields (see hw_config_from_json); throws std::runtime_error naming the file.
HwConfig load_hw_config(const std::string& path);
// A short stable hash of the configuration (FNV-1a over its canonical JSON), stamped into reports.
std::string config_hash(const HwConfig& cfg);
// Parses "16x4" (columns x rows) into cfg; throws std::invalid_argument with what was expected.
void set_mac_shape(HwConfig& cfg, const std::string& shape);
// Switches a flaw on by its flaws.md name; throws std::invalid_argument listing the known names.
void enable_flaw(HwConfig& cfg, const std::string& name);

}  // namespace s2
