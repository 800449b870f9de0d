#include "model/qpe/qpe.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace s2 {

Qpe::Qpe(sc_core::sc_module_name name) : sc_module(name), host("host"), router("router") {
  for (int p = 0; p < kPesPerQpe; ++p) {
    pes_[p] = std::make_unique<Pe>(("pe" + std::to_string(p)).c_str(), p, *this);
  }
  host.noc.bind(router.in);
  for (int p = 0; p < kPesPerQpe; ++p) {
    router.out.bind(pes_[p]->noc_in);
    pes_[p]->mla.noc.bind(router.in);
  }
  configure(HwConfig{});
}

void Qpe::configure(const HwConfig& cfg, const std::string& hash) {
  cfg_ = cfg;
  cache_->config_hash = hash;
  pe_clock_ = sc_core::sc_time(1000.0 / cfg.pe_clock_mhz, sc_core::SC_NS);
  noc_clock_ = sc_core::sc_time(1000.0 / cfg.noc_clock_mhz, sc_core::SC_NS);
  router.set_latency(noc_clock_ * static_cast<double>(cfg.router_latency_noc_cycles));
  for (auto& p : pes_) p->sram.set_access_time(pe_clock_ * static_cast<double>(cfg.sram_cycles_per_access()));
  auto& s = cache_->schedules[hash];
  if (!s) s = std::make_unique<TileSchedule>(cfg);
  schedule_ = s.get();
}

void Qpe::set_stream_mode(bool on, bool computes_data) {
  stream_mode_ = on;
  computes_data_ = !on || computes_data;
  active_.fill(false);
  timing_valid_ = false;
}

void Qpe::started(int pe, std::uint64_t start_cycle, const Task& task) {
  if (stream_mode_) {
    if (!stream_mla_) throw std::logic_error("model QPE: an MLA task in a stream without a NoC to run it");
    stream_mla_(pe, start_cycle, task);
    return;
  }
  task_ = task;
  active_[pe] = true;
  start_[pe] = start_cycle;
  timing_valid_ = false;
}

const PeTaskTiming& Qpe::timing_for(int pe) {
  if (stream_mode_) throw std::logic_error("model QPE: a stream's MLA timing comes from the NoC");
  if (!timing_valid_) {
    timing_ = task_timing(task_, cfg_, *schedule_, active_, start_,
                          static_cast<std::uint64_t>(cfg_.model_resolve_window_cycles));
    timing_valid_ = true;
  }
  return timing_.pe[pe];
}

TaskTrace Qpe::run_task(const Task& t, const SramLayout& l, const std::array<std::vector<std::uint8_t>, kPesPerQpe>& images,
                        std::uint64_t watchdog_cycles) {
  for (int p = 0; p < kPesPerQpe; ++p) {
    host.load(qpe_addr::sram(p, 0), images[p]);
    pes_[p]->mla.clear();
    pes_[p]->mla.clear_activity();
  }
  active_.fill(false);
  timing_valid_ = false;
  const std::vector<int> pes = t.pes();
  host.submit([&] {
    // Descriptors, then the STARTs back to back, as the RTL adapter sends them. Simulated time is
    // aligned to a PE clock edge first, so that every task starts in the same phase.
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const double edges = std::ceil(now / pe_clock_);
    sc_core::wait(pe_clock_ * edges - now + pe_clock_);
    for (int p : pes) {
      const TaskRegisters regs = task_registers(t, p, l);
      for (int r = 0; r < qpe_addr::kStart; ++r) host.write_word(qpe_addr::reg(p, r), regs[r], noc_clock_);
    }
    for (int p : pes) host.write_word(qpe_addr::reg(p, qpe_addr::kStart), 1, noc_clock_);
    for (int p : pes) {
      if (!pes_[p]->mla.done()) sc_core::wait(pes_[p]->mla.done_event);
    }
  });
  run_simulation();

  TaskTrace tr;
  tr.task_id = t.id;
  tr.backend = "model";
  tr.budget_cycles = watchdog_cycles;
  tr.completed = true;
  std::uint64_t lo = ~0ull, hi = 0;
  for (int p : pes) {
    const Mla& m = pes_[p]->mla;
    PeTrace pt;
    pt.pe = p;
    pt.started = m.started();
    pt.done = m.done();
    pt.start_cycle = m.start_cycle();
    pt.end_cycle = m.end_cycle();
    pt.phases = m.phases();
    pt.phases_known = true;
    pt.tiles = m.tiles();
    pt.steps = m.steps();
    if (watchdog_cycles && pt.cycles() > watchdog_cycles) {
      pt.done = false;
      pt.end_cycle = pt.start_cycle + watchdog_cycles;
    }
    pt.state = pt.done ? "done" : "running";
    tr.completed = tr.completed && pt.done;
    lo = std::min(lo, pt.start_cycle);
    hi = std::max(hi, pt.end_cycle);
    tr.pes.push_back(std::move(pt));
  }
  // each PE's counts: its MLA's, and the operand-A reads its SRAM served the MLAs through the NoC
  std::array<Activity, kPesPerQpe> act;
  for (int p = 0; p < kPesPerQpe; ++p) {
    act[p] += pes_[p]->mla.activity();
    for (int src = 0; src < kPesPerQpe; ++src) act[src].sram_read_bytes_dma += pes_[p]->mla.a_read_bytes_via_noc()[src];
  }
  Activity outside;
  for (int p = 0; p < kPesPerQpe; ++p)
    if (std::find(pes.begin(), pes.end(), p) == pes.end()) outside += act[p];
  for (PeTrace& pt : tr.pes) {
    pt.activity = act[pt.pe];
    pt.activity.pe_busy_cycles = pt.cycles();  // the MLA busy from its SETUP clock to its end
  }
  sum_task_activity(tr, outside);
  tr.cycles = hi > lo ? hi - lo : 0;
  tr.elapsed_cycles = tr.cycles;
  // The tile schedule resolves a window of tiles clock by clock, skips periods and extrapolates the rest: it
  // keeps no count of the packets its router passed, and a count made up from the tiles would be a formula.
  // (A task stream's MLAs run in the NoC fabric, whose routers count them.)
  tr.activity_unavailable.insert(tr.activity_unavailable.end(), {"noc_packets", "noc_packet_hops"});
  return tr;
}

}  // namespace s2
