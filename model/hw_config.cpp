#include "model/hw_config.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace s2 {

nlohmann::json to_json(const HwConfig& c) {
  return {
      {"mac_rows", c.mac_rows},
      {"mac_cols", c.mac_cols},
      {"accumulator_bits", c.accumulator_bits},
      {"pe_clock_mhz", c.pe_clock_mhz},
      {"noc_clock_mhz", c.noc_clock_mhz},
      {"sram_bytes", c.sram_bytes},
      {"sram_mla_budget_bytes", c.sram_mla_budget_bytes},
      {"sram_access_cycles", c.sram_access_cycles},
      {"router_latency_noc_cycles", c.router_latency_noc_cycles},
      {"router_out_fifo_packets", c.router_out_fifo_packets},
      {"noc_if_out_fifo_packets", c.noc_if_out_fifo_packets},
      {"noc_payload_bytes", c.noc_payload_bytes},
      {"operand_a_buffer_words", c.operand_a_buffer_words},
      {"tile_setup_cycles", c.tile_setup_cycles},
      {"dram_latency_cycles", c.dram_latency_cycles},
      {"dram_cycles_per_op", c.dram_cycles_per_op},
      {"dram_bytes_per_op", c.dram_bytes_per_op},
      {"dram_aligned_words", c.dram_aligned_words},
      {"host_latency_cycles", c.host_latency_cycles},
      {"arm_clocks",
       {{"padding_per_word", c.arm.padding_per_word},
        {"quantization_per_pixel", c.arm.quantization_per_pixel},
        {"relu_32bit_per_pixel", c.arm.relu_32bit_per_pixel},
        {"relu_8bit_per_pixel", c.arm.relu_8bit_per_pixel},
        {"maxpool_32bit_per_pixel", c.arm.maxpool_32bit_per_pixel},
        {"maxpool_8bit_per_pixel", c.arm.maxpool_8bit_per_pixel},
        {"elementwise_add_per_pixel", c.arm.elementwise_add_per_pixel}}},
      {"model_resolve_window_cycles", c.model_resolve_window_cycles},
      {"flaws",
       {{"sram2clk", c.flaws.sram2clk},
        {"neighbor_conv", c.flaws.neighbor_conv},
        {"mm_wide_a", c.flaws.mm_wide_a}}},
  };
}

namespace {
template <typename T>
void take(const nlohmann::json& j, const char* key, T& field) {
  if (j.contains(key)) field = j.at(key).get<T>();
}
}  // namespace

HwConfig hw_config_from_json(const nlohmann::json& j) {
  HwConfig c;
  const nlohmann::json defaults = to_json(c);
  for (const auto& [key, value] : j.items()) {
    if (!defaults.contains(key)) throw std::invalid_argument("unknown hardware configuration field '" + key + "'");
    if (key == "flaws" || key == "arm_clocks") {
      for (const auto& [sub, v] : value.items()) {
        if (!defaults[key].contains(sub)) throw std::invalid_argument("unknown field '" + sub + "' in '" + key + "'");
        (void)v;
      }
    }
  }
  take(j, "mac_rows", c.mac_rows);
  take(j, "mac_cols", c.mac_cols);
  take(j, "accumulator_bits", c.accumulator_bits);
  take(j, "pe_clock_mhz", c.pe_clock_mhz);
  take(j, "noc_clock_mhz", c.noc_clock_mhz);
  take(j, "sram_bytes", c.sram_bytes);
  take(j, "sram_mla_budget_bytes", c.sram_mla_budget_bytes);
  take(j, "sram_access_cycles", c.sram_access_cycles);
  take(j, "router_latency_noc_cycles", c.router_latency_noc_cycles);
  take(j, "router_out_fifo_packets", c.router_out_fifo_packets);
  take(j, "noc_if_out_fifo_packets", c.noc_if_out_fifo_packets);
  take(j, "noc_payload_bytes", c.noc_payload_bytes);
  take(j, "operand_a_buffer_words", c.operand_a_buffer_words);
  take(j, "tile_setup_cycles", c.tile_setup_cycles);
  take(j, "dram_latency_cycles", c.dram_latency_cycles);
  take(j, "dram_cycles_per_op", c.dram_cycles_per_op);
  take(j, "dram_bytes_per_op", c.dram_bytes_per_op);
  take(j, "dram_aligned_words", c.dram_aligned_words);
  take(j, "host_latency_cycles", c.host_latency_cycles);
  if (j.contains("arm_clocks")) {
    const auto& a = j.at("arm_clocks");
    take(a, "padding_per_word", c.arm.padding_per_word);
    take(a, "quantization_per_pixel", c.arm.quantization_per_pixel);
    take(a, "relu_32bit_per_pixel", c.arm.relu_32bit_per_pixel);
    take(a, "relu_8bit_per_pixel", c.arm.relu_8bit_per_pixel);
    take(a, "maxpool_32bit_per_pixel", c.arm.maxpool_32bit_per_pixel);
    take(a, "maxpool_8bit_per_pixel", c.arm.maxpool_8bit_per_pixel);
    take(a, "elementwise_add_per_pixel", c.arm.elementwise_add_per_pixel);
  }
  take(j, "model_resolve_window_cycles", c.model_resolve_window_cycles);
  if (j.contains("flaws")) {
    const auto& f = j.at("flaws");
    take(f, "sram2clk", c.flaws.sram2clk);
    take(f, "neighbor_conv", c.flaws.neighbor_conv);
    take(f, "mm_wide_a", c.flaws.mm_wide_a);
  }
  validate(c);
  return c;
}

