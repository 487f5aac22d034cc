// auto's trial: every candidate runs calls+1 times (the first sample is discarded), the lowest
// median wins, and re-checks replace a winner that the machine has made slower.
#include <gtest/gtest.h>

#include <map>

#include "learn/trial.hpp"

using commsched::learn::Trial;
using commsched::learn::TrialCandidate;

namespace {
std::vector<TrialCandidate> cands(std::initializer_list<const char*> ids) {
  std::vector<TrialCandidate> v;
  for (const char* id : ids) v.push_back({id, -1, -1});
  return v;
}
}  // namespace

TEST(Trial, MeasuresEachCandidateAndKeepsTheFastest) {
  Trial t(cands({"color", "rs_nh", "native"}), 3, 0);
  const std::map<std::string, double> cost{{"color", 2.0}, {"rs_nh", 1.0}, {"native", 3.0}};
  std::map<std::string, int> runs;
  int calls = 0;
  while (!t.decided()) {
    const auto& id = t.candidates()[t.current()].id;
    ++runs[id];
    // The first call of each candidate is slow (first touch) and must not count.
    t.measured(runs[id] == 1 ? 100.0 : cost.at(id));
    ASSERT_LT(++calls, 100);
  }
  EXPECT_EQ(calls, 12);
  EXPECT_EQ(t.candidates()[t.winner()].id, "rs_nh");
  EXPECT_DOUBLE_EQ(t.candidates()[t.winner()].measured_s, 1.0);
  EXPECT_DOUBLE_EQ(t.candidates()[0].measured_s, 2.0);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(t.current(), t.winner());
    t.measured(1.0);
  }
}

TEST(Trial, RecheckReplacesAWinnerThatGotSlower) {
  Trial t(cands({"color", "native"}), 2, 5);
  std::map<std::string, double> cost{{"color", 1.0}, {"native", 2.0}};
  auto step = [&] { t.measured(cost.at(t.candidates()[t.current()].id)); };
  while (!t.decided()) step();
  EXPECT_EQ(t.candidates()[t.winner()].id, "color");
  cost["color"] = 5.0;  // the machine drifts
  for (int i = 0; i < 40; ++i) step();
  EXPECT_EQ(t.candidates()[t.winner()].id, "native");
}

TEST(Trial, RecheckKeepsAWinnerThatIsStillBest) {
  Trial t(cands({"color", "native"}), 2, 5);
  const std::map<std::string, double> cost{{"color", 1.0}, {"native", 2.0}};
  for (int i = 0; i < 60; ++i) t.measured(cost.at(t.candidates()[t.current()].id));
  EXPECT_EQ(t.candidates()[t.winner()].id, "color");
}

TEST(Trial, SingleCandidateAndDecidedFor) {
  Trial one(cands({"native"}), 3, 10);
  EXPECT_TRUE(one.decided());
  EXPECT_EQ(one.current(), 0u);
  Trial d = Trial::decided_for(cands({"color", "native"}), 1);
  EXPECT_TRUE(d.decided());
  EXPECT_EQ(d.current(), 1u);
}
