// The HTML report: one self-contained file that opens offline. The plots are SVG drawn here, the table's
// sorting and filtering a few lines of inlined script; nothing is fetched. Every string that comes from
// input (task ids, file names, messages) goes through html_escape.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/outputs/output_files.h"
#include "harness/outputs/result.h"
#include "harness/outputs/svg_plot.h"

namespace s2 {

namespace {

std::string html_escape(const std::string& s) { return xml_escape(s); }

// Status colours (also the legend's): a verification engineer's red for data, amber for time.
const char* status_colour(Status s) {
  switch (s) {
    case Status::Pass: return "#2e7d32";
    case Status::Deviation: return "#ef6c00";
    case Status::Mismatch: return "#c62828";
    case Status::EarlyStop: return "#ad1457";
    case Status::Hang: return "#6a1b9a";
    case Status::Error: return "#424242";
  }
  return "#000";
}

std::string pct(double v) { return fmt::format("{:+.2f}%", 100.0 * v); }

// A bar per point (x in order), the value a fraction shown as percent; dashed lines at +-`band` if given.
struct Bar {
  std::string label;
  double value;
  std::string colour;
};
std::string bar_plot(const std::string& id, const std::string& y_label, const std::vector<Bar>& bars, double band) {
  double lim = band > 0 ? band * 1.5 : 0.0;
  for (const Bar& b : bars) lim = std::max(lim, std::fabs(b.value));
  if (lim <= 0) lim = 0.01;
  const double w = kPlotW - kLeft - kRight, h = kPlotH - kTop - kBottom;
  auto y = [&](double v) { return kTop + h / 2 - v / lim * h / 2; };
  std::string s = svg_open(id, kPlotW, kPlotH);
  s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#888\"/>\n", kLeft, y(0), kLeft + w, y(0));
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n", kLeft, kTop, kLeft, kTop + h);
  for (double v : {lim, lim / 2, -lim / 2, -lim})
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:.1f}%</text>\n", kLeft - 4, y(v) + 4,
                     100 * v);
  if (band > 0)
    for (double v : {band, -band})
      s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#c62828\" stroke-dasharray=\"4 3\"/>\n",
                       kLeft, y(v), kLeft + w, y(v));
  const double step = bars.empty() ? w : w / double(bars.size());
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y0 = y(0), y1 = y(b.value);
    s += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {}</title></rect>\n",
        kLeft + step * double(i) + step * 0.1, std::min(y0, y1), std::max(step * 0.8, 0.5), std::max(std::fabs(y1 - y0), 0.5),
        b.colour, html_escape(b.label), pct(b.value));
  }
  if (bars.size() <= 24)
    for (std::size_t i = 0; i < bars.size(); ++i)
      s += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" class=\"tick\" text-anchor=\"end\" transform=\"rotate(-20 {0:.1f} {1})\">{2}</text>\n",
                       kLeft + step * (double(i) + 0.5), kTop + h + 12, html_escape(bars[i].label.substr(0, 22)));
  s += svg_y_label(kTop + h / 2, y_label);
  return s + "</svg>\n";
}

// Model clocks against RTL clocks, log-log, with the line where they are equal.
std::string scatter_plot(const ResultSet& r) {
  std::vector<const CheckResult*> pts;
  double lo = 1e300, hi = 0;
  for (const CheckResult& c : r.checks)
    if (c.rtl_cycles && c.model_cycles && *c.rtl_cycles > 0 && *c.model_cycles > 0) {
      pts.push_back(&c);
      lo = std::min({lo, double(*c.rtl_cycles), double(*c.model_cycles)});
      hi = std::max({hi, double(*c.rtl_cycles), double(*c.model_cycles)});
    }
  if (pts.empty()) return "";
  const double l0 = std::floor(std::log10(lo)), l1 = std::max(std::ceil(std::log10(hi)), l0 + 1);
  const double side = kPlotH - kTop - kBottom;
  auto px = [&](double v) { return kLeft + (std::log10(v) - l0) / (l1 - l0) * side; };
  auto py = [&](double v) { return kTop + side - (std::log10(v) - l0) / (l1 - l0) * side; };
  std::string s = svg_open("plot-model-rtl", kLeft + side + 40, kPlotH);
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n", kLeft, kTop, side, side);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#aaa\" stroke-dasharray=\"4 3\"/>\n", kLeft,
                   kTop + side, kLeft + side, kTop);
  for (double e = l0; e <= l1; ++e) {
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">1e{:.0f}</text>\n", px(std::pow(10, e)),
                     kTop + side + 14, e);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">1e{:.0f}</text>\n", kLeft - 4,
                     py(std::pow(10, e)) + 4, e);
  }
  for (const CheckResult* c : pts)
    s += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: RTL {}, model {}</title></circle>\n",
                     px(double(*c->rtl_cycles)), py(double(*c->model_cycles)), status_colour(c->status), html_escape(c->name),
                     *c->rtl_cycles, *c->model_cycles);
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">RTL clocks</text>\n", kLeft + side / 2,
                   kTop + side + 32);
  s += svg_y_label(kTop + side / 2, "model clocks");
  return s + "</svg>\n";
}

