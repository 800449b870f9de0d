#include "model/pe/dma_engine.h"

#include <algorithm>

#include "model/pe/dma_request.h"

namespace s2 {

void DmaEngine::start(const DmaTransfer& t, bool load, bool far_is_pe) {
  t_ = t;
  store_ = !load;
  outstanding_ = 0;
  row_i_ = plane_i_ = 0;
  row_sram_ = plane_sram_ = t.sram_addr;
  lines_to_read_ = lines_to_send_ = 0;
  inflight_ = hold_valid_ = false;
  if (t.rows == 0 || t.planes == 0 || t.row_bytes == 0) {
    state_ = State::Drain;
    return;
  }
  if (!far_is_pe) {
    state_ = load ? State::LoadReq : State::StoreHdr;
    return;
  }
  state_ = State::Peer;
  active_ = true;
  issued_all_ = written_all_ = false;
  // the side lines are read from (far for a load, own for a store) and the side they are written to
  const std::uint64_t src = store_ ? t.sram_addr : t.dram_addr, dst = store_ ? t.dram_addr : t.sram_addr;
  rd_plane_base_ = rd_row_addr_ = src;
  rd_row_ = rd_plane_ = 0;
  rd_lines_left_ = 0;
  wr_src_row_ = wr_src_plane_ = src;
  wr_dst_row_ = wr_dst_plane_ = dst;
  wr_row_ = wr_plane_ = 0;
  taken_ = given_ = 0;
  // (held_, rows_open_ and the buffer are empty between transfers)
}

std::uint32_t DmaEngine::store_row_lines() const {
  return static_cast<std::uint32_t>((row_sram_ + t_.row_bytes - 1) / 16 - row_sram_ / 16 + 1);
}

DmaEngine::PeerComb DmaEngine::peer_comb() const {
  PeerComb c;
  c.rd_row_lines = static_cast<std::uint32_t>((rd_row_addr_ + t_.row_bytes - 1) / 16 - rd_row_addr_ / 16 + 1);
  c.rd_row_start = rd_lines_left_ == 0;
  c.rd_go = active_ && !issued_all_ && held_ < reads_in_flight_ && !(store_ && c.rd_row_start && rows_open_ >= rows_in_flight_);
  c.rd_row_end = c.rd_row_start ? c.rd_row_lines == 1 : rd_lines_left_ == 1;
  const LineRealignment g{wr_src_row_ % 16, wr_dst_row_ % 16, t_.row_bytes};
  c.src_lines = g.src_lines();
  c.dst_lines = g.dst_lines();
  c.due_now = given_ < c.dst_lines && taken_ != 0 && g.last_needed(given_) < taken_;
  c.due_next = given_ + 1 < c.dst_lines && taken_ != 0 && g.last_needed(given_ + 1) < taken_;
  c.dst_last = given_ + 1 == c.dst_lines;
  return c;
}

DmaEngine::Outputs DmaEngine::outputs(bool pkt_ready, bool s_rsp) const {
  Outputs o;
  switch (state_) {
    case State::LoadReq:
      o.pkt_valid = true;
      o.kind = PacketKind::DramRd;
      break;
    case State::LoadPlanes:
      o.pkt_valid = true;
      o.kind = PacketKind::DramRdx;
      break;
    case State::StoreHdr:
      o.pkt_valid = outstanding_ < rows_in_flight_;
      o.kind = PacketKind::DramWr;
      break;
    case State::StoreLines: {
      const bool data_now = inflight_ && s_rsp;
      o.pkt_valid = hold_valid_ || data_now;
      o.kind = PacketKind::DramWdata;
      o.s_valid = lines_to_read_ != 0 && !hold_valid_ && (!inflight_ || (s_rsp && pkt_ready));
      break;
    }
    case State::Peer: {
      const PeerComb c = peer_comb();
      if (store_) {
        o.s_valid = c.rd_go;  // own lines read
        o.pkt_valid = active_ && c.due_now;
        o.kind = c.dst_last ? PacketKind::MemWra : PacketKind::MemWr;
      } else {
        o.pkt_valid = c.rd_go;  // far lines asked for
        o.kind = PacketKind::MemRd;
        o.s_valid = active_ && c.due_now;  // own lines written
        o.s_we = true;
      }
      break;
    }
    default: break;
  }
  return o;
}

void DmaEngine::clock(const Inputs& in) {
  const Outputs o = outputs(in.pkt_ready, in.s_rsp);
  const bool sent = o.pkt_valid && in.pkt_ready;
  const State was = state_;
  if (was == State::Peer) {
    const PeerComb c = peer_comb();
    const bool rd_fire = c.rd_go && (store_ ? in.s_grant : in.pkt_ready);
    const bool dst_fire = active_ && c.due_now && (store_ ? in.pkt_ready : in.s_grant);
    const bool src_valid = buffered_ > 0;
    const bool src_take = src_valid && taken_ < c.src_lines && (!c.due_now || (dst_fire && !c.due_next));
    const bool buf_push = store_ ? in.s_rsp : in.rd_rsp;
    // the side lines are read from (far for a load, own for a store) and the side they are written to
    const std::uint64_t src_row_stride = store_ ? t_.sram_row_stride : t_.dram_row_stride;
    const std::uint64_t src_plane_stride = store_ ? t_.sram_plane_stride : t_.dram_plane_stride;
    const std::uint64_t dst_row_stride = store_ ? t_.dram_row_stride : t_.sram_row_stride;
    const std::uint64_t dst_plane_stride = store_ ? t_.dram_plane_stride : t_.sram_plane_stride;
    const bool was_active = active_;
    const std::uint32_t rows_open_before = rows_open_;
    const bool written_all_before = written_all_;
    if (rd_fire) {
      if (c.rd_row_end) {
        rd_lines_left_ = 0;
        if (rd_row_ + 1 == t_.rows) {
          rd_row_ = 0;
          if (rd_plane_ + 1 == t_.planes) issued_all_ = true;
          ++rd_plane_;
          rd_plane_base_ += src_plane_stride;
          rd_row_addr_ = rd_plane_base_;
        } else {
          ++rd_row_;
          rd_row_addr_ += src_row_stride;
        }
      } else {
        rd_lines_left_ = (c.rd_row_start ? c.rd_row_lines : rd_lines_left_) - 1;
      }
    }
    held_ = held_ + (rd_fire ? 1 : 0) - (src_take ? 1 : 0);
    rows_open_ = rows_open_ + ((store_ && rd_fire && c.rd_row_start) ? 1 : 0) - (in.ack ? 1 : 0);
    buffered_ = buffered_ + (buf_push ? 1 : 0) - (src_take ? 1 : 0);
    if (src_take) ++taken_;
    if (dst_fire) {
      if (c.dst_last) {
        taken_ = given_ = 0;  // (a line taken in this edge is lost to the count, as in the RTL's register)
        if (wr_row_ + 1 == t_.rows) {
          wr_row_ = 0;
          if (wr_plane_ + 1 == t_.planes) written_all_ = true;
          ++wr_plane_;
          wr_src_plane_ += src_plane_stride;
          wr_src_row_ = wr_src_plane_;
          wr_dst_plane_ += dst_plane_stride;
          wr_dst_row_ = wr_dst_plane_;
        } else {
          ++wr_row_;
          wr_src_row_ += src_row_stride;
          wr_dst_row_ += dst_row_stride;
        }
      } else {
        ++given_;
      }
    }
    if (was_active && written_all_before && rows_open_before == 0) active_ = false;
    if (!was_active) state_ = State::Idle;  // dma.sv: the peer engine no longer busy
    return;
  }

  const bool granted = o.s_valid && in.s_grant;
  const bool request_sent = was == State::StoreLines && sent && lines_to_send_ == 1;
  if (was == State::LoadReq && sent) state_ = State::LoadPlanes;
  if (was == State::LoadPlanes && sent) state_ = State::Drain;
  if (request_sent) {
    const bool last_row_of_plane = row_i_ + 1 == t_.rows, last_plane = plane_i_ + 1 == t_.planes;
    if (last_row_of_plane && last_plane) {
      state_ = State::Drain;
    } else {
      state_ = State::StoreHdr;
      if (last_row_of_plane) {
        row_i_ = 0;
        ++plane_i_;
        plane_sram_ += t_.sram_plane_stride;
        row_sram_ = plane_sram_;
      } else {
        ++row_i_;
        row_sram_ += t_.sram_row_stride;
      }
    }
  }
  if (was == State::StoreHdr && sent) {
    state_ = State::StoreLines;
    lines_to_read_ = lines_to_send_ = store_row_lines();
  } else if (was == State::StoreLines) {
    if (granted) --lines_to_read_;
    if (sent) --lines_to_send_;
  }
  if (was == State::StoreLines) {
    const bool data_now = inflight_ && in.s_rsp;
    inflight_ = granted || (inflight_ && !in.s_rsp);
    if (hold_valid_ && sent) hold_valid_ = false;
    else if (data_now && !sent) hold_valid_ = true;
  }
  const std::uint32_t more = ((was == State::LoadPlanes || was == State::StoreHdr) && sent) ? 1 : 0;
  const std::uint32_t less = (in.request_done || in.ack) ? 1 : 0;
  const std::uint32_t outstanding_before = outstanding_;
  outstanding_ = outstanding_ + more - less;
  if (was == State::Drain && outstanding_before == 0) state_ = State::Idle;
}

bool DmaEngine::waiting_only() const {
  switch (state_) {
    case State::Idle: return true;
    case State::Drain: return outstanding_ > 0;
    case State::StoreHdr: return outstanding_ >= rows_in_flight_;
    case State::Peer: {
      if (!active_ || buffered_ > 0) return false;
      const PeerComb c = peer_comb();
      return !c.rd_go && !c.due_now && !(written_all_ && rows_open_ == 0);
    }
    default: return false;
  }
}

std::string DmaEngine::describe() const {
  static const char* names[] = {"idle", "load request", "load planes", "store row header", "store row lines",
                                "draining", "with another PE's SRAM"};
  std::string d = std::string(store_ ? "store, " : "load, ") + names[static_cast<int>(state_)] + ", " +
                  std::to_string(outstanding_) + " requests outstanding";
  if (state_ == State::Peer)
    d += ", " + std::to_string(held_) + " lines held, " + std::to_string(buffered_) + " buffered, " + std::to_string(rows_open_) +
         " rows unacknowledged";
  return d;
}

}  // namespace s2
