#include "harness/commands/design_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/outputs/grouped_bars.h"
#include "harness/outputs/output_files.h"
#include "harness/outputs/result.h"
#include "harness/outputs/svg_plot.h"
#include "mapper/distributor.h"
#include "model/hw_config.h"
#include "model/text_file.h"

namespace s2 {

namespace {

constexpr std::uintmax_t kMaxReportBytes = 1ull << 30;
constexpr std::uintmax_t kMaxSynthBytes = 1ull << 24;

std::runtime_error bad(const std::string& path, const std::string& field, const std::string& what) {
  return std::runtime_error(fmt::format("{}: field '{}': {}", path, field, what));
}

nlohmann::ordered_json parse_json(const std::string& text, const std::string& path) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
}

std::uint64_t whole_number(const nlohmann::ordered_json& v, const std::string& path, const std::string& field) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() >= 1.8e19)
    throw bad(path, field, "expected a number of clocks >= 0, got " + v.dump());
  return static_cast<std::uint64_t>(std::llround(v.get<double>()));
}

// The label `name` of a check, "" if it has none.
std::string label(const CheckResult& c, const std::string& name) {
  for (const auto& [k, v] : c.labels)
    if (k == name) return v;
  return "";
}

int strategy_rank(const std::string& s) {
  for (int k = 0; k < 3; ++k)
    if (s == mapper::to_string(mapper::kAllStrategies[k])) return k;
  return 3;
}

std::string ratio(double num, double den) { return den > 0 ? fmt::format("{:.2f}", num / den) : "-"; }

}  // namespace

SynthAreas parse_synth_areas(const std::string& text, const std::string& path) {
  const nlohmann::ordered_json j = parse_json(text, path);
  if (!j.is_object()) throw std::runtime_error(path + ": expected a JSON object (tools/synth.sh --json FILE)");
  SynthAreas a;
  for (auto [field, into] : {std::pair{"yosys", &a.yosys}, {"date", &a.date}, {"commit", &a.commit}, {"note", &a.note}}) {
    if (!j.contains(field)) continue;
    if (!j.at(field).is_string()) throw bad(path, field, "expected a string");
    *into = j.at(field).get<std::string>();
  }
  if (!j.contains("shapes") || !j.at("shapes").is_object() || j.at("shapes").empty())
    throw bad(path, "shapes", "expected an object of MAC shapes (\"16x4\": {cells, flops, transistors, blocks})");
  // o[key] as a whole number, `field` its name in the file
  auto count = [&](const nlohmann::ordered_json& o, const char* key, const std::string& field) {
    if (!o.is_object() || !o.contains(key)) throw bad(path, field, "missing (expected a whole number >= 0)");
    if (!o.at(key).is_number_unsigned()) throw bad(path, field, "expected a whole number >= 0, got " + o.at(key).dump());
    return o.at(key).get<std::uint64_t>();
  };
  for (const auto& [shape, s] : j.at("shapes").items()) {
    const std::string f = "shapes." + shape;
    const auto x = shape.find('x');
    const bool named = x != std::string::npos && x > 0 && x + 1 < shape.size() &&
                       shape.find_first_not_of("0123456789x") == std::string::npos && shape.find('x', x + 1) == std::string::npos;
    if (!named) throw bad(path, f, "expected a MAC shape as COLSxROWS (e.g. 16x4)");
    PeArea pe{count(s, "cells", f + ".cells"), count(s, "flops", f + ".flops"), count(s, "transistors", f + ".transistors"), 0};
    const nlohmann::ordered_json* mla = s.contains("blocks") && s.at("blocks").is_object() && s.at("blocks").contains("mla")
                                            ? &s.at("blocks").at("mla") : nullptr;
    if (!mla) throw bad(path, f + ".blocks.mla", "missing (the MAC array's own figures)");
    pe.mla_transistors = count(*mla, "transistors", f + ".blocks.mla.transistors");
    if (pe.mla_transistors > pe.transistors) throw bad(path, f + ".blocks.mla.transistors", "larger than the whole PE's");
    a.by_mac[shape] = pe;
  }
  return a;
}

