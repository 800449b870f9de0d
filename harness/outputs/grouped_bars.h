// Grouped, stacked bars as SVG for the HTML reports: groups along x (e.g. strategies), a bar per member in each
// (e.g. MAC shapes), each bar a stack of segments (e.g. energy per component). `s2cosim design-report` draws
// its clocks, energy and area panels with it. A pure function from plain data to SVG, every string escaped.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace s2 {

struct BarSegment {
  std::string name;    // the legend's (and the tooltip's) word for it
  double value = 0;    // in the plot's unit; a segment <= 0 is not drawn
  std::string colour;  // "#1565c0"
};
struct GroupedBar {
  std::string label;  // under the bar ("16x2")
  std::vector<BarSegment> segments;
};
struct BarGroup {
  std::string label;  // under the group ("fuse_reuse")
  std::vector<GroupedBar> bars;
};

// One plot: y from 0 to the highest bar, ticks at 0, half and full as `format` writes a value; a legend of
// every segment name with its colour (first-seen order); a tooltip per segment (group, bar, name, value).
// No bars: an empty string.
std::string grouped_bar_plot(const std::string& id, const std::string& y_label, const std::vector<BarGroup>& groups,
                             const std::function<std::string(double)>& format);

}  // namespace s2
