// Helpers shared by the SNN tests (snn_layouts_test.cpp, snn_deployment_test.cpp; header-only, namespace
// s2::test).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "mapper/snn/layouts.h"
#include "model/hw_config.h"
#include "model/snn_layer.h"

namespace s2::test {

// Every layout of `layer` within `budget` on both backends: bit-exact, model against RTL within 2%; returns
// the plans (for the callers' checks of their PEs).
inline std::vector<mapper::SnnPlan> run_snn_everywhere(const SnnLayer& layer, const HwConfig& cfg, std::uint64_t budget, const std::string& what) {
  const std::vector<std::int32_t> golden = snn_currents(layer);
  auto model = make_model_stream_backend(cfg);
  auto rtl = make_rtl_stream_backend(cfg);
  std::vector<mapper::SnnPlan> plans;
  for (mapper::SnnLayout l : mapper::kSnnLayouts) {
    mapper::SnnPlan plan = mapper::plan_snn_layer(layer, l, cfg, budget);
    SystemMemory on_model = plan.memory, on_rtl = plan.memory;
    const StreamResult m = model->run(plan.stream, on_model, StreamRunOptions{});
    StreamRunOptions ro;
    ro.watchdog_cycles = 4 * m.cycles + 100000;
    const StreamResult r = rtl->run(plan.stream, on_rtl, ro);
    const std::string tag = what + " " + mapper::to_string(l);
    EXPECT_TRUE(m.completed) << tag << ": " << m.stalled;
    EXPECT_TRUE(r.completed) << tag << ": " << r.stalled;
    if (!m.completed || !r.completed) continue;
    EXPECT_EQ(mapper::snn_plan_currents(plan, layer, on_model), golden) << tag << " (model)";
    EXPECT_EQ(mapper::snn_plan_currents(plan, layer, on_rtl), golden) << tag << " (RTL)";
    const double delta = (double(m.cycles) - double(r.cycles)) / double(r.cycles);
    std::cout << tag << ": " << plan.pes.size() << " PEs, model " << m.cycles << " RTL " << r.cycles << " clocks (" << 100.0 * delta
              << "%), " << plan.mla_tasks << " MLA tasks, " << plan.sram.total() << " bytes of SRAM\n";
    EXPECT_LE(std::abs(delta), 0.02) << tag;
    std::uint64_t sum = 0;
    for (const mapper::SnnPe& pe : plan.pes) {
      EXPECT_LE(pe.sram.total(), budget) << tag << " PE " << pe.pe;
      EXPECT_EQ(plan.memory.sram.at(pe.pe).size(), pe.sram.total()) << tag << " PE " << pe.pe;
      sum += pe.sram.total();
    }
    EXPECT_EQ(sum, plan.sram.total()) << tag;
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace s2::test
