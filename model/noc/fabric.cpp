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
  }
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
  for (int edge = 0; edge < 2; ++edge) {
    const bool pe_edge = edge == 1;
    for (int q = 0; q < nq; ++q) decisions_[static_cast<std::size_t>(q)] = routers_[static_cast<std::size_t>(q)]->decide();
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
          const std::uint32_t out = routers_[static_cast<std::size_t>(q)]->outputs_nonempty();
          for (int local = 0; local < kPesPerQpe; ++local)
            if ((out >> (local * kNocClasses)) & 3u) mark(q * kPesPerQpe + local);
        }
        for (std::size_t w = 0; w < marked_.size(); ++w)
          for (std::uint64_t bits = marked_[w]; bits != 0; bits &= bits - 1) {
            const int p = static_cast<int>(w * 64) + std::countr_zero(bits);
            if (!pe_involved(p, false)) {
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
    for (int q = 0; q < nq; ++q) routers_[static_cast<std::size_t>(q)]->apply(decisions_[static_cast<std::size_t>(q)]);
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
  if (busy_dmas_ > 0 && busy_mlas_ == 0 && quiet()) clock_ = std::max(clock_, next_release());
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
