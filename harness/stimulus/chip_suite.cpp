#include "harness/stimulus/chip_suite.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/stimulus/chip_random.h"
#include "harness/stimulus/task_vectors.h"
#include "model/splitmix64.h"
#include "model/text_file.h"

namespace s2 {

std::string chip_stream_summary(const TaskStream& s) {
  std::set<int> pes, qpes;
  std::size_t commands = 0, loads = 0, loads_sram = 0, stores = 0, stores_sram = 0, async = 0, mla = 0, mla_nb = 0,
              arm = 0, waits = 0, syncs = 0;
  std::uint64_t bytes = 0;
  // the stream, every field, in one text: its hash names it
  std::ostringstream text;
  text << s.dram_bytes << ';';
  for (const auto& g : s.sync_groups) {
    for (int m : g) text << m << ' ';
    text << ';';
  }
  for (std::size_t p = 0; p < s.pe.size(); ++p) {
    if (s.pe[p].empty()) continue;
    pes.insert(static_cast<int>(p));
    qpes.insert(static_cast<int>(p) / kPesPerQpe);
    text << "\nPE " << p;
    for (const StreamCommand& c : s.pe[p]) {
      ++commands;
      async += c.async;
      text << '\n' << to_string(c.kind) << ' ' << c.operation << ' ' << c.async << ' ';
      switch (c.kind) {
        case CommandKind::DmaLoad:
        case CommandKind::DmaStore: {
          const bool sram = c.dma.remote.kind == MemoryRef::Kind::Sram;
          if (c.kind == CommandKind::DmaLoad) ++loads, loads_sram += sram;
          else ++stores, stores_sram += sram;
          bytes += c.dma.bytes();
          const DmaTransfer& d = c.dma;
          text << to_string(d.remote) << ' ' << d.dram_addr << ' ' << d.dram_row_stride << ' ' << d.dram_plane_stride << ' '
               << d.sram_addr << ' ' << d.sram_row_stride << ' ' << d.sram_plane_stride << ' ' << d.row_bytes << ' ' << d.rows
               << ' ' << d.planes;
          break;
        }
        case CommandKind::Mla:
          ++mla;
          mla_nb += c.mla.a_from_neighbor();
          text << shape_string(c.mla) << ' ' << a_src_string(c.mla) << ' ' << c.a_base << ' ' << c.b_base << ' ' << c.o_base;
          break;
        case CommandKind::Arm: {
          ++arm;
          const ArmCommand& a = c.arm;
          text << to_string(a.kind) << ' ' << a.src << ' ' << a.dst << ' ' << a.planes << ' ' << a.height << ' ' << a.width << ' '
               << a.src_row_stride << ' ' << a.dst_row_stride << ' ' << a.src_plane_stride << ' ' << a.dst_plane_stride << ' '
               << a.pad_left << ' ' << a.pad_right << ' ' << a.pad_top << ' ' << a.pad_bottom << ' ' << a.shift << ' '
               << a.window << ' ' << a.stride << ' ' << a.col_step;
          break;
        }
        case CommandKind::Sync:
          ++syncs;
          text << c.sync_group;
          break;
        case CommandKind::WaitDma:
        case CommandKind::WaitMla:
          ++waits;
          break;
      }
    }
  }
  return fmt::format(
      "{} PEs in {} QPEs; {} commands: {} loads ({} from SRAM) {} stores ({} to SRAM) {} mla ({} operand A from a "
      "neighbour) {} arm {} async {} waits {} syncs in {} groups; {} bytes moved; hash {}",
      pes.size(), qpes.size(), commands, loads, loads_sram, stores, stores_sram, mla, mla_nb, arm, async, waits, syncs,
      s.sync_groups.size(), bytes, text_hash(text.str()));
}

std::vector<ChipSuiteRow> chip_suite_rows(std::uint64_t seed, int count, const std::vector<std::string>& systems) {
  if (systems.empty()) throw std::invalid_argument("chip suite: no system to generate streams for");
  if (count < 1) throw std::invalid_argument("chip suite: count must be positive");
  std::vector<HwConfig> cfgs;
  for (const std::string& sys : systems) cfgs.push_back(chip_random_config(sys));
  SplitMix64 gen{seed ^ 0x73756974650aull};  // "suite"
  std::vector<ChipSuiteRow> rows;
  for (int i = 0; i < count; ++i) {
    const std::size_t k = static_cast<std::size_t>(i) % systems.size();
    ChipSuiteRow r;
    r.id = fmt::format("c{:03}", i);
    r.seed = gen.next() >> 33;  // 31 bits: readable by any CSV reader
    r.system = systems[k];
    r.summary = chip_stream_summary(random_chip_stream(cfgs[k], r.seed));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string chip_suite_csv(std::uint64_t seed, int count, const std::vector<std::string>& systems, const std::string& command) {
  const std::vector<ChipSuiteRow> rows = chip_suite_rows(seed, count, systems);
  std::map<std::string, int> per_system;
  for (const ChipSuiteRow& r : rows) ++per_system[r.system];
  std::string systems_line;
  for (const auto& [sys, k] : per_system) systems_line += fmt::format("{}{} {}", systems_line.empty() ? "" : ", ", sys, k);
  std::string o = fmt::format(
      "# Random chip task streams (s2::random_chip_stream, harness/stimulus/chip_random.h): a row per stream, which\n"
      "# `s2cosim chip-regress` generates again from its seed and system and runs on the model and the RTL.\n"
      "# Generated with seed {} and count {} ({}). Do not edit: regenerate with\n"
      "#   {}\n"
      "# (the same seed gives the same file on every machine). system: mini, prototype (presets) or CxR (a mesh,\n"
      "# harness/stimulus/chip_random.h mesh_chip). summary: what the stream holds, ending in a hash of the whole stream;\n"
      "# chip-regress refuses to run a row whose stream the generator no longer makes.\n",
      seed, count, systems_line, command);
  o += "id,seed,system,summary\n";
  for (const ChipSuiteRow& r : rows) o += fmt::format("{},{},{},{}\n", r.id, r.seed, r.system, r.summary);
  return o;
}

std::vector<ChipSuiteRow> read_chip_suite(const std::string& path) {
  return parse_chip_suite(read_text_file(path, kMaxChipSuiteBytes, "chip suite file"), path);
}

std::vector<ChipSuiteRow> parse_chip_suite(const std::string& text, const std::string& name) {
  if (const auto bad = first_invalid_utf8(text)) {
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n'));
    throw VectorError({{name, line, false, "", fmt::format("{}:{}: expected UTF-8 text", name, line)}});
  }
  std::vector<VectorProblem> problems;
  auto problem = [&](int line, const std::string& field, const std::string& what, bool in_header = false) {
    problems.push_back({name, line, in_header, field,
                        (line > 0 ? fmt::format("{}:{}: ", name, line) : name + ": ") + what});
  };
  auto trim = [](std::string v) {
    const std::size_t a = v.find_first_not_of(" \t\r"), b = v.find_last_not_of(" \t\r");
    return a == std::string::npos ? std::string() : v.substr(a, b - a + 1);
  };
  auto split = [&](const std::string& line) {
    std::vector<std::string> cells;
    std::size_t at = 0;
    for (;;) {
      const std::size_t comma = line.find(',', at);
      cells.push_back(trim(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
      if (comma == std::string::npos) return cells;
      at = comma + 1;
    }
  };
  const std::array<const char*, 4> names = {"id", "seed", "system", "summary"};
  std::array<int, 4> column{-1, -1, -1, -1};
  std::size_t header_cells = 0;
  bool header = false;
  std::set<std::string> ids;
  std::vector<ChipSuiteRow> rows;
  std::istringstream in(text);
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const std::string l = trim(raw);
    if (l.empty() || l[0] == '#') continue;
    const std::vector<std::string> cells = split(l);
    if (!header) {
      header = true;
      header_cells = cells.size();
      for (std::size_t c = 0; c < cells.size(); ++c)
        for (std::size_t k = 0; k < names.size(); ++k)
          if (cells[c] == names[k]) {
            if (column[k] >= 0) problem(line, names[k], fmt::format("header: column '{}' appears twice", names[k]), true);
            column[k] = static_cast<int>(c);
          }
      for (std::size_t k = 0; k < names.size(); ++k)
        if (column[k] < 0)
          problem(line, names[k], fmt::format("header: no column '{}' (expected the header id,seed,system,summary)", names[k]), true);
      if (!problems.empty()) break;
      continue;
    }
    if (cells.size() != header_cells) {
      problem(line, "", fmt::format("expected {} cells as the header has (id,seed,system,summary; no commas in a cell), got {}",
                                    header_cells, cells.size()));
      continue;
    }
    auto cell = [&](std::size_t k) { return cells[static_cast<std::size_t>(column[k])]; };
    auto field = [&](std::size_t k, const std::string& expected) {
      std::string got = cell(k);
      if (got.size() > 64) got = got.substr(0, 64) + "...";
      problem(line, names[k], fmt::format("field '{}': expected {}, got '{}'", names[k], expected, got));
    };
    ChipSuiteRow r;
    r.line = line;
    r.id = cell(0);
    const bool id_ok = !r.id.empty() && r.id.size() <= 64 &&
                       std::all_of(r.id.begin(), r.id.end(), [](char ch) {
                         return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
                       });
    if (!id_ok) field(0, "an id of 1 to 64 letters, digits, '_', '-' or '.'");
    else if (!ids.insert(r.id).second) field(0, "an id no other row has");
    const std::string seed = cell(1);
    bool seed_ok = !seed.empty() && seed.size() <= 20 && seed.find_first_not_of("0123456789") == std::string::npos;
    if (seed_ok) {
      try {
        r.seed = std::stoull(seed);
      } catch (const std::exception&) {
        seed_ok = false;
      }
    }
    if (!seed_ok) field(1, "a non-negative integer below 2^64");
    r.system = cell(2);
    try {
      chip_random_config(r.system);
    } catch (const std::invalid_argument&) {
      field(2, "mini, prototype or a mesh CxR with C and R from 1 to 6 (e.g. 3x3)");
    }
    r.summary = cell(3);
    if (r.summary.empty()) field(3, "the stream's summary (as s2cosim vectors chip-random writes it)");
    rows.push_back(std::move(r));
  }
  if (!header && problems.empty()) problem(0, "", "no header line (expected id,seed,system,summary)");
  else if (rows.empty() && problems.empty()) problem(0, "", "no streams (expected a row per stream after the header)");
  if (!problems.empty()) throw VectorError(std::move(problems));
  return rows;
}

}  // namespace s2
