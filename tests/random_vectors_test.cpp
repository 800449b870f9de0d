// The random-suite generator (harness/stimulus/random_vectors.h) and the task vectors committed under vectors/.
#include "harness/stimulus/random_vectors.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/stimulus/task_vectors.h"
#include "model/golden.h"
#include "model/sram_layout.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

using namespace s2::test;

// ---------------------------------------------------------------- the generator

TEST(RandomSuite, SameSeedSameText) {
  const HwConfig cfg;
  const std::string a = random_suite_csv(2026, 240, cfg);
  const std::string b = random_suite_csv(2026, 240, cfg);
  EXPECT_EQ(a, b);
  EXPECT_EQ(random_suite_csv(0, 17, cfg), random_suite_csv(0, 17, cfg));
}

TEST(RandomSuite, DifferentSeedsDiffer) {
  const HwConfig cfg;
  const std::vector<Task> a = random_suite_tasks(1, 60, cfg);
  const std::vector<Task> b = random_suite_tasks(2, 60, cfg);
  ASSERT_EQ(a.size(), b.size());
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same += a[i].op == b[i].op && a[i].seed == b[i].seed && a[i].conv.Wi == b[i].conv.Wi && a[i].mm.W_A == b[i].mm.W_A;
  }
  EXPECT_LT(same, 5);
  EXPECT_NE(random_suite_csv(1, 60, cfg), random_suite_csv(2, 60, cfg));
}

TEST(RandomSuite, CountIsHonouredAndIdsAreUnique) {
  const HwConfig cfg;
  for (int count : {0, 1, 39, 40, 41, 240}) {
    const std::vector<Task> tasks = random_suite_tasks(5, count, cfg);
    EXPECT_EQ(static_cast<int>(tasks.size()), count);
    std::set<std::string> ids;
    for (const Task& t : tasks) ids.insert(t.id);
    EXPECT_EQ(static_cast<int>(ids.size()), count);
  }
}

TEST(RandomSuite, EveryTaskFitsTheBudgetOnEveryShape) {
  for (HwConfig cfg : mac_shape_configs()) {
    for (std::uint64_t seed : {1ull, 2026ull, 0xdeadbeefull}) {
      for (const Task& t : random_suite_tasks(seed, 240, cfg)) {
        const std::uint64_t bytes = static_cast<std::uint64_t>(sram_layout(t, cfg).total_bytes());
        EXPECT_LE(bytes, static_cast<std::uint64_t>(cfg.sram_mla_budget_bytes)) << t.id << " on " << cfg.mac_shape();
        EXPECT_EQ(bytes, sram_footprint_bytes(t, cfg)) << t.id;
        EXPECT_TRUE(validate_task(t, cfg).empty()) << t.id;
        if (t.op == Op::Mm) {
          EXPECT_EQ(t.mm.W_A, t.mm.H_B) << t.id;
        } else {
          EXPECT_EQ(t.conv.stride, 1) << t.id;
          EXPECT_GE(t.conv.Wi, t.conv.Wf) << t.id;
          EXPECT_GE(t.conv.Hi, t.conv.Hf) << t.id;
        }
      }
    }
    // a smaller budget is honoured too (no 9x9 convolution that wraps fits 16 KB: the wrap slots fall back
    // to the deepest 9x9 convolution that fits)
    for (int kb : {48, 16}) {
      cfg.sram_mla_budget_bytes = kb * 1024;
      for (const Task& t : random_suite_tasks(3, 80, cfg)) {
        EXPECT_LE(sram_layout(t, cfg).total_bytes(), static_cast<std::uint32_t>(kb) * 1024) << t.id;
      }
    }
    cfg.sram_mla_budget_bytes = 8 * 1024;
    EXPECT_THROW(random_suite_tasks(3, 80, cfg), std::invalid_argument);
  }
}

