#include "model/chip/qpe_dram.h"

#include <cmath>
#include <stdexcept>

namespace s2 {

QpeDram::QpeDram(sc_core::sc_module_name name) : sc_module(name), qpe("qpe"), dram("dram") {
  for (int p = 0; p < kPesPerQpe; ++p) {
    qpe.pe(p).dma.dram.bind(dram.socket);
    qpe.pe(p).arm.bind(*this);
  }
  configure(HwConfig{});
}

void QpeDram::configure(const HwConfig& cfg) {
  qpe.configure(cfg);
  dram.configure(cfg, qpe.pe_clock());
  for (int p = 0; p < kPesPerQpe; ++p) qpe.pe(p).dma.set_timing(qpe.pe_clock(), DramTiming(cfg), &qpe.router_share());
}

void QpeDram::sync(int, std::size_t index) {
  const sc_core::sc_time host_latency = pe_clock() * static_cast<double>(config().host_latency_cycles);
  SyncPoint& s = syncs_[index];
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + host_latency;  // the PE's response at the host
  if (arrival > s.latest) s.latest = arrival;
  if (++s.arrived < kPesPerQpe) {
    sc_core::wait(s.release);
    return;
  }
  const sc_core::sc_time go = s.latest + host_latency - sc_core::sc_time_stamp();  // the host's release at the PEs
  s.release.notify(go);
  sc_core::wait(go);
}

StreamResult QpeDram::run_stream(const TaskStream& s, const std::vector<std::uint8_t>& image, const StreamRunOptions& opt) {
  check_stream(s, static_cast<std::uint32_t>(qpe.pe(0).sram.size()));
  dram.reset(s.dram_bytes);
  std::copy(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(image.size(), s.dram_bytes)),
            dram.contents().begin());
  syncs_.clear();
  arm_ops_timed_ = opt.arm_ops_timed;
  qpe.set_stream_mode(true);
  for (int p = 0; p < kPesPerQpe; ++p) qpe.pe(p).mla.clear();
  StreamResult r;
  std::uint64_t start_cycle = 0, end_cycle = 0;
  const sc_core::sc_time clk = pe_clock();
  qpe.host.submit([&] {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::wait(clk * std::ceil(now / clk) - now + clk);  // start on a PE clock edge
    start_cycle = static_cast<std::uint64_t>(std::llround(sc_core::sc_time_stamp() / clk));
    const sc_core::sc_time host_latency = clk * static_cast<double>(config().host_latency_cycles);
    sc_core::wait(host_latency);
    for (int p = 0; p < kPesPerQpe; ++p) qpe.pe(p).arm.start(&s.pe[p]);
    for (int p = 0; p < kPesPerQpe; ++p)
      if (!qpe.pe(p).arm.done()) sc_core::wait(qpe.pe(p).arm.done_event);
    sc_core::wait(host_latency);
    end_cycle = static_cast<std::uint64_t>(std::llround(sc_core::sc_time_stamp() / clk));
  });
  sc_core::sc_start();
  qpe.set_stream_mode(false);
  r.completed = true;
  for (int p = 0; p < kPesPerQpe; ++p) {
    const ArmCore& a = qpe.pe(p).arm;
    r.completed = r.completed && a.done();
    r.pe_end_cycle[p] = a.end_cycle() - start_cycle;
    for (std::uint64_t c : a.command_end_cycles()) r.command_end_cycle[p].push_back(c - start_cycle);
    r.arm_cycles += a.arm_cycles();
    for (const StreamCommand& c : s.pe[p]) r.mla_tasks += c.kind == CommandKind::Mla;
  }
  r.cycles = end_cycle - start_cycle;
  r.dram_ops = dram.ops_served();
  return r;
}

}  // namespace s2