DesignReportFile read_design_report_file(const std::string& text, const std::string& path, const std::string& reference_mac) {
  const nlohmann::ordered_json top = parse_json(text, path);
  if (!top.is_object() || !top.contains("results"))
    throw bad(path, "results", "missing (expected the --json report of run-net --whole --energy)");
  ResultSet rs;
  try {
    rs = results_from_json(top.at("results"));
  } catch (const std::exception& e) {
    throw bad(path, "results", e.what());
  }
  if (rs.command != "run-net")
    throw std::runtime_error(path + ": a report of '" + rs.command + "': design-report takes run-net reports (run-net --whole --energy --json F)");
  if (!top.contains("whole") || top.at("whole") != true)
    throw bad(path, "whole", "missing: not a --whole run (a design point is the whole network: run-net --whole --energy ...)");
  if (top.contains("layers"))
    throw bad(path, "layers", "the run took some blocks only (--layers): a design point is the whole network");
  if (!rs.energy_table)
    throw bad(path, "results.energy_table", "missing: the run was not charged with energy (run-net ... --energy)");
  if (!rs.shard.whole())
    throw std::runtime_error(fmt::format("{}: shard {}/{} of a run: merge the shards first (s2cosim merge --json F ...)", path,
                                         rs.shard.index, rs.shard.count));
  if (rs.stopped_by_signal)
    throw std::runtime_error(fmt::format("{}: the run was stopped by signal {} before every block ran: finish it first "
                                         "(the same run-net command with --resume, its journal)", path, rs.stopped_by_signal));
  if (!top.contains("network") || !top.at("network").is_string()) throw bad(path, "network", "expected the network's name");
  if (!top.contains("config")) throw bad(path, "config", "missing (the run's hardware configuration)");
  HwConfig cfg;
  try {
    cfg = hw_config_from_json(top.at("config"));
  } catch (const std::exception& e) {
    throw bad(path, "config", e.what());
  }
  if (!top.contains("category_cycles") || !top.at("category_cycles").is_object() || top.at("category_cycles").empty())
    throw bad(path, "category_cycles",
              "missing: no clocks per Table 5.10 category (the model's ARM-timed clocks; run-net --whole with the model backend)");

  DesignReportFile f;
  f.energy_table = *rs.energy_table;
  f.energy_table_hash = energy_table_hash(*rs.energy_table);
  f.energy_table_line = energy_table_line(*rs.energy_table);
  const std::string mac = cfg.mac_shape();
  const std::string run_hash = config_hash(cfg);
  set_mac_shape(cfg, reference_mac);
  f.family_hash = config_hash(cfg);
  for (const auto& [strategy, cats] : top.at("category_cycles").items()) {
    const std::string field = "category_cycles." + strategy;
    if (strategy_rank(strategy) == 3) throw bad(path, field, "not a strategy (nofuse_noreuse, fuse_noreuse or fuse_reuse)");
    if (!cats.is_object() || !cats.contains("sum")) throw bad(path, field, "expected clocks per category with their 'sum'");
    DesignPoint d;
    d.network = top.at("network").get<std::string>();
    d.chip = cfg.chip.name;
    d.mac = mac;
    d.strategy = strategy;
    d.report = path;
    d.config_hash = run_hash;
    for (const auto& [cat, v] : cats.items()) {
      const std::uint64_t clocks = whole_number(v, path, field + "." + cat);
      if (cat == "sum") d.clocks = clocks;
      else d.category_clocks[cat] = clocks;
    }
    std::vector<std::string> problems;
    for (const CheckResult& c : rs.checks) {
      if (label(c, "block").empty()) continue;  // the network's output check: not a block run
      const std::string asked = label(c, "for").empty() ? label(c, "strategy") : label(c, "for");
      if (asked != strategy) continue;
      ++d.blocks;
      d.status = std::min(d.status, c.status);  // Status is ordered by precedence, pass last
      if (c.status != Status::Pass) problems.push_back(fmt::format("{} {}", c.name, to_string(c.status)));
      if (c.energy) {
        d.energy += *c.energy;
        const std::string block = label(c, "block");
        d.energy_by_kind[block.substr(0, block.rfind('_'))] += *c.energy;  // CONV_12 -> CONV, CONV_SC_14 -> CONV_SC
        ++d.blocks_charged;
      } else {
        d.status = std::min(d.status, Status::Error);
        if (c.status == Status::Pass) problems.push_back(c.name + " has no energy (no counts)");
      }
    }
    if (d.blocks == 0) {
      d.status = Status::Error;
      d.message = "no block ran in this strategy (its clocks without its blocks' energy)";
    } else if (!problems.empty())
      d.message = fmt::format("{} of {} blocks: {}{}", problems.size(), d.blocks, problems.front(),
                              problems.size() > 1 ? fmt::format(" (and {} more; see {})", problems.size() - 1, path) : "");
    f.points.push_back(std::move(d));
  }
  return f;
}