std::string cycles(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : ""; }

// One stacked bar per check with energy: its picojoules per component, bottom to top in kEnergyColours' order.
std::string energy_plot(const ResultSet& r) {
  std::vector<std::pair<const CheckResult*, nlohmann::ordered_json>> pts;
  double hi = 0;
  for (const CheckResult& c : r.checks)
    if (c.energy) {
      pts.emplace_back(&c, to_json(*c.energy));
      hi = std::max(hi, c.energy->total());
    }
  if (pts.empty() || hi <= 0) return "";
  const double w = kPlotW - kLeft - kRight - 90, h = kPlotH - kTop - kBottom;
  std::string s = svg_open("plot-energy", kPlotW, kPlotH);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n", kLeft, kTop + h, kLeft + w, kTop + h);
  for (double f : {0.0, 0.5, 1.0})
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n", kLeft - 4,
                     kTop + h - f * h + 4, html_escape(format_energy(f * hi)));
  const double step = w / double(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    double base = 0;
    for (const auto& [k, colour] : kEnergyColours) {
      const double v = pts[i].second.at(k).get<double>();
      if (v <= 0) continue;
      s += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} {}: {}</title></rect>\n",
                       kLeft + step * double(i) + step * 0.1, kTop + h - (base + v) / hi * h, std::max(step * 0.8, 0.5),
                       std::max(v / hi * h, 0.5), colour, html_escape(pts[i].first->name), k, html_escape(format_energy(v)));
      base += v;
    }
  }
  if (pts.size() <= 24)
    for (std::size_t i = 0; i < pts.size(); ++i)
      s += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" class=\"tick\" text-anchor=\"end\" transform=\"rotate(-20 {0:.1f} {1})\">{2}</text>\n",
                       kLeft + step * (double(i) + 0.5), kTop + h + 12, html_escape(pts[i].first->name.substr(0, 22)));
  double ly = kTop;
  for (const auto& [k, colour] : kEnergyColours) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"tick\">{}</text>\n",
                     kLeft + w + 20, ly, colour, kLeft + w + 34, ly + 9, k);
    ly += 16;
  }
  s += svg_y_label(kTop + h / 2, "energy");
  return s + "</svg>\n";
}

