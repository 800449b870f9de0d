// QPE-DRAM (thesis 3.3, 5.1.2): one QPE, one DRAM and the host interface. The host hands each PE's ARM
// its command list of a task stream (host interface latency), the PEs' DMAs share the DRAM, a Sync meets
// every PE through the host (latency each way), and the stream ends when the host has heard from the
// last PE.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/pe/arm_core.h"
#include "model/dram/dram.h"
#include "model/qpe/qpe.h"
#include "model/systemc.h"
#include "model/task_stream.h"

namespace s2 {

class QpeDram : public sc_core::sc_module, public ArmSystem {
 public:
  Qpe qpe;
  Dram dram;

  explicit QpeDram(sc_core::sc_module_name name);
  void configure(const HwConfig& cfg);
  // Runs `s` with the DRAM holding `dram_image` (resized to s.dram_bytes); afterwards dram.contents()
  // holds what the stream left there. Drives sc_start(); call from outside the simulation.
  StreamResult run_stream(const TaskStream& s, const std::vector<std::uint8_t>& dram_image, const StreamRunOptions& opt);

  // ArmSystem
  void sync(int pe, std::size_t index) override;
  const HwConfig& config() const override { return qpe.config(); }
  sc_core::sc_time pe_clock() const override { return qpe.pe_clock(); }
  bool arm_ops_timed() const override { return arm_ops_timed_; }

 private:
  struct SyncPoint {
    int arrived = 0;
    sc_core::sc_time latest;
    sc_core::sc_event release;
  };
  std::map<std::size_t, SyncPoint> syncs_;
  bool arm_ops_timed_ = true;
};

}  // namespace s2
