// The protocol numbers the C++ side copies from the RTL (packet kinds, register indices, statistics, the
// PEs per QPE, the DMA's rows in flight), read from rtl_stubs/ and compared, so that neither side can
// change them alone.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "harness/backends/rtl/rtl_dram.h"
#include "harness/backends/rtl/rtl_qpe_adapter.h"
#include "model/hw_config.h"
#include "model/pe/pe_registers.h"
#include "model/qpe/qpe_address_map.h"
#include "model/task.h"

using namespace s2;

namespace {

std::string read(const std::string& rel) {
  std::ifstream in(std::string(S2_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// NAME = 4'd7 (enum members), localparam ... NAME = 5'd12 / = 4, parameter int NAME = 2, NAME /*verilator public*/ = 8.
std::map<std::string, long> numbers(const std::string& text) {
  std::map<std::string, long> m;
  const std::regex re(R"(\b([A-Z][A-Z0-9_]+)\s*(?:/\*[^*]*\*/\s*)?=\s*(?:\d+'d)?(\d+)\b)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    m[(*it)[1]] = std::stol((*it)[2]);
  return m;
}

}  // namespace

TEST(RtlProtocol, TheCppCopiesEqualTheRtlsNumbers) {
  const auto pkg = numbers(read("rtl_stubs/s2_pkg.svh"));
  const auto dma = numbers(read("rtl_stubs/dma.sv"));
  auto rtl = [&](const std::map<std::string, long>& m, const std::string& name) {
    const auto it = m.find(name);
    EXPECT_NE(it, m.end()) << name << " not found in the RTL";
    return it == m.end() ? -1 : it->second;
  };
  EXPECT_EQ(rtl(pkg, "NUM_PE"), kPesPerQpe);
  EXPECT_EQ(rtl(pkg, "PKT_REG_WR"), rtl_protocol::kPktRegWr);
  EXPECT_EQ(rtl(pkg, "PKT_MEM_WR"), rtl_protocol::kPktMemWr);
  EXPECT_EQ(rtl(pkg, "PKT_MEM_RD"), rtl_protocol::kPktMemRd);
  EXPECT_EQ(rtl(pkg, "PKT_DRAM_RD"), kPktDramRd);
  EXPECT_EQ(rtl(pkg, "PKT_DRAM_WR"), kPktDramWr);
  EXPECT_EQ(rtl(pkg, "PKT_DRAM_WDATA"), kPktDramWdata);
  EXPECT_EQ(rtl(pkg, "PKT_DMA_DATA"), kPktDmaData);
  EXPECT_EQ(rtl(pkg, "PKT_DMA_ACK"), kPktDmaAck);
  EXPECT_EQ(rtl(pkg, "PKT_DMA_LAST"), kPktDmaLast);
  EXPECT_EQ(rtl(pkg, "PKT_DRAM_RDX"), kPktDramRdx);
  const std::pair<const char*, int> regs[] = {
      {"REG_OP", qpe_addr::kOp},       {"REG_WI", qpe_addr::kWi},         {"REG_HI", qpe_addr::kHi},
      {"REG_D", qpe_addr::kD},         {"REG_WF", qpe_addr::kWf},         {"REG_HF", qpe_addr::kHf},
      {"REG_C", qpe_addr::kC},         {"REG_A_BASE", qpe_addr::kABase},  {"REG_B_BASE", qpe_addr::kBBase},
      {"REG_O_BASE", qpe_addr::kOBase}, {"REG_A_SRC", qpe_addr::kASrc},   {"REG_START", qpe_addr::kStart},
      {"REG_B_PLANE_ROWS", qpe_addr::kBPlaneRows},
      {"REG_DMA_DRAM_ADDR", kDmaDramAddr},             {"REG_DMA_DRAM_ROW_STRIDE", kDmaDramRowStride},
      {"REG_DMA_DRAM_PLANE_STRIDE", kDmaDramPlaneStride}, {"REG_DMA_SRAM_ADDR", kDmaSramAddr},
      {"REG_DMA_SRAM_ROW_STRIDE", kDmaSramRowStride}, {"REG_DMA_SRAM_PLANE_STRIDE", kDmaSramPlaneStride},
      {"REG_DMA_ROW_BYTES", kDmaRowBytes},             {"REG_DMA_ROWS", kDmaRows},
      {"REG_DMA_PLANES", kDmaPlanes},                  {"REG_DMA_START", kDmaStart},
  };
  for (const auto& [name, value] : regs) EXPECT_EQ(rtl(pkg, name), value) << name;
  const std::pair<const char*, unsigned> stats[] = {
      {"STAT_START_CYCLE", rtl_protocol::kStatStart},   {"STAT_END_CYCLE", rtl_protocol::kStatEnd},
      {"STAT_COMPUTE_CYCLES", rtl_protocol::kStatCompute}, {"STAT_OUTPUT_CYCLES", rtl_protocol::kStatOutput},
      {"STAT_A_WAIT_CYCLES", rtl_protocol::kStatAWait}, {"STAT_B_WAIT_CYCLES", rtl_protocol::kStatBWait},
      {"STAT_TILES", rtl_protocol::kStatTiles},         {"STAT_STEPS", rtl_protocol::kStatSteps},
  };
  for (const auto& [name, value] : stats) EXPECT_EQ(rtl(pkg, name), static_cast<long>(value)) << name;
  const std::pair<const char*, unsigned> activity[] = {
      {"STAT_ACT_BASE", rtl_protocol::kStatActBase},
      {"ACT_MAC_OPS", rtl_protocol::kActMacOps},             {"ACT_MAC_PADDING_OPS", rtl_protocol::kActMacPaddingOps},
      {"ACT_SRAM_RD_MLA_A", rtl_protocol::kActSramRdMlaA},   {"ACT_SRAM_RD_MLA_B", rtl_protocol::kActSramRdMlaB},
      {"ACT_SRAM_WR_MLA_OUT", rtl_protocol::kActSramWrMlaOut}, {"ACT_SRAM_RD_DMA", rtl_protocol::kActSramRdDma},
      {"ACT_SRAM_WR_DMA", rtl_protocol::kActSramWrDma},      {"ACT_BUSY_CYCLES", rtl_protocol::kActBusyCycles},
      {"ACT_COUNTERS", rtl_protocol::kActCounters},
  };
  for (const auto& [name, value] : activity) EXPECT_EQ(rtl(pkg, name), static_cast<long>(value)) << name;
  EXPECT_EQ(rtl(dma, "STORE_REQUESTS_IN_FLIGHT"), static_cast<long>(HwConfig{}.dma.store_requests_in_flight));
}
