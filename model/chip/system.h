// The system a task stream runs on, built from the configuration's shape (HwConfig::chip): a mesh of QPEs
// (four PEs and a router each) linked by the NoC (noc/noc.h), DRAMs at their routers, and the host
// interface reaching the QPEs through the host agents (thesis 2.3.4, 3.3, 3.4). QPE-DRAM is the one-QPE,
// one-DRAM shape (qpe_dram_chip); the prototype chip is 36 QPEs and 4 DRAMs (prototype_chip).
//
// The host hands each PE's ARM its command list (the host interface's latency, and the hops between the
// PE's QPE and its agent, each way), the DMAs reach DRAMs and other PEs' SRAMs over the NoC, a Sync meets
// the PEs of its group through the host, and the stream ends when the host has heard from the last PE.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/chip/host_sync.h"
#include "model/dram/dram.h"
#include "model/noc/fabric.h"
#include "model/pe/arm_core.h"
#include "model/pe/dma.h"
#include "model/qpe/qpe.h"
#include "model/systemc.h"
#include "model/task_stream.h"

namespace s2 {

class System : public sc_core::sc_module, public ArmSystem, public DmaFabric {
 public:
  // SystemC elaborates a design once per process: build the largest system the process will run. A
  // configuration with a smaller shape uses the first QPEs and DRAMs; idle ones cost nothing.
  System(sc_core::sc_module_name name, int qpes, int drams);
  // Throws std::invalid_argument if cfg.chip needs more QPEs or DRAMs than were built.
  void configure(const HwConfig& cfg);
  Qpe& qpe(int i) { return *qpes_[static_cast<std::size_t>(i)]; }
  Pe& chip_pe(int chip_pe) { return qpe(chip_pe / kPesPerQpe).pe(chip_pe % kPesPerQpe); }
  Dram& dram(int d) { return *drams_[static_cast<std::size_t>(d)]; }
  int built_qpes() const { return static_cast<int>(qpes_.size()); }
  int built_drams() const { return static_cast<int>(drams_.size()); }
  StreamLimits limits() const;

  // Runs `s` with the DRAMs holding mem.drams (each resized to s.dram_bytes) and the SRAMs of the PEs in
  // mem.sram loaded; afterwards mem holds what the stream left in them. Drives sc_start(); call from
  // outside the simulation. Throws std::invalid_argument (check_stream) before anything runs. A stream that
  // has not ended after opt.watchdog_cycles (default stream_cycle_bound) ends incomplete with `stalled`
  // saying what each waiting PE waited for; its processes are left waiting, so every later run throws.
  StreamResult run_stream(const TaskStream& s, SystemMemory& mem, const StreamRunOptions& opt);

  // ArmSystem
  void sync(int pe, int group, std::size_t index) override;
  const HwConfig& config() const override { return cfg_; }
  sc_core::sc_time pe_clock() const override { return qpes_.front()->pe_clock(); }
  bool arm_ops_timed() const override { return arm_ops_timed_; }
  bool moves_data() const override { return !timing_only_; }  // ArmSystem and DmaFabric
  // DmaFabric
  NocFabric& noc() override { return noc_; }
  void noc_started() override { noc_wake_.notify(sc_core::SC_ZERO_TIME); }
  std::uint8_t* sram(int pe) override { return chip_pe(pe).sram.data(); }
  std::size_t sram_bytes(int pe) override { return chip_pe(pe).sram.size(); }

 private:
  // PE clocks between QPE `qpe` and the host: its agent's hops and the host interface
  std::uint64_t host_cycles(int qpe) const;
  // Runs the NoC: each clock in which something moves, half a clock after the clock's start (after every
  // process of that clock has started its transfers); sleeps while no transfer runs.
  void run_noc();
  HwConfig cfg_;
  std::vector<std::unique_ptr<Qpe>> qpes_;
  std::vector<std::unique_ptr<Dram>> drams_;
  NocFabric noc_;
  sc_core::sc_event noc_wake_;
  HostSync<sc_core::sc_time> syncs_;
  std::map<std::pair<int, std::size_t>, sc_core::sc_event> sync_release_;  // by group and index
  bool arm_ops_timed_ = true;
  bool timing_only_ = false;  // the stream being run: StreamRunOptions::timing_only
  std::string stopped_by_watchdog_;  // the stream a watchdog stopped (then no other may run)
};

}  // namespace s2
