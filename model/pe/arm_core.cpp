#include "model/pe/arm_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "model/pe/dma.h"
#include "model/pe/mla.h"
#include "model/pe/pe_registers.h"
#include "model/sram_layout.h"

namespace s2 {

ArmCore::ArmCore(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes, Dma& dma, Mla& mla)
    : sc_module(name), pe_(pe), sram_(sram), sram_bytes_(sram_bytes), dma_(dma), mla_(mla) {
  SC_HAS_PROCESS(ArmCore);
  SC_THREAD(run);
}

void ArmCore::start(const std::vector<StreamCommand>* commands) {
  commands_ = commands;
  done_ = false;
  waiting_ = "its start";
  end_cycle_ = arm_cycles_ = 0;
  command_end_.clear();
  start_event_.notify(sc_core::SC_ZERO_TIME);
}

void ArmCore::wait_dma_idle() {
  if (!dma_.busy()) return;
  const std::size_t was = waiting_.size();
  waiting_ += ": the DMA's transfer";
  sc_core::wait(dma_.done_event);
  waiting_.resize(was);
}

void ArmCore::wait_mla_idle() {
  if (!mla_.started()) return;
  const sc_core::sc_time clk = system_->pe_clock();
  if (!mla_.done()) {
    const std::size_t was = waiting_.size();
    waiting_ += ": the MLA";
    sc_core::wait(mla_.done_event);
    waiting_.resize(was);
  }
  // the task controller registers the MLA's done into its interrupt: the ARM sees it a clock later
  const sc_core::sc_time seen = clk * static_cast<double>(mla_.end_cycle() + 1);
  if (seen > sc_core::sc_time_stamp()) sc_core::wait(seen - sc_core::sc_time_stamp());
}

void ArmCore::run() {
  while (true) {
    sc_core::wait(start_event_);
    const sc_core::sc_time clk = system_->pe_clock();
    const HwConfig& cfg = system_->config();
    auto cycle_now = [&] { return static_cast<std::uint64_t>(std::llround(sc_core::sc_time_stamp() / clk)); };
    std::map<int, std::size_t> syncs;  // Syncs met so far, per group
    time_.fill(0);
    // charges the clocks since `from` to `t`
    auto charge = [&](PeTime t, std::uint64_t from) { time_[static_cast<std::size_t>(t)] += cycle_now() - from; };
    for (std::size_t k = 0; k < commands_->size(); ++k) {
      const StreamCommand& c = (*commands_)[k];
      waiting_ = "command " + std::to_string(k + 1) + " of " + std::to_string(commands_->size()) + " (" +
                 to_string(c.kind) + (c.operation.empty() ? "" : " " + c.operation) + ")";
      const std::uint64_t began = cycle_now();
      switch (c.kind) {
        case CommandKind::DmaLoad:
        case CommandKind::DmaStore: {
          // the ARM waits for the DMA to be idle, writes its registers, one per clock; the DMA starts in the
          // clock after the last
          const bool store = c.kind == CommandKind::DmaStore;
          wait_dma_idle();
          charge(dma_kind_, began);
          const std::uint64_t programmed = cycle_now();
          dma_kind_ = c.dma.remote.kind == MemoryRef::Kind::Dram ? PeTime::Dram : PeTime::Noc;
          sc_core::wait(clk * static_cast<double>(dma_register_writes(c.dma, store).size()));
          dma_.start(c.dma, !store);
          if (!c.async) wait_dma_idle();
          charge(dma_kind_, programmed);
          break;
        }
        case CommandKind::Mla: {
          wait_mla_idle();
          const SramLayout l = stream_mla_layout(c, cfg, sram_bytes_);
          // the ARM writes the MLA's descriptor registers, one per clock; the MLA starts two clocks after
          // the START write, as the task controller does
          const TaskRegisters regs = task_registers(c.mla, pe_, l);
          sc_core::wait(clk * static_cast<double>(mla_register_writes(regs).size() - 1));
          mla_.start(regs, cycle_now() + 2);
          if (!c.async) wait_mla_idle();
          else sc_core::wait(clk);  // the START write's clock
          charge(PeTime::Mla, began);
          break;
        }
        case CommandKind::WaitDma:
          wait_dma_idle();
          charge(dma_kind_, began);
          break;
        case CommandKind::WaitMla:
          wait_mla_idle();
          charge(PeTime::Mla, began);
          break;
        case CommandKind::Arm: {
          const std::uint64_t n = arm_op_cycles(c.arm, cfg.arm);
          arm_cycles_ += n;
          if (system_->arm_ops_timed() && n) sc_core::wait(clk * static_cast<double>(n));
          arm_apply(c.arm, sram_, sram_bytes_);
          charge(PeTime::Arm, began);
          break;
        }
        case CommandKind::Sync:
          waiting_ += ": the other PEs of Sync group " + std::to_string(c.sync_group) + " at its Sync " +
                      std::to_string(syncs[c.sync_group] + 1);
          system_->sync(chip_pe_, c.sync_group, syncs[c.sync_group]++);
          charge(PeTime::Sync, began);
          break;
      }
      command_end_.push_back(cycle_now());
    }
    // the PE's work ends when its engines are idle
    waiting_ = "after its last command";
    std::uint64_t began = cycle_now();
    wait_dma_idle();
    charge(dma_kind_, began);
    began = cycle_now();
    wait_mla_idle();
    charge(PeTime::Mla, began);
    end_cycle_ = cycle_now();
    waiting_.clear();
    done_ = true;
    done_event.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace s2
