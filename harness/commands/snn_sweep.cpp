#include "harness/commands/snn_sweep.h"

#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/outputs/output_files.h"
#include "harness/outputs/snn_figures.h"
#include "mapper/snn/echelon.h"
#include "model/snn_layer.h"

namespace s2 {

int snn_figure9(const SnnSweepRequest& req, std::ostream& out, std::ostream& err) {
  constexpr int kPre = 50;
  const int posts[] = {30, 31, 32};
  for (double d : req.densities)
    if (!(d > 0.0 && d <= 1.0)) {
      err << "s2cosim snn --sweep fig9: --density " << d << ": expected a fraction above 0, at most 1\n";
      return kExitBadInput;
    }
  if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}}, {}, err)) return kExitBadInput;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<SnnSweepPoint> points;
  out << "Echelon Reorder's memory optimization rate (the share of the aligned weight-delay map no rectangle encloses), "
         "pre 50, seed " << req.seed << "\n";
  for (double density : req.densities) {
    out << fmt::format("\ndensity {}\n{:>6}", density, "delays");
    for (int post : posts) out << fmt::format(" {:>9} {:>9}", fmt::format("{}:pure", post), fmt::format("{}:mixed", post));
    out << "\n";
    for (int delays = 1; delays <= 16; ++delays) {
      out << fmt::format("{:>6}", delays);
      for (int post : posts) {
        const SnnLayer l = draw_snn_layer({kPre, post, delays, 1, density, 0.0, req.seed});
        for (bool mixed : {false, true}) {
          const mapper::EchelonMemory m = mapper::echelon_memory(l, mixed);
          out << fmt::format(" {:>8.1f}%", 100.0 * m.optimization_rate());
          rows.push_back({{"density", density}, {"pre", kPre}, {"post", post}, {"delays", delays},
                          {"layout", mixed ? "echelon_mixed" : "echelon"}, {"aligned_weights", m.aligned_weights},
                          {"enclosed_weights", m.enclosed_weights}, {"optimization_rate", m.optimization_rate()}});
          points.push_back({density, post, mixed, delays, m.optimization_rate()});
        }
      }
      out << "\n";
    }
  }
  const bool written = write_outputs(
      {{req.json_out,
        [&] {
          nlohmann::ordered_json j;
          j["command"] = "snn --sweep fig9";
          j["seed"] = req.seed;
          j["figure9"] = rows;
          return j.dump(2) + "\n";
        }},
       {req.html_out,
        [&] {
          return figures_html("snn --sweep fig9: Echelon Reorder's memory optimization rate (the SNN paper's Figure 9)",
                              {fmt::format("pre 50, post 30, 31 and 32, delay ranges 1 to 16, seed {}; a planner's figure: no stream runs",
                                           req.seed)},
                              snn_figure9_figures(points));
        }}},
      err);
  return written ? kExitPass : kExitOutput;
}

}  // namespace s2