TEST(RandomSuite, CoversEveryCorner) {
  const HwConfig cfg;
  for (std::uint64_t seed : {2026ull, 7ull}) {
    for (int count : {40, 240}) {
      const std::vector<Task> tasks = random_suite_tasks(seed, count, cfg);
      int conv = 0, mm = 0, single = 0, odd_w = 0, odd_c = 0, fill = 0, wrap = 0, non_square = 0;
      std::set<int> filters, sources, single_pes;
      std::set<DataPattern> data;
      std::uint64_t clocks = 0;
      for (const Task& t : tasks) {
        const std::uint64_t bytes = sram_layout(t, cfg).total_bytes();
        fill += bytes * 10 > static_cast<std::uint64_t>(cfg.sram_mla_budget_bytes) * 9;
        wrap += extreme_data_wraps(t, cfg);
        data.insert(t.data);
        sources.insert(t.a_src_shift);
        if (!t.all_pes()) {
          ++single;
          single_pes.insert(t.pe);
        }
        if (t.op == Op::Conv) {
          ++conv;
          odd_w += t.conv.Wi % 16 != 0;
          odd_c += t.conv.C % 4 != 0;
          if (t.conv.Wf == t.conv.Hf) filters.insert(t.conv.Wf);
          else ++non_square;
        } else {
          ++mm;
          odd_w += t.mm.W_B % 16 != 0;
          odd_c += t.mm.H_A % 4 != 0;
        }
        clocks += estimate_pe_clocks_sram2clk(t, cfg);
      }
      SCOPED_TRACE("seed " + std::to_string(seed) + ", count " + std::to_string(count));
      EXPECT_GT(conv, 0);
      EXPECT_GT(mm, 0);
      EXPECT_GT(single, 0);
      EXPECT_LT(single, count / 4);  // pe=all mostly
      EXPECT_GT(odd_w, 0);
      EXPECT_GT(odd_c, 0);
      EXPECT_GE(fill, 2);
      EXPECT_GE(wrap, 1);
      EXPECT_GE(non_square, 1);
      EXPECT_EQ(filters, (std::set<int>{1, 3, 5, 7, 9}));
      EXPECT_EQ(sources, (std::set<int>{-1, 0, 1, 2, 3}));
      EXPECT_EQ(data, (std::set<DataPattern>{DataPattern::Random, DataPattern::AllMin, DataPattern::AllMax,
                                             DataPattern::MinMax}));
      if (count == 240) {
        EXPECT_EQ(single_pes, (std::set<int>{0, 1, 2, 3}));
        EXPECT_GE(wrap, 3);
        EXPECT_LT(clocks, 60000000u) << "the suite must stay runnable on the RTL in a few minutes";
      }
    }
  }
}

