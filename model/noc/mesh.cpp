#include "model/noc/mesh.h"

#include <cstdlib>
#include <stdexcept>

namespace s2 {

std::string qpe_name(const ChipShape& chip, int qpe) {
  const QpeCoord c = chip.qpe_coord(qpe);
  return "QPE(" + std::to_string(c.x) + "," + std::to_string(c.y) + ")";
}

int Mesh::hops(int from_qpe, int to_qpe) const {
  const QpeCoord a = shape_.qpe_coord(from_qpe), b = shape_.qpe_coord(to_qpe);
  return std::abs(a.x - b.x) + std::abs(a.y - b.y);
}

std::vector<int> Mesh::route(int from_qpe, int to_qpe) const {
  if (from_qpe < 0 || to_qpe < 0 || from_qpe >= qpes() || to_qpe >= qpes())
    throw std::out_of_range("mesh route: QPE " + std::to_string(from_qpe < 0 || from_qpe >= qpes() ? from_qpe : to_qpe) +
                            " outside the " + std::to_string(qpes()) + "-QPE mesh");
  QpeCoord at = shape_.qpe_coord(from_qpe);
  const QpeCoord to = shape_.qpe_coord(to_qpe);
  std::vector<int> r{from_qpe};
  while (at.x != to.x) {
    at.x += at.x < to.x ? 1 : -1;
    r.push_back(shape_.qpe_index(at));
  }
  while (at.y != to.y) {
    at.y += at.y < to.y ? 1 : -1;
    r.push_back(shape_.qpe_index(at));
  }
  return r;
}

int Mesh::nearest(const std::vector<QpeCoord>& candidates, int qpe) const {
  int best = -1, best_hops = 0;
  for (QpeCoord c : candidates) {
    const int i = shape_.qpe_index(c), h = hops(qpe, i);
    if (best < 0 || h < best_hops) best = i, best_hops = h;
  }
  return best;
}

int Mesh::dram_router(int dram, int qpe) const {
  if (dram < 0 || dram >= drams()) throw std::out_of_range("mesh: no DRAM " + std::to_string(dram));
  return nearest(shape_.drams[static_cast<std::size_t>(dram)].attach, qpe);
}

int Mesh::host_agent(int qpe) const { return nearest(shape_.host_agents, qpe); }

int Mesh::neighbour(int qpe, int direction) const {
  const QpeCoord c = shape_.qpe_coord(qpe);
  switch (direction) {
    case kNorth: return c.y > 0 ? qpe - shape_.mesh_cols : -1;  // north is y - 1
    case kEast: return c.x + 1 < shape_.mesh_cols ? qpe + 1 : -1;
    case kSouth: return c.y + 1 < shape_.mesh_rows ? qpe + shape_.mesh_cols : -1;
    case kWest: return c.x > 0 ? qpe - 1 : -1;
    default: throw std::out_of_range("mesh: no direction " + std::to_string(direction));
  }
}

std::uint64_t host_path_cycles(const HwConfig& cfg, const Mesh& mesh, int qpe) {
  return static_cast<std::uint64_t>(cfg.host_latency_cycles) +
         static_cast<std::uint64_t>(mesh.hops(qpe, mesh.host_agent(qpe))) * static_cast<std::uint64_t>(cfg.hop_cycles());
}

}  // namespace s2
