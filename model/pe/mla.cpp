#include "model/pe/mla.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "model/sram_layout.h"

namespace s2 {

namespace {

// One worker thread for the MLAs' datapath, so that computing results overlaps working out the schedule;
// a thread that waits for its results runs queued jobs meanwhile, so the PEs' datapaths use both cores
// (the simulation kernel itself stays single-threaded: the jobs touch no SystemC object).
class ComputeWorker {
 public:
  ComputeWorker() : thread_([this] { loop(); }) {}
  ~ComputeWorker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  std::future<void> submit(std::function<void()> job) {
    std::packaged_task<void()> task(std::move(job));
    std::future<void> f = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(task));
    }
    cv_.notify_one();
    return f;
  }
  // waits for `f`, running queued jobs in the meantime
  void wait(std::future<void>& f) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      std::packaged_task<void()> job;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (jobs_.empty()) break;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
    f.get();
  }

 private:
  void loop() {
    while (true) {
      std::packaged_task<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

ComputeWorker& compute_worker() {
  static ComputeWorker worker;
  return worker;
}

}  // namespace

Mla::Mla(sc_core::sc_module_name name, int pe, Sram& own, MlaScheduler& scheduler)
    : sc_module(name), noc("noc"), pe_(pe), sram_(own), scheduler_(scheduler) {
  SC_HAS_PROCESS(Mla);
  SC_THREAD(run);
}

void Mla::clear() {
  started_ = done_ = false;
  start_cycle_ = end_cycle_ = tiles_ = steps_ = 0;
  phases_ = {};
}

void Mla::start(const TaskRegisters& regs, std::uint64_t start_cycle) {
  regs_ = regs;
  clear();
  started_ = true;
  start_cycle_ = start_cycle;
  scheduler_.started(pe_, start_cycle, task_from_registers(regs, pe_));
  start_event_.notify(sc_core::SC_ZERO_TIME);
}

const std::uint8_t* Mla::sram_of(int pe) {
  if (pe == pe_) return sram_.data();
  tlm::tlm_generic_payload p;
  tlm::tlm_dmi dmi;
  p.set_address(qpe_addr::sram(pe, 0));
  p.set_command(tlm::TLM_READ_COMMAND);
  if (!noc->get_direct_mem_ptr(p, dmi) || !dmi.is_read_allowed())
    throw std::runtime_error("model: no DMI to the SRAM of PE " + std::to_string(pe));
  return dmi.get_dmi_ptr();
}

void Mla::run() {
  while (true) {
    sc_core::wait(start_event_);
    const sc_core::sc_time clk = scheduler_.pe_clock();
    const Task t = task_from_registers(regs_, pe_);
    // the START packets of the other PEs are still in flight: let them arrive before the QPE-wide
    // schedule is worked out (this wait does not enter the reported clocks)
    sc_core::wait(clk * static_cast<double>(scheduler_.timing_delay_cycles(pe_)));
    const std::uint8_t* a = sram_of(t.a_source_pe(pe_));
    const std::uint8_t* b = sram_.data();
    const TaskTiles tiles = task_tiles(t, scheduler_.config());
    // The datapath's results do not depend on the timing: they are computed on the compute worker while
    // this thread works out (or looks up) the QPE's schedule, then written row by row at their times.
    row_writes_.resize(tiles.rows_total());
    // the operands sit where the descriptor registers say (sizes and strides follow from the shape)
    SramLayout layout = sram_layout(t, scheduler_.config());
    layout.a_base = regs_[qpe_addr::kABase];
    layout.b_base = regs_[qpe_addr::kBBase];
    layout.o_base = regs_[qpe_addr::kOBase];
    datapath_.load(t, layout, scheduler_.config(), a, b);
    std::future<void> results = compute_worker().submit([this] {
      for (std::uint64_t r = 0; r < row_writes_.size(); ++r) datapath_.compute_row(r, row_writes_[r]);
    });
    sc_core::wait(sc_core::SC_ZERO_TIME);  // every PE hands its datapath work over before the schedule is made
    const PeTaskTiming timing = scheduler_.timing_for(pe_);  // a copy: a retime replaces the scheduler's
    scheduler_.joined(pe_);
    compute_worker().wait(results);
    {
      // its operand-A reads through the NoC, which the DMAs' packets meet there (noc/fabric.h)
      const TileShape& shape = tiles.row.front();
      const double words_per_tile = std::ceil(double(shape.rows) * shape.steps_per_row * scheduler_.config().mac_rows / 16.0);
      const double tiles_run = double(tiles.rows_total() * tiles.column_tiles);
      const double words = shape.a_via_noc ? words_per_tile * tiles_run : 0.0;
      // its own port: operand B (a row-start word per row, a refill word every 4 steps after the first), operand
      // A when local, and the result writes (rtl_stubs/README.md, "MLA tile loop")
      const double refills = shape.steps_per_row > 1 ? double((shape.steps_per_row + 2) / 4) : 0.0;
      const double port = (double(shape.rows) * (1.0 + refills) + (shape.a_via_noc ? 0.0 : words_per_tile) + double(shape.writes)) * tiles_run;
      const double clocks = double(std::max<std::uint64_t>(timing.cycles(), 1));
      scheduler_.mla_traffic(pe_, t.a_source_pe(pe_), words / clocks, std::min(port / clocks, 1.0));
    }
    // each output row's end (PE clocks, fractional after a retime); a retime keeps the rows done and
    // the part of the current row done, and gives the rest the durations of the new timing
    std::vector<double> due(timing.row_end.size());
    for (std::size_t r = 0; r < due.size(); ++r) due[r] = double(start_cycle_ + timing.row_end[r]);
    auto now_cycles = [&] { return sc_core::sc_time_stamp() / clk; };
    std::uint8_t* out = sram_.data();
    for (std::size_t r = 0; r < due.size(); ++r) {
      while (true) {
        const sc_core::sc_time at = clk * std::ceil(due[r]);
        if (at <= sc_core::sc_time_stamp()) break;
        sc_core::wait(at - sc_core::sc_time_stamp(), retime_event_);
        if (sc_core::sc_time_stamp() >= at) break;
        const PeTaskTiming& nt = scheduler_.timing_for(pe_);
        if (nt.row_end.size() != due.size()) continue;
        const double now = now_cycles(), begin = r ? due[r - 1] : double(start_cycle_);
        const double done = std::clamp((now - begin) / std::max(due[r] - begin, 1e-9), 0.0, 1.0);
        auto duration = [&](std::size_t k) { return double(nt.row_end[k] - (k ? nt.row_end[k - 1] : 0)); };
        due[r] = std::max(now, begin) + (1.0 - done) * duration(r);
        for (std::size_t k = r + 1; k < due.size(); ++k) due[k] = due[k - 1] + duration(k);
      }
      for (const ResultWrite& w : row_writes_[r])
        for (int k = 0; k < 4; ++k) out[w.byte + k] = static_cast<std::uint8_t>(w.value >> (8 * k));
      tiles_ += tiles.column_tiles;
    }
    steps_ = tiles.rows_total() * tiles.column_tiles * std::uint64_t(tiles.row.front().rows) *
             tiles.row.front().steps_per_row;
    phases_ = timing.phases;
    end_cycle_ = due.empty() ? start_cycle_ : static_cast<std::uint64_t>(std::ceil(due.back()));
    done_ = true;
    scheduler_.mla_traffic(pe_, pe_, 0.0, 0.0);
    scheduler_.finished(pe_);
    done_event.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace s2
