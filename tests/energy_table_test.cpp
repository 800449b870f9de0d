// The energy table (model/energy_table.h): the compiled-in default equals vectors/energy/default.json, both
// shipped tables load, each default figure follows from the arithmetic its source states, CNNergy's figures
// are its Table III's, energy_of gives hand-computed picojoules per component, and tables made in code that no
// file could hold (NaN, infinity) are refused naming the field. The files refused are the corpus
// tests/bad_inputs/energy_table/ (tests/bad_inputs_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "model/energy_table.h"
#include "test_support.h"

using namespace s2;

namespace {

using namespace s2::test;

std::string default_path() { return source_path("vectors/energy/default.json"); }
std::string cnnergy_path() { return source_path("vectors/energy/cnnergy.json"); }

// The message validate() throws for `t`, "" if none.
std::string refusal(const EnergyTable& t) {
  try {
    validate(t);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(EnergyTable, CompiledDefaultEqualsTheDefaultFile) {
  const EnergyTable compiled = default_energy_table();
  // the file's JSON, field for field (so the file holds nothing the table drops, a matching `unit` aside)
  const nlohmann::json file = read_json(default_path());
  EXPECT_EQ(file, nlohmann::json::parse(to_json(compiled).dump()))
      << "vectors/energy/default.json must be to_json(default_energy_table()):\n"
      << to_json(compiled).dump(2);
  EXPECT_EQ(load_energy_table(default_path()), compiled);
  EXPECT_EQ(energy_table_hash(load_energy_table(default_path())), energy_table_hash(compiled));
}

TEST(EnergyTable, BothShippedTablesLoadUncalibrated) {
  const EnergyTable d = load_energy_table(default_path());
  const EnergyTable c = load_energy_table(cnnergy_path());
  EXPECT_EQ(d.name, "default");
  EXPECT_EQ(c.name, "cnnergy");
  EXPECT_FALSE(d.calibrated);
  EXPECT_FALSE(c.calibrated);
  EXPECT_NE(d.note.find("uncalibrated"), std::string::npos);
  EXPECT_NE(c.note.find("not a SpiNNaker2 figure"), std::string::npos);
  EXPECT_EQ(d.voltage_v, 0.80);
  EXPECT_EQ(d.frequency_mhz, 250.0);
  EXPECT_FALSE(c.voltage_v.has_value());  // Table III states none
  EXPECT_FALSE(c.frequency_mhz.has_value());
  // the default charges every count but time; CNNergy has no CPU
  for (const auto& f : Activity::fields()) {
    const std::string n = f.name;
    const bool time = n == "pe_busy_cycles" || n == "pe_idle_cycles";
    EXPECT_EQ(d.entries.count(n), time ? 0u : 1u) << n;
    EXPECT_EQ(c.entries.count(n), time || n == "arm_cycles" ? 0u : 1u) << n;
  }
  for (const EnergyTable* t : {&d, &c})
    for (const auto& [name, e] : t->entries) EXPECT_FALSE(e.source.empty()) << t->name << " " << name;
  const std::string hd = energy_table_hash(d), hc = energy_table_hash(c);
  EXPECT_EQ(hd.size(), 16u);
  EXPECT_NE(hd, hc);
  // a changed figure changes the hash
  EnergyTable d2 = d;
  d2.entries["mac_ops"].pj_per_unit = 0.1160;
  EXPECT_NE(energy_table_hash(d2), hd);
}

TEST(EnergyTable, JsonRoundTripsAndTheUnitIsOptional) {
  for (const std::string& path : {default_path(), cnnergy_path()}) {
    const EnergyTable t = load_energy_table(path);
    EXPECT_EQ(energy_table_from_json(nlohmann::json::parse(to_json(t).dump())), t) << path;
    nlohmann::json j = nlohmann::json::parse(to_json(t).dump());
    for (auto& [name, e] : j["entries"].items()) e.erase("unit");
    j.erase("calibrated");
    j.erase("note");
    EnergyTable expected = t;
    expected.note = "";
    EXPECT_EQ(energy_table_from_json(j), expected) << path;
  }
}

// Each default figure is its source's arithmetic (the inputs Horowitz ISSCC 2014 gives at 45 nm, 0.9 V),
// rounded to four significant digits, and its source string prints the figure.
TEST(EnergyTable, DefaultFiguresFollowFromTheirStatedArithmetic) {
  const double s = (22.0 / 45.0) * (0.8 / 0.9) * (0.8 / 0.9);
  EXPECT_NEAR(s, 0.3863, 0.00005);
  const double packet_bits = 128 + 67;          // rtl_stubs/s2_pkg.svh noc_pkt_t: NOC_PKT_BITS = 195
  const double sram_pj_per_bit = 20.0 / 64.0;   // 32 KB SRAM, 64-bit read
  const double buffer = 2 * packet_bits * sram_pj_per_bit * s;
  const double wire = packet_bits * 0.1 * (0.8 / 0.9) * (0.8 / 0.9);
  const std::map<std::string, double> arithmetic = {
      {"mac_ops", (0.2 + 0.1) * s},
      {"mac_padding_ops", (0.2 + 0.1) * s},
      {"sram_read_bytes_mla_a", 20.0 / 8 * s},
      {"sram_read_bytes_mla_b", 20.0 / 8 * s},
      {"sram_write_bytes_mla_out", 20.0 / 8 * s},
      {"sram_read_bytes_dma", 20.0 / 8 * s},
      {"sram_write_bytes_dma", 20.0 / 8 * s},
      {"sram_read_bytes_arm", 20.0 / 8 * s},
      {"sram_write_bytes_arm", 20.0 / 8 * s},
      {"noc_packets", buffer},
      {"noc_packet_hops", buffer + wire},
      {"dram_read_bytes", 5.0 * 8},
      {"dram_write_bytes", 5.0 * 8},
      {"arm_cycles", 70 * s},
  };
  const EnergyTable t = default_energy_table();
  ASSERT_EQ(t.entries.size(), arithmetic.size());
  for (const auto& [name, want] : arithmetic) {
    SCOPED_TRACE(name);
    const EnergyEntry& e = t.entries.at(name);
    EXPECT_NEAR(e.pj_per_unit, want, want * 5e-4);  // four significant digits
    char printed[32];
    std::snprintf(printed, sizeof printed, "%.4g", e.pj_per_unit);
    EXPECT_NE(e.source.find(printed), std::string::npos) << e.source;
    if (name.rfind("dram", 0) != 0) {
      EXPECT_NE(e.source.find("0.3863"), std::string::npos) << e.source;
    }
  }
  EXPECT_EQ(t.entries.at("mac_ops").component, EnergyComponent::mac);
  EXPECT_EQ(t.entries.at("sram_write_bytes_dma").component, EnergyComponent::sram);
  EXPECT_EQ(t.entries.at("noc_packet_hops").component, EnergyComponent::noc);
  EXPECT_EQ(t.entries.at("dram_write_bytes").component, EnergyComponent::dram);
  EXPECT_EQ(t.entries.at("arm_cycles").component, EnergyComponent::arm);
  EXPECT_EQ(t.static_mw_per_pe, 0.1);
  EXPECT_NE(t.static_source.find("placeholder"), std::string::npos);
}

TEST(EnergyTable, CnnergyFiguresAreItsTableIIIs) {
  const EnergyTable t = load_energy_table(cnnergy_path());
  EXPECT_DOUBLE_EQ(t.entries.at("mac_ops").pj_per_unit, 0.95);
  EXPECT_DOUBLE_EQ(t.entries.at("mac_padding_ops").pj_per_unit, 0.95);
  for (const char* c : {"sram_read_bytes_mla_a", "sram_read_bytes_mla_b", "sram_write_bytes_mla_out", "sram_read_bytes_dma",
                        "sram_write_bytes_dma", "sram_read_bytes_arm", "sram_write_bytes_arm"})
    EXPECT_DOUBLE_EQ(t.entries.at(c).pj_per_unit, 10.17 / 2) << c;  // GLB per 16-bit access, per byte
  EXPECT_DOUBLE_EQ(t.entries.at("dram_read_bytes").pj_per_unit, 338.82 / 2);
  EXPECT_DOUBLE_EQ(t.entries.at("dram_write_bytes").pj_per_unit, 338.82 / 2);
  EXPECT_DOUBLE_EQ(t.entries.at("noc_packet_hops").pj_per_unit, 3.39 / 2 * 16);  // inter-PE per byte x 16 bytes
  EXPECT_DOUBLE_EQ(t.entries.at("noc_packets").pj_per_unit, 3.39 / 2 * 16);
  EXPECT_EQ(t.static_mw_per_pe, 0.0);
  EXPECT_NE(t.note.find("no CPU"), std::string::npos);
}

// A table of round figures and an activity of every count: the breakdown worked out by hand.
TEST(EnergyTable, EnergyOfAnActivityIsItsCountsTimesTheirFigures) {
  EnergyTable t;
  t.name = "hand";
  t.entries = {
      {"mac_ops", {0.5, EnergyComponent::mac, "hand"}},
      {"mac_padding_ops", {0.25, EnergyComponent::mac, "hand"}},
      {"sram_read_bytes_mla_a", {1, EnergyComponent::sram, "hand"}},
      {"sram_write_bytes_dma", {2, EnergyComponent::sram, "hand"}},
      {"noc_packets", {10, EnergyComponent::noc, "hand"}},
      {"noc_packet_hops", {20, EnergyComponent::noc, "hand"}},
      {"dram_read_bytes", {40, EnergyComponent::dram, "hand"}},
      {"arm_cycles", {30, EnergyComponent::arm, "hand"}},
      // booked where the table says, not where its name suggests
      {"sram_read_bytes_arm", {3, EnergyComponent::arm, "hand"}},
  };
  t.static_mw_per_pe = 0.5;
  t.static_source = "hand";
  ASSERT_EQ(refusal(t), "");
  Activity a;
  a.mac_ops = 1000;
  a.mac_padding_ops = 24;
  a.sram_read_bytes_mla_a = 64;
  a.sram_read_bytes_mla_b = 999;  // no entry: costs nothing
  a.sram_write_bytes_dma = 16;
  a.sram_read_bytes_arm = 4;
  a.noc_packets = 3;
  a.noc_packet_hops = 5;
  a.dram_read_bytes = 32;
  a.dram_write_bytes = 777;  // no entry
  a.arm_cycles = 7;
  a.pe_busy_cycles = 1u << 30;  // time: only the static part, through seconds
  a.pe_idle_cycles = 1u << 30;
  const EnergyBreakdown e = energy_of(a, t, 2e-6, 4);
  EXPECT_DOUBLE_EQ(e.mac, 1000 * 0.5 + 24 * 0.25);   // 506
  EXPECT_DOUBLE_EQ(e.sram, 64 * 1 + 16 * 2);          // 96
  EXPECT_DOUBLE_EQ(e.noc, 3 * 10 + 5 * 20);           // 130
  EXPECT_DOUBLE_EQ(e.dram, 32 * 40);                  // 1280
  EXPECT_DOUBLE_EQ(e.arm, 7 * 30 + 4 * 3);            // 222
  EXPECT_NEAR(e.static_pj, 4000, 1e-9);  // 0.5 mW x 4 PEs x 2 us = 4 nJ = 4000 pJ
  EXPECT_NEAR(e.total(), 506 + 96 + 130 + 1280 + 222 + 4000, 1e-9);
  const nlohmann::ordered_json j = to_json(e);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"mac", "sram", "noc", "dram", "arm", "static", "total"}));
  EXPECT_NEAR(j["static"].get<double>(), 4000, 1e-9);
  EXPECT_NEAR(j["total"].get<double>(), 6234, 1e-9);
  // no time, no PEs: no static energy; an empty activity: nothing
  EXPECT_EQ(energy_of(a, t, 0, 4).static_pj, 0);
  EXPECT_EQ(energy_of(a, t, 1, 0).static_pj, 0);
  EXPECT_EQ(energy_of(Activity{}, t, 0, 4), EnergyBreakdown{});
  // breakdowns add up
  EnergyBreakdown twice = e;
  twice += e;
  EXPECT_DOUBLE_EQ(twice.total(), 2 * e.total());
}

