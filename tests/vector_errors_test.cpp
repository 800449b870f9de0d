// Bad task-vector files (contract 1): the reader (harness/stimulus/task_vectors.h) names the file, the line and the
// field of every problem, and `s2cosim regress` (s2::regress) stops with exit code 2 before running
// anything. A correct file with comments, reordered columns and an unknown extra column reads fine.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "harness/commands/regress.h"
#include "harness/stimulus/task_vectors.h"
#include "tests/test_support.h"

namespace s2 {
namespace {

namespace fs = std::filesystem;

using namespace s2::test;

// Reads `path` expecting a VectorError; returns it (a default one with a failure if none was thrown).
VectorError read_error(const std::string& path, const HwConfig& cfg = HwConfig{}) {
  try {
    const std::vector<Task> tasks = read_task_vectors(path, cfg);
    ADD_FAILURE() << path << " read without error (" << tasks.size() << " tasks)";
  } catch (const VectorError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " threw something other than a VectorError: " << e.what();
  }
  return VectorError({});
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected '" << part << "' in:\n" << text;
}

// The CLI path: exit code 2, the reader's message on `err`, nothing run, no report written.
void expect_regress_refuses(const TempDir& dir, const std::string& vectors, const std::vector<std::string>& parts) {
  RegressRequest req;
  req.vectors = vectors;
  req.json_out = dir.path("report.json");
  req.csv_out = dir.path("report.csv");
  std::ostringstream out, err;
  EXPECT_EQ(regress(req, out, err), 2);
  for (const std::string& p : parts) expect_contains(err.str(), p);
  expect_contains(err.str(), "nothing was run");
  EXPECT_EQ(out.str(), "") << "no table or summary for a run that did not happen";
  EXPECT_EQ(err.str().find("[1/"), std::string::npos) << "no progress line: no task ran";
  EXPECT_FALSE(fs::exists(req.json_out)) << "the JSON report must not be created";
  EXPECT_FALSE(fs::exists(req.csv_out)) << "the CSV report must not be created";
}

constexpr const char* kHeader = "id,op,pe,Wi,Hi,D,Wf,Hf,C,stride,W_A,H_A,W_B,H_B,a_src,seed\n";

// ---------------------------------------------------------------- missing column / missing cell

TEST(VectorErrors, MissingColumnNamesFileHeaderLineAndColumn) {
  TempDir dir;
  // no Hi column, but a conv row needs it
  const std::string path = dir.write("bad_missing.csv",
                                     "id,op,pe,Wi,D,Wf,Hf,C,stride,a_src,seed\n"
                                     "c1,conv,all,16,4,3,3,4,1,local,1\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_missing.csv:1(header)");
  expect_contains(msg, "missing column 'Hi'");
  expect_contains(msg, "first at line 2");
  ASSERT_EQ(e.problems().size(), 1u) << msg;
  const VectorProblem& p = e.problems()[0];
  EXPECT_EQ(p.file, path);
  EXPECT_EQ(p.line, 1);
  EXPECT_TRUE(p.header);
  EXPECT_EQ(p.field, "Hi");
  expect_regress_refuses(dir, path, {"bad_missing.csv:1(header)", "missing column 'Hi'"});
}

TEST(VectorErrors, MissingIdAndOpColumnsAreReportedAtTheHeader) {
  TempDir dir;
  const std::string path = dir.write("bad_no_id.csv",
                                     "# a comment before the header\n"
                                     "name,pe,Wi,Hi,D,Wf,Hf,C\n"
                                     "c1,all,16,4,4,3,3,4\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_no_id.csv:2(header): missing column 'id'");
  expect_contains(msg, "bad_no_id.csv:2(header): missing column 'op'");
  expect_regress_refuses(dir, path, {"missing column 'id'"});
}

TEST(VectorErrors, EmptyRequiredCellNamesLineAndField) {
  TempDir dir;
  const std::string path = dir.write("bad_empty.csv", std::string(kHeader) + "c1,conv,all,16,,4,3,3,4,1,,,,,local,1\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_empty.csv:2");
  expect_contains(msg, "field 'Hi'");
  expect_contains(msg, "expected a positive integer, got ''");
  ASSERT_EQ(e.problems().size(), 1u) << msg;
  EXPECT_EQ(e.problems()[0].line, 2);
  EXPECT_EQ(e.problems()[0].field, "Hi");
  EXPECT_FALSE(e.problems()[0].header);
  expect_regress_refuses(dir, path, {"bad_empty.csv:2", "field 'Hi'"});
}

// ---------------------------------------------------------------- non-numeric cell

TEST(VectorErrors, NonNumericCellNamesLineAndField) {
  TempDir dir;
  // comment and blank lines count in the line numbers: the bad row is line 5
  const std::string path = dir.write("bad_nonnumeric.csv", std::string("# smoke\n") + kHeader +
                                                               "good,conv,all,16,4,4,3,3,4,1,,,,,local,1\n"
                                                               "\n"
                                                               "bad,conv,all,sixteen,4,4,3,3,4,1,,,,,local,1\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_nonnumeric.csv:5");
  expect_contains(msg, "field 'Wi'");
  expect_contains(msg, "got 'sixteen'");
  ASSERT_EQ(e.problems().size(), 1u) << msg;
  EXPECT_EQ(e.problems()[0].line, 5);
  EXPECT_EQ(e.problems()[0].field, "Wi");
  expect_regress_refuses(dir, path, {"bad_nonnumeric.csv:5", "field 'Wi'", "sixteen"});
}

TEST(VectorErrors, NegativeAndFractionalNumbersAreNotPositiveIntegers) {
  TempDir dir;
  const std::string path = dir.write("bad_numbers.csv", std::string(kHeader) +
                                                            "m1,mm,all,,,,,,,,-64,8,48,64,local,1\n"
                                                            "m2,mm,all,,,,,,,,64,8.5,48,64,local,1\n"
                                                            "m3,mm,all,,,,,,,,64,8,48,64,local,-3\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_numbers.csv:2: field 'W_A'");
  expect_contains(msg, "bad_numbers.csv:3: field 'H_A'");
  expect_contains(msg, "bad_numbers.csv:4: field 'seed'");
  EXPECT_EQ(e.problems().size(), 3u) << msg;
}

// ---------------------------------------------------------------- the 96 KB budget

TEST(VectorErrors, TaskOverTheSramBudgetNamesLineTaskAndBudget) {
  TempDir dir;
  // a 1x1 convolution whose input alone is 64 x 40 x 40 = 102400 bytes > 96 KB = 98304 bytes
  const std::string path = dir.write("bad_too_large.csv", std::string(kHeader) +
                                                              "fits,conv,all,34,6,8,3,3,4,1,,,,,local,11\n"
                                                              "too_big,conv,all,64,40,40,1,1,4,1,,,,,local,1\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_too_large.csv:3");
  expect_contains(msg, "task 'too_big'");
  expect_contains(msg, "SRAM footprint");
  expect_contains(msg, "exceeds the MLA budget of 98304 bytes");
  ASSERT_EQ(e.problems().size(), 1u) << msg;
  EXPECT_EQ(e.problems()[0].line, 3);
  expect_regress_refuses(dir, path, {"bad_too_large.csv:3", "too_big", "98304"});
}

TEST(VectorErrors, BudgetComesFromTheConfiguration) {
  TempDir dir;
  // 16 x 40 x 40 = 25600 bytes of input: fits 96 KB, not a 16 KB budget
  const std::string path = dir.write("budget.csv", std::string(kHeader) + "mid,conv,all,16,40,40,1,1,4,1,,,,,local,1\n");
  EXPECT_EQ(read_task_vectors(path, HwConfig{}).size(), 1u);
  HwConfig small;
  small.sram_mla_budget_bytes = 16 * 1024;
  const VectorError e = read_error(path, small);
  expect_contains(e.what(), "budget.csv:2");
  expect_contains(e.what(), "exceeds the MLA budget of 16384 bytes");
}

// ---------------------------------------------------------------- W_A != H_B

TEST(VectorErrors, MatrixShapesThatDoNotChainNameWAAndHB) {
  TempDir dir;
  const std::string path = dir.write("bad_wa_hb.csv", std::string(kHeader) + "mm_bad,mm,all,,,,,,,,64,8,48,32,local,1\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  expect_contains(msg, "bad_wa_hb.csv:2");
  expect_contains(msg, "field 'H_B'");
  expect_contains(msg, "W_A = 64");
  expect_contains(msg, "got '32'");
  ASSERT_EQ(e.problems().size(), 1u) << msg;
  EXPECT_EQ(e.problems()[0].field, "H_B");
  expect_regress_refuses(dir, path, {"bad_wa_hb.csv:2", "field 'H_B'", "W_A"});
}

// ---------------------------------------------------------------- several problems, one report

TEST(VectorErrors, EveryProblemIsListedInLineOrder) {
  TempDir dir;
  const std::string path = dir.write("bad_many.csv", std::string(kHeader) +
                                                         "a,conv,all,16,4,4,3,3,4,1,,,,,local,1\n"
                                                         "b,mm,all,,,,,,,,64,8,48,63,local,1\n"
                                                         "a,conv,all,16,4,4,3,3,4,1,,,,,local,1\n"
                                                         "c,pool,all,16,4,4,3,3,4,1,,,,,local,1\n"
                                                         "d,conv,7,16,4,4,3,3,4,1,,,,,sideways,1\n");
  const VectorError e = read_error(path);
  const std::string msg = e.what();
  ASSERT_GE(e.problems().size(), 5u) << msg;
  for (std::size_t i = 1; i < e.problems().size(); ++i)
    EXPECT_LE(e.problems()[i - 1].line, e.problems()[i].line) << msg;
  expect_contains(msg, "bad_many.csv:3: field 'H_B'");
  expect_contains(msg, "bad_many.csv:4: field 'id'");
  expect_contains(msg, "already used at line 2");
  expect_contains(msg, "bad_many.csv:5: field 'op'");
  expect_contains(msg, "bad_many.csv:6: field 'pe'");
  expect_contains(msg, "bad_many.csv:6: field 'a_src'");
  expect_regress_refuses(dir, path, {"bad_many.csv:3", "bad_many.csv:6", "5 problems"});
}

TEST(VectorErrors, MissingFileIsABadInput) {
  TempDir dir;
  const std::string path = dir.path("does_not_exist.csv");
  const VectorError e = read_error(path);
  expect_contains(e.what(), "does_not_exist.csv");
  expect_regress_refuses(dir, path, {"does_not_exist.csv"});
}

// ---------------------------------------------------------------- a correct file in a free form

TEST(VectorErrors, CommentsReorderedColumnsAndExtraColumnsReadFine) {
  TempDir dir;
  const std::string path = dir.write("good_free_form.csv",
                                     "# a comment line\n"
                                     "   # an indented comment\n"
                                     "\n"
                                     "seed,a_src,note,H_B,W_B,H_A,W_A,C,Hf,Wf,D,Hi,Wi,pe,op,id\n"
                                     "7,neighbor:1,anything at all,,,,,4,3,3,3,5,20,all,conv,conv_n1\n"
                                     "# a comment between rows\n"
                                     "8, LOCAL ,\"quoted, with a comma\",40,37,3,40,,,,,,,2,MM,mm_odd\n");
  const std::vector<Task> tasks = read_task_vectors(path, HwConfig{});
  ASSERT_EQ(tasks.size(), 2u);
  const Task& c = tasks[0];
  EXPECT_EQ(c.id, "conv_n1");
  EXPECT_EQ(c.op, Op::Conv);
  EXPECT_TRUE(c.all_pes());
  EXPECT_EQ(c.conv.Wi, 20);
  EXPECT_EQ(c.conv.Hi, 5);
  EXPECT_EQ(c.conv.D, 3);
  EXPECT_EQ(c.conv.Wf, 3);
  EXPECT_EQ(c.conv.Hf, 3);
  EXPECT_EQ(c.conv.C, 4);
  EXPECT_EQ(c.conv.stride, 1);  // no stride column: 1
  EXPECT_EQ(c.a_src_shift, 1);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.data, DataPattern::Random);  // no data column: random
  EXPECT_EQ(c.source_file, path);
  EXPECT_EQ(c.source_line, 5);
  const Task& m = tasks[1];
  EXPECT_EQ(m.id, "mm_odd");
  EXPECT_EQ(m.op, Op::Mm);
  EXPECT_EQ(m.pe, 2);
  EXPECT_EQ(m.mm.W_A, 40);
  EXPECT_EQ(m.mm.H_A, 3);
  EXPECT_EQ(m.mm.W_B, 37);
  EXPECT_EQ(m.mm.H_B, 40);
  EXPECT_EQ(m.a_src_shift, -1);
  EXPECT_EQ(m.seed, 8u);
  EXPECT_EQ(m.source_line, 7);
}

TEST(VectorErrors, SameTasksWhateverTheColumnOrder) {
  TempDir dir;
  const std::string a = dir.write("ordered.csv", std::string(kHeader) + "x,mm,1,,,,,,,,16,4,32,16,neighbor:3,5\n");
  const std::string b = dir.write("shuffled.csv",
                                  "H_B,W_B,extra,H_A,W_A,seed,a_src,pe,op,id\n"
                                  "16,32,zzz,4,16,5,neighbor:3,1,mm,x\n");
  const std::vector<Task> ta = read_task_vectors(a, HwConfig{});
  const std::vector<Task> tb = read_task_vectors(b, HwConfig{});
  ASSERT_EQ(ta.size(), 1u);
  ASSERT_EQ(tb.size(), 1u);
  EXPECT_EQ(task_vector_row(ta[0]), task_vector_row(tb[0]));
  EXPECT_EQ(task_vector_row(ta[0]), "x,mm,1,,,,,,,,16,4,32,16,neighbor:3,5,random");
}

}  // namespace
}  // namespace s2
