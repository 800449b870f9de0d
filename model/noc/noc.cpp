#include "model/noc/noc.h"

#include <stdexcept>

namespace s2 {

void Noc::configure(const HwConfig& cfg, std::vector<RouterShare*> routers) {
  if (routers.size() < static_cast<std::size_t>(cfg.chip.qpes()))
    throw std::invalid_argument("NoC: " + std::to_string(routers.size()) + " routers for a " +
                                std::to_string(cfg.chip.qpes()) + "-QPE mesh");
  mesh_ = Mesh(cfg.chip);
  routers_ = std::move(routers);
  hop_cycles_ = cfg.hop_cycles();
  for (RouterShare* r : routers_) r->set_capacity(cfg.noc_clocks_per_pe_clock());
  link_packets_.assign(static_cast<std::size_t>(mesh_.qpes()) * static_cast<std::size_t>(mesh_.qpes()), 0);
}

void Noc::reset() {
  for (RouterShare* r : routers_) r->reset();
  std::fill(link_packets_.begin(), link_packets_.end(), 0);
}

Noc::Passage Noc::pass(const std::vector<int>& route, std::uint64_t clock, std::uint64_t now) {
  Passage p;
  p.first = p.last = routers_[static_cast<std::size_t>(route.front())]->pass(clock, now);
  for (std::size_t i = 1; i < route.size(); ++i) {
    ++link_packets_[static_cast<std::size_t>(route[i - 1]) * static_cast<std::size_t>(mesh_.qpes()) +
                    static_cast<std::size_t>(route[i])];
    p.last = routers_[static_cast<std::size_t>(route[i])]->pass(p.last + static_cast<std::uint64_t>(hop_cycles_), now);
  }
  return p;
}

Noc::BusiestLink Noc::busiest_link() const {
  BusiestLink b;
  const int n = mesh_.qpes();
  for (int f = 0; f < n; ++f)
    for (int t = 0; t < n; ++t)
      if (link_packets(f, t) > b.packets) b = {f, t, link_packets(f, t)};
  return b;
}

}  // namespace s2
