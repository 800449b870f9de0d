#include "model/pe/mla_engine.h"

#include <stdexcept>

namespace s2 {

void MlaEngine::configure(const HwConfig& cfg) {
  L_ = static_cast<std::uint64_t>(cfg.sram_cycles_per_access());
  depth_ = static_cast<std::uint64_t>(cfg.operand_a_buffer_words);
  mac_rows_ = static_cast<std::uint64_t>(cfg.mac_rows);
  word_mask_ = 16 / mac_rows_ - 1;  // steps per 128-bit operand-A word, less one (4, 8 or 16 steps)
  stage_ = Stage::Idle;
}

void MlaEngine::load(const TileShape& sh) {
  rows_ = sh.rows;
  wf_ = sh.steps_per_row;
  refills_ = wf_ > 1 ? (wf_ + 2) / 4 : 0;
  steps_ = rows_ * wf_;
  a_words_ = (steps_ * mac_rows_ + 15) / 16;
  writes_ = sh.writes;
}

void MlaEngine::restart() {
  stage_ = Stage::Setup;
  step_ = row_ = kx_ = 0;
  fb_row_ = fb_j_ = 0;
  fb_done_ = rows_ == 0;
  b_inflight_ = b_stage_ = false;
  a_issued_ = a_outstanding_ = a_count_ = 0;
  out_k_ = 0;
  out_wait_ = false;
}

void MlaEngine::start(const TaskTiles& tiles, std::uint64_t clock) {
  if (busy()) throw std::logic_error("model MLA: started while busy");
  row_tiles_ = tiles.row;
  rows_total_ = tiles.rows_total();
  via_noc_ = !tiles.row.empty() && tiles.row.front().a_via_noc;
  col_ = 0;
  rows_done_ = tiles_done_ = 0;
  phases_ = {};
  begin_ = clock;
  local_a_arrive_ = ~0ull;
  if (rows_total_ == 0 || row_tiles_.empty()) return;  // nothing to compute: it stays idle
  load(row_tiles_.front());
  restart();
}

MlaEngine::Decision MlaEngine::decide(std::uint64_t t, bool a_arrive, bool req_room) const {
  Decision x;
  if (t < begin_) return x;
  if (stage_ == Stage::Compute) {
    x.a_arrive = via_noc_ ? a_arrive : (local_a_arrive_ == t);
    x.b_rsp = b_inflight_ && b_arrive_ == t;
    const bool need_b = kx_ == 0 || ((kx_ - 1) & 3) == 0;  // a row's first step, then every fourth
    x.a_ok = a_count_ > 0 || x.a_arrive;
    x.fire = x.a_ok && (!need_b || b_stage_ || x.b_rsp);
    x.last_kx = kx_ == wf_ - 1;
    x.last_step = step_ == steps_ - 1;
    const std::uint64_t row_after = row_ + ((x.fire && x.last_kx) ? 1 : 0);
    x.a_pop = x.fire && ((step_ & word_mask_) == word_mask_ || x.last_step);
    x.consume_b = x.fire && need_b;
    const bool slot_free = (!b_inflight_ || x.b_rsp) && (b_stage_ ? x.consume_b : (!x.b_rsp || x.consume_b));
    const bool b_req = !fb_done_ && slot_free && fb_row_ <= row_after;  // the next row's first word in the row's last step
    const bool a_room = a_outstanding_ + a_count_ - (x.a_pop ? 1 : 0) < depth_ && a_issued_ < a_words_;
    if (!via_noc_ && a_room) x.port = PortUse::OperandA;
    else if (b_req) x.port = PortUse::OperandB;
    x.push_a_read = via_noc_ && a_room && req_room;
  } else if (stage_ == Stage::Output) {
    x.port = PortUse::Result;
  }
  return x;
}

MlaEngine::Events MlaEngine::clock(std::uint64_t t, const Decision& x, bool granted) {
  Events ev;
  if (t < begin_) return ev;
  switch (stage_) {
    case Stage::Idle:
      break;
    case Stage::Setup:
      ++phases_.setup;
      stage_ = Stage::Compute;
      break;
    case Stage::Compute: {
      ++phases_.compute;
      const bool grant_a = granted && x.port == PortUse::OperandA;
      const bool grant_b = granted && x.port == PortUse::OperandB;
      if (grant_a) {
        local_a_arrive_ = t + L_;
        ++a_issued_;
        ++a_outstanding_;
      }
      if (x.push_a_read) {
        ++a_issued_;
        ++a_outstanding_;
      }
      if (grant_b) {
        b_inflight_ = true;
        b_arrive_ = t + L_;
        if (fb_j_ == refills_) {
          fb_j_ = 0;
          if (++fb_row_ == rows_) fb_done_ = true;
        } else {
          ++fb_j_;
        }
      } else if (x.b_rsp) {
        b_inflight_ = false;
      }
      if (x.b_rsp && !(x.consume_b && !b_stage_)) b_stage_ = true;
      else if (x.consume_b && b_stage_) b_stage_ = false;
      if (x.a_arrive) {
        --a_outstanding_;
        ++a_count_;
      }
      if (x.a_pop) --a_count_;
      if (x.fire) {
        ++step_;
        if (x.last_kx) {
          kx_ = 0;
          ++row_;
        } else {
          ++kx_;
        }
        if (x.last_step) stage_ = Stage::Output;
      } else if (!x.a_ok) {
        ++phases_.a_wait;
      } else {
        ++phases_.b_wait;
      }
      break;
    }
    case Stage::Output:
      ++phases_.output;
      if (granted && x.port == PortUse::Result && ++out_k_ == writes_) {
        stage_ = Stage::OutWait;
        out_wait_ = L_ > 1;  // the last write holds the port a clock more
      }
      break;
    case Stage::OutWait:
      ++phases_.output;
      if (out_wait_) {
        out_wait_ = false;
        break;
      }
      ++tiles_done_;
      if (++col_ == row_tiles_.size()) {
        col_ = 0;
        ++rows_done_;
        ev.row_end = true;
      }
      if (rows_done_ == rows_total_) {
        ev.done = true;
        stage_ = Stage::Idle;
        break;
      }
      load(row_tiles_[col_]);
      restart();
      break;
  }
  return ev;
}

}  // namespace s2