// The default table on one activity, each component worked out from the figures by hand.
TEST(EnergyTable, EnergyOfTheDefaultTable) {
  Activity a;
  a.mac_ops = 64 * 100;                              // a 16x4 array, 100 steps
  a.sram_read_bytes_mla_b = 1600;
  a.sram_write_bytes_mla_out = 256;
  a.noc_packets = 10;
  a.noc_packet_hops = 20;
  a.dram_read_bytes = 1024;
  a.dram_write_bytes = 256;
  a.arm_cycles = 100;
  const EnergyBreakdown e = energy_of(a, default_energy_table(), 1e-3, 4);
  EXPECT_NEAR(e.mac, 6400 * 0.1159, 1e-9);               // 741.76
  EXPECT_NEAR(e.sram, 1856 * 0.9657, 1e-9);              // 1792.3392
  EXPECT_NEAR(e.noc, 10 * 47.08 + 20 * 62.49, 1e-9);     // 1720.6
  EXPECT_NEAR(e.dram, 1280 * 40.0, 1e-9);                // 51200
  EXPECT_NEAR(e.arm, 100 * 27.04, 1e-9);                 // 2704
  EXPECT_NEAR(e.static_pj, 400000, 1e-6);  // 0.1 mW x 4 PEs x 1 ms = 400 nJ
}

