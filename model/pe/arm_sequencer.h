// What a PE's ARM core does for each command of its list (task_stream.h), without the clocks: the engine a
// command programs or waits for, the registers it writes, whether it waits for the engine to finish, an
// element-wise operation's clocks (arm_op_cycles) and a Sync's index in its group; and what the ARM counts as
// it goes (commands done and when, ARM clocks). SystemC-free: the model's ArmCore (a SystemC thread) and
// the RTL backend's C++ ARM (clocked with the Verilated chip) both walk their PE's commands with it, so
// the two ARMs cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "model/activity.h"
#include "model/hw_config.h"
#include "model/pe/arm_ops.h"
#include "model/pe/pe_registers.h"
#include "model/task_stream.h"

namespace s2 {

// One command as the ARM carries it out, in order: wait until `engine` is idle (if it programs it), write
// `writes` one per PE clock (the engine starts with the last), wait until `engine` is done (if
// `wait_done`).
struct ArmCommandPlan {
  enum class Engine { None, Dma, Mla };
  Engine engine = Engine::None;       // the engine programmed or waited for
  std::vector<RegisterWrite> writes;  // none: the command only waits (WaitDma, WaitMla)
  TaskRegisters mla{};                // an MLA command's descriptor
  bool wait_done = false;             // a command that is not async, WaitDma, WaitMla
  std::uint64_t arm_cycles = 0;       // an element-wise operation's ARM clocks (arm_op_cycles)
  std::size_t sync_index = 0;         // a Sync's index among the Syncs of its group this PE met
};

class ArmSequencer {
 public:
  // `pe`: the PE in its QPE (the MLA's descriptor names it); `sram_bytes`: the SRAM an MLA task must fit in
  ArmSequencer(int pe, std::size_t sram_bytes) : pe_(pe), sram_bytes_(sram_bytes) {}
  // A command list starts (`cfg` and `commands` outlive the run).
  void start(const HwConfig& cfg, const std::vector<StreamCommand>* commands);
  bool at_end() const { return next_ == commands_->size(); }
  std::size_t next() const { return next_; }  // the command in hand (0-based)
  int pe() const { return pe_; }
  const StreamCommand& command() const { return (*commands_)[next_]; }
  const std::vector<StreamCommand>& commands() const { return *commands_; }
  // The command in hand's plan; once per command. `far_end`: a DMA's far node as the RTL's DMA_START
  // register holds it (model/pe/pe_registers.h). `sram`: the PE's SRAM as the command begins, which an ARM
  // operation whose clocks depend on its data needs (arm_op_cycles_read_sram). Counts the ARM clocks and the
  // group's Syncs.
  ArmCommandPlan plan(const NocNode* far_end = nullptr, const std::uint8_t* sram = nullptr);
  // The command in hand is done in PE clock `cycle`; the next one is in hand.
  void finish(std::uint64_t cycle);
  std::uint64_t arm_cycles() const { return arm_cycles_; }
  // An element-wise operation is carried out: its SRAM bytes (arm_op_sram_bytes, from the SRAM as it begins).
  void count_sram(const ArmSramBytes& b) {
    arm_sram_.read += b.read;
    arm_sram_.written += b.written;
  }
  // the ARM's activity counts since start(): arm_cycles, sram_read_bytes_arm, sram_write_bytes_arm
  Activity activity() const {
    Activity a;
    a.arm_cycles = arm_cycles_;
    a.sram_read_bytes_arm = arm_sram_.read;
    a.sram_write_bytes_arm = arm_sram_.written;
    return a;
  }
  const std::vector<std::uint64_t>& command_end_cycles() const { return command_end_; }

 private:
  const HwConfig* cfg_ = nullptr;
  int pe_;
  std::size_t sram_bytes_;
  const std::vector<StreamCommand>* commands_ = nullptr;
  std::size_t next_ = 0;
  std::map<int, std::size_t> syncs_;  // Syncs met so far, per group
  std::uint64_t arm_cycles_ = 0;
  ArmSramBytes arm_sram_;
  std::vector<std::uint64_t> command_end_;
};

}  // namespace s2
