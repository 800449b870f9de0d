#include "model/pe/pe.h"

#include <cstring>

namespace s2 {

Pe::Pe(sc_core::sc_module_name name, int id, MlaScheduler& scheduler)
    : sc_module(name),
      noc_in("noc_in"),
      sram_port("sram_port"),
      sram("sram", 128 * 1024),
      mla("mla", id, sram, scheduler),
      dma("dma", id, sram.data(), sram.size()),
      arm("arm", id, sram.data(), sram.size(), dma, mla),
      id_(id),
      scheduler_(scheduler) {
  noc_in.register_b_transport(this, &Pe::b_transport);
  noc_in.register_transport_dbg(this, &Pe::transport_dbg);
  noc_in.register_get_direct_mem_ptr(this, &Pe::get_direct_mem_ptr);
  sram_port.bind(sram.socket);
}

void Pe::write_register(tlm::tlm_generic_payload& p, const sc_core::sc_time& delay) {
  const std::uint64_t index = (p.get_address() & ~qpe_addr::kRegisterSpace) / 4;
  if (!p.is_write() || index >= regs_.size() || p.get_data_length() < 4) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  std::uint32_t v = 0;
  std::memcpy(&v, p.get_data_ptr(), 4);
  regs_[index] = v;
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  if (index == qpe_addr::kStart) {
    // The task controller sees the packet at the PE clock edge after it arrives and starts the MLA two
    // clocks later (its register stage, then the MLA's SETUP clock), as the RTL's task_ctrl does.
    const sc_core::sc_time clk = scheduler_.pe_clock();
    const std::uint64_t arrival = static_cast<std::uint64_t>((sc_core::sc_time_stamp() + delay) / clk);
    mla.start(regs_, arrival + 2);
    regs_[qpe_addr::kBPlaneRows] = 0;  // one-shot, as the RTL's task_ctrl clears it
  }
}

void Pe::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (p.get_address() & qpe_addr::kRegisterSpace) write_register(p, delay);
  else sram_port->b_transport(p, delay);
}

unsigned Pe::transport_dbg(tlm::tlm_generic_payload& p) {
  if (p.get_address() & qpe_addr::kRegisterSpace) return 0;
  return sram_port->transport_dbg(p);
}

bool Pe::get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  if (p.get_address() & qpe_addr::kRegisterSpace) return false;
  return sram_port->get_direct_mem_ptr(p, dmi);
}

}  // namespace s2