TEST(EnergyTable, EnergyOfRefusesATimeOrPesThatCannotBe) {
  const EnergyTable t = default_energy_table();
  EXPECT_THROW(energy_of(Activity{}, t, -1, 1), std::invalid_argument);
  EXPECT_THROW(energy_of(Activity{}, t, std::nan(""), 1), std::invalid_argument);
  EXPECT_THROW(energy_of(Activity{}, t, std::numeric_limits<double>::infinity(), 1), std::invalid_argument);
  EXPECT_THROW(energy_of(Activity{}, t, 1, -1), std::invalid_argument);
}

// What no JSON file can hold (NaN, infinity) but a table made in code can: validate() names the field.
TEST(EnergyTable, TablesMadeInCodeAreValidatedNamingTheField) {
  const double inf = std::numeric_limits<double>::infinity();
  EnergyTable t = default_energy_table();
  EXPECT_EQ(refusal(t), "");
  t.entries["mac_ops"].pj_per_unit = std::nan("");
  EXPECT_EQ(refusal(t), "energy table field 'entries.mac_ops.pj_per_unit': expected a finite number of picojoules from 0 to 1000000");
  t = default_energy_table();
  t.entries["dram_read_bytes"].pj_per_unit = inf;
  EXPECT_EQ(refusal(t), "energy table field 'entries.dram_read_bytes.pj_per_unit': expected a finite number of picojoules from 0 to 1000000");
  t = default_energy_table();
  t.static_mw_per_pe = -inf;
  EXPECT_EQ(refusal(t), "energy table field 'static.mw_per_pe': expected a finite number of milliwatts from 0 to 1000000");
  t = default_energy_table();
  t.voltage_v = std::nan("");
  EXPECT_EQ(refusal(t), "energy table field 'voltage_v': expected a supply voltage above 0 and at most 10 (V), or null");
  t = default_energy_table();
  t.entries["pe_idle_cycles"] = {1, EnergyComponent::arm, "x"};
  EXPECT_NE(refusal(t).find("energy table field 'entries.pe_idle_cycles': expected a count of model/activity.h charged per access"),
            std::string::npos);
  t = default_energy_table();
  t.entries["mac_opps"] = {1, EnergyComponent::mac, "x"};
  EXPECT_NE(refusal(t).find("'entries.mac_opps'"), std::string::npos);
  t = default_energy_table();
  t.static_source.clear();
  EXPECT_EQ(refusal(t), "energy table field 'static.source': expected where the figure comes from (a non-empty string)");
}

