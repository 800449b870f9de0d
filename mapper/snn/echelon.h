// Echelon Reorder (Huang et al. 2023, section 3.1-3.2): the weight-delay map's rows sorted into an echelon
// matrix (each row by the column of its first non-zero weight, the all-zero rows last), then cut into
// rectangles the MLA can take: band k holds the rows whose first non-zero weight lies in the 16-column
// stripe k, and spans the columns from 16k to the map's aligned end; each band's height is a multiple of 4, its
// lower line shifted down until it is (a row moved into the band above is still inside its rectangle).
//
// The weight-delay map is operand_stack's (mapper/snn/layouts.h): row n = q * pre + i holds W[D - 1 - q][i][:].
#pragma once

#include <cstdint>
#include <vector>

#include "model/snn_layer.h"

namespace s2::mapper {

struct EchelonBand {
  int first_row = 0, rows = 0;  // echelon rows [first_row, first_row + rows), rows a multiple of 4
  int first_col = 0;            // 16k: the band spans columns [first_col, the blue part's end)
};

struct EchelonMap {
  int map_rows = 0;                // D x pre
  std::vector<int> source;         // echelon row e holds weight-delay row source[e]
  std::vector<int> target;         // weight-delay row n lands at echelon row target[n] (Circle Reverse's table)
  int nonzero_rows = 0;            // rows with a non-zero weight, first in echelon order
  int blue_cols = 0;               // the columns the bands cover (16 x the stripes the MLA takes)
  std::vector<EchelonBand> bands;  // non-empty bands, top to bottom
  std::uint64_t band_weights() const;  // weights the rectangles enclose, padding included (H x (16-aligned end - 16k))
};

// The weight-delay map of `l` in echelon order, its bands over the first `blue_cols` columns (a multiple of 16;
// the rows whose non-zero weights all lie beyond it are in no band). Pure MAC: blue_cols = 16-aligned post;
// the mixed variant: 16 x floor(post / 16), the last post mod 16 columns left to the ARM.
EchelonMap echelon_reorder(const SnnLayer& l, int blue_cols);

// The paper's memory optimization rate (section 4.1): the share of the memory-aligned weight-delay map (4-aligned
// D x pre rows by 16-aligned post columns) that no rectangle encloses. Mixed: the ARM's last post mod 16 columns
// count as enclosed unpadded, over the rows with a weight.
struct EchelonMemory {
  std::uint64_t aligned_weights = 0, enclosed_weights = 0;
  double optimization_rate() const { return aligned_weights ? 1.0 - double(enclosed_weights) / double(aligned_weights) : 0.0; }
};
EchelonMemory echelon_memory(const SnnLayer& l, bool mixed);

// The weight-delay map's value (row n, column j).
inline std::int8_t weight_delay(const SnnLayer& l, int n, int j) {
  return l.weight(l.delays - 1 - n / l.pre, n % l.pre, j);
}

}  // namespace s2::mapper