void validate(const HwConfig& c) {
  auto need = [](bool ok, const char* field, const char* expected) {
    if (!ok) throw std::invalid_argument(std::string("hardware configuration field '") + field + "': expected " + expected);
  };
  need(c.mac_rows == 1 || c.mac_rows == 2 || c.mac_rows == 4, "mac_rows", "1, 2 or 4 (a divisor of the 4 bytes of operand A)");
  need(c.mac_cols == 8 || c.mac_cols == 16, "mac_cols", "8 or 16 (operand B is 64 or 128 bits)");
  need(c.accumulator_bits >= 2 && c.accumulator_bits <= 32, "accumulator_bits", "2 to 32");
  need(c.pe_clock_mhz > 0, "pe_clock_mhz", "a positive frequency");
  need(c.noc_clock_mhz > 0, "noc_clock_mhz", "a positive frequency");
  need(c.sram_bytes > 0 && c.sram_bytes <= 128 * 1024, "sram_bytes", "1 to 131072 (the model's SRAM)");
  need(c.sram_mla_budget_bytes > 0 && c.sram_mla_budget_bytes <= c.sram_bytes, "sram_mla_budget_bytes", "1 to sram_bytes");
  need(c.sram_access_cycles >= 1, "sram_access_cycles", "at least 1");
  need(c.router_latency_noc_cycles >= 1 && c.router_latency_noc_cycles <= 15, "router_latency_noc_cycles", "1 to 15");
  need(c.router_out_fifo_packets >= 1 && c.router_out_fifo_packets <= 8, "router_out_fifo_packets", "1 to 8");
  need(c.noc_if_out_fifo_packets >= 1 && c.noc_if_out_fifo_packets <= 8, "noc_if_out_fifo_packets", "1 to 8");
  need(c.noc_payload_bytes == 16, "noc_payload_bytes", "16 (128-bit payload)");
  need(c.operand_a_buffer_words >= 1 && c.operand_a_buffer_words <= 7, "operand_a_buffer_words", "1 to 7");
  need(c.tile_setup_cycles == 1, "tile_setup_cycles", "1 (the MLA's SETUP clock)");
  need(c.dram_latency_cycles >= 0, "dram_latency_cycles", "at least 0");
  need(c.dram_cycles_per_op >= 1, "dram_cycles_per_op", "at least 1");
  need(c.dram_bytes_per_op == 16, "dram_bytes_per_op", "16 (a DRAM operation moves one NoC payload)");
  need(c.host_latency_cycles >= 0, "host_latency_cycles", "at least 0");
  for (double v : {c.arm.padding_per_word, c.arm.quantization_per_pixel, c.arm.relu_32bit_per_pixel,
                   c.arm.relu_8bit_per_pixel, c.arm.maxpool_32bit_per_pixel, c.arm.maxpool_8bit_per_pixel,
                   c.arm.elementwise_add_per_pixel})
    need(v >= 0, "arm_clocks", "non-negative clocks per word or pixel");
  need(c.model_resolve_window_cycles >= 1, "model_resolve_window_cycles", "at least 1");
}

HwConfig load_hw_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open hardware configuration file");
  try {
    return hw_config_from_json(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string config_hash(const HwConfig& cfg) {
  const std::string text = to_json(cfg).dump();
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void set_mac_shape(HwConfig& cfg, const std::string& shape) {
  if (shape == "16x4") { cfg.mac_cols = 16; cfg.mac_rows = 4; return; }
  if (shape == "16x2") { cfg.mac_cols = 16; cfg.mac_rows = 2; return; }
  if (shape == "8x4") { cfg.mac_cols = 8; cfg.mac_rows = 4; return; }
  throw std::invalid_argument("MAC array shape '" + shape + "': expected 16x4, 16x2 or 8x4 (columns x rows)");
}

void enable_flaw(HwConfig& cfg, const std::string& name) {
  if (name == "sram2clk") cfg.flaws.sram2clk = true;
  else if (name == "neighbor_conv") cfg.flaws.neighbor_conv = true;
  else if (name == "mm_wide_a") cfg.flaws.mm_wide_a = true;
  else throw std::invalid_argument("unknown flaw '" + name + "': expected sram2clk, neighbor_conv or mm_wide_a");
}

}  // namespace s2
