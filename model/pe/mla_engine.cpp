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
