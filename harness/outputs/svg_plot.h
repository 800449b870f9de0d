// What every SVG plot of the reports shares (the HTML report's, html_report.cpp, and the SNN paper's figures,
// snn_figures.cpp): the plot's size and margins, its opening tag and its rotated y-axis label. The page's
// style sheet styles `.plot text.tick` and `.plot text.axis`.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

#include "harness/outputs/result.h"

namespace s2 {

// A plot's size and the margins around its axes, in SVG user units (pixels).
constexpr double kPlotW = 900, kPlotH = 280, kLeft = 60, kRight = 20, kTop = 20, kBottom = 60;

// Each energy component's colour in every energy plot and its legend, bottom to top (energy_pj's keys).
inline constexpr std::pair<const char*, const char*> kEnergyColours[] = {
    {"mac", "#1565c0"}, {"sram", "#2e7d32"}, {"noc", "#f9a825"}, {"dram", "#c62828"}, {"arm", "#6a1b9a"}, {"static", "#757575"}};

inline std::string svg_open(const std::string& id, double width, double height) {
  return fmt::format("<svg class=\"plot\" id=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">\n", id, width,
                     height, width, height);
}

// The y axis's name, rotated, centred on `y_middle`.
inline std::string svg_y_label(double y_middle, const std::string& text) {
  return fmt::format("<text x=\"14\" y=\"{}\" class=\"axis\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>\n",
                     y_middle, y_middle, xml_escape(text));
}

}  // namespace s2