// The counts and the energy: a plot and a table of the energy per component (with a table), and every
// check's counts per backend with the model's delta from the RTL's (collapsed: 16 counts a row).
std::string activity_section(const ResultSet& r) {
  const bool counted = std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.activity.model || c.activity.rtl; });
  const bool charged = std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.energy.has_value(); });
  if (!counted && !charged) return "";  // design-report's checks carry energy summed from runs, without counts
  std::string h = "<h2>Activity and energy</h2>\n<pre>" + html_escape(format_activity_and_energy(r)) + "</pre>\n";
  if (r.energy_table) {
    h += "<p>energy per check and component (" + html_escape(energy_table_line(*r.energy_table)) +
         "): each count of the backend named times its energy per access, plus static power per PE over the check's clocks</p>\n";
    h += energy_plot(r);
    h += "<table id=\"energy\"><tr><th>check</th><th>from</th>";
    for (const auto& [k, colour] : kEnergyColours) h += std::string("<th>") + k + " pJ</th>";
    h += "<th>total pJ</th></tr>\n";
    for (const CheckResult& c : r.checks) {
      if (!c.energy) continue;
      const nlohmann::ordered_json e = to_json(*c.energy);
      h += "<tr><td>" + html_escape(c.name) + "</td><td>" + html_escape(c.energy_from) + "</td>";
      for (const auto& [k, colour] : kEnergyColours) h += fmt::format("<td class=\"num\">{:.4g}</td>", e.at(k).get<double>());
      h += fmt::format("<td class=\"num\">{:.4g}</td></tr>\n", c.energy->total());
    }
    h += "</table>\n";
  }
  if (!counted) return h;
  h += "<details><summary>activity counts per check (model/activity.h; blank: not observed by that backend)</summary>\n"
       "<table id=\"activity\"><tr><th>check</th><th>backend</th>";
  for (const Activity::Field& f : Activity::fields()) h += std::string("<th>") + f.name + "</th>";
  h += "</tr>\n";
  for (const CheckResult& c : r.checks) {
    for (const char* who : {"model", "rtl", "delta"}) {
      const bool delta = who[0] == 'd';
      if (delta && !(c.activity.model && c.activity.rtl)) continue;
      const std::optional<Activity>& a = who[0] == 'm' ? c.activity.model : c.activity.rtl;
      if (!delta && !a) continue;
      const std::vector<std::string>& un = who[0] == 'm' ? c.activity.model_unavailable : c.activity.rtl_unavailable;
      h += "<tr><td>" + html_escape(c.name) + "</td><td>" + who + "</td>";
      for (const Activity::Field& f : Activity::fields()) {
        const auto missing = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), f.name) != v.end(); };
        if (delta) {
          const std::uint64_t m = (*c.activity.model).*f.member, rt = (*c.activity.rtl).*f.member;
          const bool skip = missing(c.activity.model_unavailable) || missing(c.activity.rtl_unavailable);
          h += "<td class=\"num\">" +
               (skip ? std::string() : rt ? pct((double(m) - double(rt)) / double(rt)) : m ? std::string("inf") : std::string("0")) +
               "</td>";
        } else {
          h += "<td class=\"num\">" + (missing(un) ? std::string() : std::to_string((*a).*f.member)) + "</td>";
        }
      }
      h += "</tr>\n";
    }
  }
  return h + "</table>\n</details>\n";
}

// The page up to its body: the title and the style sheet every report shares.
std::string page_head(const std::string& title) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + html_escape(title) + "</title>\n";
  h += R"(<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.badge { display: inline-block; padding: 0.2em 0.6em; margin-right: 0.4em; border-radius: 0.3em; color: #fff; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; cursor: pointer; user-select: none; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.status { color: #fff; font-weight: bold; }
td.msg { min-width: 30em; }
code { font-size: 0.9em; word-break: break-all; }
.plot text.tick { font-size: 10px; fill: #555; } .plot text.axis { font-size: 12px; fill: #333; }
.meta td:first-child { font-weight: bold; }
#filter { margin: 0.5em 0; }
.hidden { display: none; }
</style>
</head>
)";
  return h;
}

// A command's own figures: a heading, the caption as a note and the SVG each.
std::string figures_section(const std::vector<ReportFigure>& figures) {
  std::string h;
  for (const ReportFigure& f : figures)
    h += "<h2>" + html_escape(f.title) + "</h2>\n<p class=\"note\">" + html_escape(f.caption) + "</p>\n" + f.svg;
  return h;
}

}  // namespace

