#include "model/hw_config.h"

#include "model/json_field.h"
#include "model/text_file.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace s2 {

ChipShape prototype_chip() {
  ChipShape c;
  c.name = "prototype";
  c.mesh_cols = c.mesh_rows = 6;
  // west and east edges of the northern and southern halves (the thesis's simulator reaches a DRAM through
  // the edge router of the requesting QPE's row)
  c.drams = {{{{0, 0}, {0, 1}, {0, 2}}}, {{{5, 0}, {5, 1}, {5, 2}}}, {{{0, 3}, {0, 4}, {0, 5}}}, {{{5, 3}, {5, 4}, {5, 5}}}};
  c.host_agents = {{2, 2}, {3, 2}, {2, 3}, {3, 3}};
  // thesis 4.4, Figure 4.16: the four centre QPEs store results; the 32 around them form four double QPE
  // blocks, each with a DRAM and a storage QPE. Listed in the order of the ring the data reuse strategy
  // migrates filters along (double QPE blocks, their QPE blocks, their QPEs in turn): every QPE's
  // successor is its mesh neighbour, the last QPE's is the first.
  c.double_qpe_blocks = {
      {0, {2, 2}, {{{0, 1}, {0, 0}, {1, 0}, {1, 1}}, {{2, 1}, {2, 0}, {3, 0}, {3, 1}}}},
      {1, {3, 2}, {{{4, 1}, {4, 0}, {5, 0}, {5, 1}}, {{5, 2}, {4, 2}, {4, 3}, {5, 3}}}},
      {3, {3, 3}, {{{5, 4}, {5, 5}, {4, 5}, {4, 4}}, {{3, 4}, {3, 5}, {2, 5}, {2, 4}}}},
      {2, {2, 3}, {{{1, 4}, {1, 5}, {0, 5}, {0, 4}}, {{0, 3}, {1, 3}, {1, 2}, {0, 2}}}},
  };
  return c;
}

ChipShape spinnaker2_chip() {
  ChipShape c;
  c.name = "spinnaker2";
  c.mesh_cols = 8;
  c.mesh_rows = 5;
  c.routers_without_pes = {{3, 2}, {4, 2}};
  c.drams = {{{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}}}, {{{7, 0}, {7, 1}, {7, 2}, {7, 3}, {7, 4}}}};
  c.host_agents = {{3, 2}, {4, 2}};
  c.assumptions = {
      "152 PEs in 38 QPEs (published) placed in an 8x5 mesh whose two centre positions, (3,2) and (4,2), hold "
      "routers but no PEs (the floorplan is not published)",
      "the 2 LPDDR4 channels (published: about 6.4 GB/s sustained together) on the west and east edges, reached "
      "through the edge router of the requesting QPE's row",
      "the host reaches the chip through the two centre routers",
      "PE clock 200 MHz (not published; 150-400 MHz circulate), NoC 400 MHz: each channel's 3.2 GB/s is then 16 "
      "bytes per PE clock",
      "DRAM latency 7 PE clocks to its router and the host interface's 10 clocks, as the prototype's",
      "no storage QPEs or double QPE blocks: the thesis's data reuse strategy is the prototype's",
  };
  return c;
}

ChipShape mini_chip() {
  ChipShape c;
  c.name = "mini";
  c.mesh_cols = c.mesh_rows = 2;
  // the west column computes, each of its QPEs at its half's DRAM; the east column stores and relays the host
  c.drams = {{{{0, 0}}}, {{{0, 1}}}};
  c.host_agents = {{1, 0}, {1, 1}};
  // the ring is the west column: each computation QPE's successor is the other, one hop away
  c.double_qpe_blocks = {{0, {1, 0}, {{{0, 0}}}}, {1, {1, 1}, {{{0, 1}}}}};
  c.assumptions = {"a 2x2 chip scaled down from the prototype for fast regression; no SpiNNaker2 has this shape"};
  return c;
}

ChipShape qpe_dram_chip() {
  ChipShape c;
  c.name = "qpe_dram";
  c.mesh_cols = c.mesh_rows = 1;
  c.drams = {{{{0, 0}}}};
  c.host_agents = {{0, 0}};
  return c;
}

