#include "harness/outputs/snn_figures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "harness/outputs/svg_plot.h"

namespace s2 {
namespace {

// A segment per kind of mapper::SnnMemory: a kind added there must be drawn here.
static_assert(sizeof(mapper::SnnMemory) == 6 * sizeof(std::uint64_t), "a new kind of SnnMemory needs its segment here");

struct Kind {
  const char* name;
  const char* colour;
};
constexpr Kind kMemoryKinds[] = {{"weights", "#1565c0"}, {"spikes", "#2e7d32"}, {"spike_map", "#f9a825"},
                                 {"index", "#6a1b9a"},   {"currents", "#c62828"}, {"buffers", "#757575"}};
std::array<std::uint64_t, 6> memory_by_kind(const mapper::SnnMemory& m) {
  return {m.weights, m.spikes, m.spike_map, m.index, m.currents, m.buffers};
}
// In PeTime's order (mla, dram, noc, sync, arm).
constexpr const char* kTimeColours[] = {"#1565c0", "#ef6c00", "#00838f", "#ad1457", "#558b2f"};
static_assert(std::size(kTimeColours) == static_cast<std::size_t>(PeTime::kCount), "a colour per PeTime");
constexpr const char* kWholeColour = "#78909c";
constexpr double kLegendW = 150;  // right of the plot area

// A tick step of 1, 2 or 5 times a power of ten giving about `ticks` ticks up to `top`.
double nice_step(double top, int ticks) {
  const double raw = top / ticks, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}
std::string tick_text(double v, double step) {
  const int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step)));
  return fmt::format("{:.{}f}", v, decimals);
}

// The y axis from 0 to a round value at or above `max_value`, its ticks and grid; returns the axis's top.
double y_axis(std::string& s, double max_value, double x0, double x1, double y_bottom, double height) {
  if (!(max_value > 0)) max_value = 1;
  const double step = nice_step(max_value, 5), top = std::ceil(max_value / step - 1e-9) * step;
  for (double v = 0; v <= top + step / 2; v += step) {
    const double y = y_bottom - v / top * height;
    s += fmt::format("<line x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"{}\"/>\n", x0, y, x1, y, v == 0 ? "#888" : "#eee");
    s += fmt::format("<text x=\"{}\" y=\"{:.2f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n", x0 - 4, y + 4, tick_text(v, step));
  }
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n", x0, y_bottom - height, x0, y_bottom);
  return top;
}

struct LegendEntry {
  std::string name;
  const char* colour;
  bool line = false, dashed = false;  // a line's sample (the sweep), else a swatch
};
std::string legend(const std::vector<LegendEntry>& entries) {
  std::string s;
  const double x = kPlotW - kRight - kLegendW + 16;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const double y = kTop + 4 + 16 * double(i);
    if (e.line)
      s += fmt::format("<line class=\"sample\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", x, y + 5,
                       x + 18, y + 5, e.colour, e.dashed ? " stroke-dasharray=\"5 3\"" : "");
    else
      s += fmt::format("<rect class=\"swatch\" x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/>\n", x, y, e.colour);
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\">{}</text>\n", x + 24, y + 9, xml_escape(e.name));
  }
  return s;
}

std::string placeholder(const std::string& id, const std::string& what) {
  return svg_open(id, kPlotW, 60) +
         fmt::format("<text x=\"{}\" y=\"34\" class=\"axis\">{}</text>\n</svg>\n", kLeft, xml_escape(what));
}

struct Segment {
  double value;
  const char* colour;
  std::string title;  // the tooltip, unescaped
};
struct StackedBar {
  std::string name, under, over;  // below the axis: the name, then `under`; above the bar: `over`
  std::vector<Segment> segments;  // bottom first
};

