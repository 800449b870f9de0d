// Processing element in the model: SRAM, MLA, DMA, the ARM core that runs a task stream's commands, and
// the task controller that takes descriptor-register writes from the NoC and starts the MLA on REG_START.
#pragma once

#include <memory>

#include "model/pe/arm_core.h"
#include "model/pe/dma.h"
#include "model/pe/mla.h"
#include "model/pe/sram.h"
#include "model/systemc.h"

namespace s2 {

class Pe : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Pe> noc_in;         // from the router
  tlm_utils::simple_initiator_socket<Pe> sram_port;   // to the SRAM
  Sram sram;
  Mla mla;
  Dma dma;
  ArmCore arm;

  Pe(sc_core::sc_module_name name, int id, MlaScheduler& scheduler);
  int id() const { return id_; }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  void write_register(tlm::tlm_generic_payload& p, const sc_core::sc_time& delay);

  int id_;
  MlaScheduler& scheduler_;
  TaskRegisters regs_{};
};

}  // namespace s2