namespace {

struct Comparison {
  std::vector<DesignPoint> points;  // ordered: network, chip as first read; strategy; the reference shape first
  std::vector<std::string> inputs;
  std::string energy_table_hash, energy_table_line;
  EnergyTable energy_table;
  std::optional<SynthAreas> synth;
  std::vector<std::string> family_hashes;  // per network and chip: the configuration's hash, MAC shape apart
};

// What a design point is compared within: its network on its chip ("vgg16 on prototype").
std::string family(const DesignPoint& d) { return d.network + " on " + d.chip; }

// Every report read, checked against the others (one energy table, one configuration apart from the MAC shape
// per network and chip, no design point twice) and ordered.
Comparison read_comparison(const DesignReportRequest& req) {
  Comparison c;
  std::map<std::string, std::pair<std::string, std::string>> hash_of;  // network/chip -> hash, file
  std::map<std::string, std::string> seen;                             // design point -> file
  std::vector<std::string> order;                                      // network/chip, first read first
  for (const std::string& path : req.reports) {
    DesignReportFile f = read_design_report_file(read_text_file(path, kMaxReportBytes, "run-net JSON report"), path, req.reference_mac);
    if (c.inputs.empty()) {
      c.energy_table_hash = f.energy_table_hash;
      c.energy_table_line = f.energy_table_line;
      c.energy_table = f.energy_table;
    } else if (f.energy_table_hash != c.energy_table_hash) {
      throw std::runtime_error(fmt::format("{}: charged with energy table hash {}, {} with {}: one comparison, one table "
                                           "(run every report with the same --energy)",
                                           path, f.energy_table_hash, c.inputs.front(), c.energy_table_hash));
    }
    c.inputs.push_back(path);
    for (DesignPoint& d : f.points) {
      const std::string fam = family(d);
      const auto [it, fresh] = hash_of.emplace(fam, std::make_pair(f.family_hash, path));
      if (fresh) order.push_back(fam), c.family_hashes.push_back(f.family_hash);
      else if (it->second.first != f.family_hash)
        throw std::runtime_error(fmt::format("{}: its configuration differs from {}'s in more than the MAC shape (hashes with "
                                             "the MAC shape set to {}: {} and {}): {} is not one design comparison",
                                             path, it->second.second, req.reference_mac, f.family_hash, it->second.first, fam));
      const std::string key = fam + ", " + d.mac + ", " + d.strategy;
      if (const auto [s, again] = seen.emplace(key, path); !again)
        throw std::runtime_error(fmt::format("{}: {} is in {} too (each design point once)", path, key, s->second));
      c.points.push_back(std::move(d));
    }
  }
  if (!req.synth_json.empty()) {
    c.synth = parse_synth_areas(read_text_file(req.synth_json, kMaxSynthBytes, "tools/synth.sh JSON"), req.synth_json);
    for (DesignPoint& d : c.points)
      if (const auto a = c.synth->by_mac.find(d.mac); a != c.synth->by_mac.end()) d.area = a->second;
  }
  auto fam_rank = [&](const DesignPoint& d) {
    return std::find(order.begin(), order.end(), family(d)) - order.begin();
  };
  std::stable_sort(c.points.begin(), c.points.end(), [&](const DesignPoint& a, const DesignPoint& b) {
    auto key = [&](const DesignPoint& d) {
      return std::make_tuple(fam_rank(d), strategy_rank(d.strategy), d.mac != req.reference_mac, d.mac);
    };
    return key(a) < key(b);
  });
  return c;
}

// The point of the reference MAC shape with the same network, chip and strategy; nullptr if none.
const DesignPoint* reference_of(const Comparison& c, const DesignPoint& d, const std::string& reference_mac) {
  for (const DesignPoint& r : c.points)
    if (r.network == d.network && r.chip == d.chip && r.strategy == d.strategy && r.mac == reference_mac) return &r;
  return nullptr;
}

double share(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::string console_table(const Comparison& c, const DesignReportRequest& req) {
  std::string out;
  std::string fam;
  const std::string x = "x" + req.reference_mac;
  for (const DesignPoint& d : c.points) {
    if (family(d) != fam) {
      fam = family(d);
      out += fmt::format("\n{}\n{:<6} {:<15} {:>12} {:>7} {:>11} {:>7}  {:>5} {:>5} {:>5} {:>5} {:>5} {:>6}  {:>12} {:>7}  {}\n",
                         fam, "mac", "strategy", "clocks", x, "energy", x, "MAC%", "SRAM%", "NoC%", "DRAM%", "ARM%", "stat%",
                         "PE transist.", x, "status");
    }
    const DesignPoint* r = reference_of(c, d, req.reference_mac);
    const double e = d.energy.total();
    out += fmt::format("{:<6} {:<15} {:>12} {:>7} {:>11} {:>7}  {:>5.1f} {:>5.1f} {:>5.1f} {:>5.1f} {:>5.1f} {:>6.1f}  {:>12} {:>7}  {}\n",
                       d.mac, d.strategy, d.clocks, r ? ratio(double(d.clocks), double(r->clocks)) : "-", format_energy(e),
                       r ? ratio(e, r->energy.total()) : "-", share(d.energy.mac, e), share(d.energy.sram, e),
                       share(d.energy.noc, e), share(d.energy.dram, e), share(d.energy.arm, e), share(d.energy.static_pj, e),
                       d.area ? std::to_string(d.area->transistors) : "-",
                       d.area && r && r->area ? ratio(double(d.area->transistors), double(r->area->transistors)) : "-",
                       to_string(d.status) + (d.message.empty() ? "" : " (" + d.message + ")"));
  }
  return out;
}

// What the figures say, one line per network, chip and strategy with more than one MAC shape, and the best
// point per network and chip by clocks, by energy and by area.
std::vector<std::string> findings(const Comparison& c, const DesignReportRequest& req) {
  std::vector<std::string> lines;
  std::map<std::string, std::vector<const DesignPoint*>> by_fam;
  std::vector<std::string> fams;
  for (const DesignPoint& d : c.points) {
    const std::string fam = family(d);
    if (!by_fam.count(fam)) fams.push_back(fam);
    by_fam[fam].push_back(&d);
  }
  for (const std::string& fam : fams) {
    const auto& ps = by_fam[fam];
    for (const DesignPoint* d : ps) {
      if (d->mac == req.reference_mac) continue;
      const DesignPoint* r = reference_of(c, *d, req.reference_mac);
      if (!r) continue;
      std::string line = fmt::format("{}, {}: {} takes {}x the clocks and {}x the energy of {}", fam, d->strategy, d->mac,
                                     ratio(double(d->clocks), double(r->clocks)), ratio(d->energy.total(), r->energy.total()),
                                     req.reference_mac);
      if (d->area && r->area)
        line += fmt::format(" with {}x the PE's logic ({}x the MAC array's)", ratio(double(d->area->transistors), double(r->area->transistors)),
                            ratio(double(d->area->mla_transistors), double(r->area->mla_transistors)));
      lines.push_back(line);
    }
    // what moving data costs per kind of block: DRAM's share of its energy, per strategy (the reference shape's)
    std::map<std::string, std::vector<std::pair<std::string, double>>> dram_share;  // kind -> (strategy, share)
    for (const DesignPoint* d : ps)
      if (d->mac == req.reference_mac)
        for (const auto& [kind, e] : d->energy_by_kind)
          if (e.total() > 0) dram_share[kind].emplace_back(d->strategy, e.dram / e.total());
    for (const auto& [kind, shares] : dram_share) {
      std::string parts;
      for (const auto& [st, sh] : shares) parts += fmt::format("{}{} {:.0f}%", parts.empty() ? "" : ", ", st, 100 * sh);
      lines.push_back(fmt::format("{}, {}: DRAM's share of the {} blocks' energy: {}", fam, req.reference_mac, kind, parts));
    }
    if (dram_share.count("FC") && dram_share.count("CONV")) {
      auto lowest = [](const std::vector<std::pair<std::string, double>>& v) {
        return *std::min_element(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      };
      const auto fc = lowest(dram_share["FC"]), conv = lowest(dram_share["CONV"]);
      if (fc.second > 0.5 && conv.second < fc.second)
        lines.push_back(fmt::format("{}: FC blocks spend most of their energy moving data from DRAM in every strategy (at least {:.0f}%); "
                                    "convolutions spend less, least in {} ({:.0f}%)",
                                    fam, 100 * fc.second, conv.first, 100 * conv.second));
      else
        lines.push_back(fmt::format("{}: FC blocks do not spend the most of their energy on DRAM here (at least {:.0f}% in {}; "
                                    "convolutions at least {:.0f}% in {})",
                                    fam, 100 * fc.second, fc.first, 100 * conv.second, conv.first));
    }
    auto best = [&](auto value) {
      const DesignPoint* b = nullptr;
      for (const DesignPoint* d : ps)
        if (d->status == Status::Pass && (!b || value(*d) < value(*b))) b = d;
      return b;
    };
    const DesignPoint* fast = best([](const DesignPoint& d) { return double(d.clocks); });
    const DesignPoint* frugal = best([](const DesignPoint& d) { return d.energy.total(); });
    if (fast && frugal)
      lines.push_back(fmt::format("{}: fewest clocks {} {} ({}), least energy {} {} ({})", fam, fast->mac, fast->strategy,
                                  fast->clocks, frugal->mac, frugal->strategy, format_energy(frugal->energy.total())));
  }
  return lines;
}

nlohmann::ordered_json area_json(const std::optional<PeArea>& a) {
  if (!a) return nullptr;
  return {{"cells", a->cells}, {"flops", a->flops}, {"transistors", a->transistors}, {"mla_transistors", a->mla_transistors}};
}

nlohmann::ordered_json design_json(const DesignPoint& d, const DesignPoint* r, const std::string& reference_mac) {
  nlohmann::ordered_json cats = nlohmann::ordered_json::object();
  for (const auto& [k, v] : d.category_clocks) cats[k] = v;
  nlohmann::ordered_json by_kind = nlohmann::ordered_json::object();
  for (const auto& [k, e] : d.energy_by_kind) by_kind[k] = to_json(e);
  nlohmann::ordered_json j{{"network", d.network},       {"chip", d.chip},
                           {"mac", d.mac},               {"strategy", d.strategy},
                           {"clocks", d.clocks},         {"category_clocks", cats},
                           {"energy_pj", to_json(d.energy)}, {"energy_by_kind_pj", by_kind}, {"pe_area", area_json(d.area)},
                           {"blocks", d.blocks},         {"blocks_charged", d.blocks_charged},
                           {"status", to_string(d.status)}, {"message", d.message},
                           {"report", d.report},         {"config_hash", d.config_hash}};
  nlohmann::ordered_json vs = nullptr;
  if (r) {
    vs = {{"mac", reference_mac},
          {"clocks", r->clocks ? nlohmann::ordered_json(double(d.clocks) / double(r->clocks)) : nlohmann::ordered_json(nullptr)},
          {"energy", r->energy.total() > 0 ? nlohmann::ordered_json(d.energy.total() / r->energy.total()) : nlohmann::ordered_json(nullptr)},
          {"pe_transistors", d.area && r->area && r->area->transistors
                                 ? nlohmann::ordered_json(double(d.area->transistors) / double(r->area->transistors))
                                 : nlohmann::ordered_json(nullptr)}};
  }
  j["vs_reference"] = vs;
  return j;
}

// Per network and chip: clocks and energy by component, grouped by strategy, a bar per MAC shape; then the PE's
// area per MAC shape (one panel: it is the shape's, whatever the network).
std::vector<ReportFigure> design_figures(const Comparison& c) {
  std::vector<ReportFigure> figs;
  std::vector<std::string> fams;
  for (const DesignPoint& d : c.points)
    if (std::find(fams.begin(), fams.end(), family(d)) == fams.end()) fams.push_back(family(d));
  const char* mac_colours[] = {"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#757575"};
  std::vector<std::string> macs;
  for (const DesignPoint& d : c.points)
    if (std::find(macs.begin(), macs.end(), d.mac) == macs.end()) macs.push_back(d.mac);
  auto mac_colour = [&](const std::string& m) {
    return std::string(mac_colours[std::min<std::size_t>(std::find(macs.begin(), macs.end(), m) - macs.begin(), 4)]);
  };
  for (std::size_t k = 0; k < fams.size(); ++k) {
    std::vector<BarGroup> clocks, energy;
    for (const DesignPoint& d : c.points) {
      if (family(d) != fams[k]) continue;
      if (clocks.empty() || clocks.back().label != d.strategy) {
        clocks.push_back({d.strategy, {}});
        energy.push_back({d.strategy, {}});
      }
      clocks.back().bars.push_back({d.mac, {{"clocks, MAC " + d.mac, double(d.clocks), mac_colour(d.mac)}}});
      GroupedBar e{d.mac, {}};
      const nlohmann::ordered_json ej = to_json(d.energy);
      for (const auto& [comp, colour] : kEnergyColours) e.segments.push_back({comp, ej.at(comp).get<double>(), colour});
      energy.back().bars.push_back(e);
    }
    const std::string id = fmt::format("plot-design-{}", k + 1);
    figs.push_back({fams[k] + ": clocks", "the whole network's clocks (thesis Table 5.10's sum, ARM timed, model) per strategy, a bar per MAC shape",
                    grouped_bar_plot(id + "-clocks", "clocks", clocks, [](double v) { return fmt::format("{:.3g}", v); })});
    figs.push_back({fams[k] + ": energy", "the whole network's energy per strategy and MAC shape, stacked by component (estimates, uncalibrated: compare ratios)",
                    grouped_bar_plot(id + "-energy", "energy", energy, format_energy)});
  }
  // the area is the MAC shape's, whatever the network: one panel
  std::map<std::string, PeArea> areas;
  for (const DesignPoint& d : c.points)
    if (d.area) areas[d.mac] = *d.area;
  if (!areas.empty()) {
    BarGroup g{"one PE", {}};
    for (const std::string& m : macs)
      if (areas.count(m))
        g.bars.push_back({m, {{"MAC array", double(areas[m].mla_transistors), "#1565c0"},
                              {"rest of the PE", double(areas[m].transistors - areas[m].mla_transistors), "#9e9e9e"}}});
    figs.push_back({"area per MAC shape", "one PE's logic per MAC shape in transistors (Yosys generic cells; the SRAM's storage not counted)",
                    grouped_bar_plot("plot-design-area", "transistors", {g}, [](double v) { return fmt::format("{:.3g}", v); })});
  }
  return figs;
}

ResultSet result_set(const Comparison& c, const DesignReportRequest& req, const std::vector<std::string>& lines) {
  ResultSet rs;
  rs.command = "design-report";
  rs.title = fmt::format("{} design points from {} run-net reports", c.points.size(), c.inputs.size());
  rs.total = c.points.size();
  std::vector<std::string> macs, chips;
  for (const DesignPoint& d : c.points) {
    if (std::find(macs.begin(), macs.end(), d.mac) == macs.end()) macs.push_back(d.mac);
    if (std::find(chips.begin(), chips.end(), d.chip) == chips.end()) chips.push_back(d.chip);
  }
  rs.hardware = fmt::format("MAC {} on {} (each design point's configuration is its report's)", fmt::join(macs, ", "),
                            fmt::join(chips, ", "));
  rs.config_hash = fmt::format("{}", fmt::join(c.family_hashes, ", "));
  rs.energy_table = c.energy_table;
  rs.notes.push_back("energy: " + c.energy_table_line);
  if (c.synth)
    rs.notes.push_back(fmt::format("area: one PE's logic from {}, {} (commit {}, {}): {}", req.synth_json, c.synth->yosys,
                                   c.synth->commit, c.synth->date, c.synth->note));
  else
    rs.notes.push_back("area: not given (tools/synth.sh --json F, then --synth F)");
  rs.notes.push_back("config hash: per network and chip, the configuration's with the MAC shape set to " + req.reference_mac +
                     " (each design point's own is in its record)");
  for (const std::string& l : lines) rs.notes.push_back("finding: " + l);
  for (const std::string& in : c.inputs) rs.notes.push_back("report: " + in);
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const DesignPoint& d = c.points[i];
    CheckResult r;
    r.index = i;
    r.name = fmt::format("{} {} {} {}", d.network, d.chip, d.mac, d.strategy);
    r.group = family(d);
    r.status = d.status;
    r.message = d.message;
    r.labels = {{"network", d.network}, {"chip", d.chip}, {"mac", d.mac}, {"strategy", d.strategy},
                {"pe_transistors", d.area ? std::to_string(d.area->transistors) : ""}};
    r.model_cycles = d.clocks;
    r.energy = d.energy;
    r.energy_from = "model";
    rs.checks.push_back(std::move(r));
  }
  rs.figures = design_figures(c);
  return rs;
}

}  // namespace

int design_report(const DesignReportRequest& req, std::ostream& out, std::ostream& err) {
  std::vector<NamedPath> inputs{{"--synth", req.synth_json}};
  for (const std::string& r : req.reports) inputs.push_back({"report", r});
  if (!check_paths({{"--json", req.json_out}, {"--html", req.html_out}, {"--junit", req.junit_out}, {"--csv", req.csv_out}},
                   inputs, err))
    return kExitBadInput;
  Comparison c;
  try {
    HwConfig probe;
    set_mac_shape(probe, req.reference_mac);
    if (req.reports.empty()) throw std::invalid_argument("no reports given (run-net --whole --energy --json F, one per MAC shape)");
    c = read_comparison(req);
  } catch (const std::exception& e) {
    err << "s2cosim design-report: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::vector<std::string> lines = findings(c, req);
  const ResultSet rs = result_set(c, req, lines);
  out << "design report: " << rs.title << "\n";
  out << "clocks: the whole network's, thesis Table 5.10's sum (model, ARM timed); x" << req.reference_mac
      << ": against the " << req.reference_mac << " MAC array in the same strategy\n";
  for (const std::string& n : rs.notes)
    if (!n.starts_with("finding: ") && !n.starts_with("report: ")) out << n << "\n";
  out << console_table(c, req);
  if (!lines.empty()) out << "\n";
  for (const std::string& l : lines) out << l << "\n";
  out << "\n" << format_status_counts(rs) << "\n";
  if (const std::string f = format_failures(rs); !f.empty()) out << f;

  std::string json_text;
  if (!req.json_out.empty()) {
    nlohmann::ordered_json j;
    j["command"] = "design-report";
    j["tool"] = std::string("s2cosim ") + tool_version();
    j["reference_mac"] = req.reference_mac;
    j["reports"] = c.inputs;
    if (c.synth)
      j["area_source"] = {{"file", req.synth_json}, {"yosys", c.synth->yosys}, {"commit", c.synth->commit},
                          {"date", c.synth->date}, {"note", c.synth->note}};
    else
      j["area_source"] = nullptr;
    j["findings"] = lines;
    nlohmann::ordered_json designs = nlohmann::ordered_json::array();
    for (const DesignPoint& d : c.points) designs.push_back(design_json(d, reference_of(c, d, req.reference_mac), req.reference_mac));
    j["designs"] = designs;
    j["results"] = results_json(rs);
    json_text = j.dump(2) + "\n";
  }
  const bool json_written = write_outputs({{req.json_out, [&] { return json_text; }}}, err);
  const bool rest_written = write_result_outputs(rs, {req.html_out, req.junit_out, req.csv_out}, err);
  if (!json_written || !rest_written) return kExitOutput;
  return summarize(rs).all_passed() ? kExitPass : kExitFail;
}

}  // namespace s2
