#include "mapper/snn/echelon.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "model/sram_layout.h"

namespace s2::mapper {

std::uint64_t EchelonMap::band_weights() const {
  std::uint64_t n = 0;
  for (const EchelonBand& b : bands) n += std::uint64_t(b.rows) * std::uint64_t(align_up(std::uint64_t(blue_cols), 16) - b.first_col);
  return n;
}

EchelonMemory echelon_memory(const SnnLayer& l, bool mixed) {
  const int post16 = static_cast<int>(align_up(std::uint64_t(l.post), 16));
  const int blue = mixed ? l.post / 16 * 16 : post16;
  const EchelonMap e = echelon_reorder(l, blue);
  EchelonMemory m;
  m.aligned_weights = align_up(std::uint64_t(l.delays) * std::uint64_t(l.pre), 4) * std::uint64_t(post16);
  m.enclosed_weights = e.band_weights() + (mixed ? std::uint64_t(e.nonzero_rows) * std::uint64_t(l.post - blue) : 0);
  return m;
}

EchelonMap echelon_reorder(const SnnLayer& l, int blue_cols) {
  if (blue_cols < 0 || blue_cols % 16 != 0 || blue_cols > int(align_up(std::uint64_t(l.post), 16)))
    throw std::invalid_argument("echelon: the MLA's columns must be a multiple of 16 within the map");
  EchelonMap m;
  m.map_rows = l.delays * l.pre;
  m.blue_cols = blue_cols;
  // each row's first non-zero column (post: none)
  std::vector<int> lead(static_cast<std::size_t>(m.map_rows), l.post);
  for (int n = 0; n < m.map_rows; ++n)
    for (int j = 0; j < l.post; ++j)
      if (weight_delay(l, n, j) != 0) {
        lead[static_cast<std::size_t>(n)] = j;
        break;
      }
  m.source.resize(static_cast<std::size_t>(m.map_rows));
  std::iota(m.source.begin(), m.source.end(), 0);
  std::stable_sort(m.source.begin(), m.source.end(),
                   [&](int a, int b) { return lead[static_cast<std::size_t>(a)] < lead[static_cast<std::size_t>(b)]; });
  m.target.resize(m.source.size());
  for (int e = 0; e < m.map_rows; ++e) m.target[static_cast<std::size_t>(m.source[static_cast<std::size_t>(e)])] = e;
  // echelon row of the first row whose lead is at or past column c
  auto first_at = [&](int c) {
    int e = 0;
    while (e < m.map_rows && lead[static_cast<std::size_t>(m.source[static_cast<std::size_t>(e)])] < c) ++e;
    return e;
  };
  m.nonzero_rows = first_at(l.post);
  // the bands' lines: each shifted down to a multiple of 4 rows below the last; the end encloses every row
  // with a non-zero weight in the blue columns
  const int end = std::min(m.map_rows + 3, int(align_up(std::uint64_t(first_at(blue_cols)), 4)));
  int line = 0;
  for (int k = 0; 16 * k < blue_cols && line < end; ++k) {
    const int raw = 16 * (k + 1) >= blue_cols ? end : first_at(16 * (k + 1));
    const int next = std::min(end, line + int(align_up(std::uint64_t(std::max(0, raw - line)), 4)));
    if (next > line) m.bands.push_back({line, next - line, 16 * k});
    line = next;
  }
  return m;
}

}  // namespace s2::mapper
