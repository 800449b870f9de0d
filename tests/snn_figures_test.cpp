// The SNN paper's figures as SVG (harness/outputs/snn_figures.h), read back from the SVG: a segment per non-zero
// value with heights proportional to the values, the legends, input escaped, empty input drawn as a placeholder;
// the HTML report with a figure and without; `s2cosim snn --sweep fig9 --html F`.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "harness/outputs/result.h"
#include "harness/outputs/snn_figures.h"
#include "test_support.h"

#ifndef S2COSIM_BIN
#error "S2COSIM_BIN must name the s2cosim binary (tests/CMakeLists.txt defines it)"
#endif

namespace s2 {
namespace {

using namespace s2::test;

struct Rect {
  double y, height;
  std::string title;
};
// The stacked bars' segments in the order drawn.
std::vector<Rect> segments(const std::string& svg) {
  static const std::regex re(R"re(<rect class="segment" x="[-0-9.]+" y="([-0-9.]+)" width="[-0-9.]+" height="([-0-9.]+)" fill="#[0-9a-f]{6}"><title>([^<]*)</title></rect>)re");
  std::vector<Rect> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3]});
  return out;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The heights over the values: one ratio (drawn to 2 decimals, so within half a hundredth of a pixel).
void expect_proportional(const std::vector<Rect>& rects, const std::vector<double>& values) {
  ASSERT_EQ(rects.size(), values.size());
  const double scale = rects.front().height / values.front();
  for (std::size_t i = 0; i < rects.size(); ++i)
    EXPECT_NEAR(rects[i].height, values[i] * scale, 0.01) << "segment " << i << ": " << rects[i].title;
}

SnnFigureLayout layout(const std::string& name, int pes, mapper::SnnMemory m) {
  SnnFigureLayout l;
  l.name = name;
  l.pes = pes;
  l.memory = m;
  return l;
}

TEST(SnnFigures, MemoryBarsStackAnEscapedSegmentPerNonZeroKindInProportion) {
  mapper::SnnMemory a, b;
  a.weights = 4096, a.spikes = 1024, a.index = 512, a.currents = 2048;  // spike_map and buffers 0
  b.weights = 8192, b.buffers = 1024;
  const std::string svg = snn_memory_bars({layout("a<&>b", 1, a), layout("echelon", 3, b)});
  const std::vector<Rect> r = segments(svg);
  expect_proportional(r, {4096, 1024, 512, 2048, 8192, 1024});
  // stacked: each segment starts where the one below it ends
  for (std::size_t i : {1u, 2u, 3u, 5u}) EXPECT_NEAR(r[i].y + r[i].height, r[i - 1].y, 0.02) << i;
  EXPECT_EQ(r[0].title, "a&lt;&amp;&gt;b: weights 4096 bytes");
  EXPECT_EQ(r[5].title, "echelon: buffers 1024 bytes");
  EXPECT_EQ(svg.find("a<&>b"), std::string::npos);
  EXPECT_NE(svg.find(">a&lt;&amp;&gt;b</text>"), std::string::npos);
  for (const char* kind : {"weights", "spikes", "spike_map", "index", "currents", "buffers"})
    EXPECT_NE(svg.find(std::string(">") + kind + "</text>"), std::string::npos) << kind;
  for (const char* label : {">7.5 KB</text>", ">9.0 KB</text>", ">1 PE</text>", ">3 PEs</text>", ">SRAM (KB)</text>"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
}

TEST(SnnFigures, TimeBarsAreTheClocksSplitByTheModelsShares) {
  SnnFigureLayout shared = layout("original_mac", 1, {}), whole = layout("rtl_only", 1, {}), none = layout("failed", 1, {});
  shared.cycles_per_timestep = 1000;
  shared.pe_time = SnnPeTime{600, 200, 0, 0, 200};  // mla, dram, noc, sync, arm
  whole.cycles_per_timestep = 500;                    // the RTL alone: no shares
  const std::string svg = snn_time_bars({shared, whole, none});
  const std::vector<Rect> r = segments(svg);
  expect_proportional(r, {600, 200, 200, 500});
  EXPECT_EQ(r[0].title, "original_mac: mla 60.0% of the PEs&apos; time, 600.0 clocks per timestep");
  EXPECT_EQ(r[2].title, "original_mac: arm 20.0% of the PEs&apos; time, 200.0 clocks per timestep");
  EXPECT_EQ(r[3].title, "rtl_only: 500.0 clocks per timestep (no model shares)");
  for (const char* label : {">1000.0 clk</text>", ">500.0 clk</text>", ">no run</text>", ">no model shares</text>"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  for (const char* kind : {"mla", "dram", "noc", "sync", "arm"})
    EXPECT_NE(svg.find(std::string(">") + kind + "</text>"), std::string::npos) << kind;
  // every bar drawn with shares: no "no model shares" in the legend
  EXPECT_EQ(snn_time_bars({shared}).find("no model shares"), std::string::npos);
}

TEST(SnnFigures, EmptyInputGivesAPlaceholder) {
  for (const std::string& svg : {snn_memory_bars({}), snn_time_bars({}), snn_sweep_plot({})}) {
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u) << svg;
    EXPECT_NE(svg.find("to draw</text>\n</svg>\n"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("segment"), std::string::npos);
    EXPECT_EQ(svg.find("polyline"), std::string::npos);
  }
  EXPECT_TRUE(snn_figure9_figures({}).empty());
}

TEST(SnnFigures, SweepPlotIsALinePerPostAndLayoutWithRatesOnALinearAxis) {
  std::vector<SnnSweepPoint> points;
  for (int post : {30, 32})
    for (bool mixed : {false, true})
      for (int d = 1; d <= 4; ++d) points.push_back({0.1, post, mixed, d, 0.1 * (d - 1) + (mixed ? 0.05 : 0.0)});
  const std::string svg = snn_sweep_plot(points);
  EXPECT_EQ(count(svg, "<polyline"), 4u);
  EXPECT_EQ(count(svg, "<circle"), 16u);
  for (const char* name : {"post 30, pure", "post 30, mixed", "post 32, pure", "post 32, mixed"})
    EXPECT_NE(svg.find(std::string(">") + name + "</text>"), std::string::npos) << name;
  // post 30 pure: rates 0, 10, 20, 30%: the x steps equal, the y steps equal and upwards
  const std::regex line(R"re(<polyline class="series" points="([^"]*)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, line));
  std::vector<double> xs, ys;
  std::istringstream in(m[1].str());
  for (std::string xy; in >> xy;) {
    xs.push_back(std::stod(xy.substr(0, xy.find(','))));
    ys.push_back(std::stod(xy.substr(xy.find(',') + 1)));
  }
  ASSERT_EQ(ys.size(), 4u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_NEAR(xs[i] - xs[i - 1], xs[1] - xs[0], 0.02);
    EXPECT_NEAR(ys[i] - ys[i - 1], ys[1] - ys[0], 0.02);
  }
  EXPECT_LT(ys[1], ys[0]);
  // a plot per density
  points.push_back({0.2, 31, false, 3, 0.5});
  const std::vector<ReportFigure> f = snn_figure9_figures(points);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_NE(f[0].title.find("density 0.1 "), std::string::npos) << f[0].title;
  EXPECT_EQ(count(f[0].svg, "<polyline"), 4u);
  EXPECT_EQ(count(f[1].svg, "<polyline"), 1u);
  EXPECT_NE(f[0].svg.find("id=\"plot-snn-sweep-1\""), std::string::npos);
  EXPECT_NE(f[1].svg.find("id=\"plot-snn-sweep-2\""), std::string::npos);
}

TEST(SnnFigures, TheReportShowsAFigureBetweenTheSummaryAndTheTableAndNothingElseChanges) {
  ResultSet r;
  r.command = "snn";
  r.title = "a layer";
  CheckResult c;
  c.name = "echelon";
  c.model_cycles = 100;
  c.rtl_cycles = 100;
  c.delta = 0.0;
  r.checks = {c};
  const std::string without = results_html(r);
  mapper::SnnMemory m;
  m.weights = 2048;
  r.figures = snn_figure10_figures({layout("echelon", 1, m)});
  r.figures[0].caption += " <&>";
  const std::string with = results_html(r);
  const std::string section = "<h2>" + xml_escape(r.figures[0].title) + "</h2>\n<p class=\"note\">" + xml_escape(r.figures[0].caption) + "</p>\n" +
                              r.figures[0].svg + "<h2>" + xml_escape(r.figures[1].title) + "</h2>\n<p class=\"note\">" +
                              xml_escape(r.figures[1].caption) + "</p>\n" + r.figures[1].svg;
  const std::size_t at = with.find(section);
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(section.find(" &lt;&amp;&gt;</p>"), std::string::npos);
  EXPECT_LT(with.find("configuration (JSON)"), at);
  EXPECT_GT(with.find("<h2>Results</h2>"), at);
  // the figures are all that was added
  EXPECT_EQ(std::string(with).erase(at, section.size()), without);
  r.figures.clear();
  EXPECT_EQ(results_html(r), without);
}

TEST(SnnFigures, SweepHtmlHasAPlotPerDensityWithALinePerPostAndLayout) {
  TempDir dir;
  const std::string html = dir.path("fig9.html");
  const Ran r = shell(shell_quote(S2COSIM_BIN) + " snn --sweep fig9 --sweep-density 0.1 --html " + shell_quote(html));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string page = read_text(html);
  EXPECT_EQ(count(page, "<polyline"), 6u);  // posts 30, 31, 32, pure and mixed
  EXPECT_EQ(count(page, "<svg "), 1u);
  EXPECT_NE(page.find("density 0.1 (the SNN paper&apos;s Figure 9)</h2>"), std::string::npos);
  EXPECT_EQ(page.rfind("</html>\n"), page.size() - 8);
  // the table on the console is still printed
  EXPECT_NE(r.out.find("density 0.1"), std::string::npos);
}

}  // namespace
}  // namespace s2
