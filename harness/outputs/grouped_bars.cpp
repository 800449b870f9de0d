#include "harness/outputs/grouped_bars.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/outputs/result.h"
#include "harness/outputs/svg_plot.h"

namespace s2 {

std::string grouped_bar_plot(const std::string& id, const std::string& y_label, const std::vector<BarGroup>& groups,
                             const std::function<std::string(double)>& format) {
  double hi = 0;
  std::size_t bars = 0;
  std::vector<std::pair<std::string, std::string>> legend;
  for (const BarGroup& g : groups)
    for (const GroupedBar& b : g.bars) {
      ++bars;
      double sum = 0;
      for (const BarSegment& s : b.segments) {
        sum += std::max(s.value, 0.0);
        if (std::none_of(legend.begin(), legend.end(), [&](const auto& l) { return l.first == s.name; }))
          legend.emplace_back(s.name, s.colour);
      }
      hi = std::max(hi, sum);
    }
  if (bars == 0) return "";
  if (hi <= 0) hi = 1;
  const double legend_w = 110, w = kPlotW - kLeft - kRight - legend_w, h = kPlotH - kTop - kBottom;
  // a bar's slot; a gap of one slot between groups
  const double slot = w / double(bars + groups.size());
  std::string s = svg_open(id, kPlotW, kPlotH);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n", kLeft, kTop + h, kLeft + w, kTop + h);
  for (double f : {0.0, 0.5, 1.0})
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n", kLeft - 4,
                     kTop + h - f * h + 4, xml_escape(format(f * hi)));
  double x = kLeft + slot / 2;
  for (const BarGroup& g : groups) {
    const double group_x = x;
    for (const GroupedBar& b : g.bars) {
      double base = 0;
      for (const BarSegment& seg : b.segments) {
        if (seg.value <= 0) continue;
        s += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
                         "<title>{} {} {}: {}</title></rect>\n",
                         x + slot * 0.1, kTop + h - (base + seg.value) / hi * h, slot * 0.8, std::max(seg.value / hi * h, 0.5),
                         xml_escape(seg.colour), xml_escape(g.label), xml_escape(b.label), xml_escape(seg.name),
                         xml_escape(format(seg.value)));
        base += seg.value;
      }
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", x + slot / 2,
                       kTop + h + 12, xml_escape(b.label));
      x += slot;
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n", (group_x + x) / 2,
                     kTop + h + 30, xml_escape(g.label));
    x += slot;
  }
  double ly = kTop;
  for (const auto& [name, colour] : legend) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"tick\">{}</text>\n",
                     kLeft + w + 20, ly, xml_escape(colour), kLeft + w + 34, ly + 9, xml_escape(name));
    ly += 16;
  }
  s += svg_y_label(kTop + h / 2, y_label);
  return s + "</svg>\n";
}

}  // namespace s2
