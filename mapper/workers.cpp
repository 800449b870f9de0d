#include "workers.h"

#include <stdexcept>
#include <string>

#include "model/noc/mesh.h"

namespace s2::mapper {

Workers workers_of(const HwConfig& cfg, int limit) {
  Workers w;
  const Mesh mesh(cfg.chip);
  w.chip_pes = cfg.chip.qpes() * kPesPerQpe;
  std::vector<int> nearest(static_cast<std::size_t>(mesh.qpes()), 0), hops(static_cast<std::size_t>(mesh.qpes()), 0);
  std::vector<int> qpes;
  for (int q = 0; q < mesh.qpes(); ++q) {
    if (!cfg.chip.has_pes(q)) continue;  // a router only
    int best = 0;
    for (int d = 1; d < mesh.drams(); ++d)
      if (mesh.hops(q, mesh.dram_router(d, q)) < mesh.hops(q, mesh.dram_router(best, q))) best = d;
    nearest[static_cast<std::size_t>(q)] = best;
    hops[static_cast<std::size_t>(q)] = mesh.hops(q, mesh.dram_router(best, q));
    qpes.push_back(q);
  }
  std::vector<int> chosen;  // PEs
  if (limit > 0) {
    std::vector<int> by_distance = qpes;
    std::stable_sort(by_distance.begin(), by_distance.end(),
                     [&](int a, int b) { return hops[static_cast<std::size_t>(a)] < hops[static_cast<std::size_t>(b)]; });
    for (int q : by_distance)
      for (int p = 0; p < kPesPerQpe && static_cast<int>(chosen.size()) < limit; ++p) chosen.push_back(q * kPesPerQpe + p);
    if (static_cast<int>(chosen.size()) < limit)
      throw std::invalid_argument("workers=" + std::to_string(limit) + ": the system has " + std::to_string(chosen.size()) + " PEs");
  }
  std::vector<int> group_of_dram(static_cast<std::size_t>(mesh.drams()), -1);
  for (int q : qpes)
    for (int p = 0; p < kPesPerQpe; ++p) {
      const int pe = q * kPesPerQpe + p;
      if (limit > 0 && std::find(chosen.begin(), chosen.end(), pe) == chosen.end()) continue;
      int& g = group_of_dram[static_cast<std::size_t>(nearest[static_cast<std::size_t>(q)])];
      if (g < 0) {
        g = static_cast<int>(w.pes.size());
        w.pes.emplace_back();
        w.dram.push_back(nearest[static_cast<std::size_t>(q)]);
      }
      w.pes[static_cast<std::size_t>(g)].push_back(pe);
    }
  return w;
}

void use_dram(TaskStream& st, int pe, int dram) {
  for (StreamCommand& c : st.pe[static_cast<std::size_t>(pe)])
    if ((c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore) && c.dma.remote.kind == MemoryRef::Kind::Dram)
      c.dma.remote.index = dram;
}

void use_group_drams(TaskStream& st, const Workers& w) {
  for (std::size_t g = 0; g < w.pes.size(); ++g)
    for (int pe : w.pes[g]) use_dram(st, pe, w.dram[g]);
}

}  // namespace s2::mapper