namespace {
nlohmann::json coord_json(QpeCoord q) { return nlohmann::json::array({q.x, q.y}); }
nlohmann::json coords_json(const std::vector<QpeCoord>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (QpeCoord q : v) a.push_back(coord_json(q));
  return a;
}
QpeCoord coord_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_integer() || !j[1].is_number_integer())
    throw std::invalid_argument("chip field '" + where + "': expected a QPE as [x, y]");
  return {j[0].get<int>(), j[1].get<int>()};
}
std::vector<QpeCoord> coords_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) throw std::invalid_argument("chip field '" + where + "': expected a list of QPEs [[x, y], ...]");
  std::vector<QpeCoord> v;
  for (std::size_t i = 0; i < j.size(); ++i) v.push_back(coord_from(j[i], where + "[" + std::to_string(i) + "]"));
  return v;
}
}  // namespace

nlohmann::json to_json(const ChipShape& c) {
  nlohmann::json drams = nlohmann::json::array(), blocks = nlohmann::json::array();
  for (const DramPort& d : c.drams) drams.push_back(coords_json(d.attach));
  for (const DoubleQpeBlock& b : c.double_qpe_blocks) {
    nlohmann::json qb = nlohmann::json::array();
    for (const auto& block : b.qpe_blocks) qb.push_back(coords_json(block));
    blocks.push_back({{"dram", b.dram}, {"storage_qpe", coord_json(b.storage_qpe)}, {"qpe_blocks", qb}});
  }
  return {{"name", c.name},
          {"mesh_cols", c.mesh_cols},
          {"mesh_rows", c.mesh_rows},
          {"drams", drams},
          {"host_agents", coords_json(c.host_agents)},
          {"double_qpe_blocks", blocks},
          {"storage_pe_bytes", c.storage_pe_bytes},
          {"routers_without_pes", coords_json(c.routers_without_pes)},
          {"assumptions", c.assumptions}};
}

namespace {
template <typename T>
void take(const nlohmann::json& j, const char* key, T& field, const std::string& in = "") {
  if (!j.contains(key)) return;
  try {
    field = json_field<T>(j.at(key));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("hardware configuration field '" + in + key + "': " + e.what());
  }
}

void require_object(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object())
    throw std::invalid_argument(what + ": expected a JSON object of fields, got " + std::string(j.type_name()));
}
}  // namespace

ChipShape chip_shape_from_json(const nlohmann::json& j) {
  ChipShape c;
  require_object(j, "hardware configuration field 'chip'");
  const nlohmann::json keys = to_json(c);
  for (const auto& [key, value] : j.items()) {
    if (!keys.contains(key)) throw std::invalid_argument("unknown field '" + key + "' in 'chip'");
    (void)value;
  }
  take(j, "name", c.name, "chip.");
  take(j, "mesh_cols", c.mesh_cols, "chip.");
  take(j, "mesh_rows", c.mesh_rows, "chip.");
  if (j.contains("drams")) {
    c.drams.clear();
    const auto& d = j.at("drams");
    if (!d.is_array()) throw std::invalid_argument("chip field 'drams': expected a list of DRAMs, each its routers [[x, y], ...]");
    for (std::size_t i = 0; i < d.size(); ++i) c.drams.push_back({coords_from(d[i], "drams[" + std::to_string(i) + "]")});
  }
  if (j.contains("host_agents")) c.host_agents = coords_from(j.at("host_agents"), "host_agents");
  if (j.contains("routers_without_pes")) c.routers_without_pes = coords_from(j.at("routers_without_pes"), "routers_without_pes");
  take(j, "storage_pe_bytes", c.storage_pe_bytes, "chip.");
  take(j, "assumptions", c.assumptions, "chip.");
  if (j.contains("double_qpe_blocks")) {
    c.double_qpe_blocks.clear();
    const auto& a = j.at("double_qpe_blocks");
    if (!a.is_array()) throw std::invalid_argument("chip field 'double_qpe_blocks': expected a list");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string where = "double_qpe_blocks[" + std::to_string(i) + "]";
      DoubleQpeBlock b;
      b.dram = a[i].at("dram").get<int>();
      b.storage_qpe = coord_from(a[i].at("storage_qpe"), where + ".storage_qpe");
      for (const auto& block : a[i].at("qpe_blocks")) b.qpe_blocks.push_back(coords_from(block, where + ".qpe_blocks"));
      c.double_qpe_blocks.push_back(b);
    }
  }
  return c;
}

