#include "mla.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "golden.h"
#include "sram_layout.h"

namespace s2 {

Task task_from_registers(const TaskRegisters& r, int pe) {
  Task t;
  t.id = "pe" + std::to_string(pe);
  t.op = (r[qpe_addr::kOp] & 1) ? Op::Mm : Op::Conv;
  const int wi = static_cast<int>(r[qpe_addr::kWi]), hi = static_cast<int>(r[qpe_addr::kHi]);
  const int d = static_cast<int>(r[qpe_addr::kD]);
  if (t.op == Op::Conv) {
    t.conv = {wi, hi, d, static_cast<int>(r[qpe_addr::kWf]), static_cast<int>(r[qpe_addr::kHf]),
              static_cast<int>(r[qpe_addr::kC]), 1};
  } else {
    t.mm = {wi, hi, d, wi};
  }
  const bool via_noc = (r[qpe_addr::kASrc] >> 2) & 1;
  const int src = static_cast<int>(r[qpe_addr::kASrc] & 3);
  // a convolution's operand A always goes through the NoC; "local" and neighbour shift 0 are the same
  t.a_src_shift = via_noc ? (src - pe + kPesPerQpe) % kPesPerQpe : -1;
  if (t.op == Op::Conv && t.a_src_shift == 0) t.a_src_shift = -1;
  return t;
}

namespace {

// One worker thread for the MLAs' datapath, so that computing results overlaps working out the schedule
// (the simulation kernel itself stays single-threaded: the worker touches no SystemC object).
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

namespace {

// The functional datapath works on pairs of MAC steps at once: operand-B values of two steps are
// interleaved as int16 pairs (v[2x], v[2x+1]) and each MAC row's two weights form one int16 pair, so
// one multiply-add gives w0*v0 + w1*v1 per output (exact: |sum| <= 2*128*128). Accumulation is unsigned
// 32-bit, wrapping modulo 2^32 like the adders; the 29-bit wrap is applied when storing.
// w01[r] = the int16 pair (w0 | w1 << 16) of MAC row r.
template <int R>
void mac_pairs_rows(std::uint32_t* acc, std::size_t stride, const std::uint32_t* w01, const std::int16_t* v, int n) {
  int x = 0;
#if defined(__AVX2__)
  __m256i wp[R];
  for (int r = 0; r < R; ++r) wp[r] = _mm256_set1_epi32(static_cast<int>(w01[r]));
  for (; x + 8 <= n; x += 8) {
    const __m256i vv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 2 * x));
    for (int r = 0; r < R; ++r) {
      __m256i* ap = reinterpret_cast<__m256i*>(acc + r * stride + x);
      _mm256_storeu_si256(ap, _mm256_add_epi32(_mm256_loadu_si256(ap), _mm256_madd_epi16(vv, wp[r])));
    }
  }
#endif
  for (int r = 0; r < R; ++r) {
    const std::int32_t w0 = static_cast<std::int16_t>(w01[r] & 0xffff);
    const std::int32_t w1 = static_cast<std::int16_t>(w01[r] >> 16);
    std::uint32_t* a = acc + r * stride;
    for (int i = x; i < n; ++i)
      a[i] += static_cast<std::uint32_t>(w0 * std::int32_t(v[2 * i]) + w1 * std::int32_t(v[2 * i + 1]));
  }
}

void mac_pairs(std::uint32_t* acc, std::size_t stride, int rows, const std::uint32_t* w01, const std::int16_t* v, int n) {
  if (rows == 4) {
    mac_pairs_rows<4>(acc, stride, w01, v, n);
  } else if (rows == 2) {
    mac_pairs_rows<2>(acc, stride, w01, v, n);
  } else {
    for (int r = 0; r < rows; ++r) mac_pairs_rows<1>(acc + r * stride, stride, w01 + r, v, n);
  }
}

std::uint32_t pair(std::int8_t w0, std::int8_t w1) {
  return static_cast<std::uint16_t>(std::int16_t(w0)) | (std::uint32_t(static_cast<std::uint16_t>(std::int16_t(w1))) << 16);
}

// interleaves two int8 rows (the second may be absent: zeros) into int16 pairs
void interleave(const std::uint8_t* r0, const std::uint8_t* r1, std::int16_t* out, int n) {
  for (int i = 0; i < n; ++i) {
    out[2 * i] = static_cast<std::int8_t>(r0[i]);
    out[2 * i + 1] = r1 ? static_cast<std::int8_t>(r1[i]) : 0;
  }
}

}  // namespace

