#include "model/pe/arm_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/pe/dma.h"
#include "model/pe/mla.h"

namespace s2 {

ArmCore::ArmCore(sc_core::sc_module_name name, int pe, std::uint8_t* sram, std::size_t sram_bytes, Dma& dma, Mla& mla)
    : sc_module(name), sequencer_(pe, sram_bytes), sram_(sram), sram_bytes_(sram_bytes), dma_(dma), mla_(mla) {
  SC_HAS_PROCESS(ArmCore);
  SC_THREAD(run);
}

void ArmCore::start(const std::vector<StreamCommand>* commands) {
  sequencer_.start(system_->config(), commands);
  done_ = false;
  waiting_ = "its start";
  end_cycle_ = 0;
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
    auto cycle_now = [&] { return static_cast<std::uint64_t>(std::llround(sc_core::sc_time_stamp() / clk)); };
    time_.fill(0);
    // charges the clocks since `from` to `t`
    auto charge = [&](PeTime t, std::uint64_t from) { time_[static_cast<std::size_t>(t)] += cycle_now() - from; };
    const std::vector<StreamCommand>& commands = sequencer_.commands();
    while (!sequencer_.at_end()) {
      const StreamCommand& c = sequencer_.command();
      waiting_ = "command " + std::to_string(sequencer_.next() + 1) + " of " + std::to_string(commands.size()) + " (" +
                 to_string(c.kind) + (c.operation.empty() ? "" : " " + c.operation) + ")";
      const std::uint64_t began = cycle_now();
      const ArmCommandPlan plan = sequencer_.plan(nullptr, sram_);
      switch (c.kind) {
        case CommandKind::DmaLoad:
        case CommandKind::DmaStore: {
          // the ARM waits for the DMA to be idle, writes its registers, one per clock; the DMA starts in the
          // clock after the last
          wait_dma_idle();
          charge(dma_kind_, began);
          const std::uint64_t programmed = cycle_now();
          dma_kind_ = c.dma.remote.kind == MemoryRef::Kind::Dram ? PeTime::Dram : PeTime::Noc;
          sc_core::wait(clk * static_cast<double>(plan.writes.size()));
          dma_.start(c.dma, c.kind == CommandKind::DmaLoad);
          if (plan.wait_done) wait_dma_idle();
          charge(dma_kind_, programmed);
          break;
        }
        case CommandKind::Mla:
          // the ARM writes the MLA's descriptor registers, one per clock; the MLA starts two clocks after
          // the START write, as the task controller does
          wait_mla_idle();
          sc_core::wait(clk * static_cast<double>(plan.writes.size() - 1));
          mla_.start(plan.mla, cycle_now() + 2);
          if (plan.wait_done) wait_mla_idle();
          else sc_core::wait(clk);  // the START write's clock
          charge(PeTime::Mla, began);
          break;
        case CommandKind::WaitDma:
          wait_dma_idle();
          charge(dma_kind_, began);
          break;
        case CommandKind::WaitMla:
          wait_mla_idle();
          charge(PeTime::Mla, began);
          break;
        case CommandKind::Arm:
          if (system_->arm_ops_timed() && plan.arm_cycles) sc_core::wait(clk * static_cast<double>(plan.arm_cycles));
          sequencer_.count_sram(arm_op_sram_bytes(c.arm, sram_, sram_bytes_));
          if (system_->moves_data()) arm_apply(c.arm, sram_, sram_bytes_);
          charge(PeTime::Arm, began);
          break;
        case CommandKind::Sync:
          waiting_ += ": the other PEs of Sync group " + std::to_string(c.sync_group) + " at its Sync " +
                      std::to_string(plan.sync_index + 1);
          system_->sync(chip_pe_, c.sync_group, plan.sync_index);
          charge(PeTime::Sync, began);
          break;
      }
      sequencer_.finish(cycle_now());
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
