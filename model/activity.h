// What a backend did, counted where it happened: the events an energy per access multiplies (CNNergy's
// method: MACs, memory accesses by level, on-chip transfers, DRAM accesses, control). Each backend fills
// it from what it actually did, never from a formula over the layer, so that the two can be compared.
// Plain data; the field names are the JSON's (`activity.model`, `activity.rtl`) and the energy table's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace s2 {

// What each count is, the same on every backend (a count a backend cannot observe is listed in its result's
// activity_unavailable, never estimated):
// - mac_ops / mac_padding_ops: in every clock the MAC array fires (multiplies and accumulates), each of its
//   mac_rows x mac_cols units counts once: as mac_ops if its row (operand-A row: filter / row of A) and column
//   (operand-B column: output pixel / column of B) are both within the tile being computed, else as padding.
// - sram_*_bytes_*: bytes moved at an SRAM's ports, counted at the SRAM that served them, by the port that
//   asked: the PE's own MLA (operand A words, operand B words, result words), the DMA/NoC port (the PE's DMA
//   and every request arriving over the NoC, e.g. a peer's operand-A read or a DMA write from DRAM), the ARM.
//   A word read is its full width (16 bytes), a write the bytes it enables.
// - noc_packets: NoC packets (request or response, one noc_pkt_t each) injected into a router by a PE or a
//   DRAM port; the host's packets (descriptors and data of a single-QPE task) are not counted: they are the
//   test bench's, and on a chip the host talks to the PEs outside the NoC. noc_packet_hops: router-to-router
//   link traversals of those packets, counted by the router that sends over the link.
// - dram_*_bytes: bytes a DRAM read or wrote for requests, in whole 16-byte operations (16 each): a
//   request's bytes rounded up to 16, or with dram_aligned_words the aligned words it touches
//   (DramTiming::op_bytes).
// - arm_cycles: the clocks of the ARM's element-wise operations (arm_op_cycles) (the same C++ ARM drives both
//   backends, so these and sram_*_arm agree by construction).
// - pe_busy_cycles / pe_idle_cycles: per PE with commands, the clocks from the run's start to the PE's own
//   end in which its MLA or its DMA is busy (an engine's command under way: the RTL's MLA busy or dma_busy,
//   the model's engines over the same clocks) / in which neither is, summed over those PEs. The run's start:
//   a stream's, the host's start; a task's, its first PE's first clock on it (so a task's busy is its MLA's
//   end - start). The ARM's own clocks are arm_cycles (it is no engine: a PE in an element-wise operation
//   counts idle), so the two sides measure the same signals, each from its own run.
struct Activity {
  std::uint64_t mac_ops = 0;          // multiply-accumulates the MLA issued on lanes holding a result
  std::uint64_t mac_padding_ops = 0;  // ... on lanes beyond the task's rows or columns (alignment)
  std::uint64_t sram_read_bytes_mla_a = 0;     // operand A (weights) read by the MLA
  std::uint64_t sram_read_bytes_mla_b = 0;     // operand B (the input map) read by the MLA
  std::uint64_t sram_write_bytes_mla_out = 0;  // results the MLA wrote
  std::uint64_t sram_read_bytes_dma = 0, sram_write_bytes_dma = 0;  // the DMA (and the NoC into this SRAM)
  std::uint64_t sram_read_bytes_arm = 0, sram_write_bytes_arm = 0;  // the ARM's element-wise operations
  std::uint64_t noc_packets = 0;      // packets that entered the NoC
  std::uint64_t noc_packet_hops = 0;  // router-to-router links they crossed (a packet inside its QPE: 0)
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::uint64_t arm_cycles = 0;       // clocks the ARM spent on element-wise operations (arm_op_cycles)
  std::uint64_t pe_busy_cycles = 0;   // PE clocks with the MLA or the DMA busy, summed over the PEs
  std::uint64_t pe_idle_cycles = 0;   // PE clocks of the run with neither, summed over the PEs with commands

  Activity& operator+=(const Activity& o) {
    for (const auto& f : fields()) this->*f.member += o.*f.member;
    return *this;
  }

  static constexpr std::size_t kFields = 16;
  struct Field {
    const char* name;
    std::uint64_t Activity::*member;
    const char* unit;  // what one count is
  };
  // every count, in the order reports list them
  static const std::array<Field, kFields>& fields() {
    static const std::array<Field, kFields> f{{
        {"mac_ops", &Activity::mac_ops, "MAC"},
        {"mac_padding_ops", &Activity::mac_padding_ops, "MAC"},
        {"sram_read_bytes_mla_a", &Activity::sram_read_bytes_mla_a, "byte"},
        {"sram_read_bytes_mla_b", &Activity::sram_read_bytes_mla_b, "byte"},
        {"sram_write_bytes_mla_out", &Activity::sram_write_bytes_mla_out, "byte"},
        {"sram_read_bytes_dma", &Activity::sram_read_bytes_dma, "byte"},
        {"sram_write_bytes_dma", &Activity::sram_write_bytes_dma, "byte"},
        {"sram_read_bytes_arm", &Activity::sram_read_bytes_arm, "byte"},
        {"sram_write_bytes_arm", &Activity::sram_write_bytes_arm, "byte"},
        {"noc_packets", &Activity::noc_packets, "packet"},
        {"noc_packet_hops", &Activity::noc_packet_hops, "packet-hop"},
        {"dram_read_bytes", &Activity::dram_read_bytes, "byte"},
        {"dram_write_bytes", &Activity::dram_write_bytes, "byte"},
        {"arm_cycles", &Activity::arm_cycles, "clock"},
        {"pe_busy_cycles", &Activity::pe_busy_cycles, "PE clock"},
        {"pe_idle_cycles", &Activity::pe_idle_cycles, "PE clock"},
    }};
    return f;
  }

  // A PE's idle clocks: of the `span_cycles` from the run's start to its end, those not busy
  static std::uint64_t idle_cycles(std::uint64_t span_cycles, std::uint64_t busy_cycles) {
    return span_cycles > busy_cycles ? span_cycles - busy_cycles : 0;
  }

  // name -> count, for the JSON
  std::map<std::string, std::uint64_t> named() const {
    std::map<std::string, std::uint64_t> m;
    for (const auto& f : fields()) m[f.name] = this->*f.member;
    return m;
  }
};

}  // namespace s2
