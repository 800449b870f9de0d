// `s2cosim snn --sweep fig9`: the SNN paper's Figure 9 sweep (Huang et al. 2023, section 4.1): the memory
// optimization rate of Echelon Reorder, pure and mixed, for 50 pre-neurons, 30, 31 and 32 post-neurons and
// delay ranges 1 to 16, at each density asked (the paper's densities are in its figure only). A planner's
// figure: no stream runs. Layers drawn as `s2cosim snn` draws them, from one seed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace s2 {

struct SnnSweepRequest {
  std::vector<double> densities = {0.05, 0.1, 0.2};
  std::uint64_t seed = 1;
  std::string json_out;
  std::string html_out;  // the plot per density (outputs/snn_figures.h)
};

// Prints the table per density; returns 0, 2 for bad input, 3 if the JSON or the HTML could not be written.
int snn_figure9(const SnnSweepRequest& req, std::ostream& out, std::ostream& err);

}  // namespace s2
