#include "model/pe/arm_sequencer.h"

#include "model/pe/arm_ops.h"
#include "model/sram_layout.h"

namespace s2 {

void ArmSequencer::start(const HwConfig& cfg, const std::vector<StreamCommand>* commands) {
  cfg_ = &cfg;
  commands_ = commands;
  next_ = 0;
  syncs_.clear();
  arm_cycles_ = 0;
  arm_sram_ = {};
  command_end_.clear();
}

ArmCommandPlan ArmSequencer::plan(const NocNode* far_end, const std::uint8_t* sram) {
  const StreamCommand& c = command();
  ArmCommandPlan p;
  switch (c.kind) {
    case CommandKind::DmaLoad:
    case CommandKind::DmaStore:
      p.engine = ArmCommandPlan::Engine::Dma;
      p.writes = dma_register_writes(c.dma, c.kind == CommandKind::DmaStore, far_end);
      p.wait_done = !c.async;
      break;
    case CommandKind::Mla:
      p.engine = ArmCommandPlan::Engine::Mla;
      p.mla = task_registers(c.mla, pe_, stream_mla_layout(c, *cfg_, sram_bytes_));
      p.writes = mla_register_writes(p.mla);
      p.wait_done = !c.async;
      break;
    case CommandKind::WaitDma:
      p.engine = ArmCommandPlan::Engine::Dma;
      p.wait_done = true;
      break;
    case CommandKind::WaitMla:
      p.engine = ArmCommandPlan::Engine::Mla;
      p.wait_done = true;
      break;
    case CommandKind::Arm:
      p.arm_cycles = arm_op_cycles(c.arm, *cfg_, sram, sram ? sram_bytes_ : 0);
      arm_cycles_ += p.arm_cycles;
      break;
    case CommandKind::Sync:
      p.sync_index = syncs_[c.sync_group]++;
      break;
  }
  return p;
}

void ArmSequencer::finish(std::uint64_t cycle) {
  command_end_.push_back(cycle);
  ++next_;
}

}  // namespace s2
