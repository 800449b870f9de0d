// A QPE's chip-facing ports in a Verilated model, whichever model holds it: a QPE verilated alone
// (rtl_stubs/qpe.sv, the QPE at slot 0 of its ports) or the whole chip (rtl_stubs/chip.sv, QPE q at slot q of
// the chip's per-QPE buses, [q * width +: width]). The RTL chip backend (rtl_chip.h) drives the ARM and DRAM
// ports and reads the status through this one view, so the same code runs on either.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "model/pe/pe_registers.h"

namespace s2 {

// the widths qpe.sv's ports have per QPE (rtl_stubs/s2_pkg.svh: node_t is {x[3:0], y[3:0], port[2:0]})
inline constexpr int kNocNodeBits = 11;
inline constexpr int kNocAddrBits = 17;
inline constexpr int kArmIndexBits = 5;
// a QPE's mesh channels (direction x message class) and the bits of a NoC packet (s2_pkg.svh noc_pkt_t: two
// nodes, kind 4, a_read 1, rtag 7, be 16, addr 17, data 128)
inline constexpr int kMeshChannels = 8;
inline constexpr int kNocPacketBits = 2 * kNocNodeBits + 4 + 1 + 7 + 16 + kNocAddrBits + 128;

// Copies n bits from bit `from` of src to bit `to` of dst (Verilator's wide signals: 32-bit words, least
// significant first).
inline void copy_bits(const std::uint32_t* src, int from, std::uint32_t* dst, int to, int n) {
  while (n > 0) {
    const int sb = from % 32, db = to % 32;
    const int take = std::min({n, 32 - sb, 32 - db});
    const std::uint32_t mask = take == 32 ? ~0u : ((1u << take) - 1);
    const std::uint32_t v = (src[from / 32] >> sb) & mask;
    dst[to / 32] = (dst[to / 32] & ~(mask << db)) | (v << db);
    from += take;
    to += take;
    n -= take;
  }
}

// Bits [from, from + n) of a Verilated signal (an integer up to 64 bits wide, or a VlWide), n <= 64.
template <typename S>
std::uint64_t get_bits(const S& s, int from, int n) {
  if constexpr (std::is_integral_v<S>) {
    const std::uint64_t v = static_cast<std::uint64_t>(s) >> from;
    return n >= 64 ? v : v & ((std::uint64_t(1) << n) - 1);
  } else {
    std::uint32_t w[2] = {0, 0};
    copy_bits(s.data(), from, w, 0, n);
    return w[0] | (std::uint64_t(w[1]) << 32);
  }
}
template <typename S>
void set_bits(S& s, int from, int n, std::uint64_t v) {
  if constexpr (std::is_integral_v<S>) {
    const std::uint64_t mask = (n >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << n) - 1) << from;
    s = static_cast<S>((static_cast<std::uint64_t>(s) & ~mask) | ((v << from) & mask));
  } else {
    const std::uint32_t w[2] = {static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32)};
    copy_bits(w, 0, s.data(), from, n);
  }
}
// 128 bits (a NoC payload) as 16 bytes, least significant first
template <typename S>
void get_bytes16(const S& s, int from, std::array<std::uint8_t, 16>& out) {
  for (int w = 0; w < 4; ++w) {
    const std::uint32_t v = static_cast<std::uint32_t>(get_bits(s, from + 32 * w, 32));
    std::memcpy(out.data() + 4 * w, &v, 4);
  }
}
template <typename S>
void set_bytes16(S& s, int from, const std::array<std::uint8_t, 16>& in) {
  for (int w = 0; w < 4; ++w) {
    std::uint32_t v;
    std::memcpy(&v, in.data() + 4 * w, 4);
    set_bits(s, from + 32 * w, 32, v);
  }
}

// QPE slot `k` of Verilated top `t`: its ARM port (one register write per PE per PE clock), its DRAM port
// (a request out, a packet in, each with its handshake), and its PEs' dma_busy and pe_irq_done.
template <typename V>
class QpePorts {
 public:
  QpePorts(V& t, int k) : t_(t), k_(k) {}

  unsigned dma_busy() const { return static_cast<unsigned>(get_bits(t_.dma_busy, k_ * kPesPerQpe, kPesPerQpe)); }
  unsigned pe_irq_done() const { return static_cast<unsigned>(get_bits(t_.pe_irq_done, k_ * kPesPerQpe, kPesPerQpe)); }

  // PE `pe`'s ARM port: `w` this PE clock (nullptr: none)
  void arm_write(int pe, const RegisterWrite* w) {
    const int p = k_ * kPesPerQpe + pe;
    set_bits(t_.arm_wr, p, 1, w != nullptr);
    if (!w) return;
    set_bits(t_.arm_idx, p * kArmIndexBits, kArmIndexBits, static_cast<std::uint64_t>(w->index));
    set_bits(t_.arm_data, p * 32, 32, w->data);
  }

  // the DRAM port's request out (the router's towards its DRAM), and its pop
  bool dram_request_valid() const { return get_bits(t_.dram_req_valid, k_, 1) != 0; }
  unsigned dram_request_source() const { return static_cast<unsigned>(get_bits(t_.dram_req_src, k_ * kNocNodeBits, kNocNodeBits)); }
  unsigned dram_request_kind() const { return static_cast<unsigned>(get_bits(t_.dram_req_kind, k_ * 4, 4)); }
  unsigned dram_request_addr() const { return static_cast<unsigned>(get_bits(t_.dram_req_addr, k_ * kNocAddrBits, kNocAddrBits)); }
  void dram_request_data(std::array<std::uint8_t, 16>& out) const { get_bytes16(t_.dram_req_data, k_ * 128, out); }
  void dram_request_pop(bool pop) { set_bits(t_.dram_req_pop, k_, 1, pop); }

  // the DRAM's packet into the router (valid with its fields), and whether the router takes it
  void dram_offer(bool valid) { set_bits(t_.dram_valid, k_, 1, valid); }
  void dram_packet(unsigned dst, unsigned kind, unsigned addr, unsigned be, const std::array<std::uint8_t, 16>& data) {
    set_bits(t_.dram_dst, k_ * kNocNodeBits, kNocNodeBits, dst);
    set_bits(t_.dram_kind, k_ * 4, 4, kind);
    set_bits(t_.dram_addr, k_ * kNocAddrBits, kNocAddrBits, addr);
    set_bits(t_.dram_be, k_ * 16, 16, be);
    set_bytes16(t_.dram_data, k_ * 128, data);
  }
  bool dram_ready() const { return get_bits(t_.dram_ready, k_, 1) != 0; }

  // The router's activity counters (rtl_stubs/README.md, "Activity"), 64 bits per QPE slot; a user's QPE
  // without them reports nothing (the counts go to activity_unavailable).
  static constexpr bool kCountsNoc = requires(V& t) {
    t.noc_packets;
    t.noc_packet_hops;
  };
  std::uint64_t noc_packets() const {
    if constexpr (kCountsNoc) return get_bits(t_.noc_packets, k_ * 64, 64);
    else return 0;
  }
  std::uint64_t noc_packet_hops() const {
    if constexpr (kCountsNoc) return get_bits(t_.noc_packet_hops, k_ * 64, 64);
    else return 0;
  }

 private:
  V& t_;
  int k_;
};

}  // namespace s2