TEST(RandomSuite, WrappingTasksReallyWrap) {
  // the golden result of every task the generator counts as wrapping leaves the 29-bit range before the wrap
  const HwConfig cfg;
  int checked = 0;
  for (const Task& t : random_suite_tasks(2026, 240, cfg)) {
    if (!extreme_data_wraps(t, cfg)) continue;
    ASSERT_EQ(t.op, Op::Conv) << t.id;
    const std::int64_t product = t.data == DataPattern::AllMin ? 16384 : t.data == DataPattern::AllMax ? 16129 : -16256;
    const std::int64_t exact = product * t.conv.D * t.conv.Hf * t.conv.Wf;
    EXPECT_TRUE(exact > (1 << 28) - 1 || exact < -(1 << 28)) << t.id;
    std::vector<PeOperands> ops;
    for (int p = 0; p < kPesPerQpe; ++p) ops.push_back(make_operands(t, p));
    const std::vector<std::int32_t> r = golden_results(t, t.pes().front(), ops, cfg);
    ASSERT_FALSE(r.empty());
    const std::int64_t wrapped = exact > 0 ? exact - (std::int64_t(1) << 29) : exact + (std::int64_t(1) << 29);
    for (std::int32_t v : r) EXPECT_EQ(v, wrapped) << t.id;
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST(RandomSuite, HeaderStatesHowItWasMade) {
  const std::string text = random_suite_csv(2026, 240, HwConfig{});
  EXPECT_NE(text.find("seed 2026 and count 240"), std::string::npos);
  EXPECT_NE(text.find("s2cosim vectors random --seed 2026 --count 240"), std::string::npos);
  EXPECT_NE(text.find("accumulators wrap the 29-bit range"), std::string::npos);
  EXPECT_NE(text.find("Estimated QPE clocks"), std::string::npos);
  EXPECT_EQ(text.rfind("# ", 0), 0u);
}

// ---------------------------------------------------------------- the committed vectors

TEST(CommittedVectors, RandomSuiteEqualsItsGenerator) {
  const std::string committed = read_text(source_path("vectors/random_suite.csv"));
  const std::string generated = random_suite_csv(2026, 240, HwConfig{});
  EXPECT_TRUE(committed == generated)
      << "vectors/random_suite.csv is not what random_suite_csv(2026, 240, HwConfig{}) writes; regenerate it "
         "with: s2cosim vectors random --seed 2026 --count 240 > vectors/random_suite.csv";
}

TEST(CommittedVectors, RandomSuiteReadsBackAsGenerated) {
  const HwConfig cfg;
  const std::vector<Task> read = read_task_vectors(source_path("vectors/random_suite.csv"), cfg);
  const std::vector<Task> gen = random_suite_tasks(2026, 240, cfg);
  ASSERT_EQ(read.size(), gen.size());
  for (std::size_t i = 0; i < gen.size(); ++i) {
    const Task& r = read[i];
    const Task& g = gen[i];
    SCOPED_TRACE(g.id);
    EXPECT_EQ(r.id, g.id);
    EXPECT_EQ(r.op, g.op);
    EXPECT_EQ(r.pe, g.pe);
    EXPECT_EQ(r.a_src_shift, g.a_src_shift);
    EXPECT_EQ(r.seed, g.seed);
    EXPECT_EQ(r.data, g.data);
    if (g.op == Op::Conv) {
      EXPECT_EQ(r.conv.Wi, g.conv.Wi);
      EXPECT_EQ(r.conv.Hi, g.conv.Hi);
      EXPECT_EQ(r.conv.D, g.conv.D);
      EXPECT_EQ(r.conv.Wf, g.conv.Wf);
      EXPECT_EQ(r.conv.Hf, g.conv.Hf);
      EXPECT_EQ(r.conv.C, g.conv.C);
    } else {
      EXPECT_EQ(r.mm.W_A, g.mm.W_A);
      EXPECT_EQ(r.mm.H_A, g.mm.H_A);
      EXPECT_EQ(r.mm.W_B, g.mm.W_B);
      EXPECT_EQ(r.mm.H_B, g.mm.H_B);
    }
  }
}

TEST(CommittedVectors, ThesisValidationTasks) {
  const std::vector<Task> tasks = read_task_vectors(source_path("vectors/thesis_qpe_validation.csv"), HwConfig{});
  ASSERT_EQ(tasks.size(), 9u);
  int local = 0, neighbor = 0, conv = 0, mm = 0;
  for (const Task& t : tasks) {
    EXPECT_TRUE(t.all_pes()) << t.id;  // thesis 5.1.2: all 4 PEs run the same task
    EXPECT_EQ(t.id.rfind("t5_", 0), 0u) << t.id;
    (t.a_from_neighbor() ? neighbor : local)++;
    (t.op == Op::Conv ? conv : mm)++;
  }
  EXPECT_EQ(local, 7);
  EXPECT_EQ(neighbor, 2);
  EXPECT_EQ(conv, 7);
  EXPECT_EQ(mm, 2);
  EXPECT_EQ(tasks[0].id, "t5_1_conv_226x22x3_f3x3x3x4");
  EXPECT_EQ(tasks[0].conv.Wi, 226);
  // the measured figures live in the file itself (extra columns), with the sram2clk note
  const std::string text = read_text(source_path("vectors/thesis_qpe_validation.csv"));
  EXPECT_NE(text.find("hdl_clocks"), std::string::npos);
  EXPECT_NE(text.find("--flaw sram2clk"), std::string::npos);
  EXPECT_NE(text.find(",local,1,27748,25771\n"), std::string::npos);
  EXPECT_NE(text.find(",neighbor:0,1,13276,12619\n"), std::string::npos);
}

TEST(CommittedVectors, SmokeTasks) {
  const std::vector<Task> tasks = read_task_vectors(source_path("vectors/smoke.csv"), HwConfig{});
  ASSERT_GE(tasks.size(), 6u);
  ASSERT_LE(tasks.size(), 8u);
  bool conv_local = false, conv_n1 = false, conv_odd = false, conv_1x1 = false, mm_local = false, mm_n2 = false,
       mm_odd = false, single = false;
  for (const Task& t : tasks) {
    if (t.op == Op::Conv) {
      conv_local |= t.a_src_shift == -1;
      conv_n1 |= t.a_src_shift == 1;
      conv_odd |= t.conv.Wi % 16 != 0 && t.conv.C % 4 != 0;
      conv_1x1 |= t.conv.Wf == 1 && t.conv.Hf == 1;
    } else {
      mm_local |= t.a_src_shift == -1;
      mm_n2 |= t.a_src_shift == 2;
      mm_odd |= t.mm.W_B % 16 != 0 && t.mm.H_A < 4;
    }
    single |= t.pe == 2;
    EXPECT_LT(estimate_pe_clocks_sram2clk(t, HwConfig{}), 5000u) << t.id << " is not a smoke task";
  }
  EXPECT_TRUE(conv_local && conv_n1 && conv_odd && conv_1x1 && mm_local && mm_n2 && mm_odd && single);
}

}  // namespace
}  // namespace s2