void validate(const ChipShape& c) {
  auto need = [](bool ok, const std::string& field, const std::string& expected) {
    if (!ok) throw std::invalid_argument("hardware configuration field 'chip." + field + "': expected " + expected);
  };
  need(c.mesh_cols >= 1 && c.mesh_cols <= 16, "mesh_cols", "1 to 16");
  need(c.mesh_rows >= 1 && c.mesh_rows <= 16, "mesh_rows", "1 to 16");
  auto inside = [&](QpeCoord q) { return q.x >= 0 && q.y >= 0 && q.x < c.mesh_cols && q.y < c.mesh_rows; };
  const std::string mesh = "QPEs inside the " + std::to_string(c.mesh_cols) + "x" + std::to_string(c.mesh_rows) + " mesh";
  need(!c.drams.empty() && c.drams.size() <= 16, "drams", "1 to 16 DRAMs");
  for (std::size_t d = 0; d < c.drams.size(); ++d) {
    need(!c.drams[d].attach.empty(), "drams[" + std::to_string(d) + "]", "at least one router");
    for (QpeCoord q : c.drams[d].attach) need(inside(q), "drams[" + std::to_string(d) + "]", mesh);
  }
  need(!c.host_agents.empty(), "host_agents", "at least one agent router");
  for (QpeCoord q : c.routers_without_pes) need(inside(q), "routers_without_pes", mesh);
  for (QpeCoord q : c.host_agents) need(inside(q), "host_agents", mesh);
  std::vector<int> owner(static_cast<std::size_t>(c.qpes()), -1);
  for (std::size_t i = 0; i < c.double_qpe_blocks.size(); ++i) {
    const DoubleQpeBlock& b = c.double_qpe_blocks[i];
    const std::string f = "double_qpe_blocks[" + std::to_string(i) + "]";
    need(b.dram >= 0 && static_cast<std::size_t>(b.dram) < c.drams.size(), f + ".dram", "a DRAM index");
    need(inside(b.storage_qpe), f + ".storage_qpe", mesh);
    need(b.qpe_blocks.size() == 1 || b.qpe_blocks.size() == 2, f + ".qpe_blocks", "1 or 2 QPE blocks (the thesis's: 2)");
    need(b.qpes() == c.double_qpe_blocks[0].qpes(), f + ".qpe_blocks",
         "as many QPEs as double_qpe_blocks[0] (" + std::to_string(c.double_qpe_blocks[0].qpes()) + ")");
    std::vector<QpeCoord> all{b.storage_qpe};
    for (const auto& block : b.qpe_blocks) {
      need(block.size() >= 1 && block.size() <= 4, f + ".qpe_blocks", "1 to 4 QPEs per QPE block (the thesis's: 4)");
      all.insert(all.end(), block.begin(), block.end());
    }
    for (QpeCoord q : all) {
      need(inside(q), f, mesh);
      need(c.has_pes(c.qpe_index(q)), f, "QPEs with PEs");
      int& o = owner[static_cast<std::size_t>(c.qpe_index(q))];
      need(o < 0, f, "each QPE in one double QPE block only (QPE [" + std::to_string(q.x) + ", " + std::to_string(q.y) + "] twice)");
      o = static_cast<int>(i);
    }
  }
}

