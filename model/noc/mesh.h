// The chip's mesh of QPE routers (thesis 2.3.4, 3.4): which routers a packet passes between two QPEs, and
// where it meets a DRAM or the host. Routes are dimension-ordered, X first, then Y (the thesis's
// simulator routes this way); a DRAM is entered and left at its attached router nearest the QPE. Pure
// topology: the routers' capacity is noc/noc.h's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hw_config.h"

namespace s2 {

class Mesh {
 public:
  explicit Mesh(const ChipShape& shape = qpe_dram_chip()) : shape_(shape) {}
  const ChipShape& shape() const { return shape_; }
  int qpes() const { return shape_.qpes(); }
  int drams() const { return static_cast<int>(shape_.drams.size()); }
  int hops(int from_qpe, int to_qpe) const;
  // The routers (QPE indices) a packet passes from QPE `from_qpe` to QPE `to_qpe`, both included.
  std::vector<int> route(int from_qpe, int to_qpe) const;
  // The router through which QPE `qpe` reaches DRAM `dram`.
  int dram_router(int dram, int qpe) const;
  // The host agent router relaying QPE `qpe`'s host traffic (the nearest agent).
  int host_agent(int qpe) const;
  // QPE `qpe`'s neighbour towards `direction`, or -1 at the mesh's edge: the links of rtl_stubs/chip.sv
  // (its neighbour()), which the RTL backend wires between the Verilated QPEs.
  enum Direction { kNorth = 0, kEast = 1, kSouth = 2, kWest = 3 };
  static constexpr int kDirections = 4;
  int neighbour(int qpe, int direction) const;

 private:
  int nearest(const std::vector<QpeCoord>& candidates, int qpe) const;
  ChipShape shape_;
};

// "QPE(x,y)": how reports name QPE `qpe` of the mesh.
std::string qpe_name(const ChipShape& chip, int qpe);

// PE clocks between QPE `qpe` and the host, each way: the host interface's latency plus the hops between the
// QPE and its host agent (model/chip/system.h; the RTL's C++ host takes the same).
std::uint64_t host_path_cycles(const HwConfig& cfg, const Mesh& mesh, int qpe);

}  // namespace s2
