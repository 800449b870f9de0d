#include "model/pe/dma.h"

#include "model/pe/dma_request.h"
#include "model/dram/dram.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <vector>

namespace s2 {

Dma::Dma(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes)
    : sc_module(name), dram("dram"), pe_(pe), sram_(sram), sram_bytes_(sram_bytes) {
  SC_HAS_PROCESS(Dma);
  SC_THREAD(run);
}

void Dma::start(const DmaTransfer& t, bool load) {
  if (busy_) throw std::logic_error("model DMA: started while busy");
  pending_ = t;
  pending_load_ = load;
  busy_ = true;
  start_event_.notify(sc_core::SC_ZERO_TIME);
}

void Dma::run() {
  while (true) {
    sc_core::wait(start_event_);
    transfer(pending_, pending_load_);
    busy_ = false;
    done_event.notify(sc_core::SC_ZERO_TIME);
  }
}

void Dma::set_timing(const sc_core::sc_time& pe_clock, const HwConfig& cfg, DmaFabric* fabric, int qpe) {
  pe_clock_ = pe_clock;
  dram_timing_ = DramTiming(cfg);
  clocks_ = cfg.dma;
  sram_access_cycles_ = static_cast<std::uint64_t>(cfg.sram_cycles_per_access());
  peer_booking_lines_ = static_cast<std::size_t>(cfg.model_peer_booking_lines);
  fabric_ = fabric;
  qpe_ = qpe;
}

std::uint64_t Dma::clock_of(const sc_core::sc_time& at) const { return static_cast<std::uint64_t>(std::llround(at / pe_clock_)); }

void Dma::wait_until(std::uint64_t cycle) {
  const std::uint64_t now = clock_of(sc_core::sc_time_stamp());
  if (cycle > now) sc_core::wait(pe_clock_ * static_cast<double>(cycle - now));
}

void Dma::transfer(const DmaTransfer& t, bool load) {
  if (t.remote.kind == MemoryRef::Kind::Sram) return transfer_with_peer(t, load);
  const auto lead = static_cast<std::uint64_t>(clocks_.request_lead_cycles);
  const auto line_lag = static_cast<std::uint64_t>(clocks_.line_lag_cycles);
  const auto idle_lag = static_cast<std::uint64_t>(clocks_.idle_lag_cycles);
  const auto ack_lag = static_cast<std::uint64_t>(clocks_.ack_lag_cycles);
  const auto ack_seen = static_cast<std::uint64_t>(clocks_.ack_seen_cycles);
  // the far end: a DRAM behind its router
  std::vector<int> out{qpe_}, back{qpe_};
  if (fabric_) {
    const Mesh& mesh = fabric_->noc().mesh();
    const int far = mesh.dram_router(t.remote.index, qpe_);
    out = mesh.route(qpe_, far);
    back = mesh.route(far, qpe_);
  }
  const auto pass = [&](const std::vector<int>& route, std::uint64_t clock) {
    if (!fabric_) return Noc::Passage{clock, clock};
    return fabric_->noc().pass(route, clock, clock_of(sc_core::sc_time_stamp()));
  };
  std::uint64_t done = clock_of(sc_core::sc_time_stamp());
  std::uint64_t last_write = 0;  // load: the clock the NoC slave wrote the latest line
  std::uint64_t load_arrival = 0;  // load: the clock its request (both packets) reached the DRAM; 0 = not sent
  // store: the clocks the rows in flight are acknowledged, oldest first
  std::deque<std::uint64_t> in_flight;
  std::vector<std::uint8_t> buffer;
  std::vector<DmaBeat> beats;
  tlm::tlm_generic_payload p;
  p.set_command(load ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
  auto* request = new DramRequestExtension;
  p.set_extension(request);  // the payload owns it
  for_each_dma_request(t, load, [&](const DmaRequest& q) {
    if (q.sram_end() > sram_bytes_) throw std::out_of_range("model DMA: SRAM address beyond the SRAM");
    beats.clear();
    for_each_dma_beat(q, [&](const DmaBeat& b) { beats.push_back(b); });
    std::uint64_t sent = 0;
    if (!load || !load_arrival) {
      if (!load) {
        // a row goes when fewer than store_requests_in_flight are unacknowledged; one acknowledged in clock c
        // frees its place from clock c + 1 (the RTL's counter)
        const std::uint64_t now = clock_of(sc_core::sc_time_stamp());
        while (!in_flight.empty() && in_flight.front() < now) in_flight.pop_front();
        const std::size_t most = static_cast<std::size_t>(clocks_.store_requests_in_flight);
        if (in_flight.size() >= most) wait_until(in_flight[in_flight.size() - most] + 1);
      }
      sent = clock_of(sc_core::sc_time_stamp());
      // same-clock requests reach the DRAM lowest PE first: PE p calls p delta cycles into the clock
      for (int i = 0; i < pe_; ++i) sc_core::wait(sc_core::SC_ZERO_TIME);
    }
    buffer.resize(q.bytes());
    auto each_part = [&](auto g) {
      for (const DmaBeat& b : beats)
        for (int i = 0; i < b.count; ++i) g(b.parts[static_cast<std::size_t>(i)]);
    };
    if (!load)
      each_part([&](const DmaBeat::Part& x) {
        std::copy(sram_ + x.lo, sram_ + x.hi, buffer.begin() + static_cast<std::ptrdiff_t>(x.offset));
      });
    request->range = q.dram();
    p.set_address(q.dram_addr);
    p.set_data_ptr(buffer.data());
    p.set_data_length(static_cast<unsigned>(q.bytes()));
    p.set_streaming_width(static_cast<unsigned>(q.bytes()));
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    // a load's request (its first plane, then its planes: two packets) reaches the far end request_lead_cycles
    // after its second packet passed the last router, and the DRAM takes its planes back to back (this
    // thread asks for them one after the other without yielding); a store's row once its last line has
    // (one line per clock after the header); each packet waits for room in every router it passes
    std::uint64_t store_lines_end = 0;  // store: the clock after the row's last line was sent
    std::uint64_t arrival = 0;
    if (load) {
      if (!load_arrival) {
        const Noc::Passage first = pass(out, sent);
        load_arrival = pass(out, std::max(sent + 1, first.first + 1)).last + lead;
      }
      arrival = load_arrival;
    } else {
      Noc::Passage last_packet = pass(out, sent);  // the header
      for (std::size_t i = 0; i < beats.size(); ++i) {
        last_packet = pass(out, std::max(sent + 2 + i, last_packet.first + 1));
      }
      store_lines_end = last_packet.first + 1;
      arrival = last_packet.last + lead;
    }
    sc_core::sc_time delay = pe_clock_ * static_cast<double>(arrival) - sc_core::sc_time_stamp();
    dram[static_cast<unsigned>(t.remote.index)]->b_transport(p, delay);
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
      throw std::out_of_range("model DMA: " + to_string(t.remote) + " address " + std::to_string(q.dram_addr) + " out of range");
    const std::uint64_t request_done = clock_of(sc_core::sc_time_stamp() + delay);
    if (load) {
      each_part([&](const DmaBeat::Part& x) {
        const auto from = buffer.begin() + static_cast<std::ptrdiff_t>(x.offset);
        std::copy(from, from + static_cast<std::ptrdiff_t>(x.hi - x.lo), sram_ + x.lo);
      });
      for (const DmaBeat& b : beats) {
        const std::uint64_t ready = dram_timing_.byte_ready(request->service, q.dram(), b.last_byte());
        last_write = std::max(pass(back, ready).last + line_lag, last_write + 1);
      }
      done = std::max(done, last_write + idle_lag);
    } else {
      const std::uint64_t ack = pass(back, request_done).last;
      in_flight.push_back(ack + ack_seen - 1);
      done = std::max(done, ack + ack_lag);
      wait_until(store_lines_end);  // the next header in the clock after the last line
    }
  });
  wait_until(done);
}

// A transfer with another PE's SRAM, line by line as rtl_stubs/dma_peer.sv moves it (dma.h). The data moves
// at once; the clocks follow the lines: each source line's clock in the DMA's line buffer, the clock the
// realigner takes it, and the clock it gives each destination line (written into the own SRAM, or sent).
void Dma::transfer_with_peer(const DmaTransfer& t, bool load) {
  if (!fabric_) throw std::logic_error("model DMA: a transfer with another PE's SRAM without a NoC");
  const int far_pe = t.remote.index;
  std::uint8_t* far = fabric_->sram(far_pe);
  const std::size_t far_bytes = fabric_->sram_bytes(far_pe);
  struct Row {
    std::uint64_t own, far;
  };
  std::vector<Row> rows;
  if (t.row_bytes == 0) return;  // nothing to move (the RTL's DMA goes idle at once)
  for (std::uint64_t z = 0; z < t.planes; ++z)
    for (std::uint64_t y = 0; y < t.rows; ++y)
      rows.push_back({t.sram_addr + z * t.sram_plane_stride + y * t.sram_row_stride,
                      t.dram_addr + z * t.dram_plane_stride + y * t.dram_row_stride});
  for (const Row& r : rows) {
    if (r.own + t.row_bytes > sram_bytes_) throw std::out_of_range("model DMA: SRAM address beyond the SRAM");
    if (r.far + t.row_bytes > far_bytes)
      throw std::out_of_range("model DMA: " + to_string(t.remote) + " address " + std::to_string(r.far) + " out of range");
  }
  for (const Row& r : rows) {
    if (load) std::copy(far + r.far, far + r.far + t.row_bytes, sram_ + r.own);
    else std::copy(sram_ + r.own, sram_ + r.own + t.row_bytes, far + r.far);
  }

  const Mesh& mesh = fabric_->noc().mesh();
  const std::vector<int> out = mesh.route(qpe_, far_pe / kPesPerQpe), back = mesh.route(far_pe / kPesPerQpe, qpe_);
  const std::uint64_t now = clock_of(sc_core::sc_time_stamp());
  const auto pass = [&](const std::vector<int>& route, std::uint64_t clock) {
    return fabric_->noc().pass(route, clock, clock_of(sc_core::sc_time_stamp())).last;
  };
  NocSlaveTiming& slave = fabric_->noc_slave(far_pe);
  const auto access = sram_access_cycles_;
  const auto lead = static_cast<std::uint64_t>(clocks_.peer_lead_cycles);
  const auto line_lag = static_cast<std::uint64_t>(clocks_.peer_line_lag_cycles);
  const auto ack_lag = static_cast<std::uint64_t>(clocks_.peer_ack_lag_cycles);
  const auto in_flight = static_cast<std::size_t>(clocks_.peer_reads_in_flight);
  const auto rows_in_flight = static_cast<std::size_t>(clocks_.store_requests_in_flight);
  const auto realignment = [&](const Row& r) {
    return load ? LineRealignment{r.far % 16, r.own % 16, t.row_bytes} : LineRealignment{r.own % 16, r.far % 16, t.row_bytes};
  };

  std::vector<std::uint64_t> buffered, taken;  // per source line: the clock the realigner may take it, and took it
  std::vector<std::uint64_t> acked;            // store: per row, the clock the DMA sees its acknowledgement
  // the realigner: row `row`, `row_taken` source lines taken and `row_given` destination lines given in it
  std::size_t row = 0;
  std::uint64_t row_taken = 0, row_given = 0, last_take = 0, last_give = 0, row_floor = now;
  std::uint64_t row_first_line = 0;  // the row's first source line's index in `taken`
  const auto give = [&](std::uint64_t clock, bool last_of_row) {
    last_give = clock;
    if (load) return;  // written through the DMA's SRAM port
    const std::uint64_t arrival = pass(out, clock) + lead;
    const std::uint64_t written = slave.write(arrival, access, last_of_row);
    if (last_of_row) acked.push_back(pass(back, written + 1) + ack_lag);
  };
  // realigns what the buffer holds, up to source line `known` (its clocks known)
  const auto realign = [&](std::size_t known) {
    while (row < rows.size()) {
      const LineRealignment g = realignment(rows[row]);
      // every destination line whose source lines are in
      while (row_given < g.dst_lines() && g.last_needed(row_given) < row_taken) {
        const std::uint64_t need = taken[static_cast<std::size_t>(row_first_line + g.last_needed(row_given))];
        give(std::max(row_given ? last_give + 1 : row_floor, need + 1), row_given + 1 == g.dst_lines());
        ++row_given;
      }
      if (row_given == g.dst_lines()) {  // the row's last line given: the next row from the next clock
        row_floor = last_give + 1;
        row_first_line += row_taken;
        ++row;
        row_taken = row_given = 0;
        continue;
      }
      if (taken.size() >= known) return;
      // a source line is taken once the lines given so far no longer need the older one held
      const std::uint64_t c = std::max({buffered[taken.size()], taken.empty() ? now : last_take + 1, row_given ? last_give : row_floor});
      taken.push_back(c);
      last_take = c;
      ++row_taken;
    }
  };

  // the source lines, row by row: asked for (load) or read (store) one per clock
  std::uint64_t issue = now;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const LineRealignment g = realignment(rows[r]);
    for (std::uint64_t i = 0; i < g.src_lines(); ++i) {
      const std::size_t n = buffered.size();
      // the lines go out a few at a time in simulated time, so that DMAs sharing routers and NoC slaves
      // book them in turns, as the routers' round robin serves them, not one whole transfer after another
      if (n > 0 && n % peer_booking_lines_ == 0) {
        realign(n);  // (not before the clock of the next packet to book: the next line asked for or given)
        wait_until(load ? issue : std::min(issue, last_give + 1));
      }
      if (n >= in_flight) {
        realign(n);
        issue = std::max(issue, taken[n - in_flight] + 1);
      }
      if (!load && i == 0 && r >= rows_in_flight) {
        realign(n);
        issue = std::max(issue, acked[r - rows_in_flight] + 1);
      }
      if (load) {
        const std::uint64_t grant = slave.read(pass(out, issue) + lead, access);
        buffered.push_back(pass(back, grant + access) + line_lag);
      } else {
        buffered.push_back(issue + access + 1);
      }
      ++issue;
    }
  }
  realign(buffered.size());
  if (rows.empty()) return;
  wait_until((load ? last_give : acked.back()) + static_cast<std::uint64_t>(clocks_.peer_idle_lag_cycles));
}

}  // namespace s2