std::string results_html(const ResultSet& r) {
  const RunSummary s = summarize(r);
  const std::string title = "s2cosim " + r.command + ": " + r.title;
  std::string h = page_head(title) + "<body data-ready=\"0\">\n";
  h += "<h1>" + html_escape(title) + "</h1>\n";
  h += "<p>";
  for (Status st : kAllStatuses)
    h += fmt::format("<span class=\"badge\" style=\"background:{}\">{} {}</span>", status_colour(st), s.counts.at(st), to_string(st));
  h += "</p>\n<table class=\"meta\">\n";
  auto meta = [&](const std::string& k, const std::string& v) {
    h += "<tr><td>" + html_escape(k) + "</td><td>" + html_escape(v) + "</td></tr>\n";
  };
  meta("tool", std::string("s2cosim ") + tool_version());
  meta("results", format_status_counts(r));
  if (!r.merged_shards.empty()) meta("merged", fmt::format("{} shards", r.merged_shards.size()));
  if (r.stopped_by_signal) meta("stopped", fmt::format("by signal {}: the checks that finished", r.stopped_by_signal));
  meta("|delta|", fmt::format("max {}, median {}", s.max_abs_delta ? fmt::format("{:.2f}%", 100 * *s.max_abs_delta) : "-",
                              s.median_abs_delta ? fmt::format("{:.2f}%", 100 * *s.median_abs_delta) : "-"));
  meta("wall", fmt::format("RTL {:.1f} s, model {:.1f} s", s.rtl_wall_s, s.model_wall_s));
  meta("hardware", r.hardware);
  meta("config hash", r.config_hash);
  meta("policy", policy_line(r.policy));
  if (r.energy_table) meta("energy", energy_table_line(*r.energy_table));
  h += "</table>\n";
  for (const std::string& n : r.notes) h += "<p class=\"note\">" + html_escape(n) + "</p>\n";
  h += "<details><summary>configuration (JSON)</summary><pre>" + html_escape(r.config.dump(2)) + "</pre></details>\n";
  h += figures_section(r.figures);

  // plots
  std::vector<Bar> deltas;
  for (const CheckResult& c : r.checks)
    if (c.delta) deltas.push_back({c.name, *c.delta, status_colour(c.status)});
  if (!deltas.empty()) {
    h += "<h2>Model against RTL: delta per " + std::string(r.command == "run-net" ? "operation and strategy" : "check") +
         fmt::format("</h2>\n<p>equation 5.1, (model - RTL) / RTL; dashed: the deviation bound, {:g}%</p>\n",
                     100 * r.policy.deviation_bound);
    h += bar_plot("plot-delta", "delta", deltas, r.policy.deviation_bound);
    h += "<h2>Model clocks against RTL clocks</h2>\n" + scatter_plot(r);
  }
  std::vector<Bar> thesis;
  for (const CheckResult& c : r.checks) {
    if (!c.thesis_cycles || *c.thesis_cycles == 0) continue;
    const std::optional<std::uint64_t> ours = c.model_cycles ? c.model_cycles : c.rtl_cycles;
    if (!ours) continue;
    thesis.push_back({c.name, (double(*ours) - double(*c.thesis_cycles)) / double(*c.thesis_cycles), "#1565c0"});
  }
  if (!thesis.empty()) {
    h += "<h2>Against the thesis</h2>\n<p>(ours - thesis) / thesis per " +
         std::string(r.command == "run-net" ? "operation and strategy" : "check") +
         "; ours is the model's clocks where the model ran, else the RTL's; the thesis's figure and its table are in the "
         "table below</p>\n";
    h += bar_plot("plot-thesis", "vs thesis", thesis, 0.0);
  }
  if (!r.categories.empty()) {
    h += "<h2>Whole network per category (thesis Table 5.10 layout)</h2>\n<table id=\"categories\"><tr><th>strategy</th>"
         "<th>category</th><th>clocks</th><th>thesis</th><th>deviation</th></tr>\n";
    for (const CategoryClocks& c : r.categories) {
      std::string dev;
      if (c.thesis && *c.thesis > 0) dev = pct((double(c.clocks) - double(*c.thesis)) / double(*c.thesis));
      h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       html_escape(c.strategy), html_escape(c.category), c.clocks, cycles(c.thesis), dev);
    }
    h += "</table>\n";
  }

  h += activity_section(r);

  // the table
  std::vector<std::string> label_names;
  for (const CheckResult& c : r.checks)
    for (const auto& [k, v] : c.labels)
      if (std::find(label_names.begin(), label_names.end(), k) == label_names.end()) label_names.push_back(k);
  h += "<h2>Results</h2>\n<div id=\"filter\">filter: <input id=\"filter-text\" type=\"search\" placeholder=\"text in any cell\"> ";
  for (Status st : kAllStatuses)
    h += fmt::format("<label><input type=\"checkbox\" class=\"filter-status\" value=\"{0}\" checked> {0}</label> ", to_string(st));
  h += "<span id=\"shown\"></span></div>\n";
  h += "<table id=\"results\">\n<thead><tr><th>#</th><th>name</th><th>group</th>";
  for (const std::string& k : label_names) h += "<th>" + html_escape(k) + "</th>";
  h += "<th>status</th><th>RTL clk</th><th>model clk</th><th>delta</th><th>thesis clk</th><th>message</th></tr></thead>\n<tbody>\n";
  for (const CheckResult& c : r.checks) {
    h += fmt::format("<tr class=\"row\" data-status=\"{}\"><td class=\"num\">{}</td><td>{}</td><td>{}</td>", to_string(c.status),
                     c.index, html_escape(c.name), html_escape(c.group));
    for (const std::string& k : label_names) {
      std::string v;
      for (const auto& [lk, lv] : c.labels)
        if (lk == k) v = lv;
      h += "<td>" + html_escape(v) + "</td>";
    }
    h += fmt::format("<td class=\"status\" style=\"background:{}\">{}</td>", status_colour(c.status), to_string(c.status));
    h += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\" data-value=\"{}\">{}</td>",
                     cycles(c.rtl_cycles), cycles(c.model_cycles), c.delta ? fmt::format("{:.6f}", *c.delta) : "",
                     c.delta ? pct(*c.delta) : "");
    h += "<td class=\"num\" title=\"" + html_escape(c.thesis_source) + "\">" + cycles(c.thesis_cycles) + "</td>";
    h += "<td class=\"msg\">" + html_escape(c.message);
    if (c.status != Status::Pass) h += fmt::format(" <a href=\"#failure-{}\">details</a>", c.index);
    h += "</td></tr>\n";
  }
  h += "</tbody></table>\n";

  // the failures: the locator's attribution, the waveform and the line that reruns each
  std::string fails;
  for (const CheckResult& c : r.checks) {
    if (c.status == Status::Pass) continue;
    fails += fmt::format("<div class=\"failure\" id=\"failure-{}\"><h3><span class=\"badge\" style=\"background:{}\">{}</span>{}</h3>\n",
                         c.index, status_colour(c.status), to_string(c.status), html_escape(c.name));
    fails += "<p>" + html_escape(c.message) + "</p>\n";
    if (!c.where.empty()) fails += "<p><b>where (the locator):</b> " + html_escape(c.where) + "</p>\n";
    if (!c.waves.empty())
      fails += "<p><b>waves:</b> <a href=\"" + html_escape(c.waves) + "\">" + html_escape(c.waves) + "</a></p>\n";
    if (!c.replay.empty()) fails += "<p><b>rerun:</b> <code>" + html_escape(c.replay) + "</code></p>\n";
    fails += "</div>\n";
  }
  if (!fails.empty()) h += "<h2>Failures</h2>\n" + fails;

  h += R"(<script>
