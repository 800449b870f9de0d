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

void Mla::clear_activity() {
  activity_ = {};
  a_noc_bytes_.fill(0);
}

// The tiles of output row `row`, as the MLA ends them: per step each MAC unit once, as a MAC if its lanes
// hold a result, else as padding; per tile its operand-A words, its operand-B row-start and refill words
// (16-byte reads) and its result writes (16 bytes, every byte enabled).
void Mla::count_tiles(const TaskTiles& tiles, std::uint64_t row, int a_source) {
  const HwConfig& cfg = scheduler_.config();
  const std::uint64_t array = static_cast<std::uint64_t>(cfg.mac_rows) * static_cast<std::uint64_t>(cfg.mac_cols);
  for (std::uint64_t x = 0; x < tiles.column_tiles; ++x) {
    const TileShape& sh = tiles.row[x];
    const std::uint64_t useful = tiles.useful_macs(row, x, cfg);
    activity_.mac_ops += sh.steps() * useful;
    activity_.mac_padding_ops += sh.steps() * (array - useful);
    const std::uint64_t a_bytes = sh.a_words(static_cast<std::uint64_t>(cfg.mac_rows)) * 16;
    if (sh.a_via_noc) a_noc_bytes_[static_cast<std::size_t>(a_source)] += a_bytes;
    else activity_.sram_read_bytes_mla_a += a_bytes;
    activity_.sram_read_bytes_mla_b += std::uint64_t(sh.rows) * (1 + sh.refills_per_row()) * 16;
    activity_.sram_write_bytes_mla_out += std::uint64_t(sh.writes) * 16;
  }
}

void Mla::row_ended(std::uint64_t cycle, bool done, const PhaseCycles& phases) {
  row_end_cycles_.push_back(cycle);
  if (done) noc_phases_ = phases;
  row_event_.notify(sc_core::SC_ZERO_TIME);
}

void Mla::start(const TaskRegisters& regs, std::uint64_t start_cycle) {
  regs_ = regs;
  clear();
  started_ = true;
  start_cycle_ = start_cycle;
  row_end_cycles_.clear();
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
    const bool from_noc = scheduler_.rows_from_noc();
    // the START packets of the other PEs are still in flight: let them arrive before the QPE-wide
    // schedule is worked out (this wait does not enter the reported clocks)
    if (!from_noc) sc_core::wait(clk * static_cast<double>(scheduler_.timing_delay_cycles(pe_)));
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
    const bool computes = scheduler_.computes_data();
    if (computes) datapath_.load(t, layout, scheduler_.config(), a, b);
    else for (std::vector<ResultWrite>& w : row_writes_) w.clear();
    std::future<void> results = compute_worker().submit([this, computes] {
      if (computes)
        for (std::uint64_t r = 0; r < row_writes_.size(); ++r) datapath_.compute_row(r, row_writes_[r]);
    });
    PeTaskTiming timing;
    if (!from_noc) {
      sc_core::wait(sc_core::SC_ZERO_TIME);  // every PE hands its datapath work over before the schedule is made
      timing = scheduler_.timing_for(pe_);
    }
    compute_worker().wait(results);
    // each output row's end: from the schedule, or as the NoC fabric's MLA reaches it
    std::uint64_t due = start_cycle_;
    std::uint8_t* out = sram_.data();
    for (std::size_t r = 0; r < row_writes_.size(); ++r) {
      if (from_noc) {
        while (row_end_cycles_.empty()) sc_core::wait(row_event_);
        due = row_end_cycles_.front();
        row_end_cycles_.pop_front();
      } else {
        due = start_cycle_ + timing.row_end[r];
      }
      const sc_core::sc_time at = clk * static_cast<double>(due);
      if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
      for (const ResultWrite& w : row_writes_[r])
        for (int k = 0; k < 4; ++k) out[w.byte + k] = static_cast<std::uint8_t>(w.value >> (8 * k));
      tiles_ += tiles.column_tiles;
      count_tiles(tiles, r, t.a_source_pe(pe_) % kPesPerQpe);
    }
    steps_ = tiles.rows_total() * tiles.column_tiles * std::uint64_t(tiles.row.front().rows) *
             tiles.row.front().steps_per_row;
    phases_ = from_noc ? noc_phases_ : timing.phases;
    end_cycle_ = due;
    done_ = true;
    done_event.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace s2
