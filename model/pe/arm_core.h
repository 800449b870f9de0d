// The ARM core of a PE in QPE-DRAM: it runs the PE's command list of a task stream (task_stream.h) one
// command at a time: programs the DMA and the MLA and waits for them (or, for an async command, goes on
// while they work), carries out the element-wise operations on its SRAM at the thesis's clock costs
// (arm_op_cycles), and meets the other PEs at a Sync through the host interface.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/pe/arm_ops.h"
#include "model/pe/arm_sequencer.h"
#include "model/hw_config.h"
#include "model/systemc.h"
#include "model/task_stream.h"

namespace s2 {

class Dma;
class Mla;

// Where a PE's ARM meets the rest of the system (the QPE-DRAM top implements it).
class ArmSystem {
 public:
  virtual ~ArmSystem() = default;
  // Blocks the calling thread until every PE of sync group `group` reached its `index`-th Sync of the
  // group (through the host interface). `pe`: the chip PE index.
  virtual void sync(int pe, int group, std::size_t index) = 0;
  virtual const HwConfig& config() const = 0;
  virtual sc_core::sc_time pe_clock() const = 0;
  // Whether element-wise operations take their ARM clocks (false: they complete at once, as the
  // thesis's simulator assumed for Tables 5.5-5.8).
  virtual bool arm_ops_timed() const = 0;
  // Whether the element-wise operations change the SRAM (false: StreamRunOptions::timing_only).
  virtual bool moves_data() const { return true; }
};

class ArmCore : public sc_core::sc_module {
 public:
  sc_core::sc_event done_event;

  ArmCore(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes, Dma& dma, Mla& mla);
  void bind(ArmSystem& system, int chip_pe) {
    system_ = &system;
    chip_pe_ = chip_pe;
  }
  // Starts the command list at the current simulated time.
  void start(const std::vector<StreamCommand>* commands);
  bool done() const { return done_; }
  // What the ARM waits for now ("command 3 of 12 (mla CONV_1): the MLA"); empty when it is done or idle.
  const std::string& waiting() const { return waiting_; }
  std::uint64_t end_cycle() const { return end_cycle_; }
  std::uint64_t arm_cycles() const { return sequencer_.arm_cycles(); }
  Activity activity() const { return sequencer_.activity(); }  // the ARM's counts (ArmSequencer::activity)
  const std::vector<std::uint64_t>& command_end_cycles() const { return sequencer_.command_end_cycles(); }  // PE clocks
  // PE clocks of the last run by PeTime
  const std::array<std::uint64_t, static_cast<std::size_t>(PeTime::kCount)>& time() const { return time_; }

 private:
  void run();
  void wait_dma_idle();
  void wait_mla_idle();
  int chip_pe_ = 0;
  ArmSequencer sequencer_;
  std::array<std::uint64_t, static_cast<std::size_t>(PeTime::kCount)> time_{};
  PeTime dma_kind_ = PeTime::Dram;  // what the DMA's current transfer waits on
  std::uint8_t* sram_;
  std::size_t sram_bytes_;
  Dma& dma_;
  Mla& mla_;
  ArmSystem* system_ = nullptr;
  sc_core::sc_event start_event_;
  bool done_ = false;
  std::string waiting_;
  std::uint64_t end_cycle_ = 0;
};

}  // namespace s2