nlohmann::json to_json(const HwConfig& c) {
  return {
      {"pes_per_qpe", c.pes_per_qpe},
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
      {"chip", to_json(c.chip)},
      {"dma",
       {{"request_lead_cycles", c.dma.request_lead_cycles},
        {"line_lag_cycles", c.dma.line_lag_cycles},
        {"idle_lag_cycles", c.dma.idle_lag_cycles},
        {"ack_lag_cycles", c.dma.ack_lag_cycles},
        {"ack_seen_cycles", c.dma.ack_seen_cycles},
        {"store_requests_in_flight", c.dma.store_requests_in_flight},
        {"peer_reads_in_flight", c.dma.peer_reads_in_flight},
        {"peer_lead_cycles", c.dma.peer_lead_cycles},
        {"peer_line_lag_cycles", c.dma.peer_line_lag_cycles},
        {"peer_ack_lag_cycles", c.dma.peer_ack_lag_cycles},
        {"peer_idle_lag_cycles", c.dma.peer_idle_lag_cycles}}},
      {"arm_clocks",
       {{"padding_per_word", c.arm.padding_per_word},
        {"quantization_per_pixel", c.arm.quantization_per_pixel},
        {"relu_32bit_per_pixel", c.arm.relu_32bit_per_pixel},
        {"relu_8bit_per_pixel", c.arm.relu_8bit_per_pixel},
        {"maxpool_32bit_per_pixel", c.arm.maxpool_32bit_per_pixel},
        {"maxpool_8bit_per_pixel", c.arm.maxpool_8bit_per_pixel},
        {"elementwise_add_per_pixel", c.arm.elementwise_add_per_pixel},
        {"bias_add_per_pixel", c.arm.bias_add_per_pixel},
        {"spike_test_per_value", c.arm.spike_test_per_value},
        {"synapse_add_per_weight", c.arm.synapse_add_per_weight},
        {"permute_entry_per_word", c.arm.permute_entry_per_word},
        {"permute_move_per_word", c.arm.permute_move_per_word},
        {"permute_cycle_start", c.arm.permute_cycle_start},
        {"copy_per_word", c.arm.copy_per_word},
        {"table_per_pixel", c.arm.table_per_pixel},
        {"affine_per_pixel", c.arm.affine_per_pixel},
        {"add_scaled_per_pixel", c.arm.add_scaled_per_pixel},
        {"mul_per_pixel", c.arm.mul_per_pixel},
        {"channel_mul_per_pixel", c.arm.channel_mul_per_pixel}}},
      {"arm_clock_model", c.arm_clock_model},
      {"arm_kernel_clocks", arm_kernel_clocks_json(c.arm_kernels)},
      {"model_schedule", c.model_schedule},
      {"model_resolve_window_cycles", c.model_resolve_window_cycles},
      {"flaws",
       {{"sram2clk", c.flaws.sram2clk},
        {"neighbor_conv", c.flaws.neighbor_conv},
        {"mm_wide_a", c.flaws.mm_wide_a}}},
  };
}


nlohmann::json arm_kernel_clocks_json(const ArmKernelClocks& k) {
  nlohmann::json j = nlohmann::json::object();
  each_arm_kernel_field(k, [&](const char* kernel, const char* field, double v) { j[kernel][field] = v; });
  return j;
}

