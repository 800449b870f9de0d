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
  fabric_ = fabric;
  qpe_ = qpe;
}

void Dma::transfer(const DmaTransfer& t, bool load) {
  const auto clock_of = [&](const sc_core::sc_time& at) { return static_cast<std::uint64_t>(std::llround(at / pe_clock_)); };
  // the far end: a DRAM behind its router, or another PE's SRAM behind its QPE's router
  const bool to_sram = t.remote.kind == MemoryRef::Kind::Sram;
  const auto lead = static_cast<std::uint64_t>(clocks_.request_lead_cycles);
  const auto line_lag = static_cast<std::uint64_t>(clocks_.line_lag_cycles);
  const auto idle_lag = static_cast<std::uint64_t>(clocks_.idle_lag_cycles);
  const auto ack_lag = static_cast<std::uint64_t>(clocks_.ack_lag_cycles);
  const auto ack_seen = static_cast<std::uint64_t>(clocks_.ack_seen_cycles);
  if (to_sram && !fabric_) throw std::logic_error("model DMA: a transfer to another PE's SRAM without a NoC");
  std::vector<int> out{qpe_}, back{qpe_};
  if (fabric_) {
    const Mesh& mesh = fabric_->noc().mesh();
    const int far = to_sram ? t.remote.index / kPesPerQpe : mesh.dram_router(t.remote.index, qpe_);
    out = mesh.route(qpe_, far);
    back = mesh.route(far, qpe_);
  }
  const auto pass = [&](const std::vector<int>& route, std::uint64_t clock) {
    if (!fabric_) return Noc::Passage{clock, clock};
    return fabric_->noc().pass(route, clock, clock_of(sc_core::sc_time_stamp()));
  };
  DramTiming* far_port = to_sram ? &fabric_->sram_port(t.remote.index) : &dram_timing_;
  std::uint8_t* far_sram = to_sram ? fabric_->sram(t.remote.index) : nullptr;
  const std::size_t far_sram_bytes = to_sram ? fabric_->sram_bytes(t.remote.index) : 0;
  const auto wait_until = [&](std::uint64_t cycle) {
    const std::uint64_t now = clock_of(sc_core::sc_time_stamp());
    if (cycle > now) sc_core::wait(pe_clock_ * static_cast<double>(cycle - now));
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
    std::uint64_t arrival = 0, first_line_arrival = 0;
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
        if (i == 0) first_line_arrival = last_packet.last + lead;
      }
      store_lines_end = last_packet.first + 1;
      arrival = last_packet.last + lead;
    }
    std::uint64_t request_done = 0;
    if (to_sram) {
      // the other PE's NoC slave reads or writes its SRAM line by line
      const DramRange r = q.dram();
      if (r.end() > far_sram_bytes)
        throw std::out_of_range("model DMA: " + to_string(t.remote) + " address " + std::to_string(q.dram_addr) + " out of range");
      for (std::uint64_t k = 0; k < r.rows; ++k) {
        std::uint8_t* row = far_sram + r.row_addr(k);
        if (load) std::copy(row, row + r.row_bytes, buffer.begin() + static_cast<std::ptrdiff_t>(k * r.row_bytes));
        else std::copy(buffer.begin() + static_cast<std::ptrdiff_t>(k * r.row_bytes),
                       buffer.begin() + static_cast<std::ptrdiff_t>((k + 1) * r.row_bytes), row);
      }
      // a load is read once its request is in; a store's lines are written as they come (a DRAM takes a
      // row once it holds all of it), the last one after it arrived
      request->service = far_port->serve(load ? arrival : std::max(first_line_arrival, sent), r);
      request_done = far_port->done(request->service);
      if (!load) request_done = std::max(request_done, arrival + far_port->cycles_per_op() + far_port->latency_cycles());
    } else {
      sc_core::sc_time delay = pe_clock_ * static_cast<double>(arrival) - sc_core::sc_time_stamp();
      dram[static_cast<unsigned>(t.remote.index)]->b_transport(p, delay);
      if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::out_of_range("model DMA: " + to_string(t.remote) + " address " + std::to_string(q.dram_addr) + " out of range");
      request_done = clock_of(sc_core::sc_time_stamp() + delay);
    }
    if (load) {
      each_part([&](const DmaBeat::Part& x) {
        const auto from = buffer.begin() + static_cast<std::ptrdiff_t>(x.offset);
        std::copy(from, from + static_cast<std::ptrdiff_t>(x.hi - x.lo), sram_ + x.lo);
      });
      for (const DmaBeat& b : beats) {
        const std::uint64_t ready = far_port->byte_ready(request->service, q.dram(), b.last_byte());
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

}  // namespace s2