(function () {
  var table = document.getElementById('results');
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  function cellValue(row, k) {
    var cell = row.cells[k];
    var v = cell.getAttribute('data-value');
    if (v === null) v = cell.textContent;
    var n = parseFloat(v);
    return v !== '' && !isNaN(n) && /^[-+0-9.eE%]+$/.test(v.trim()) ? n : v.toLowerCase();
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, k) {
    th.addEventListener('click', function () {
      var up = th.getAttribute('data-sort') !== 'up';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (o) { o.removeAttribute('data-sort'); });
      th.setAttribute('data-sort', up ? 'up' : 'down');
      rows.sort(function (a, b) {
        var x = cellValue(a, k), y = cellValue(b, k);
        if (typeof x !== typeof y) { x = String(x); y = String(y); }
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  var text = document.getElementById('filter-text');
  var boxes = Array.prototype.slice.call(document.querySelectorAll('.filter-status'));
  function filter() {
    var want = text.value.toLowerCase(), shown = 0;
    var statuses = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    rows.forEach(function (r) {
      var ok = statuses.indexOf(r.getAttribute('data-status')) >= 0 && r.textContent.toLowerCase().indexOf(want) >= 0;
      r.classList.toggle('hidden', !ok);
      if (ok) shown++;
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' shown';
  }
  text.addEventListener('input', filter);
  boxes.forEach(function (b) { b.addEventListener('change', filter); });
  filter();
  document.body.setAttribute('data-ready', '1');
})();
</script>
</body>
</html>
)";
  return h;
}

std::string figures_html(const std::string& title, const std::vector<std::string>& notes, const std::vector<ReportFigure>& figures) {
  std::string h = page_head("s2cosim " + title) + "<body>\n<h1>" + html_escape("s2cosim " + title) + "</h1>\n";
  h += "<p class=\"note\">" + html_escape(std::string("s2cosim ") + tool_version()) + "</p>\n";
  for (const std::string& n : notes) h += "<p class=\"note\">" + html_escape(n) + "</p>\n";
  return h + figures_section(figures) + "</body>\n</html>\n";
}

}  // namespace s2