HwConfig hw_config_from_json(const nlohmann::json& j) {
  HwConfig c;
  const nlohmann::json defaults = to_json(c);
  require_object(j, "hardware configuration");
  for (const auto& [key, value] : j.items()) {
    if (!defaults.contains(key)) throw std::invalid_argument("unknown hardware configuration field '" + key + "'");
    if (key == "flaws" || key == "arm_clocks" || key == "dma" || key == "chip" || key == "arm_kernel_clocks")
      require_object(value, "hardware configuration field '" + key + "'");
    if (key == "flaws" || key == "arm_clocks" || key == "dma") {
      for (const auto& [sub, v] : value.items()) {
        if (!defaults[key].contains(sub)) throw std::invalid_argument("unknown field '" + sub + "' in '" + key + "'");
        (void)v;
      }
    }
    if (key == "arm_kernel_clocks") {
      for (const auto& [kernel, fields] : value.items()) {
        if (!defaults[key].contains(kernel))
          throw std::invalid_argument("unknown kernel '" + kernel + "' in 'arm_kernel_clocks'");
        require_object(fields, "hardware configuration field 'arm_kernel_clocks." + kernel + "'");
        for (const auto& [field, v] : fields.items()) {
          if (!defaults[key][kernel].contains(field))
            throw std::invalid_argument("unknown field '" + field + "' in 'arm_kernel_clocks." + kernel + "'");
          (void)v;
        }
      }
    }
  }
  take(j, "pes_per_qpe", c.pes_per_qpe);
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
  if (j.contains("chip")) c.chip = chip_shape_from_json(j.at("chip"));
  if (j.contains("dma")) {
    const auto& d = j.at("dma");
    take(d, "request_lead_cycles", c.dma.request_lead_cycles);
    take(d, "line_lag_cycles", c.dma.line_lag_cycles);
    take(d, "idle_lag_cycles", c.dma.idle_lag_cycles);
    take(d, "ack_lag_cycles", c.dma.ack_lag_cycles);
    take(d, "ack_seen_cycles", c.dma.ack_seen_cycles);
    take(d, "store_requests_in_flight", c.dma.store_requests_in_flight);
    take(d, "peer_reads_in_flight", c.dma.peer_reads_in_flight);
    take(d, "peer_lead_cycles", c.dma.peer_lead_cycles);
    take(d, "peer_line_lag_cycles", c.dma.peer_line_lag_cycles);
    take(d, "peer_ack_lag_cycles", c.dma.peer_ack_lag_cycles);
    take(d, "peer_idle_lag_cycles", c.dma.peer_idle_lag_cycles);
  }
  if (j.contains("arm_clocks")) {
    const auto& a = j.at("arm_clocks");
    take(a, "padding_per_word", c.arm.padding_per_word);
    take(a, "quantization_per_pixel", c.arm.quantization_per_pixel);
    take(a, "relu_32bit_per_pixel", c.arm.relu_32bit_per_pixel);
    take(a, "relu_8bit_per_pixel", c.arm.relu_8bit_per_pixel);
    take(a, "maxpool_32bit_per_pixel", c.arm.maxpool_32bit_per_pixel);
    take(a, "maxpool_8bit_per_pixel", c.arm.maxpool_8bit_per_pixel);
    take(a, "elementwise_add_per_pixel", c.arm.elementwise_add_per_pixel);
    take(a, "bias_add_per_pixel", c.arm.bias_add_per_pixel);
    take(a, "spike_test_per_value", c.arm.spike_test_per_value);
    take(a, "synapse_add_per_weight", c.arm.synapse_add_per_weight);
    take(a, "permute_entry_per_word", c.arm.permute_entry_per_word);
    take(a, "permute_move_per_word", c.arm.permute_move_per_word);
    take(a, "permute_cycle_start", c.arm.permute_cycle_start);
    take(a, "copy_per_word", c.arm.copy_per_word);
    take(a, "table_per_pixel", c.arm.table_per_pixel);
    take(a, "affine_per_pixel", c.arm.affine_per_pixel);
    take(a, "add_scaled_per_pixel", c.arm.add_scaled_per_pixel);
    take(a, "mul_per_pixel", c.arm.mul_per_pixel);
    take(a, "channel_mul_per_pixel", c.arm.channel_mul_per_pixel);
  }
  take(j, "arm_clock_model", c.arm_clock_model);
  if (j.contains("arm_kernel_clocks")) {
    const auto& k = j.at("arm_kernel_clocks");
    each_arm_kernel_field(c.arm_kernels, [&](const char* kernel, const char* field, double& v) {
      if (k.contains(kernel)) take(k.at(kernel), field, v);
    });
  }
  take(j, "model_schedule", c.model_schedule);
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
  need(c.pes_per_qpe == 4, "pes_per_qpe", "4 (the model and the RTL are built with four PEs per QPE)");
  const DmaClocks rtl_dma;
  need(c.dma.request_lead_cycles == rtl_dma.request_lead_cycles && c.dma.line_lag_cycles == rtl_dma.line_lag_cycles &&
           c.dma.idle_lag_cycles == rtl_dma.idle_lag_cycles && c.dma.ack_lag_cycles == rtl_dma.ack_lag_cycles &&
           c.dma.ack_seen_cycles == rtl_dma.ack_seen_cycles &&
           c.dma.store_requests_in_flight == rtl_dma.store_requests_in_flight,
       "dma", "the RTL DMA's pipeline (3, 3, 2, 5, 4 clocks and 2 store rows in flight: rtl_stubs/dma.sv)");
  need(c.dma.peer_reads_in_flight == rtl_dma.peer_reads_in_flight && c.dma.peer_lead_cycles == rtl_dma.peer_lead_cycles &&
           c.dma.peer_line_lag_cycles == rtl_dma.peer_line_lag_cycles && c.dma.peer_ack_lag_cycles == rtl_dma.peer_ack_lag_cycles &&
           c.dma.peer_idle_lag_cycles == rtl_dma.peer_idle_lag_cycles,
       "dma", "the RTL DMA's pipeline for transfers with another PE's SRAM (32 lines in flight; 2, 2, 2, 3 clocks: rtl_stubs/dma_peer.sv)");
  need(c.mac_rows == 1 || c.mac_rows == 2 || c.mac_rows == 4, "mac_rows", "1, 2 or 4 (a divisor of the 4 bytes of operand A)");
  need(c.mac_cols == 8 || c.mac_cols == 16, "mac_cols", "8 or 16 (operand B is 64 or 128 bits)");
  need(c.accumulator_bits >= 2 && c.accumulator_bits <= 32, "accumulator_bits", "2 to 32");
  // every clock, latency and size within what such hardware could be (model/hw_config.h states the ranges):
  // a value far beyond them is a typo, and the model's queues and clocks would grow without bound
  need(c.pe_clock_mhz >= 1 && c.pe_clock_mhz <= 5000, "pe_clock_mhz", "1 to 5000 (MHz)");
  need(c.noc_clock_mhz >= 1 && c.noc_clock_mhz <= 10000, "noc_clock_mhz", "1 to 10000 (MHz)");
  need(c.sram_bytes > 0 && c.sram_bytes <= 128 * 1024, "sram_bytes", "1 to 131072 (the model's SRAM)");
  need(c.sram_mla_budget_bytes > 0 && c.sram_mla_budget_bytes <= c.sram_bytes, "sram_mla_budget_bytes", "1 to sram_bytes");
  need(c.sram_access_cycles >= 1 && c.sram_access_cycles <= 16, "sram_access_cycles", "1 to 16");
  need(c.chip.storage_pe_bytes > 0 && c.chip.storage_pe_bytes <= c.sram_bytes, "chip.storage_pe_bytes", "1 to sram_bytes");
  need(c.router_latency_noc_cycles >= 2 && c.router_latency_noc_cycles <= 8, "router_latency_noc_cycles",
       "2 to 8 (NoC clocks through the router's pipeline, noc/router.h)");
  need(c.router_out_fifo_packets >= 1 && c.router_out_fifo_packets <= 8, "router_out_fifo_packets", "1 to 8");
  need(c.noc_if_out_fifo_packets >= 1 && c.noc_if_out_fifo_packets <= 8, "noc_if_out_fifo_packets", "1 to 8");
  need(c.noc_payload_bytes == 16, "noc_payload_bytes", "16 (128-bit payload)");
  need(c.operand_a_buffer_words >= 1 && c.operand_a_buffer_words <= 7, "operand_a_buffer_words", "1 to 7");
  need(c.tile_setup_cycles == 1, "tile_setup_cycles", "1 (the MLA's SETUP clock)");
  need(c.dram_latency_cycles >= 0 && c.dram_latency_cycles <= 10000, "dram_latency_cycles",
       "0 to 10000 (PE clocks: a DRAM answers in tens to hundreds)");
  need(c.dram_cycles_per_op >= 1 && c.dram_cycles_per_op <= 1024, "dram_cycles_per_op", "1 to 1024");
  need(c.dram_bytes_per_op == 16, "dram_bytes_per_op", "16 (a DRAM operation moves one NoC payload)");
  need(c.host_latency_cycles >= 0 && c.host_latency_cycles <= 100000, "host_latency_cycles", "0 to 100000 (PE clocks, each way)");
  for (double v : {c.arm.padding_per_word, c.arm.quantization_per_pixel, c.arm.relu_32bit_per_pixel,
                   c.arm.relu_8bit_per_pixel, c.arm.maxpool_32bit_per_pixel, c.arm.maxpool_8bit_per_pixel,
                   c.arm.elementwise_add_per_pixel, c.arm.bias_add_per_pixel, c.arm.spike_test_per_value,
                   c.arm.synapse_add_per_weight, c.arm.permute_entry_per_word, c.arm.permute_move_per_word,
                   c.arm.permute_cycle_start, c.arm.copy_per_word, c.arm.table_per_pixel, c.arm.affine_per_pixel,
                   c.arm.add_scaled_per_pixel, c.arm.mul_per_pixel, c.arm.channel_mul_per_pixel})
    need(v >= 0 && v <= 10000, "arm_clocks", "0 to 10000 clocks per word or pixel");
  each_arm_kernel_field(c.arm_kernels, [&](const char*, const char*, double v) {
    need(v >= 0 && v <= 10000, "arm_kernel_clocks", "0 to 10000 clocks per call or loop iteration");
  });
  need(c.arm_clock_model == "counted" || c.arm_clock_model == "table5.9", "arm_clock_model",
       "\"counted\" (the kernels' clocks, arm_kernel_clocks) or \"table5.9\" (the thesis's averages, arm_clocks)");
  need(c.model_schedule == "event" || c.model_schedule == "clock", "model_schedule", "\"event\" or \"clock\"");
  need(c.model_resolve_window_cycles >= 1 && c.model_resolve_window_cycles <= 100000000, "model_resolve_window_cycles",
       "1 to 100000000");
  // the tile schedule (model/qpe/tile_schedule.cpp) and the RTL's QPE step two NoC clocks per PE clock
  need(std::abs(c.noc_clock_mhz - 2 * c.pe_clock_mhz) < 1e-9 * c.pe_clock_mhz, "noc_clock_mhz",
       "twice pe_clock_mhz (the model's tile schedule and the RTL's QPE step two NoC clocks per PE clock)");
  validate(c.chip);
}

