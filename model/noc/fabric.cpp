#include "model/noc/fabric.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "model/pe/dma_request.h"

namespace s2 {

namespace {

bool is_memory_request(PacketKind k) {
  return k == PacketKind::MemRd || k == PacketKind::MemWr || k == PacketKind::MemWra || k == PacketKind::DmaData ||
         k == PacketKind::DmaLast;
}


}  // namespace

void NocFabric::configure(const HwConfig& cfg) {
  cfg_ = cfg;
  mesh_ = Mesh(cfg.chip);
  sram_cycles_ = cfg.sram_cycles_per_access();
  const int n = cfg.chip.qpes();
  routers_.clear();
  coords_.clear();
  for (int q = 0; q < n; ++q) {
    const QpeCoord c = cfg.chip.qpe_coord(q);
    coords_.push_back(c);
    routers_.push_back(std::make_unique<Router>(Router::Params{c.x, c.y, cfg.router_latency_noc_cycles, 4, 8}));
  }
  pes_.assign(static_cast<std::size_t>(n * kPesPerQpe), PeNode{});
  for (PeNode& pe : pes_) {
    pe.dma.configure(cfg.dma.store_requests_in_flight, cfg.dma.peer_reads_in_flight);
    pe.mla.configure(cfg);
  }
  at_.clear();
  at_.resize(static_cast<std::size_t>(n));
  drams_.assign(cfg.chip.drams.size(), DramQueues{DramTiming(cfg), {}, {}});
  for (std::size_t d = 0; d < cfg.chip.drams.size(); ++d) {
    DramQueues& dq = drams_[d];
    dq.pe.assign(pes_.size(), {});
    for (std::size_t k = 0; k < cfg.chip.drams[d].attach.size(); ++k) {
      const int q = cfg.chip.qpe_index(cfg.chip.drams[d].attach[k]);
      dq.ports.push_back(DramQueues::Port{q, {}, {}});
      at_[static_cast<std::size_t>(q)].dram = static_cast<int>(d);
      at_[static_cast<std::size_t>(q)].port = static_cast<int>(k);
    }
  }
  dram_qpes_.clear();
  for (int q = 0; q < n; ++q)
    if (at_[static_cast<std::size_t>(q)].dram >= 0) dram_qpes_.push_back(q);
  // the input channels: each PE's outbound FIFOs, the DRAM port's inbound FIFOs, the neighbours' links
  toward_.assign(static_cast<std::size_t>(n), {});
  for (int q = 0; q < n; ++q) {
    Router& r = *routers_[static_cast<std::size_t>(q)];
    for (int p = 0; p < kPesPerQpe; ++p)
      for (int k = 0; k < kNocClasses; ++k) r.connect_input(p * kNocClasses + k, &pes_[static_cast<std::size_t>(q * kPesPerQpe + p)].out[k]);
    if (at_[static_cast<std::size_t>(q)].dram >= 0)
      for (int k = 0; k < kNocClasses; ++k) r.connect_input(kPortDram * kNocClasses + k, &at_[static_cast<std::size_t>(q)].in[k]);
    const QpeCoord c = cfg.chip.qpe_coord(q);
    const int nb[4] = {c.y > 0 ? q - cfg.chip.mesh_cols : -1, c.x + 1 < cfg.chip.mesh_cols ? q + 1 : -1,
                       c.y + 1 < cfg.chip.mesh_rows ? q + cfg.chip.mesh_cols : -1, c.x > 0 ? q - 1 : -1};
    for (int dir = 0; dir < 4; ++dir) {
      if (nb[dir] < 0) continue;
      toward_[static_cast<std::size_t>(q)].push_back({nb[dir], (kPortNorth + (dir + 2) % 4) * kNocClasses});
      // the neighbour's link towards this router is its output channel of the opposite direction
      Router& o = *routers_[static_cast<std::size_t>(nb[dir])];
      const int back = (dir + 2) % 4;
      for (int k = 0; k < kNocClasses; ++k)
        r.connect_input((kPortNorth + dir) * kNocClasses + k, &o.output((kPortNorth + back) * kNocClasses + k));
    }
  }
  reset();
}

void NocFabric::reset() {
  for (auto& r : routers_) r->reset();
  for (PeNode& pe : pes_) {
    for (Fifo& f : pe.out) f.clear();  // (the FIFOs stay wired to their routers)
    pe.slave = PeNode::Slave::Idle;
    pe.sram_busy = pe.rsp_slave = pe.rsp_dma = false;
    pe.sram_pending = -1;
    pe.dma = DmaEngine{};
    pe.dma.configure(cfg_.dma.store_requests_in_flight, cfg_.dma.peer_reads_in_flight);
    pe.dma_was_busy = false;
    pe.mla = MlaEngine{};
    pe.mla.configure(cfg_);
    pe.sram_read_bytes_dma = pe.sram_write_bytes_dma = pe.busy_cycles = 0;
    pe.engines_busy = false;
    pe.starts = 0;
  }
  skip_.assign(routers_.size(), QpeSkip{});
  frozen_.clear();
  row_moved_.clear();
  qpe_clocks_skipped_ = pe_edges_evaluated_ = router_edges_evaluated_ = 0;
  for (DramAttachment& a : at_)
    for (Fifo& f : a.in) f.clear();
  for (DramQueues& d : drams_) {
    d.timing.reset();
    for (auto& p : d.ports) p.data.clear(), p.acks.clear();
    std::fill(d.pe.begin(), d.pe.end(), DramQueues::PeState{});
  }
  marked_.assign((pes_.size() + 63) / 64, 0);
  clock_ = 0;
  last_evaluated_ = 0;
  evaluated_any_ = false;
  busy_dmas_ = busy_mlas_ = 0;
  in_flight_ = 0;
}

void NocFabric::start_dma(int pe, const DmaTransfer& t, bool load, std::uint64_t clock) {
  PeNode& n = pes_[static_cast<std::size_t>(pe)];
  if (n.dma.busy()) throw std::logic_error("NoC: PE " + std::to_string(pe) + "'s DMA started while busy");
  const int q = pe / kPesPerQpe;
  if (skip_[static_cast<std::size_t>(q)].frozen) materialize(q, start_clock(clock));
  ++n.starts;
  const bool far_is_pe = t.remote.kind == MemoryRef::Kind::Sram;
  if (far_is_pe) {
    n.far_qpe = t.remote.index / kPesPerQpe;
    n.far_port = t.remote.index % kPesPerQpe;
  } else {
    n.far_qpe = mesh_.dram_router(t.remote.index, q);
    n.far_port = kPortDram;
  }
  n.dma.start(t, load, far_is_pe);
  mark(pe);
  engine_started(n, clock);
  n.dma_was_busy = true;
  wake_at(clock);
  ++busy_dmas_;
}

void NocFabric::start_mla(int pe, const TaskTiles& tiles, int source, std::uint64_t clock) {
  PeNode& n = pes_[static_cast<std::size_t>(pe)];
  if (skip_[static_cast<std::size_t>(pe / kPesPerQpe)].frozen) materialize(pe / kPesPerQpe, start_clock(clock));
  ++n.starts;
  n.mla.start(tiles, clock);
  n.mla_source = source;
  if (!n.mla.busy()) return;  // no tiles
  mark(pe);
  engine_started(n, clock);
  wake_at(clock);
  ++busy_mlas_;
}

void NocFabric::engine_started(PeNode& n, std::uint64_t clock) {
  if (n.engines_busy) return;
  n.engines_busy = true;
  n.busy_since = clock;
}

void NocFabric::engine_ended(PeNode& n, std::uint64_t clock) {
  if (!n.engines_busy || n.dma.busy() || n.mla.busy()) return;
  n.engines_busy = false;
  n.busy_cycles += clock - n.busy_since;
}

Activity NocFabric::pe_activity(int pe) const {
  const PeNode& n = pes_[static_cast<std::size_t>(pe)];
  Activity a;
  a.sram_read_bytes_dma = n.sram_read_bytes_dma;
  a.sram_write_bytes_dma = n.sram_write_bytes_dma;
  a.pe_busy_cycles = n.busy_cycles + (n.engines_busy ? clock_ - n.busy_since : 0);
  return a;
}

void NocFabric::wake_at(std::uint64_t clock) {
  if (!active()) clock_ = clock;
  else clock_ = std::min(clock_, clock);
  if (evaluated_any_) clock_ = std::max(clock_, last_evaluated_ + 1);
}

void NocFabric::set_destination(Packet& p, int qpe, int port) const {
  const QpeCoord c = coords_[static_cast<std::size_t>(qpe)];
  p.dst_x = static_cast<std::int8_t>(c.x);
  p.dst_y = static_cast<std::int8_t>(c.y);
  p.dst_port = static_cast<std::int8_t>(port);
}

void NocFabric::set_source(Packet& p, int qpe, int port) const {
  const QpeCoord c = coords_[static_cast<std::size_t>(qpe)];
  p.src_x = static_cast<std::int8_t>(c.x);
  p.src_y = static_cast<std::int8_t>(c.y);
  p.src_qpe = static_cast<std::int16_t>(qpe);
  p.src_port = static_cast<std::int8_t>(port);
}

std::string NocFabric::describe(int pe) const {
  const PeNode& n = pes_[static_cast<std::size_t>(pe)];
  const Router& r = *routers_[static_cast<std::size_t>(pe / kPesPerQpe)];
  const int local = pe % kPesPerQpe;
  return "DMA " + n.dma.describe() + "; NoC out " + std::to_string(n.out[0].size()) + "+" + std::to_string(n.out[1].size()) +
         " packets, in " + std::to_string(r.output(local * kNocClasses).size()) + "+" +
         std::to_string(r.output(local * kNocClasses + 1).size()) + ", NoC clock " + std::to_string(clock_) +
         ", packets in flight " + std::to_string(in_flight_) + dump();
}

std::string NocFabric::dump() const {
  std::string d;
  for (std::size_t q = 0; q < routers_.size(); ++q) {
    for (int c = 0; c < kNocChannels; ++c)
      if (!routers_[q]->output(c).empty()) d += " R" + std::to_string(q) + ".out" + std::to_string(c) + "=" + std::to_string(routers_[q]->output(c).size());
    if (!routers_[q]->idle()) d += " R" + std::to_string(q) + "busy";
  }
  for (std::size_t p = 0; p < pes_.size(); ++p) {
    const PeNode& n = pes_[p];
    if (!n.out[0].empty() || !n.out[1].empty()) d += " P" + std::to_string(p) + ".out=" + std::to_string(n.out[0].size()) + "+" + std::to_string(n.out[1].size());
    if (n.slave != PeNode::Slave::Idle) d += " P" + std::to_string(p) + ".slave=" + std::to_string(static_cast<int>(n.slave));
  }
  return d;
}

bool NocFabric::active() const { return busy_dmas_ > 0 || busy_mlas_ > 0 || in_flight_ > 0; }

std::uint64_t NocFabric::link_packets(int from_qpe, int to_qpe) const {
  const QpeCoord a = cfg_.chip.qpe_coord(from_qpe), b = cfg_.chip.qpe_coord(to_qpe);
  int dir = -1;
  if (b.x == a.x && b.y == a.y - 1) dir = 0;
  else if (b.x == a.x + 1 && b.y == a.y) dir = 1;
  else if (b.x == a.x && b.y == a.y + 1) dir = 2;
  else if (b.x == a.x - 1 && b.y == a.y) dir = 3;
  if (dir < 0) return 0;
  const Router& r = *routers_[static_cast<std::size_t>(from_qpe)];
  return r.routed((kPortNorth + dir) * kNocClasses + kClassRequest) + r.routed((kPortNorth + dir) * kNocClasses + kClassResponse);
}

NocFabric::PeEdge NocFabric::pe_decide(int pe) const {
  const PeNode& n = pes_[static_cast<std::size_t>(pe)];
  const Router& r = *routers_[static_cast<std::size_t>(pe / kPesPerQpe)];
  const int local = pe % kPesPerQpe;
  const Fifo& in_req = r.output(local * kNocClasses + kClassRequest);
  const Fifo& in_rsp = r.output(local * kNocClasses + kClassResponse);
  PeEdge e;
  const bool head_mem = !in_req.empty() && is_memory_request(in_req.front().kind);
  if (head_mem) e.head = in_req.front().kind;
  e.slave_write = head_mem && e.head != PacketKind::MemRd;
  const bool slave_valid = n.slave == PeNode::Slave::Idle && head_mem;
  const bool req_full = n.out[kClassRequest].full();
  if (n.mla.busy()) e.mla = n.mla.decide(clock_, !in_rsp.empty() && in_rsp.front().a_read, !req_full);
  const bool na_req = e.mla.push_a_read;
  e.dma.pkt_ready = !req_full && !na_req;
  e.dma.s_rsp = n.rsp_dma;
  if (n.dma.busy()) e.out = n.dma.outputs(e.dma.pkt_ready, n.rsp_dma);  // (an idle DMA's are none)
  // the SRAM port, by priority: the NoC slave, the MLA, the DMA
  const bool mla_port = e.mla.port != MlaEngine::PortUse::None;
  if (!n.sram_busy) e.grant = slave_valid ? 0 : (mla_port ? 2 : (e.out.s_valid ? 1 : -1));
  e.dma.s_grant = e.grant == 1;
  e.dma.request_done = e.grant == 0 && e.head == PacketKind::DmaLast;
  e.rsp_now = n.slave == PeNode::Slave::Wait && n.rsp_slave;
  e.rsp_full = n.out[kClassResponse].full();
  e.push_rsp = !e.rsp_full && (e.rsp_now || n.slave == PeNode::Slave::Send);
  if (!in_rsp.empty()) {
    e.pop_rsp = true;
    const Packet& h = in_rsp.front();
    e.dma.ack = h.kind == PacketKind::DmaAck;
    e.dma.rd_rsp = h.kind == PacketKind::RdRsp && !h.a_read;
  }
  if (na_req && !req_full) e.push_req = 1;
  else if (e.out.pkt_valid && e.dma.pkt_ready) e.push_req = 2;
  return e;
}

void NocFabric::pe_apply(int pe, const PeEdge& e) {
  ++pe_edges_evaluated_;
  PeNode& n = pes_[static_cast<std::size_t>(pe)];
  const int q = pe / kPesPerQpe, local = pe % kPesPerQpe;
  Router& r = *routers_[static_cast<std::size_t>(q)];
  Fifo& in_req = r.output(local * kNocClasses + kClassRequest);
  Fifo& in_rsp = r.output(local * kNocClasses + kClassResponse);
  const auto response = [&](const Packet& request) {
    Packet p = request;
    p.dst_x = request.src_x;
    p.dst_y = request.src_y;
    p.dst_port = request.src_port;
    set_source(p, q, local);
    p.kind = PacketKind::RdRsp;
    return p;
  };
  const bool rsp_full = e.rsp_full;
  // the NoC slave's response or acknowledgement out
  if (e.push_rsp) n.out[kClassResponse].push(e.rsp_now ? response(n.slave_pkt) : n.slave_pkt);
  // the NoC slave
  switch (n.slave) {
    case PeNode::Slave::Idle:
      if (e.grant == 0 && !e.slave_write) {
        n.slave_pkt = in_req.front();
        n.slave = PeNode::Slave::Wait;
      } else if (e.grant == 0 && e.head == PacketKind::MemWra) {
        const Packet& w = in_req.front();
        Packet a;
        a.dst_x = w.src_x;
        a.dst_y = w.src_y;
        a.dst_port = w.src_port;
        set_source(a, q, local);
        a.kind = PacketKind::DmaAck;
        n.slave_pkt = a;
        n.slave = PeNode::Slave::Send;
      }
      break;
    case PeNode::Slave::Wait:
      if (n.rsp_slave) {
        if (rsp_full) {
          n.slave_pkt = response(n.slave_pkt);
          n.slave = PeNode::Slave::Send;
        } else {
          n.slave = PeNode::Slave::Idle;
        }
      }
      break;
    case PeNode::Slave::Send:
      if (!rsp_full) n.slave = PeNode::Slave::Idle;
      break;
  }
  if (e.grant == 0) {
    // a read or an acknowledged write lives on as its response; any other write ends here
    if (e.slave_write && e.head != PacketKind::MemWra) --in_flight_;
    in_req.pop();
  }
  if (e.pop_rsp) {
    in_rsp.pop();
    --in_flight_;
  }
  // the outbound request FIFO
  if (e.push_req == 1) {
    Packet p;
    set_destination(p, q, n.mla_source);
    set_source(p, q, local);
    p.kind = PacketKind::MemRd;
    p.a_read = true;
    n.out[kClassRequest].push(p);
    ++in_flight_;
  } else if (e.push_req == 2) {
    Packet p;
    set_destination(p, n.far_qpe, n.far_port);
    set_source(p, q, local);
    p.kind = e.out.kind;
    n.out[kClassRequest].push(p);
    ++in_flight_;
  }
  if (n.dma.busy() || e.dma.ack || e.dma.request_done) n.dma.clock(e.dma);  // (an idle DMA counts only these)
  if (n.mla.busy()) {
    const MlaEngine::Events ev = n.mla.clock(clock_, e.mla, e.grant == 2);
    if (alone_ && (ev.done || ev.row_end || ev.tile_end))
      throw std::logic_error("NoC: a tile of PE " + std::to_string(pe) + " ended within a steady state's periods (model bug)");
    // a steady state is looked for where the QPE's lead MLA (its first busy one) begins a row
    if (e.mla.fire && e.mla.last_kx && skip_periods_ && !evaluate_every_clock_ && !alone_) {
      bool lead = true;
      for (int p = q * kPesPerQpe; p < pe && lead; ++p) lead = !pes_[static_cast<std::size_t>(p)].mla.busy();
      if (lead) row_moved_.push_back(q);
    }
    if (ev.done) {
      --busy_mlas_;
      engine_ended(n, clock_ + 1);
    }
    if (ev.row_end && on_mla_row_) on_mla_row_(pe, clock_ + 1, ev.done);
  }
  // the SRAM port: read data a clock after the access (two with sram2clk, which holds the port a clock more)
  bool rsp_slave = false, rsp_dma = false;
  if (n.sram_busy) {
    n.sram_busy = false;
    if (n.sram_pending == 0) rsp_slave = true;
    if (n.sram_pending == 1) rsp_dma = true;
    n.sram_pending = -1;
  } else if (e.grant >= 0) {
    const bool read = e.grant == 0 ? !e.slave_write : (e.grant == 1 && !e.out.s_we);  // (the MLA's data is its own)
    if (read) n.sram_read_bytes_dma += 16;  // a line (the MLA counts its own accesses)
    if (sram_cycles_ > 1) {
      n.sram_busy = true;
      n.sram_pending = read ? e.grant : -1;
    } else if (read) {
      (e.grant == 0 ? rsp_slave : rsp_dma) = true;
    }
  }
  n.rsp_slave = rsp_slave;
  n.rsp_dma = rsp_dma;
}

// The DRAM port of QPE q's router in one NoC edge (the RTL adapter's): it takes the request at the head of
// the router's DRAM output, and offers one packet due to leave (acknowledgements first).
NocFabric::DramEdge NocFabric::dram_decide(int q) const {
  DramEdge e;
  const DramAttachment& a = at_[static_cast<std::size_t>(q)];
  if (a.dram < 0) return e;
  const Router& r = *routers_[static_cast<std::size_t>(q)];
  e.take = !r.output(kPortDram * kNocClasses + kClassRequest).empty();
  const DramQueues::Port& port = drams_[static_cast<std::size_t>(a.dram)].ports[static_cast<std::size_t>(a.port)];
  const std::uint64_t now = clock_;
  if (!port.acks.empty() && port.acks.front().release <= now) e.offer = 2;
  else if (!port.data.empty() && port.data.front().release <= now) e.offer = 1;
  if (e.offer && a.in[e.offer == 2 ? kClassResponse : kClassRequest].full()) e.offer = 0;
  return e;
}

void NocFabric::dram_apply(int q, const DramEdge& e) {
  DramAttachment& a = at_[static_cast<std::size_t>(q)];
  if (a.dram < 0) return;
  Router& r = *routers_[static_cast<std::size_t>(q)];
  if (e.offer) {
    DramQueues::Port& port = drams_[static_cast<std::size_t>(a.dram)].ports[static_cast<std::size_t>(a.port)];
    auto& queue = e.offer == 2 ? port.acks : port.data;
    const DramQueues::Due& d = queue.front();
    Packet p;
    set_destination(p, d.pe / kPesPerQpe, d.pe % kPesPerQpe);
    set_source(p, q, kPortDram);
    p.kind = d.kind;
    a.in[p.cls()].push(p);
    queue.pop_front();
    ++in_flight_;
  }
  if (e.take) {
    Fifo& f = r.output(kPortDram * kNocClasses + kClassRequest);
    const Packet p = f.front();
    f.pop();
    --in_flight_;
    dram_receive(a.dram, p);
  }
}

void NocFabric::dram_receive(int dram, const Packet& p) {
  DramQueues& dq = drams_[static_cast<std::size_t>(dram)];
  const int pe = p.src_qpe * kPesPerQpe + p.src_port;
  DramQueues::PeState& s = dq.pe[static_cast<std::size_t>(pe)];
  const DmaTransfer& t = pes_[static_cast<std::size_t>(pe)].dma.transfer();
  // the port through which the DRAM answers this PE: its attached router nearest the PE's QPE
  const int egress_qpe = mesh_.dram_router(dram, pe / kPesPerQpe);
  DramQueues::Port* port = nullptr;
  for (auto& x : dq.ports)
    if (x.qpe == egress_qpe) port = &x;
  if (!port) throw std::logic_error("NoC: DRAM " + std::to_string(dram) + " has no port at QPE " + std::to_string(egress_qpe));
  const std::uint64_t now = clock_;
  switch (p.kind) {
    case PacketKind::DramRd: s.read_open = true; return;
    case PacketKind::DramRdx: {
      if (!s.read_open) throw std::logic_error("NoC: read planes without a read");
      s.read_open = false;
      const DmaLoadPlanes planes{t.planes, t.dram_plane_stride, t.sram_plane_stride};
      const DmaRequest first{t.dram_addr, t.dram_row_stride, t.rows, t.row_bytes, t.sram_addr, t.sram_row_stride};
      for (std::uint64_t k = 0; k < t.planes; ++k) {
        const DmaRequest q = planes.plane(first, k);
        const DramTiming::Service sv = dq.timing.serve(now, q.dram(), DramTiming::Access::Read);
        for_each_dma_beat(q, [&](const DmaBeat& b) {
          port->data.push_back({pe, PacketKind::DmaData, dq.timing.byte_ready(sv, q.dram(), b.last_byte())});
        });
      }
      port->data.back().kind = PacketKind::DmaLast;
      return;
    }
    case PacketKind::DramWr: {
      const std::uint64_t k = s.store_row++;
      const std::uint64_t plane = k / t.rows, row = k % t.rows;
      s.write = DmaRequest{t.dram_addr + plane * t.dram_plane_stride + row * t.dram_row_stride, t.row_bytes, 1, t.row_bytes,
                           t.sram_addr + plane * t.sram_plane_stride + row * t.sram_row_stride, t.sram_row_stride};
      s.lines_expected = 0;
      for_each_dma_beat(s.write, [&](const DmaBeat&) { ++s.lines_expected; });
      s.lines_received = 0;
      s.write_open = true;
      return;
    }
    case PacketKind::DramWdata: {
      if (!s.write_open) throw std::logic_error("NoC: a store line without a write");
      if (++s.lines_received < s.lines_expected) return;
      const DramTiming::Service sv = dq.timing.serve(now, s.write.dram(), DramTiming::Access::Write);
      port->acks.push_back({pe, PacketKind::DmaAck, dq.timing.done(sv)});
      s.write_open = false;
      if (s.store_row == std::uint64_t(t.rows) * t.planes) s.store_row = 0;
      return;
    }
    default: throw std::logic_error("NoC: a DRAM got a packet of kind " + std::to_string(static_cast<int>(p.kind)));
  }
}

void NocFabric::step() {
  const int nq = static_cast<int>(routers_.size());
  const int np = static_cast<int>(pes_.size());
  if (decisions_.size() != static_cast<std::size_t>(nq)) decisions_.resize(static_cast<std::size_t>(nq));
  if (dram_edges_.size() != static_cast<std::size_t>(nq)) dram_edges_.resize(static_cast<std::size_t>(nq));
  if (pe_edges_.size() != static_cast<std::size_t>(np)) pe_edges_.resize(static_cast<std::size_t>(np));
  // a frozen QPE is brought to this clock where its periods end or where something reaches it
  for (std::size_t i = 0; i < frozen_.size();) {
    const int q = frozen_[i];
    if (clock_ >= skip_[static_cast<std::size_t>(q)].until() || approached(q)) materialize(q, clock_);  // (removes it)
    else ++i;
  }
  const auto frozen = [&](int q) { return skip_[static_cast<std::size_t>(q)].frozen; };
  for (int edge = 0; edge < 2; ++edge) {
    const bool pe_edge = edge == 1;
    for (int q = 0; q < nq; ++q) decisions_[static_cast<std::size_t>(q)] = frozen(q) ? -1 : routers_[static_cast<std::size_t>(q)]->decide();
    for (int q : dram_qpes_) dram_edges_[static_cast<std::size_t>(q)] = dram_decide(q);
    if (pe_edge) {
      involved_.clear();
      if (evaluate_every_clock_) {
        for (int p = 0; p < np; ++p)
          if (pe_involved(p, true)) {
            pe_edges_[static_cast<std::size_t>(p)] = pe_decide(p);
            involved_.push_back(p);
          }
      } else {
        // A PE's edge reads and writes only its own state and its own FIFOs with its router (which the
        // routers' decisions, taken before, do not read again), so each PE decides and applies at once.
        // Only PEs that may take part are looked at: those marked when something started on them, those
        // with packets from their router, and those that took part in the last clock.
        for (int q = 0; q < nq; ++q) {
          if (frozen(q)) continue;
          const std::uint32_t out = routers_[static_cast<std::size_t>(q)]->outputs_nonempty();
          for (int local = 0; local < kPesPerQpe; ++local)
            if ((out >> (local * kNocClasses)) & 3u) mark(q * kPesPerQpe + local);
        }
        for (std::size_t w = 0; w < marked_.size(); ++w)
          for (std::uint64_t bits = marked_[w]; bits != 0; bits &= bits - 1) {
            const int p = static_cast<int>(w * 64) + std::countr_zero(bits);
            if (frozen(p / kPesPerQpe) || !pe_involved(p, false)) {
              marked_[w] &= ~(1ull << (p % 64));
              continue;
            }
            pe_apply(p, pe_decide(p));
            involved_.push_back(p);
          }
      }
    }
    // (a DRAM port after its router: it takes what the router's pipeline put out in this edge, and its
    // packet enters the router's input after the router took from there; DRAMs in the order of their ports)
    for (int q = 0; q < nq; ++q)
      if (!frozen(q)) router_edges_evaluated_ += routers_[static_cast<std::size_t>(q)]->apply(decisions_[static_cast<std::size_t>(q)]);
    for (int q : dram_qpes_) dram_apply(q, dram_edges_[static_cast<std::size_t>(q)]);
    if (pe_edge && evaluate_every_clock_)
      for (int p : involved_) pe_apply(p, pe_edges_[static_cast<std::size_t>(p)]);
  }
  last_evaluated_ = clock_;
  evaluated_any_ = true;
  // a DMA goes idle only in its PE's edge: the involved PEs' (the reference looks at every PE)
  const auto idle_check = [&](int p) {
    PeNode& n = pes_[static_cast<std::size_t>(p)];
    if (n.dma_was_busy && !n.dma.busy()) {
      n.dma_was_busy = false;
      --busy_dmas_;
      engine_ended(n, clock_ + 1);
      if (on_idle_) on_idle_(p, clock_ + 1);
    }
  };
  if (evaluate_every_clock_)
    for (int p = 0; p < np; ++p) idle_check(p);
  else
    for (int p : involved_) idle_check(p);
  ++clock_;
  // the QPEs whose lead MLA moved on to another row in this clock (pe_apply's)
  for (int q : row_moved_) look_for_period(q);
  row_moved_.clear();
  if (busy_dmas_ > 0 && busy_mlas_ == 0 && quiet()) clock_ = std::max(clock_, next_release());
  // nothing but frozen QPEs busy: on to the first clock one of them is needed in (or an engine starts)
  if (!frozen_.empty() && busy_dmas_ == 0 && only_frozen_busy()) {
    std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
    for (int q : frozen_) next = std::min(next, skip_[static_cast<std::size_t>(q)].until());
    clock_ = std::max(clock_, next);
  }
}

std::uint64_t NocFabric::start_clock(std::uint64_t clock) const {
  std::uint64_t c = active() ? std::min(clock_, clock) : clock;
  if (evaluated_any_) c = std::max(c, last_evaluated_ + 1);
  return c;
}

bool NocFabric::approached(int q) const {
  if (routers_[static_cast<std::size_t>(q)]->far_input_waiting()) return true;
  for (const auto& [nb, channel] : toward_[static_cast<std::size_t>(q)])
    if (routers_[static_cast<std::size_t>(nb)]->reserved(channel) || routers_[static_cast<std::size_t>(nb)]->reserved(channel + 1)) return true;
  const DramAttachment& a = at_[static_cast<std::size_t>(q)];
  if (a.dram >= 0) {
    const DramQueues::Port& port = drams_[static_cast<std::size_t>(a.dram)].ports[static_cast<std::size_t>(a.port)];
    if (!port.data.empty() || !port.acks.empty()) return true;
  }
  return false;
}

bool NocFabric::sealed(int q) const {
  if (!routers_[static_cast<std::size_t>(q)]->local_only() || approached(q)) return false;
  for (int l = 0; l < kPesPerQpe; ++l)
    if (pes_[static_cast<std::size_t>(q * kPesPerQpe + l)].dma.busy()) return false;
  return true;
}

// QPE q's state at the start of clock clock_ relative to its lead MLA's row, and its counts; false: an MLA of
// it is busy outside its CONV/MM stage.
// A PE's NoC interface, NoC slave and SRAM port into `key` (a packet by the fields a sealed QPE's differ in).
void NocFabric::append_ports(std::vector<std::int64_t>& key, const PeNode& n) {
  const auto packet = [&](const Packet& p) { key.insert(key.end(), {p.src_port, p.dst_port, static_cast<std::int64_t>(p.kind), p.a_read}); };
  for (const Fifo& f : n.out) {
    key.push_back(f.size());
    for (int i = 0; i < f.size(); ++i) packet(f.at(i));
  }
  key.insert(key.end(), {static_cast<std::int64_t>(n.slave), n.sram_busy, n.sram_pending, n.rsp_slave, n.rsp_dma, n.dma.busy(), n.mla.busy()});
  if (n.slave != PeNode::Slave::Idle) packet(n.slave_pkt);
}

bool NocFabric::note_state(int q, QpeMark& m) const {
  m.key.clear();
  routers_[static_cast<std::size_t>(q)]->append_state(m.key);
  std::uint64_t lead_row = ~0ull;
  for (int l = 0; l < kPesPerQpe; ++l) {
    const PeNode& n = pes_[static_cast<std::size_t>(q * kPesPerQpe + l)];
    append_ports(m.key, n);
    if (n.mla.busy()) {
      if (n.mla.regs().stage != MlaEngine::Stage::Compute || clock_ < n.mla.begin()) return false;
      if (lead_row == ~0ull) lead_row = n.mla.regs().row;
      n.mla.append_state(m.key, clock_, lead_row);
    }
    const auto i = static_cast<std::size_t>(l);
    m.mla[i] = n.mla.counters();
    m.setup[i] = n.mla.phases().setup;
    m.output[i] = n.mla.phases().output;
    m.starts[i] = n.starts;
    m.sram_read[i] = n.sram_read_bytes_dma;
  }
  m.router = routers_[static_cast<std::size_t>(q)]->counts();
  m.clock = clock_;
  std::uint64_t h = 1469598103934665603ull;
  for (std::int64_t v : m.key) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
  m.hash = h;
  return true;
}

// After a clock: QPE q's state at the start of the next, at every kRowStride-th row of its lead MLA, compared
// with those seen before; one that recurs freezes the QPE for as many whole periods as its tiles allow.
void NocFabric::look_for_period(int q) {
  constexpr std::uint64_t kMarkClocks = 16;  // (about) the clocks between two states noted: rows of kMarkClocks steps
  constexpr std::size_t kMaxMarks = 64;
  QpeSkip& s = skip_[static_cast<std::size_t>(q)];
  if (s.frozen) return;
  const PeNode* lead = nullptr;
  for (int l = 0; l < kPesPerQpe && !lead; ++l)
    if (pes_[static_cast<std::size_t>(q * kPesPerQpe + l)].mla.busy()) lead = &pes_[static_cast<std::size_t>(q * kPesPerQpe + l)];
  if (!lead || lead->mla.regs().stage != MlaEngine::Stage::Compute) {
    s.marks.clear();
    s.last_row = ~0ull;
    return;
  }
  const std::uint64_t row = lead->mla.regs().row;
  if (row == s.last_row) return;
  s.last_row = row;
  const std::uint64_t wf = std::max<std::uint64_t>(lead->mla.regs().wf, 1);
  if (row % std::max<std::uint64_t>(4, (kMarkClocks + wf - 1) / wf) != 0) return;
  // a task whose states did not recur within kMaxMarks is not looked at again until an engine starts
  std::uint64_t starts = 0;
  for (int l = 0; l < kPesPerQpe; ++l) starts += pes_[static_cast<std::size_t>(q * kPesPerQpe + l)].starts;
  if (s.gave_up && starts == s.gave_up_starts) return;
  s.gave_up = false;
  QpeMark& now = scratch_;  // (its key's buffer kept from clock to clock)
  if (!sealed(q) || !note_state(q, now)) {
    s.marks.clear();
    return;
  }
  const auto it = std::find_if(s.marks.begin(), s.marks.end(), [&](const QpeMark& m) { return m.hash == now.hash && m.key == now.key; });
  if (it == s.marks.end()) {
    if (s.marks.size() >= kMaxMarks) {
      s.marks.clear();
      s.gave_up = true;
      s.gave_up_starts = starts;
      return;
    }
    s.marks.push_back(now);
    return;
  }
  const QpeMark& m = *it;
  // sealed all along (no packet from or to the host, the DRAM port or the mesh; no DMA started), the same task
  // on every PE and no tile begun or ended in between, every MLA moved on by whole rows
  for (int c = kPortHost * kNocClasses; c < kNocChannels + 2; ++c)
    if (c != kNocChannels && m.router[static_cast<std::size_t>(c)] != now.router[static_cast<std::size_t>(c)]) {
      s.marks.clear();
      s.marks.push_back(now);
      return;
    }
  std::uint64_t n = std::numeric_limits<std::uint64_t>::max();
  for (int l = 0; l < kPesPerQpe; ++l) {
    const auto i = static_cast<std::size_t>(l);
    if (m.starts[i] != now.starts[i] || m.setup[i] != now.setup[i] || m.output[i] != now.output[i]) {
      s.marks.clear();
      s.marks.push_back(now);
      return;
    }
    const PeNode& pn = pes_[static_cast<std::size_t>(q * kPesPerQpe + l)];
    if (!pn.mla.busy()) continue;
    const MlaEngine::Regs& r = pn.mla.regs();
    const std::uint64_t drow = now.mla[i][1] - m.mla[i][1];
    if (drow == 0 || now.mla[i][1] < m.mla[i][1]) return;
    const std::uint64_t left = r.rows > r.row ? r.rows - r.row : 0, keep = 2 * drow + 2;  // the tile's end stays evaluated
    n = std::min(n, left > keep ? (left - keep) / drow : 0);
  }
  if (n == 0 || n == std::numeric_limits<std::uint64_t>::max()) return;
  s.frozen = true;
  s.from = clock_;
  s.dt = clock_ - m.clock;
  s.periods = n;
  s.period_start = m;
  s.marks.clear();
  frozen_.push_back(q);
}

// Frozen QPE q brought to the start of clock `clock`: the whole periods' counts added, the rest evaluated alone.
void NocFabric::materialize(int q, std::uint64_t clock) {
  QpeSkip& s = skip_[static_cast<std::size_t>(q)];
  if (!s.frozen) return;
  if (clock < s.from) throw std::logic_error("NoC: a frozen QPE needed before its state's clock (model bug)");
  const std::uint64_t k = std::min((clock - s.from) / s.dt, s.periods);
  // the check's reference: the QPE as it froze
  struct Frozen {
    std::array<PeNode, kPesPerQpe> pes;
    Router::Snapshot router;
  };
  std::unique_ptr<Frozen> frozen;  // (only with set_check_skips)
  const std::int64_t frozen_in_flight = in_flight_;
  if (check_skips_) {
    frozen = std::make_unique<Frozen>();
    for (int l = 0; l < kPesPerQpe; ++l) frozen->pes[static_cast<std::size_t>(l)] = pes_[static_cast<std::size_t>(q * kPesPerQpe + l)];
    frozen->router = routers_[static_cast<std::size_t>(q)]->snapshot();
  }
  if (k) {
    for (int l = 0; l < kPesPerQpe; ++l) {
      PeNode& n = pes_[static_cast<std::size_t>(q * kPesPerQpe + l)];
      const auto i = static_cast<std::size_t>(l);
      if (n.mla.busy()) {
        n.mla.repeat_period(k, s.period_start.mla[i]);
        MlaEngine::Regs& r = n.mla.regs();  // its pending clocks k periods later (its task's start stays)
        r.b_arrive += k * s.dt;
        if (r.local_a_arrive != ~0ull) r.local_a_arrive += k * s.dt;
      }
      n.sram_read_bytes_dma += k * (n.sram_read_bytes_dma - s.period_start.sram_read[i]);
    }
    Router& r = *routers_[static_cast<std::size_t>(q)];
    r.add_counts(s.period_start.router, r.counts(), k);
    qpe_clocks_skipped_ += k * s.dt;
  }
  s.frozen = false;
  s.marks.clear();
  s.last_row = ~0ull;
  frozen_.erase(std::find(frozen_.begin(), frozen_.end(), q));
  run_alone(q, s.from + k * s.dt, clock);
  for (int l = 0; l < kPesPerQpe; ++l) mark(q * kPesPerQpe + l);
  if (check_skips_) {
    const std::vector<std::int64_t> skipped = full_state(q);
    const std::int64_t skipped_in_flight = in_flight_;
    for (int l = 0; l < kPesPerQpe; ++l) pes_[static_cast<std::size_t>(q * kPesPerQpe + l)] = frozen->pes[static_cast<std::size_t>(l)];
    routers_[static_cast<std::size_t>(q)]->restore(frozen->router);
    in_flight_ = frozen_in_flight;
    run_alone(q, s.from, clock);
    const std::vector<std::int64_t> every = full_state(q);
    if (every != skipped || in_flight_ != skipped_in_flight)
      throw std::logic_error("NoC: QPE " + std::to_string(q) + " frozen in clock " + std::to_string(s.from) + " (periods of " +
                             std::to_string(s.dt) + " clocks) and brought to clock " + std::to_string(clock) +
                             " is not what evaluating every clock gives (model bug)");
  }
}

std::vector<std::int64_t> NocFabric::full_state(int q) const {
  std::vector<std::int64_t> key;
  const Router& router = *routers_[static_cast<std::size_t>(q)];
  router.append_state(key);
  for (std::uint64_t c : router.counts()) key.push_back(static_cast<std::int64_t>(c));
  const auto rel = [&](std::uint64_t t) { return t >= clock_ && t != ~0ull ? static_cast<std::int64_t>(t - clock_) : -1; };
  for (int l = 0; l < kPesPerQpe; ++l) {
    const PeNode& n = pes_[static_cast<std::size_t>(q * kPesPerQpe + l)];
    append_ports(key, n);
    key.insert(key.end(), {static_cast<std::int64_t>(n.sram_read_bytes_dma), static_cast<std::int64_t>(n.starts)});
    const MlaEngine::Regs& r = n.mla.regs();
    key.insert(key.end(), {static_cast<std::int64_t>(r.stage), static_cast<std::int64_t>(r.col), static_cast<std::int64_t>(r.rows_done),
                           static_cast<std::int64_t>(r.phases.setup), static_cast<std::int64_t>(r.phases.compute),
                           static_cast<std::int64_t>(r.phases.output), static_cast<std::int64_t>(r.phases.a_wait),
                           static_cast<std::int64_t>(r.phases.b_wait), static_cast<std::int64_t>(r.step), static_cast<std::int64_t>(r.row),
                           static_cast<std::int64_t>(r.kx), static_cast<std::int64_t>(r.fb_row), static_cast<std::int64_t>(r.fb_j),
                           r.fb_done, r.b_inflight, r.b_stage, r.b_inflight ? rel(r.b_arrive) : -1,
                           static_cast<std::int64_t>(r.a_issued), static_cast<std::int64_t>(r.a_outstanding),
                           static_cast<std::int64_t>(r.a_count), rel(r.local_a_arrive), static_cast<std::int64_t>(r.out_k), r.out_wait});
  }
  return key;
}

// QPE q's clocks [from, to) evaluated alone, as step() evaluates them (a sealed QPE takes nothing from the rest).
void NocFabric::run_alone(int q, std::uint64_t from, std::uint64_t to) {
  if (from >= to) return;
  Router& r = *routers_[static_cast<std::size_t>(q)];
  if (r.far_input_waiting()) throw std::logic_error("NoC: a packet reached a frozen QPE unseen (model bug)");
  const std::uint64_t clock = clock_;
  alone_ = true;
  for (std::uint64_t c = from; c < to; ++c) {
    clock_ = c;
    for (int edge = 0; edge < 2; ++edge) {
      const int d = r.decide();
      if (edge == 1)
        for (int p = q * kPesPerQpe; p < (q + 1) * kPesPerQpe; ++p)
          if (pe_involved(p, false)) pe_apply(p, pe_decide(p));
      router_edges_evaluated_ += r.apply(d);
    }
  }
  alone_ = false;
  clock_ = clock;
}

bool NocFabric::only_frozen_busy() const {
  for (std::size_t q = 0; q < routers_.size(); ++q) {
    if (skip_[q].frozen) continue;
    if (!routers_[q]->idle()) return false;
    for (const Fifo& f : at_[q].in)
      if (!f.empty()) return false;
    for (int l = 0; l < kPesPerQpe; ++l) {
      const PeNode& n = pes_[q * kPesPerQpe + static_cast<std::size_t>(l)];
      if (n.mla.busy() || n.dma.busy() || n.slave != PeNode::Slave::Idle || n.sram_busy || n.rsp_slave || n.rsp_dma ||
          !n.out[0].empty() || !n.out[1].empty())
        return false;
    }
  }
  for (const DramQueues& d : drams_)
    for (const auto& p : d.ports)
      if (!p.data.empty() || !p.acks.empty()) return false;
  return true;
}

// Whether PE p takes part in this clock: anything of its NoC interface, slave, SRAM port or DMA in use. A
// DMA that only waits for a packet (waiting_only) with nothing else of the PE in use would leave the PE as
// it is (pe_decide grants nothing, pushes and pops nothing, and its clock() changes nothing).
bool NocFabric::pe_involved(int p, bool waiting_dma) const {
  const PeNode& n = pes_[static_cast<std::size_t>(p)];
  if (n.mla.busy() || n.slave != PeNode::Slave::Idle || n.sram_busy || n.rsp_slave || n.rsp_dma) return true;
  if (!n.out[0].empty() || !n.out[1].empty()) return true;
  const Router& r = *routers_[static_cast<std::size_t>(p / kPesPerQpe)];
  const int local = p % kPesPerQpe;
  if (!r.output(local * kNocClasses).empty() || !r.output(local * kNocClasses + 1).empty()) return true;
  return n.dma.busy() && (waiting_dma || !n.dma.waiting_only());
}

bool NocFabric::quiet() const {
  if (in_flight_ > 0) return false;
  for (const PeNode& n : pes_) {
    if (n.slave != PeNode::Slave::Idle || n.sram_busy || n.rsp_slave || n.rsp_dma) return false;
    if (!n.dma.waiting_only()) return false;
  }
  return true;
}

std::uint64_t NocFabric::next_release() const {
  std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
  for (const DramQueues& d : drams_)
    for (const auto& p : d.ports) {
      if (!p.data.empty()) next = std::min(next, p.data.front().release);
      if (!p.acks.empty()) next = std::min(next, p.acks.front().release);
    }
  // nothing due: the DMAs wait for nothing that will come (a hang, which the stream's watchdog ends)
  return next == std::numeric_limits<std::uint64_t>::max() ? clock_ : next;
}

}  // namespace s2