void Mla::compute_row(const Task& t, std::uint64_t r, const std::uint8_t* a, const std::uint8_t* b,
                      std::vector<ResultWrite>& writes) {
  const HwConfig& cfg = scheduler_.config();
  const int rows = cfg.mac_rows;
  const SramLayout& l = layout_;
  writes.clear();
  auto store = [&](std::uint64_t byte, std::uint32_t sum) {
    writes.push_back({static_cast<std::uint32_t>(byte),
                      static_cast<std::uint32_t>(wrap_accumulator(sum, cfg.accumulator_bits))});
  };
  if (t.op == Op::Conv) {
    const ConvShape& s = t.conv;
    const int Wo = s.Wo(), Ho = s.Ho();
    const std::uint64_t g = r / Ho, y = r % Ho;
    acc_.assign(std::size_t(rows) * Wo, 0u);
    pairs_.resize(2 * static_cast<std::size_t>(s.Wi));
    // weight pairs of this filter group, [d/2][ky][kx][row], built once per group
    const std::size_t taps = std::size_t(s.Hf) * s.Wf;
    if (weights_group_ != g || weights_.empty()) {
      const std::uint8_t* wg = a + l.a_base + g * l.a_group_stride;
      auto w = [&](int d, std::size_t tap, int rr) {
        return d < s.D ? static_cast<std::int8_t>(wg[(std::uint64_t(d) * taps + tap) * rows + rr]) : std::int8_t(0);
      };
      weights_.resize(std::size_t((s.D + 1) / 2) * taps * rows);
      for (int d = 0; d < s.D; d += 2)
        for (std::size_t tap = 0; tap < taps; ++tap)
          for (int rr = 0; rr < rows; ++rr)
            weights_[((std::size_t(d / 2) * taps) + tap) * rows + rr] = pair(w(d, tap, rr), w(d + 1, tap, rr));
      weights_group_ = g;
    }
    auto in_row = [&](int d, int ky) { return b + l.b_base + (std::uint64_t(d) * s.Hi + y + ky) * l.b_row_stride; };
    for (int d = 0; d < s.D; d += 2) {
      const bool two = d + 1 < s.D;
      for (int ky = 0; ky < s.Hf; ++ky) {
        interleave(in_row(d, ky), two ? in_row(d + 1, ky) : nullptr, pairs_.data(), s.Wi);
        for (int kx = 0; kx < s.Wf; ++kx) {
          const std::uint32_t* w01 = &weights_[((std::size_t(d / 2) * taps) + std::size_t(ky) * s.Wf + kx) * rows];
          mac_pairs(acc_.data(), static_cast<std::size_t>(Wo), rows, w01, pairs_.data() + 2 * kx, Wo);
        }
      }
    }
    for (int rr = 0; rr < rows; ++rr) {
      const std::uint64_t c = g * rows + rr;
      for (int x = 0; x < Wo; ++x)
        store(l.o_base + ((c * Ho + y) * l.o_row_stride + x) * 4, acc_[std::size_t(rr) * Wo + x]);
    }
  } else {
    const MmShape& s = t.mm;
    acc_.assign(std::size_t(rows) * s.W_B, 0u);
    pairs_.resize(2 * static_cast<std::size_t>(s.W_B));
    const std::uint8_t* ag = a + l.a_base + r * l.a_group_stride;
    std::uint32_t w01[4];
    for (int k = 0; k < s.W_A; k += 2) {
      const bool two = k + 1 < s.W_A;
      interleave(b + l.b_base + std::uint64_t(k) * l.b_row_stride,
                 two ? b + l.b_base + std::uint64_t(k + 1) * l.b_row_stride : nullptr, pairs_.data(), s.W_B);
      for (int rr = 0; rr < rows && rr < 4; ++rr)
        w01[rr] = pair(static_cast<std::int8_t>(ag[std::uint64_t(k) * rows + rr]),
                       two ? static_cast<std::int8_t>(ag[std::uint64_t(k + 1) * rows + rr]) : std::int8_t(0));
      mac_pairs(acc_.data(), static_cast<std::size_t>(s.W_B), rows, w01, pairs_.data(), s.W_B);
    }
    for (int rr = 0; rr < rows; ++rr) {
      const std::uint64_t i = r * rows + rr;
      for (int j = 0; j < s.W_B; ++j) store(l.o_base + (i * l.o_row_stride + j) * 4, acc_[std::size_t(rr) * s.W_B + j]);
    }
  }
}

void Mla::run() {
  while (true) {
    sc_core::wait(start_event_);
    const sc_core::sc_time clk = scheduler_.pe_clock();
    const Task t = task_from_registers(regs_, pe_);
    weights_group_ = ~0ull;
    // the START packets of the other PEs are still in flight: let them arrive before the QPE-wide
    // schedule is worked out (this wait does not enter the reported clocks)
    sc_core::wait(clk * 16.0);
    const std::uint8_t* a = sram_of(t.a_source_pe(pe_));
    const std::uint8_t* b = sram_.data();
    const TaskTiles tiles = task_tiles(t, scheduler_.config());
    // The datapath's results do not depend on the timing: they are computed on the compute worker while
    // this thread works out (or looks up) the QPE's schedule, then written row by row at their times.
    row_writes_.resize(tiles.rows_total());
    layout_ = sram_layout(t, scheduler_.config());
    std::future<void> results = compute_worker().submit([this, &t, a, b] {
      for (std::uint64_t r = 0; r < row_writes_.size(); ++r) compute_row(t, r, a, b, row_writes_[r]);
    });
    sc_core::wait(sc_core::SC_ZERO_TIME);  // every PE hands its datapath work over before the schedule is made
    const PeTaskTiming& timing = scheduler_.timing_for(pe_);
    results.get();
    const sc_core::sc_time t0 = clk * static_cast<double>(start_cycle_);
    std::uint8_t* out = sram_.data();
    for (std::uint64_t r = 0; r < timing.row_end.size(); ++r) {
      const sc_core::sc_time due = t0 + clk * static_cast<double>(timing.row_end[r]);
      if (due > sc_core::sc_time_stamp()) sc_core::wait(due - sc_core::sc_time_stamp());
      for (const ResultWrite& w : row_writes_[r])
        for (int k = 0; k < 4; ++k) out[w.byte + k] = static_cast<std::uint8_t>(w.value >> (8 * k));
      tiles_ += tiles.column_tiles;
    }
    steps_ = tiles.rows_total() * tiles.column_tiles * std::uint64_t(tiles.row.front().rows) *
             tiles.row.front().steps_per_row;
    phases_ = timing.phases;
    end_cycle_ = start_cycle_ + timing.cycles();
    done_ = true;
    done_event.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace s2
