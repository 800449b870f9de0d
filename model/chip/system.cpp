#include "model/chip/system.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/pe/arm_ops.h"

namespace s2 {

System::System(sc_core::sc_module_name name, int qpes, int drams) : sc_module(name) {
  auto cache = std::make_shared<QpeTimingCache>();
  for (int q = 0; q < qpes; ++q) {
    qpes_.push_back(std::make_unique<Qpe>(("qpe" + std::to_string(q)).c_str()));
    qpes_.back()->share_timing_cache(cache);
  }
  for (int d = 0; d < drams; ++d) drams_.push_back(std::make_unique<Dram>(("dram" + std::to_string(d)).c_str()));
  SC_HAS_PROCESS(System);
  SC_THREAD(run_noc);
  for (int q = 0; q < qpes; ++q)
    for (int p = 0; p < kPesPerQpe; ++p) {
      Pe& pe = qpe(q).pe(p);
      for (auto& d : drams_) pe.dma.dram.bind(d->socket);
      pe.arm.bind(*this, q * kPesPerQpe + p);
    }
  configure(HwConfig{});
}

// (the model's SRAMs are built at the largest size; the configuration's is what a stream may use)
StreamLimits System::limits() const { return stream_limits(cfg_); }

void System::configure(const HwConfig& cfg) {
  if (cfg.chip.qpes() > built_qpes() || cfg.chip.drams.size() > drams_.size())
    throw std::invalid_argument("the model was built for " + std::to_string(built_qpes()) + " QPEs and " +
                                std::to_string(built_drams()) + " DRAMs; chip '" + cfg.chip.name + "' needs " +
                                std::to_string(cfg.chip.qpes()) + " and " + std::to_string(cfg.chip.drams.size()) +
                                " (run it in a process of its own)");
  cfg_ = cfg;
  const std::string hash = config_hash(cfg);
  noc_.configure(cfg);
  noc_.on_dma_idle([this](int pe, std::uint64_t cycle) { chip_pe(pe).dma.idle_in(cycle); });
  noc_.on_mla_row([this](int pe, std::uint64_t cycle, bool done) { chip_pe(pe).mla.row_ended(cycle, done, noc_.mla_phases(pe)); });
  for (int q = 0; q < cfg.chip.qpes(); ++q) {
    qpe(q).configure(cfg, hash);
    qpe(q).on_stream_mla([this, q](int pe, std::uint64_t start_cycle, const Task& t) {
      noc_.start_mla(q * kPesPerQpe + pe, task_tiles(t, cfg_), t.a_source_pe(pe), start_cycle);
      noc_started();
    });
  }
  const sc_core::sc_time clk = pe_clock();
  for (std::size_t d = 0; d < cfg.chip.drams.size(); ++d) drams_[d]->configure(cfg, clk);
  for (int q = 0; q < cfg.chip.qpes(); ++q)
    for (int p = 0; p < kPesPerQpe; ++p) qpe(q).pe(p).dma.set_timing(clk, this, q);
}

void System::run_noc() {
  while (true) {
    if (!noc_.active()) {
      sc_core::wait(noc_wake_);
      continue;
    }
    const sc_core::sc_time clk = pe_clock();
    const sc_core::sc_time at = clk * (static_cast<double>(noc_.clock()) + 0.5), now = sc_core::sc_time_stamp();
    if (at > now) {
      sc_core::wait(at - now, noc_wake_);  // a transfer that starts sooner may bring the clock forward
      continue;
    }
    noc_.step();
  }
}

std::uint64_t System::host_cycles(int q) const { return host_path_cycles(cfg_, noc_.mesh(), q); }

void System::sync(int pe, int group, std::size_t index) {
  const sc_core::sc_time clk = pe_clock();
  const sc_core::sc_time host_latency = clk * static_cast<double>(cfg_.host_latency_cycles);
  const sc_core::sc_time to_agent = clk * static_cast<double>(host_cycles(pe / kPesPerQpe) - cfg_.host_latency_cycles);
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + to_agent + host_latency;  // the PE's response at the host
  sc_core::sc_event& release = sync_release_[{group, index}];
  if (!syncs_.arrive(group, index, arrival)) {
    sc_core::wait(release);
  } else {
    const sc_core::sc_time go = syncs_.latest(group, index) + host_latency - sc_core::sc_time_stamp();  // the host's release at the agents
    release.notify(go);
    sc_core::wait(go);
  }
  if (to_agent > sc_core::SC_ZERO_TIME) sc_core::wait(to_agent);
}

StreamResult System::run_stream(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt) {
  if (!stopped_by_watchdog_.empty())
    throw std::runtime_error("the model's watchdog stopped stream " + stopped_by_watchdog_ +
                             " with its PEs still waiting; this process cannot run another stream (run the rest "
                             "in a new one, e.g. with --resume)");
  check_stream(s, limits());
  if (opt.timing_only)  // without data these would take other clocks: refuse rather than mistime them
    for (std::size_t p = 0; p < s.pe.size(); ++p)
      for (const StreamCommand& c : s.pe[p])
        if (c.kind == CommandKind::Arm && arm_op_cycles_read_sram(c.arm.kind))
          throw std::invalid_argument("stream " + s.name + ": PE " + std::to_string(p) + "'s ARM operation " +
                                      to_string(c.arm.kind) + " takes clocks by its data: a timing-only run cannot time it");
  const std::size_t n_drams = cfg_.chip.drams.size();
  if (mem.drams.size() > n_drams)
    throw std::invalid_argument("stream " + s.name + ": " + std::to_string(mem.drams.size()) + " DRAM images for " +
                                std::to_string(n_drams) + " DRAM(s)");
  mem.drams.resize(n_drams);
  // the images move into the DRAMs and back out after the run (no copies of what may be 100 MB each)
  for (std::size_t d = 0; d < n_drams; ++d) dram(static_cast<int>(d)).reset(std::move(mem.drams[d]), s.dram_bytes);
  for (auto& [p, image] : mem.sram) {
    if (p < 0 || p >= limits().pes) throw std::invalid_argument("SRAM image for PE " + std::to_string(p) + ": no such PE");
    std::vector<std::uint8_t>& sram = chip_pe(p).sram.bytes();
    if (image.size() > sram.size()) throw std::invalid_argument("SRAM image for PE " + std::to_string(p) + " larger than its SRAM");
    std::copy(image.begin(), image.end(), sram.begin());
  }
  syncs_.start(s);
  sync_release_.clear();
  arm_ops_timed_ = opt.arm_ops_timed;
  timing_only_ = opt.timing_only;
  noc_.reset();
  const int pes = static_cast<int>(s.pe.size());
  const int used_qpes = (pes + kPesPerQpe - 1) / kPesPerQpe;
  for (int q = 0; q < used_qpes; ++q) qpe(q).set_stream_mode(true, !opt.timing_only);
  for (int p = 0; p < pes; ++p) chip_pe(p).mla.clear();
  for (int p = 0; p < cfg_.chip.qpes() * kPesPerQpe; ++p) chip_pe(p).mla.clear_activity();
  StreamResult r;
  std::uint64_t start_cycle = 0;
  const sc_core::sc_time clk = pe_clock();
  // the PEs in the order the host's hand-over reaches them
  std::vector<int> order(static_cast<std::size_t>(pes));
  for (int p = 0; p < pes; ++p) order[static_cast<std::size_t>(p)] = p;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return host_cycles(a / kPesPerQpe) < host_cycles(b / kPesPerQpe); });
  qpe(0).host.submit([&] {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::wait(clk * std::ceil(now / clk) - now + clk);  // start on a PE clock edge
    start_cycle = static_cast<std::uint64_t>(std::llround(sc_core::sc_time_stamp() / clk));
    std::uint64_t waited = 0;
    for (int p : order) {
      const std::uint64_t at = host_cycles(p / kPesPerQpe);
      if (at > waited) sc_core::wait(clk * static_cast<double>(at - waited));
      waited = std::max(waited, at);
      chip_pe(p).arm.start(&s.pe[static_cast<std::size_t>(p)]);
    }
    for (int p = 0; p < pes; ++p)
      if (!chip_pe(p).arm.done()) sc_core::wait(chip_pe(p).arm.done_event);
  });
  // the watchdog: a stream that has not ended within its budget (or runs out of events first) stops
  // there as a hang, with what each PE waited for
  const std::uint64_t budget = opt.watchdog_cycles ? opt.watchdog_cycles : stream_cycle_bound(s, cfg_);
  run_simulation(clk * static_cast<double>(budget), sc_core::SC_EXIT_ON_STARVATION);
  for (int q = 0; q < used_qpes; ++q) qpe(q).set_stream_mode(false);
  r.completed = true;
  for (int p = 0; p < pes; ++p) {
    const ArmCore& a = chip_pe(p).arm;
    if (a.done()) continue;
    r.completed = false;
    if (!r.stalled.empty()) r.stalled += "; ";
    // a PE the host has not started yet has no command in hand: it waits for its START
    r.stalled += "PE " + std::to_string(p) + " waited for " +
                 (a.waiting().empty() ? "its START from the host (due " + std::to_string(host_cycles(p / kPesPerQpe)) +
                                            " PE clocks after the first, the host's latency)"
                                      : a.waiting());
    if (noc_.dma_busy(p)) r.stalled += " (" + noc_.describe(p) + ")";
  }
  if (!r.completed) {
    // its processes still wait: the simulation cannot be taken back to a clean state
    stopped_by_watchdog_ = s.name.empty() ? "(unnamed)" : s.name;
    r.stalled = "after " + std::to_string(budget) + " PE clocks (watchdog): " + r.stalled;
    r.cycles = budget;
    return r;
  }
  std::uint64_t end_cycle = start_cycle;
  r.pe_end_cycle.resize(static_cast<std::size_t>(pes));
  r.command_end_cycle.resize(static_cast<std::size_t>(pes));
  for (int p = 0; p < pes; ++p) {
    const ArmCore& a = chip_pe(p).arm;
    r.completed = r.completed && a.done();
    end_cycle = std::max(end_cycle, a.end_cycle() + host_cycles(p / kPesPerQpe));  // the host hears it
    r.pe_end_cycle[static_cast<std::size_t>(p)] = a.end_cycle() - start_cycle;
    for (std::uint64_t c : a.command_end_cycles()) r.command_end_cycle[static_cast<std::size_t>(p)].push_back(c - start_cycle);
    r.arm_cycles += a.arm_cycles();
    for (const StreamCommand& c : s.pe[static_cast<std::size_t>(p)]) r.mla_tasks += c.kind == CommandKind::Mla;
    if (s.pe[static_cast<std::size_t>(p)].empty()) continue;
    ++r.active_pes;
    for (std::size_t k = 0; k < r.pe_time.size(); ++k) r.pe_time[k] += a.time()[k];
  }
  for (int from = 0; from < cfg_.chip.qpes(); ++from)
    for (int to = 0; to < cfg_.chip.qpes(); ++to)
      if (noc_.link_packets(from, to) > r.busiest_link_packets) {
        r.busiest_link_from = from;
        r.busiest_link_to = to;
        r.busiest_link_packets = noc_.link_packets(from, to);
      }
  r.cycles = end_cycle - start_cycle;
  // each PE's counts: its MLA's, its SRAM's at the NoC slave's and DMA's port and its busy clocks (the NoC
  // fabric's), its ARM's; idle: the clocks to its end that were not busy
  r.pe_activity.resize(static_cast<std::size_t>(cfg_.chip.qpes() * kPesPerQpe));
  for (int p = 0; p < cfg_.chip.qpes() * kPesPerQpe; ++p) {
    Activity& a = r.pe_activity[static_cast<std::size_t>(p)];
    a += chip_pe(p).mla.activity();
    a += noc_.pe_activity(p);
    if (p < pes) {
      a += chip_pe(p).arm.activity();
      if (!s.pe[static_cast<std::size_t>(p)].empty())
        a.pe_idle_cycles = Activity::idle_cycles(r.pe_end_cycle[static_cast<std::size_t>(p)], a.pe_busy_cycles);
    }
    r.activity += a;
  }
  for (int q = 0; q < cfg_.chip.qpes(); ++q) {
    Activity& a = r.router_activity.emplace_back();
    a.noc_packets = noc_.router_injected(q);
    a.noc_packet_hops = noc_.router_hops(q);
    r.activity += a;
  }
  for (std::size_t d = 0; d < n_drams; ++d) {
    r.dram_ops += noc_.dram_ops_served(static_cast<int>(d));
    r.dram_busy_cycles.push_back(noc_.dram_busy_cycles(static_cast<int>(d)));
    Activity& a = r.dram_activity.emplace_back();
    a.dram_read_bytes = noc_.dram_read_bytes(static_cast<int>(d));
    a.dram_write_bytes = noc_.dram_write_bytes(static_cast<int>(d));
    r.activity += a;
    mem.drams[d] = std::move(dram(static_cast<int>(d)).contents());
  }
  for (auto& [p, image] : mem.sram) image = chip_pe(p).sram.bytes();
  return r;
}

}  // namespace s2