void apply_preset(HwConfig& cfg, const std::string& name) {
  if (name == "prototype") {
    cfg.chip = prototype_chip();
    return;
  }
  if (name == "mini") {
    cfg.chip = mini_chip();
    return;
  }
  if (name == "spinnaker2") {
    cfg.chip = spinnaker2_chip();
    cfg.pe_clock_mhz = 200.0;  // assumptions listed in the shape
    cfg.noc_clock_mhz = 400.0;
    cfg.dram_cycles_per_op = 1;
    return;
  }
  throw std::invalid_argument("preset '" + name +
                              "': expected prototype (the thesis's SpiNNaker2 prototype), spinnaker2 (the taped-out "
                              "chip, with the assumptions it lists) or mini (a 2x2 chip for fast regression)");
}

HwConfig load_hw_config(const std::string& path) {
  return parse_hw_config(read_text_file(path, kMaxConfigFileBytes, "hardware configuration file"), path);
}

HwConfig parse_hw_config(const std::string& text, const std::string& path) {
  try {
    return hw_config_from_json(nlohmann::json::parse(text));
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string config_hash(const HwConfig& cfg) { return text_hash(to_json(cfg).dump()); }

std::string text_hash(std::string_view text) {
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

HwConfig build_hw_config(const std::string& config_file, const std::string& mac_shape,
                         const std::vector<std::string>& flaws) {
  HwConfig cfg;
  if (!config_file.empty()) cfg = load_hw_config(config_file);
  if (!mac_shape.empty()) set_mac_shape(cfg, mac_shape);
  for (const std::string& f : flaws) enable_flaw(cfg, f);
  return cfg;
}

}  // namespace s2
