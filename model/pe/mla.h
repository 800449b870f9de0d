// MLA of one PE in the model. On start it takes the task from its PE's descriptor registers, asks the
// QPE for the task's timing (MlaScheduler: the clock-level tile schedule, shared by the PEs because they
// contend for the router and each other's SRAM), computes its results from SRAM (operand A through the
// NoC by DMI, as the hardware's datapath would see it), and writes each output row of tiles into its
// SRAM at the simulated time that row's last result write completes. Then it raises done.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "model/hw_config.h"
#include "model/pe/mla_datapath.h"
#include "model/pe/pe_registers.h"
#include "model/qpe/qpe_address_map.h"
#include "model/pe/sram.h"
#include "model/sram_layout.h"
#include "model/systemc.h"
#include "model/task.h"
#include "model/qpe/task_timing.h"
#include "model/trace.h"

namespace s2 {


class MlaScheduler {
 public:
  virtual ~MlaScheduler() = default;
  virtual void started(int pe, std::uint64_t start_cycle, const Task& task) = 0;
  virtual const PeTaskTiming& timing_for(int pe) = 0;
  // Clocks after its start PE `pe`'s task's timing is worked out (timing_for): the PEs started by then count.
  virtual std::uint64_t timing_delay_cycles(int /*pe*/) { return 16; }
  virtual const HwConfig& config() const = 0;
  virtual sc_core::sc_time pe_clock() const = 0;
  // In a stream the NoC fabric runs the MLAs clock by clock beside the DMAs (noc/fabric.h): the Mla takes
  // each output row's end from row_ended(), not from timing_for().
  virtual bool rows_from_noc() const { return false; }
  // Whether the MLA computes and writes its results (false: a stream run with StreamRunOptions::timing_only).
  virtual bool computes_data() const { return true; }
};

class Mla : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Mla> noc;  // operand A of other PEs (DMI through the router)
  sc_core::sc_event done_event;

  Mla(sc_core::sc_module_name name, int pe, Sram& own_sram, MlaScheduler& scheduler);
  void start(const TaskRegisters& regs, std::uint64_t start_cycle);
  void clear();
  // The NoC fabric's MLA (rows_from_noc) has written an output row of tiles: in PE clock `cycle`; `done`, the
  // task's last, with the clocks of its stages.
  void row_ended(std::uint64_t cycle, bool done, const PhaseCycles& phases);

  // what the harness reads back after a task
  bool started() const { return started_; }
  bool done() const { return done_; }
  std::uint64_t start_cycle() const { return start_cycle_; }
  std::uint64_t end_cycle() const { return end_cycle_; }
  const PhaseCycles& phases() const { return phases_; }
  std::uint64_t tiles() const { return tiles_; }
  std::uint64_t steps() const { return steps_; }
  // What the MLA did since clear_activity() (model/activity.h), tile by tile as it ends them: its MACs and
  // padding MACs, and its own SRAM port's bytes (operand A of a local MM, operand B, results).
  const Activity& activity() const { return activity_; }
  // Operand-A bytes it read through the NoC (every conv, an MM from a neighbour), per PE of its QPE whose SRAM
  // served them (that SRAM's NoC slave: its sram_read_bytes_dma). A stream's NoC fabric counts these at the
  // slave itself; a task's schedule moves no packets, so the QPE credits them from here.
  const std::array<std::uint64_t, kPesPerQpe>& a_read_bytes_via_noc() const { return a_noc_bytes_; }
  void clear_activity();

 private:
  void run();
  void count_tiles(const TaskTiles& tiles, std::uint64_t row, int a_source);
  const std::uint8_t* sram_of(int pe);
  int pe_;
  Sram& sram_;
  MlaScheduler& scheduler_;
  sc_core::sc_event start_event_, row_event_;
  std::deque<std::uint64_t> row_end_cycles_;  // from the NoC fabric, not yet reached
  PhaseCycles noc_phases_;
  TaskRegisters regs_{};
  bool started_ = false, done_ = false;
  std::uint64_t start_cycle_ = 0, end_cycle_ = 0, tiles_ = 0, steps_ = 0;
  PhaseCycles phases_;
  Activity activity_;
  std::array<std::uint64_t, kPesPerQpe> a_noc_bytes_{};
  MlaDatapath datapath_;                              // of the task being run
  std::vector<std::vector<ResultWrite>> row_writes_;  // per output row, computed ahead of its time
};

}  // namespace s2
