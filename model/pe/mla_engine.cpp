#include "model/pe/mla_engine.h"

#include <algorithm>
#include <stdexcept>

namespace s2 {

void MlaEngine::configure(const HwConfig& cfg) {
  L_ = static_cast<std::uint64_t>(cfg.sram_cycles_per_access());
  depth_ = static_cast<std::uint64_t>(cfg.operand_a_buffer_words);
  mac_rows_ = static_cast<std::uint64_t>(cfg.mac_rows);
  word_mask_ = 16 / mac_rows_ - 1;  // steps per 128-bit operand-A word, less one (4, 8 or 16 steps)
  r_ = Regs{};
}

void MlaEngine::load(const TileShape& sh) {
  r_.rows = sh.rows;
  r_.wf = sh.steps_per_row;
  r_.refills = sh.refills_per_row();
  r_.steps = sh.steps();
  r_.a_words = sh.a_words(mac_rows_);
  r_.writes = sh.writes;
}

void MlaEngine::restart() {
  r_.stage = Stage::Setup;
  r_.step = r_.row = r_.kx = 0;
  r_.fb_row = r_.fb_j = 0;
  r_.fb_done = r_.rows == 0;
  r_.b_inflight = r_.b_stage = false;
  r_.a_issued = r_.a_outstanding = r_.a_count = 0;
  r_.out_k = 0;
  r_.out_wait = false;
}

void MlaEngine::start(const TaskTiles& tiles, std::uint64_t clock) {
  if (busy()) throw std::logic_error("model MLA: started while busy");
  row_tiles_ = tiles.row;
  rows_total_ = tiles.rows_total();
  via_noc_ = !tiles.row.empty() && tiles.row.front().a_via_noc;
  begin_ = clock;
  const std::uint64_t local_a_arrive = r_.local_a_arrive;  // (a read of the last task's may still complete)
  r_ = Regs{};
  r_.local_a_arrive = local_a_arrive;
  if (rows_total_ == 0 || row_tiles_.empty()) return;  // nothing to compute: it stays idle
  load(row_tiles_.front());
  restart();
}

MlaEngine::Decision MlaEngine::decide(std::uint64_t t, bool a_arrive, bool req_room) const {
  Decision x;
  if (t < begin_) return x;
  if (r_.stage == Stage::Compute) {
    x.a_arrive = via_noc_ ? a_arrive : (r_.local_a_arrive == t);
    x.b_rsp = r_.b_inflight && r_.b_arrive == t;
    const bool need_b = r_.kx == 0 || ((r_.kx - 1) & 3) == 0;  // a row's first step, then every fourth
    x.a_ok = r_.a_count > 0 || x.a_arrive;
    x.fire = x.a_ok && (!need_b || r_.b_stage || x.b_rsp);
    x.last_kx = r_.kx == r_.wf - 1;
    x.last_step = r_.step == r_.steps - 1;
    const std::uint64_t row_after = r_.row + ((x.fire && x.last_kx) ? 1 : 0);
    x.a_pop = x.fire && ((r_.step & word_mask_) == word_mask_ || x.last_step);
    x.consume_b = x.fire && need_b;
    const bool slot_free = (!r_.b_inflight || x.b_rsp) && (r_.b_stage ? x.consume_b : (!x.b_rsp || x.consume_b));
    // the next row's first word is asked for in the clock of the row's last step
    const bool b_req = !r_.fb_done && slot_free && r_.fb_row <= row_after;
    const bool a_room = r_.a_outstanding + r_.a_count - (x.a_pop ? 1 : 0) < depth_ && r_.a_issued < r_.a_words;
    if (!via_noc_ && a_room) x.port = PortUse::OperandA;
    else if (b_req) x.port = PortUse::OperandB;
    x.push_a_read = via_noc_ && a_room && req_room;
  } else if (r_.stage == Stage::Output) {
    x.port = PortUse::Result;
  }
  return x;
}

MlaEngine::Events MlaEngine::clock(std::uint64_t t, const Decision& x, bool granted) {
  Events ev;
  if (t < begin_) return ev;
  Regs& r = r_;
  switch (r.stage) {
    case Stage::Idle:
      break;
    case Stage::Setup:
      ++r.phases.setup;
      r.stage = Stage::Compute;
      break;
    case Stage::Compute: {
      ++r.phases.compute;
      const bool grant_a = granted && x.port == PortUse::OperandA;
      const bool grant_b = granted && x.port == PortUse::OperandB;
      if (grant_a) {
        r.local_a_arrive = t + L_;
        ++r.a_issued;
        ++r.a_outstanding;
      }
      if (x.push_a_read) {
        ++r.a_issued;
        ++r.a_outstanding;
      }
      if (grant_b) {
        r.b_inflight = true;
        r.b_arrive = t + L_;
        if (r.fb_j == r.refills) {
          r.fb_j = 0;
          if (++r.fb_row == r.rows) r.fb_done = true;
        } else {
          ++r.fb_j;
        }
      } else if (x.b_rsp) {
        r.b_inflight = false;
      }
      if (x.b_rsp && !(x.consume_b && !r.b_stage)) r.b_stage = true;
      else if (x.consume_b && r.b_stage) r.b_stage = false;
      if (x.a_arrive) {
        --r.a_outstanding;
        ++r.a_count;
      }
      if (x.a_pop) --r.a_count;
      if (x.fire) {
        ++r.step;
        if (x.last_kx) {
          r.kx = 0;
          ++r.row;
        } else {
          ++r.kx;
        }
        if (x.last_step) r.stage = Stage::Output;
      } else if (!x.a_ok) {
        ++r.phases.a_wait;
      } else {
        ++r.phases.b_wait;
      }
      break;
    }
    case Stage::Output:
      ++r.phases.output;
      if (granted && x.port == PortUse::Result && ++r.out_k == r.writes) {
        r.stage = Stage::OutWait;
        r.out_wait = L_ > 1;  // the last write holds the port a clock more
      }
      break;
    case Stage::OutWait:
      ++r.phases.output;
      if (r.out_wait) {
        r.out_wait = false;
        break;
      }
      ev.tile_end = true;
      if (++r.col == row_tiles_.size()) {
        r.col = 0;
        ++r.rows_done;
        ev.row_end = true;
      }
      if (r.rows_done == rows_total_) {
        ev.done = true;
        r.stage = Stage::Idle;
        break;
      }
      load(row_tiles_[r.col]);
      restart();
      break;
  }
  return ev;
}

void MlaEngine::count_quiet(std::uint64_t n, const Decision& d) {
  if (r_.stage == Stage::Compute) {
    r_.phases.compute += n;
    (d.a_ok ? r_.phases.b_wait : r_.phases.a_wait) += n;
  } else if (r_.stage == Stage::Output) {
    r_.phases.output += n;
  }
}

std::uint64_t MlaEngine::wakes_at(std::uint64_t now) const {
  if (now < begin_) return begin_;
  switch (r_.stage) {
    case Stage::Setup:
    case Stage::OutWait:
      return now;
    case Stage::Compute: {
      std::uint64_t until = ~0ull;
      if (r_.b_inflight && r_.b_arrive >= now) until = std::min(until, r_.b_arrive);
      if (r_.local_a_arrive != ~0ull && r_.local_a_arrive >= now) until = std::min(until, r_.local_a_arrive);
      return until;
    }
    default:
      return ~0ull;
  }
}

void MlaEngine::shift_times(std::uint64_t dt) {
  r_.b_arrive += dt;
  if (r_.local_a_arrive != ~0ull) r_.local_a_arrive += dt;
  begin_ += dt;
}

MlaEngine::Counters MlaEngine::counters() const {
  return {r_.step, r_.row, r_.fb_row, r_.a_issued, r_.phases.compute, r_.phases.a_wait, r_.phases.b_wait};
}

void MlaEngine::append_state(std::vector<std::int64_t>& key, std::uint64_t now, std::uint64_t lead_row) const {
  auto rel = [&](std::uint64_t v) { return v > now ? std::int64_t(v - now) : 0; };
  key.insert(key.end(),
             {std::int64_t(r_.stage), std::int64_t(r_.col), std::int64_t(r_.kx), std::int64_t(r_.row) - std::int64_t(lead_row),
              std::int64_t(r_.fb_row) - std::int64_t(r_.row), std::int64_t(r_.fb_j), r_.fb_done, r_.b_inflight, r_.b_stage,
              r_.b_inflight ? rel(r_.b_arrive) : 0,
              std::int64_t(r_.a_issued * 16) - std::int64_t(r_.step * mac_rows_), std::int64_t(r_.a_outstanding),
              std::int64_t(r_.a_count), r_.local_a_arrive != ~0ull && r_.local_a_arrive >= now ? rel(r_.local_a_arrive) + 1 : 0,
              std::int64_t(r_.step & word_mask_)});
}

void MlaEngine::repeat_period(std::uint64_t n, const Counters& mark) {
  const Counters c = counters();
  r_.step += n * (c[0] - mark[0]);
  r_.row += n * (c[1] - mark[1]);
  r_.fb_row += n * (c[2] - mark[2]);
  r_.a_issued += n * (c[3] - mark[3]);
  r_.phases.compute += n * (c[4] - mark[4]);
  r_.phases.a_wait += n * (c[5] - mark[5]);
  r_.phases.b_wait += n * (c[6] - mark[6]);
}

}  // namespace s2