// A stacked bar per entry; the segments' heights proportional to their values, zero ones not drawn.
std::string stacked_bars(const std::string& id, const std::string& y_label, const std::vector<StackedBar>& bars,
                         const std::vector<LegendEntry>& entries) {
  const double x0 = kLeft, x1 = kPlotW - kRight - kLegendW, h = kPlotH - kTop - kBottom, y0 = kTop + h;
  double max_total = 0;
  for (const StackedBar& b : bars) {
    double t = 0;
    for (const Segment& g : b.segments) t += std::max(g.value, 0.0);
    max_total = std::max(max_total, t);
  }
  std::string s = svg_open(id, kPlotW, kPlotH);
  const double top = y_axis(s, max_total, x0, x1, y0, h);
  const double step = (x1 - x0) / double(bars.size()), width = step * 0.6;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const StackedBar& b = bars[i];
    const double x = x0 + step * double(i) + (step - width) / 2, centre = x + width / 2;
    double y = y0;
    for (const Segment& g : b.segments) {
      if (!(g.value > 0)) continue;
      const double height = g.value / top * h;
      y -= height;
      s += fmt::format(
          "<rect class=\"segment\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}</title></rect>\n", x,
          y, width, height, g.colour, xml_escape(g.title));
    }
    s += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", centre, y - 4, xml_escape(b.over));
    s += fmt::format("<text x=\"{:.2f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", centre, y0 + 14, xml_escape(b.name));
    s += fmt::format("<text x=\"{:.2f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", centre, y0 + 28, xml_escape(b.under));
  }
  s += svg_y_label(kTop + h / 2, y_label);
  return s + legend(entries) + "</svg>\n";
}

std::string pes_text(int pes) { return pes == 1 ? "1 PE" : fmt::format("{} PEs", pes); }

}  // namespace

std::string snn_memory_bars(const std::vector<SnnFigureLayout>& layouts) {
  if (layouts.empty()) return placeholder("plot-snn-memory", "no layout to draw");
  std::vector<StackedBar> bars;
  for (const SnnFigureLayout& l : layouts) {
    StackedBar b{l.name, pes_text(l.pes), fmt::format("{:.1f} KB", double(l.memory.total()) / 1024), {}};
    const auto bytes = memory_by_kind(l.memory);
    for (std::size_t k = 0; k < bytes.size(); ++k)
      b.segments.push_back({double(bytes[k]) / 1024, kMemoryKinds[k].colour,
                            fmt::format("{}: {} {} bytes", l.name, kMemoryKinds[k].name, bytes[k])});
    bars.push_back(std::move(b));
  }
  std::vector<LegendEntry> entries;
  for (const Kind& k : kMemoryKinds) entries.push_back({k.name, k.colour});
  return stacked_bars("plot-snn-memory", "SRAM (KB)", bars, entries);
}

std::string snn_time_bars(const std::vector<SnnFigureLayout>& layouts) {
  if (layouts.empty()) return placeholder("plot-snn-time", "no layout to draw");
  std::vector<StackedBar> bars;
  bool any_whole = false;
  for (const SnnFigureLayout& l : layouts) {
    StackedBar b{l.name, pes_text(l.pes), "no run", {}};
    if (l.cycles_per_timestep) {
      const double cycles = *l.cycles_per_timestep;
      b.over = fmt::format("{:.1f} clk", cycles);
      std::uint64_t sum = 0;
      if (l.pe_time)
        for (std::uint64_t v : *l.pe_time) sum += v;
      if (sum == 0) {
        any_whole = true;
        b.segments.push_back({cycles, kWholeColour, fmt::format("{}: {:.1f} clocks per timestep (no model shares)", l.name, cycles)});
      } else {
        for (std::size_t k = 0; k < l.pe_time->size(); ++k) {
          const double share = double((*l.pe_time)[k]) / double(sum);
          b.segments.push_back({cycles * share, kTimeColours[k],
                                fmt::format("{}: {} {:.1f}% of the PEs' time, {:.1f} clocks per timestep", l.name,
                                            to_string(static_cast<PeTime>(k)), 100 * share, cycles * share)});
        }
      }
    }
    bars.push_back(std::move(b));
  }
  std::vector<LegendEntry> entries;
  for (std::size_t k = 0; k < std::size(kTimeColours); ++k) entries.push_back({to_string(static_cast<PeTime>(k)), kTimeColours[k]});
  if (any_whole) entries.push_back({"no model shares", kWholeColour});
  return stacked_bars("plot-snn-time", "clocks per timestep", bars, entries);
}

