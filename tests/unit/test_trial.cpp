// auto's trial: candidates run in rounds, one call each (the first round is discarded), short
// trials run more rounds, the lowest median wins (native unless beaten by its margin), and
// re-checks replace a winner that the machine has made slower.
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

// Runs the trial to its decision on per-candidate costs; returns the calls it took. The first
// call of each candidate is slow (first touch) and must not count.
int run_to_decision(Trial& t, const std::map<std::string, double>& cost,
                    std::vector<std::string>* order = nullptr) {
  std::map<std::string, int> runs;
  int calls = 0;
  while (!t.decided()) {
    const auto& id = t.candidates()[t.current()].id;
    if (order) order->push_back(id);
    t.measured(++runs[id] == 1 ? 100.0 : cost.at(id));
    if (++calls > 10000) break;
  }
  return calls;
}
}  // namespace

TEST(Trial, MeasuresEachCandidateInRoundsAndKeepsTheFastest) {
  Trial t(cands({"color", "rs_nh", "native"}), 3, 0);
  std::vector<std::string> order;
  const int calls = run_to_decision(t, {{"color", 2.0}, {"rs_nh", 1.0}, {"native", 3.0}}, &order);
  EXPECT_EQ(calls, 12);  // a discarded round and three measured ones
  EXPECT_EQ(t.rounds(), 3);
  for (std::size_t i = 0; i < order.size(); ++i)
    EXPECT_EQ(order[i], t.candidates()[i % 3].id) << i;  // round-robin, not blocks
  EXPECT_EQ(t.candidates()[t.winner()].id, "rs_nh");
  EXPECT_DOUBLE_EQ(t.candidates()[t.winner()].measured_s, 1.0);
  EXPECT_DOUBLE_EQ(t.candidates()[0].measured_s, 2.0);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(t.current(), t.winner());
    t.measured(1.0);
  }
}

TEST(Trial, DriftDuringTheTrialTouchesEveryCandidateAlike) {
  // The machine gets 50 % slower after two measured rounds. In blocks the later candidate
  // would pay for it all and lose; in rounds both see it, and the faster one still wins.
  Trial t(cands({"native", "color"}), 4, 0);
  int call = 0;
  while (!t.decided()) {
    const double base = t.candidates()[t.current()].id == "color" ? 0.9 : 1.0;
    t.measured(base * (call++ >= 6 ? 1.5 : 1.0));
  }
  EXPECT_EQ(t.candidates()[t.winner()].id, "color");
}

TEST(Trial, ShortCallsRunMoreRoundsUpToTheCap) {
  // Calls of 1 ms, budget 0.05 s: 2 candidates take 2 ms a round, so 25 rounds, capped at
  // kMaxRoundsPerCall x 2 = 20.
  Trial t(cands({"ac", "native"}), 2, 0, 0.05);
  run_to_decision(t, {{"ac", 0.001}, {"native", 0.001}});
  EXPECT_EQ(t.rounds(), Trial::kMaxRoundsPerCall * 2);
  // 10 ms calls: 20 ms a round, the budget is spent after 3 rounds.
  Trial u(cands({"ac", "native"}), 2, 0, 0.05);
  run_to_decision(u, {{"ac", 0.01}, {"native", 0.01}});
  EXPECT_EQ(u.rounds(), 3);
  // Long calls, or no budget: exactly `calls`.
  Trial v(cands({"ac", "native"}), 2, 0, 0.05);
  run_to_decision(v, {{"ac", 1.0}, {"native", 1.0}});
  EXPECT_EQ(v.rounds(), 2);
  Trial w(cands({"ac", "native"}), 2, 0, 0.0);
  run_to_decision(w, {{"ac", 0.001}, {"native", 0.001}});
  EXPECT_EQ(w.rounds(), 2);
}

TEST(Trial, NativeStaysUnlessBeatenByItsMargin) {
  const double m = Trial::kNativeMargin;
  {  // 1 % faster than native: within the margin, native stays (wherever it is listed).
    Trial t(cands({"color", "native"}), 3, 0);
    run_to_decision(t, {{"color", 0.99}, {"native", 1.0}});
    EXPECT_EQ(t.candidates()[t.winner()].id, "native");
  }
  {  // Clearly faster: it replaces native.
    Trial t(cands({"native", "color"}), 3, 0);
    run_to_decision(t, {{"color", 1.0 - 2 * m}, {"native", 1.0}});
    EXPECT_EQ(t.candidates()[t.winner()].id, "color");
  }
  {  // Between candidates other than native the lower median wins outright.
    Trial t(cands({"ac", "color", "native"}), 3, 0);
    run_to_decision(t, {{"ac", 0.5}, {"color", 0.495}, {"native", 1.0}});
    EXPECT_EQ(t.candidates()[t.winner()].id, "color");
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

TEST(Trial, NativeIsTimedFromEntryLikeAPlan) {
  // Ranks enter 0.4 ms apart; the agreement itself takes 0.1 ms. A plan moving the data in
  // 1.7 ms is timed 0.4 + 0.1 + 1.7 from the first rank's entry; native moving it in 2.0 ms is
  // timed 0.4 + 0.1 + 2.0 and keeps 1/256 of the agreement it will not pay once chosen.
  const double native = Trial::call_seconds(0.4e-3 + 0.1e-3 + 2.0e-3, 0.1e-3, 256);
  EXPECT_NEAR(native, 2.4e-3 + 0.1e-3 / 256, 1e-12);
  Trial t(cands({"rs_nh", "native"}), 3, 0);
  while (!t.decided())
    t.measured(t.candidates()[t.current()].id == "native" ? native : 2.2e-3);
  EXPECT_EQ(t.candidates()[t.winner()].id, "rs_nh");  // 8 % faster than native, skew included
  // A plan (nothing skipped) and native agreeing on every call keep their whole time; nonsense
  // inputs stay >= 0.
  EXPECT_DOUBLE_EQ(Trial::call_seconds(2.5e-3, 0.1e-3, 1), 2.5e-3);
  EXPECT_DOUBLE_EQ(Trial::call_seconds(2.2e-3, 0.0, 256), 2.2e-3);
  EXPECT_DOUBLE_EQ(Trial::call_seconds(1e-3, 2e-3, 256), 0.0);
  EXPECT_DOUBLE_EQ(Trial::call_seconds(1e-3, -1.0, 256), 1e-3);
}
