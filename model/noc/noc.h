// The chip's data NoC as the DMAs see it (thesis 2.3.3, 2.3.4): a packet passes the routers of its mesh
// route one after the other, each router passing at most its capacity per clock (router_share.h: one
// packet per NoC clock from all its inputs, less what its MLAs' operand-A reads take), `hop_cycles` PE
// clocks from one router to the next (4 NoC clocks). Nothing is ticked: a packet books its clock at each
// router, first booked first served, so an idle router costs nothing. QPE-DRAM is the one-router case.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hw_config.h"
#include "model/noc/mesh.h"
#include "model/noc/router_share.h"

namespace s2 {

class Noc {
 public:
  // `routers`: each QPE's router, by QPE index (at least cfg.chip.qpes()).
  void configure(const HwConfig& cfg, std::vector<RouterShare*> routers);
  const Mesh& mesh() const { return mesh_; }
  int hop_cycles() const { return hop_cycles_; }
  // Clears the routers' ledgers and the counters (between streams).
  void reset();

  struct Passage {
    std::uint64_t first = 0;  // the PE clock the packet passed the route's first router
    std::uint64_t last = 0;   // ... and its last
  };
  // A packet that reaches the first router of `route` in PE clock `clock` (`now`: the current clock).
  Passage pass(const std::vector<int>& route, std::uint64_t clock, std::uint64_t now);

  // Packets that went from router `from` to its neighbour `to` since the last reset.
  std::uint64_t link_packets(int from, int to) const {
    return link_packets_[static_cast<std::size_t>(from) * static_cast<std::size_t>(mesh_.qpes()) + static_cast<std::size_t>(to)];
  }
  struct BusiestLink {
    int from = -1, to = -1;
    std::uint64_t packets = 0;
  };
  BusiestLink busiest_link() const;

 private:
  Mesh mesh_;
  std::vector<RouterShare*> routers_;
  int hop_cycles_ = 2;
  std::vector<std::uint64_t> link_packets_;
};

}  // namespace s2