std::string snn_sweep_plot(const std::vector<SnnSweepPoint>& points, const std::string& id) {
  if (points.empty()) return placeholder(id, "no point to draw");
  std::map<std::pair<int, bool>, std::vector<const SnnSweepPoint*>> lines;  // by (post, mixed): pure before mixed
  int d_min = points.front().delays, d_max = d_min;
  double max_rate = 0;
  for (const SnnSweepPoint& p : points) {
    lines[{p.post, p.mixed}].push_back(&p);
    d_min = std::min(d_min, p.delays);
    d_max = std::max(d_max, p.delays);
    max_rate = std::max(max_rate, 100 * p.rate);
  }
  const double x0 = kLeft, x1 = kPlotW - kRight - kLegendW, h = kPlotH - kTop - kBottom, y0 = kTop + h;
  std::string s = svg_open(id, kPlotW, kPlotH);
  const double top = y_axis(s, max_rate, x0, x1, y0, h);
  const double span = std::max(d_max - d_min, 1);
  auto px = [&](int d) { return x0 + 10 + double(d - d_min) / span * (x1 - x0 - 20); };
  auto py = [&](double rate) { return y0 - 100 * rate / top * h; };
  const int x_step = std::max(1, int(nice_step(span, 16)));
  for (int d = d_min; d <= d_max; d += x_step)
    s += fmt::format("<text x=\"{:.2f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", px(d), y0 + 14, d);
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">delay range</text>\n", (x0 + x1) / 2, y0 + 34);
  constexpr const char* kPostColours[] = {"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f"};
  std::map<int, const char*> colour_of;
  std::vector<LegendEntry> entries;
  for (auto& [key, pts] : lines) {
    const auto [post, mixed] = key;
    if (!colour_of.count(post)) colour_of[post] = kPostColours[colour_of.size() % std::size(kPostColours)];
    const char* colour = colour_of[post];
    std::sort(pts.begin(), pts.end(), [](const SnnSweepPoint* a, const SnnSweepPoint* b) { return a->delays < b->delays; });
    const std::string name = fmt::format("post {}, {}", post, mixed ? "mixed" : "pure");
    std::string xy;
    for (const SnnSweepPoint* p : pts) xy += fmt::format("{}{:.2f},{:.2f}", xy.empty() ? "" : " ", px(p->delays), py(p->rate));
    s += fmt::format("<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", xy, colour,
                     mixed ? " stroke-dasharray=\"5 3\"" : "");
    for (const SnnSweepPoint* p : pts)
      s += fmt::format("<circle class=\"point\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"3\" fill=\"{}\" stroke=\"{}\"><title>{}, delays {}: {:.1f}%</title></circle>\n",
                       px(p->delays), py(p->rate), mixed ? "#fff" : colour, colour, name, p->delays, 100 * p->rate);
    entries.push_back({name, colour, true, mixed});
  }
  s += svg_y_label(kTop + h / 2, "memory optimization rate (%)");
  return s + legend(entries) + "</svg>\n";
}

std::vector<ReportFigure> snn_figure10_figures(const std::vector<SnnFigureLayout>& layouts) {
  return {{"SRAM by kind per layout (the SNN paper's Figure 10, memory)",
           "bar: the layout's SRAM over its PEs, stacked by kind; above it the total, below it the PEs",
           snn_memory_bars(layouts)},
          {"Clocks per timestep per layout (the SNN paper's Figure 10, time)",
           "bar: clocks per timestep, the RTL's where it ran, else the model's; segments: shares of the PEs' summed time by "
           "the model, scaled to the bar",
           snn_time_bars(layouts)}};
}

std::vector<ReportFigure> snn_figure9_figures(const std::vector<SnnSweepPoint>& points) {
  std::vector<double> densities;
  for (const SnnSweepPoint& p : points)
    if (std::find(densities.begin(), densities.end(), p.density) == densities.end()) densities.push_back(p.density);
  std::vector<ReportFigure> figures;
  for (std::size_t i = 0; i < densities.size(); ++i) {
    std::vector<SnnSweepPoint> mine;
    std::copy_if(points.begin(), points.end(), std::back_inserter(mine), [&](const SnnSweepPoint& p) { return p.density == densities[i]; });
    figures.push_back({fmt::format("Memory optimization rate against delay range, density {} (the SNN paper's Figure 9)", densities[i]),
                       "a line per post-neuron count (solid: echelon, dashed with open markers: echelon_mixed); the rate: the share "
                       "of the 4-row, 16-column aligned weight-delay map no rectangle encloses",
                       snn_sweep_plot(mine, fmt::format("plot-snn-sweep-{}", i + 1))});
  }
  return figures;
}

}  // namespace s2
