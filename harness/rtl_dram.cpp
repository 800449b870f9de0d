#include "harness/rtl_dram.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace s2 {

namespace {

// the row descriptor in a PKT_DRAM_RD / PKT_DRAM_WR payload (s2_pkg dma_row_t): DRAM address, length
std::uint32_t word(const std::array<std::uint8_t, 16>& d, int i) {
  std::uint32_t v;
  std::memcpy(&v, d.data() + 4 * i, 4);
  return v;
}

std::uint32_t lines_of(std::uint32_t sram_addr, std::uint32_t bytes) {
  return (sram_addr + bytes - 1) / 16 - sram_addr / 16 + 1;
}

}  // namespace

RtlDram::RtlDram(const HwConfig& cfg, std::vector<std::uint8_t>& memory) : mem_(memory), timing_(cfg) {}

void RtlDram::receive(const DramPortPacket& p, std::uint64_t cycle) {
  if (p.pe >= writes_.size()) throw std::runtime_error(fmt::format("RTL DRAM: packet from port {}, not a PE", p.pe));
  Write& w = writes_[p.pe];
  if (p.kind == kPktDramRd || p.kind == kPktDramWr) {
    const std::uint64_t dram = word(p.data, 0);
    const std::uint32_t bytes = word(p.data, 1);
    if (bytes == 0 || dram + bytes > mem_.size())
      throw std::runtime_error(fmt::format("RTL DRAM: PE {} asks for {} bytes at DRAM address {}, the DRAM holds {}",
                                           p.pe, bytes, dram, mem_.size()));
    if (w.open) throw std::runtime_error(fmt::format("RTL DRAM: PE {} starts a row before its written row is complete", p.pe));
    if (p.kind == kPktDramWr) {
      w = Write{dram, bytes, p.addr, lines_of(p.addr, bytes), {}, true};
      return;
    }
    // a read row: one PKT_DMA_DATA per SRAM line it touches, each leaving when the DRAM has read the
    // last DRAM word it needs
    const DramTiming::Service s = timing_.serve(cycle, timing_.ops_for(dram, bytes));
    const std::uint32_t first_line = p.addr / 16, lines = lines_of(p.addr, bytes);
    for (std::uint32_t l = 0; l < lines; ++l) {
      DramPortPacket d;
      d.pe = p.pe;
      d.kind = kPktDmaData;
      d.addr = (first_line + l) * 16;
      const std::uint32_t lo = std::max(d.addr, p.addr), hi = std::min(d.addr + 16, p.addr + bytes);
      for (std::uint32_t b = lo; b < hi; ++b) {
        d.data[b - d.addr] = mem_[dram + (b - p.addr)];
        d.be = static_cast<std::uint16_t>(d.be | (1u << (b - d.addr)));
      }
      d.release_cycle = timing_.byte_ready(s, dram, hi - 1 - p.addr);
      data_.push_back(d);
    }
    return;
  }
  if (p.kind != kPktDramWdata) throw std::runtime_error(fmt::format("RTL DRAM: PE {} sent packet kind {}", p.pe, p.kind));
  if (!w.open) throw std::runtime_error(fmt::format("RTL DRAM: PE {} sent a line with no row open", p.pe));
  w.lines.insert(w.lines.end(), p.data.begin(), p.data.end());
  if (w.lines.size() < std::size_t(w.lines_expected) * 16) return;
  // the whole row is here: it joins the queue now, and is acknowledged when written
  const std::uint32_t skip = w.sram_addr % 16;
  std::memcpy(mem_.data() + w.dram_addr, w.lines.data() + skip, w.bytes);
  const DramTiming::Service s = timing_.serve(cycle, timing_.ops_for(w.dram_addr, w.bytes));
  DramPortPacket a;
  a.pe = p.pe;
  a.kind = kPktDmaAck;
  a.release_cycle = timing_.done(s);
  acks_.push_back(a);
  w = Write{};
}

const DramPortPacket* RtlDram::due(bool rsp, std::uint64_t cycle) const {
  const auto& q = rsp ? acks_ : data_;
  return !q.empty() && q.front().release_cycle <= cycle ? &q.front() : nullptr;
}

void RtlDram::pop(bool rsp) { (rsp ? acks_ : data_).pop_front(); }

bool RtlDram::idle() const {
  return data_.empty() && acks_.empty() &&
         std::none_of(writes_.begin(), writes_.end(), [](const Write& w) { return w.open; });
}

}  // namespace s2
