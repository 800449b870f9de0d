#include "harness/backends/rtl/rtl_dram.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace s2 {

namespace {

std::uint64_t word64(const std::array<std::uint8_t, 16>& d, int i) {
  std::uint64_t v;
  std::memcpy(&v, d.data() + 8 * i, 8);
  return v;
}

// a PKT_DRAM_RD / PKT_DRAM_WR payload (s2_pkg dma_request_t)
DmaRequest request_of(const DramPortPacket& p) {
  const std::uint64_t lo = word64(p.data, 0), hi = word64(p.data, 1);
  DmaRequest q;
  q.dram_addr = lo & 0xffffffffu;
  q.dram_row_stride = lo >> 32;
  q.rows = hi & 0x1ffffu;
  q.sram_row_stride = (hi >> 17) & 0x1ffffu;
  q.row_bytes = (hi >> 34) & 0x1ffffu;
  q.sram_addr = p.addr;
  return q;
}

// the DRAM address of byte `offset` of the request (a part never crosses a row)
std::uint64_t dram_of(const DmaRequest& q, std::uint64_t offset) {
  return q.dram_addr + offset / q.row_bytes * q.dram_row_stride + offset % q.row_bytes;
}

}  // namespace

RtlDram::RtlDram(const HwConfig& cfg, std::vector<std::uint8_t>& memory, std::vector<int> egress)
    : mem_(memory), timing_(cfg), egress_(std::move(egress)), writes_(egress_.size()), reads_(egress_.size()) {
  int ports = 0;
  for (int e : egress_) ports = std::max(ports, e + 1);
  ports_.resize(static_cast<std::size_t>(ports));
}

void RtlDram::receive(const DramPortPacket& p, std::uint64_t cycle) {
  if (p.pe >= writes_.size() || egress_[p.pe] < 0)
    throw std::runtime_error(fmt::format("RTL DRAM: packet from chip PE {}, which does not reach this DRAM", p.pe));
  Port& port = ports_[static_cast<std::size_t>(egress_[p.pe])];
  Write& w = writes_[p.pe];
  if (p.kind == kPktDramRd || p.kind == kPktDramWr) {
    const DmaRequest q = request_of(p);
    if (q.rows == 0 || q.row_bytes == 0 || q.dram().end() > mem_.size())
      throw std::runtime_error(fmt::format("RTL DRAM: PE {} asks for {} rows of {} bytes from DRAM address {} every {}, the DRAM holds {}",
                                           p.pe, q.rows, q.row_bytes, q.dram_addr, q.dram_row_stride, mem_.size()));
    if (w.open) throw std::runtime_error(fmt::format("RTL DRAM: PE {} starts a request before its write is complete", p.pe));
    if (p.kind == kPktDramWr) {
      w = Write{q, {}, 0, true};
      for_each_dma_beat(q, [&](const DmaBeat& b) { w.beats.push_back(b); });
      return;
    }
    if (reads_[p.pe]) throw std::runtime_error(fmt::format("RTL DRAM: PE {} sent a read before the planes of its last", p.pe));
    reads_[p.pe] = q;
    return;
  }
  if (p.kind == kPktDramRdx) {
    if (!reads_[p.pe]) throw std::runtime_error(fmt::format("RTL DRAM: PE {} sent read planes with no read", p.pe));
    const std::uint64_t lo = word64(p.data, 0), hi = word64(p.data, 1);
    const DmaLoadPlanes planes{lo & 0x1ffffu, (lo >> 17) & 0xffffffffu, ((lo >> 49) | (hi << 15)) & 0x1ffffu};
    const DmaRequest first = *reads_[p.pe];
    reads_[p.pe].reset();
    // the planes back to back; one PKT_DMA_DATA per SRAM line, each leaving when the DRAM has read the last
    // byte it holds
    for (std::uint64_t k = 0; k < planes.planes; ++k) {
      const DmaRequest q = planes.plane(first, k);
      if (q.dram().end() > mem_.size())
        throw std::runtime_error(fmt::format("RTL DRAM: PE {} asks for plane {} at DRAM address {}, the DRAM holds {}",
                                             p.pe, k, q.dram_addr, mem_.size()));
      const DramTiming::Service s = timing_.serve(cycle, q.dram(), DramTiming::Access::Read);
      for_each_dma_beat(q, [&](const DmaBeat& b) {
        DramPortPacket d;
        d.pe = p.pe;
        d.kind = kPktDmaData;
        d.addr = static_cast<std::uint32_t>(b.line_addr);
        for (int i = 0; i < b.count; ++i) {
          const DmaBeat::Part& part = b.parts[static_cast<std::size_t>(i)];
          for (std::uint64_t x = part.lo; x < part.hi; ++x) {
            d.data[x - b.line_addr] = mem_[dram_of(q, part.offset + (x - part.lo))];
            d.be = static_cast<std::uint16_t>(d.be | (1u << (x - b.line_addr)));
          }
        }
        d.release_cycle = timing_.byte_ready(s, q.dram(), b.last_byte());
        port.data.push_back(d);
      });
    }
    port.data.back().kind = kPktDmaLast;
    return;
  }
  if (p.kind != kPktDramWdata) throw std::runtime_error(fmt::format("RTL DRAM: PE {} sent packet kind {}", p.pe, p.kind));
  if (!w.open) throw std::runtime_error(fmt::format("RTL DRAM: PE {} sent a line with no write open", p.pe));
  const DmaBeat& b = w.beats[w.received];
  for (int i = 0; i < b.count; ++i) {
    const DmaBeat::Part& part = b.parts[static_cast<std::size_t>(i)];
    for (std::uint64_t x = part.lo; x < part.hi; ++x) mem_[dram_of(w.request, part.offset + (x - part.lo))] = p.data[x - b.line_addr];
  }
  if (++w.received < w.beats.size()) return;
  // the whole request is here: it joins the queue now, and is acknowledged when written
  const DramTiming::Service s = timing_.serve(cycle, w.request.dram(), DramTiming::Access::Write);
  DramPortPacket a;
  a.pe = p.pe;
  a.kind = kPktDmaAck;
  a.release_cycle = timing_.done(s);
  port.acks.push_back(a);
  w = Write{};
}

const DramPortPacket* RtlDram::due(int port, bool rsp, std::uint64_t cycle) const {
  if (port < 0 || static_cast<std::size_t>(port) >= ports_.size()) return nullptr;
  const Port& p = ports_[static_cast<std::size_t>(port)];
  const auto& q = rsp ? p.acks : p.data;
  return !q.empty() && q.front().release_cycle <= cycle ? &q.front() : nullptr;
}

void RtlDram::pop(int port, bool rsp) {
  Port& p = ports_[static_cast<std::size_t>(port)];
  (rsp ? p.acks : p.data).pop_front();
}

bool RtlDram::idle() const {
  return std::all_of(ports_.begin(), ports_.end(), [](const Port& p) { return p.data.empty() && p.acks.empty(); }) &&
         std::none_of(writes_.begin(), writes_.end(), [](const Write& w) { return w.open; }) &&
         std::none_of(reads_.begin(), reads_.end(), [](const auto& r) { return r.has_value(); });
}

}  // namespace s2
