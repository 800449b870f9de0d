// The SNN paper's figures (Huang et al. 2023) as SVG for the HTML reports: Figure 10's two panels per layout
// (SRAM by kind, clocks per timestep) and Figure 9's sweep (Echelon Reorder's memory optimization rate against
// the delay range). Pure functions from plain data to self-contained SVG, every input string escaped; no I/O.
// `s2cosim snn` and `s2cosim snn --sweep fig9` fill the structs from what their JSON reports hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/outputs/result.h"
#include "mapper/snn/layouts.h"
#include "model/task_stream.h"

namespace s2 {

// PE clocks by PeTime (mla, dram, noc, sync, arm), summed over the PEs: the model's StreamResult::pe_time.
using SnnPeTime = decltype(StreamResult::pe_time);

// One layout's bars in Figure 10.
struct SnnFigureLayout {
  std::string name;                           // the layout as the report names it ("echelon")
  int pes = 1;                                // the PEs it runs on
  mapper::SnnMemory memory;                   // SRAM bytes by kind, summed over its PEs
  std::optional<double> cycles_per_timestep;  // the RTL's where it ran, else the model's; none: no run finished
  std::optional<SnnPeTime> pe_time;           // the model's, for the time bar's segments; none: the model did not run
};

// One point of Figure 9: the rate (a fraction, 0..1) at one density, post-neuron count, layout and delay range.
struct SnnSweepPoint {
  double density = 0;
  int post = 0;
  bool mixed = false;  // echelon_mixed, else echelon
  int delays = 1;
  double rate = 0;
};

// Figure 10's memory panel: a bar per layout stacked by kind (weights, spikes, spike_map, index, currents,
// buffers; fixed colours, a legend), in KB, labelled with its total and its PEs; a tooltip per segment with
// its bytes. No layouts: a placeholder.
std::string snn_memory_bars(const std::vector<SnnFigureLayout>& layouts);
// Figure 10's time panel: a bar per layout as high as its clocks per timestep, stacked by the shares of the
// PEs' summed time the model gives (each segment the bar's clocks times its share); a bar without shares is
// drawn whole in one colour, a layout without clocks not at all ("no run").
std::string snn_time_bars(const std::vector<SnnFigureLayout>& layouts);
// Figure 9, one plot of every point given: the rate in percent against the delay range, one line with markers
// per (post, pure | mixed), a legend. No points: a placeholder.
std::string snn_sweep_plot(const std::vector<SnnSweepPoint>& points, const std::string& id = "plot-snn-sweep");

// The figures as the HTML report shows them, titled and captioned: Figure 10's two panels; Figure 9's plot
// per density (in the order the densities first appear).
std::vector<ReportFigure> snn_figure10_figures(const std::vector<SnnFigureLayout>& layouts);
std::vector<ReportFigure> snn_figure9_figures(const std::vector<SnnSweepPoint>& points);

}  // namespace s2
