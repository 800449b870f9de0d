// The one status rule every comparator applies (harness/check/comparators.h, classify): each finding alone
// gives its status, several give the first by precedence, and a delta is a deviation only beyond the bound.
#include <gtest/gtest.h>

#include "harness/check/comparators.h"

namespace s2 {
namespace {

TEST(Classify, EachFindingAloneGivesItsStatus) {
  EXPECT_EQ(classify(Findings{}, 0.02), Status::Pass);
  Findings f;
  f.error = true;
  EXPECT_EQ(classify(f, 0.02), Status::Error);
  f = {};
  f.hang = true;
  EXPECT_EQ(classify(f, 0.02), Status::Hang);
  f = {};
  f.early_stop = true;
  EXPECT_EQ(classify(f, 0.02), Status::EarlyStop);
  f = {};
  f.mismatch = true;
  EXPECT_EQ(classify(f, 0.02), Status::Mismatch);
  f = {};
  f.delta = -0.05;
  EXPECT_EQ(classify(f, 0.02), Status::Deviation);
}

TEST(Classify, TheFirstFindingByPrecedenceWins) {
  Findings f;
  f.delta = 0.5;
  f.mismatch = true;
  EXPECT_EQ(classify(f, 0.02), Status::Mismatch);
  f.early_stop = true;
  EXPECT_EQ(classify(f, 0.02), Status::EarlyStop);
  f.hang = true;
  EXPECT_EQ(classify(f, 0.02), Status::Hang);
  f.error = true;
  EXPECT_EQ(classify(f, 0.02), Status::Error);
}

TEST(Classify, ADeltaIsADeviationOnlyBeyondTheBound) {
  Findings f;
  f.delta = 0.02;
  EXPECT_EQ(classify(f, 0.02), Status::Pass);
  f.delta = -0.02;
  EXPECT_EQ(classify(f, 0.02), Status::Pass);
  f.delta = 0.0201;
  EXPECT_EQ(classify(f, 0.02), Status::Deviation);
  EXPECT_EQ(classify(f, 0.10), Status::Pass);  // the thesis's 10%
}

}  // namespace
}  // namespace s2