// The corpus of refused files holds at least the kinds of bad table issue 30 names (each checked against its
// .expected line by tests/bad_inputs_test.cpp).
TEST(EnergyTable, TheBadInputCorpusHasEveryKind) {
  for (const char* f : {"unknown_key.json", "unknown_count.json", "negative_pj.json", "non_finite_pj.json", "wrong_type.json",
                        "unknown_component.json", "not_json.json", "time_count.json", "unit_per_bit.json"}) {
    const std::string path = source_path(std::string("tests/bad_inputs/energy_table/") + f);
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_TRUE(std::filesystem::exists(path + ".expected")) << path;
    EXPECT_THROW(load_energy_table(path), std::runtime_error) << path;
  }
}

}  // namespace

// A report's energy_pj is read back as written (merge, resume); a total that is not the sum, a negative or
// missing component is refused naming the field. `--energy` names the compiled-in table or a file.
TEST(EnergyTable, BreakdownsRoundTripAndTablesAreNamed) {
  EnergyBreakdown e;
  e.mac = 1.5;
  e.sram = 2.25;
  e.noc = 0.125;
  e.dram = 100;
  e.arm = 3;
  e.static_pj = 7;
  EXPECT_EQ(energy_breakdown_from_json(nlohmann::json(to_json(e))), e);
  nlohmann::json j = to_json(e);
  j["total"] = 1.0;
  EXPECT_THROW(energy_breakdown_from_json(j), std::invalid_argument);
  j = to_json(e);
  j["dram"] = -1.0;
  EXPECT_THROW(energy_breakdown_from_json(j), std::invalid_argument);
  j = to_json(e);
  j.erase("static");
  try {
    energy_breakdown_from_json(j);
    FAIL() << "a breakdown without 'static' was read";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("static"), std::string::npos) << ex.what();
  }
  EXPECT_EQ(energy_table_named("default"), default_energy_table());
  EXPECT_EQ(energy_table_named(cnnergy_path()), load_energy_table(cnnergy_path()));
  EXPECT_THROW(energy_table_named("no_such_table.json"), std::runtime_error);
}
