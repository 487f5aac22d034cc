// auto's trial: candidates one at a time, paired with native in a random order, the first
// call of each discarded, a candidate kept only when it wins a signed-rank test by native's margin,
// losers dropped early, the trial's extra time held within its budget, and re-checks that revert a plan the
// machine has made slower.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "learn/trial.hpp"

using commsched::learn::EntryClock;
using commsched::learn::Trial;
using commsched::learn::TrialCandidate;

namespace {
std::vector<TrialCandidate> cands(std::initializer_list<const char*> ids) {
  std::vector<TrialCandidate> v;
  for (const char* id : ids) v.push_back({id, -1, -1});
  return v;
}

// One call of a trial, as the MPI side makes it: native and unmeasured while the trial owes
// such calls, else measured at `seconds`.
void step(Trial& t, double seconds) {
  if (t.native_calls_owed() > 0) {
    t.unmeasured_native_call();
  } else {
    t.measured(seconds);
  }
}

struct Outcome {
  int calls = 0;
  double total_s = 0;
  double worst_overrun_s = 0;  // most the extra time ever exceeded the budget
  std::map<std::string, int> runs;
};

// Runs the trial to its decision (or `limit` calls) on per-candidate mean costs with
// multiplicative noise of +-`noise`; `first` is the cost of a candidate's first call and
// `bias(previous, current)` an extra factor that depends on the call before.
Outcome run(Trial& t, const std::map<std::string, double>& cost, double noise, std::uint64_t seed,
        double first = -1, int limit = 100000,
        double (*bias)(const std::string&, const std::string&) = nullptr) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  Outcome r;
  std::string previous;
  while (!t.decided() && r.calls < limit) {
    if (t.native_calls_owed() > 0) {  // as the MPI side does: native, unmeasured
      const double s = cost.at("native") * (1 + u(rng));
      t.unmeasured_native_call();
      r.total_s += s;
      ++r.runs["native"];
      ++r.calls;
      previous = "native";
      continue;
    }
    const std::string id = t.candidates()[t.current()].id;
    double s = cost.at(id) * (1 + u(rng));
    if (++r.runs[id] == 1 && id != "native" && first > 0) s = first;
    if (bias) s *= bias(previous, id);
    previous = id;
    t.measured(s);
    r.total_s += s;
    ++r.calls;
    r.worst_overrun_s = std::max(r.worst_overrun_s,
                                 t.extra_seconds() - Trial::kBudgetShare * r.total_s);
  }
  return r;
}

const std::string& winner(const Trial& t) { return t.candidates()[t.winner()].id; }

// A trial of one candidate whose 3 pairs run with no native call between them: native's first
// call, the candidate's first, and each pair's two measured calls with a switch-in call before
// each.
constexpr int kPairsAtOnce = 1 + 1 + 3 * 4;
}  // namespace

TEST(Trial, NativeFastestUnderNoiseIsNeverReplaced) {
  // Candidates slower than native by 2 to 20 %, under +-10 % noise on every call (five times
  // the smallest difference): over many seeds native is kept.
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    Trial t(cands({"color", "rs_nh", "ac", "native"}), 3, 0, seed);
    run(t, {{"color", 1.02}, {"rs_nh", 1.05}, {"ac", 1.2}, {"native", 1.0}}, 0.1, seed);
    ASSERT_TRUE(t.decided()) << seed;
    EXPECT_EQ(winner(t), "native") << seed;
  }
}

TEST(Trial, AnEqualCandidateRarelyReplacesNative) {
  // As fast as native: a win is a false one. The checkpoints and the shared test level keep
  // them rare (and harmless: the plan is as fast).
  int false_wins = 0;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    Trial t(cands({"color", "rs_nh", "native"}), 3, 0, seed);
    run(t, {{"color", 1.0}, {"rs_nh", 1.0}, {"native", 1.0}}, 0.2, seed);
    false_wins += winner(t) != "native";
  }
  EXPECT_LE(false_wins, 20);
}

TEST(Trial, TenPercentFasterIsFoundWithinTheBudget) {
  int found = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    Trial t(cands({"native", "pex", "color", "greedy"}), 3, 0, seed);
    const Outcome r = run(t, {{"native", 1.0}, {"pex", 1.3}, {"color", 0.9}, {"greedy", 1.05}}, 0.05,
                      seed, /*first=*/1.5);
    found += t.decided() && winner(t) == "color";
    // The extra time never runs past the budget by more than the pair under way: pex's
    // switch-in call and its measured one, each at most 1.3 x 1.05 against native's 0.95.
    EXPECT_LE(r.worst_overrun_s, 2 * (1.3 * 1.05 - 0.95) + 1e-9) << seed;
    EXPECT_LT(r.calls, 2000) << seed;
  }
  EXPECT_GE(found, 95);
}

TEST(Trial, FifteenPercentFasterIsFoundUnderHeavyNoise) {
  // Calls of an emulated cluster with shallow queues: +-25 % from call to call (retransmission
  // timeouts), one candidate 15 % faster, two others about as fast as native. It must win in
  // most runs within the trial's first 300 calls (a sign test over the same pairs finds it in
  // about a third of them, and loses it to native in the rest).
  int found = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Trial t(cands({"native", "color", "maxmin", "ac"}), 3, 0, seed);
    const Outcome r = run(t, {{"native", 1.0}, {"color", 0.99}, {"maxmin", 0.85}, {"ac", 1.01}},
                          0.25, seed, -1, 300);
    found += t.decided() && winner(t) == "maxmin";
    if (t.decided()) {
      EXPECT_NE(winner(t), "ac") << seed;
    }
  }
  EXPECT_GE(found, 140);
}

TEST(Trial, AFixedOrderBiasDoesNotChangeTheVerdict) {
  // Whichever call follows a different strategy pays 8 % (a cache or a queue the previous
  // schedule left behind). Equal candidates must not win on it; a faster one still does.
  auto switch_cost = [](const std::string& prev, const std::string& cur) {
    return !prev.empty() && prev != cur ? 1.08 : 1.0;
  };
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    Trial t(cands({"color", "native"}), 3, 0, seed);
    run(t, {{"color", 1.0}, {"native", 1.0}}, 0.02, seed, -1, 100000, switch_cost);
    EXPECT_EQ(winner(t), "native") << seed;
    Trial f(cands({"color", "native"}), 3, 0, seed);
    run(f, {{"color", 0.85}, {"native", 1.0}}, 0.02, seed, -1, 100000, switch_cost);
    EXPECT_EQ(winner(f), "color") << seed;
  }
}

TEST(Trial, ACostLeftToTheNextCallFallsOnSwitchInCalls) {
  // A native call right after a candidate's pays 15 % (connections the candidate left idle
  // restart slowly), a candidate after native nothing. In pairs alone that would make a
  // candidate as fast as native look faster; measured calls never follow the other side, so
  // it does not win, and one 10 % faster still does. The switch-in calls count against the
  // budget.
  auto native_after_other = [](const std::string& prev, const std::string& cur) {
    return cur == "native" && !prev.empty() && prev != cur ? 1.15 : 1.0;
  };
  int false_wins = 0, found = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    Trial t(cands({"native", "routed"}), 3, 0, seed);
    run(t, {{"native", 1.0}, {"routed", 1.0}}, 0.02, seed, -1, 100000, native_after_other);
    false_wins += winner(t) != "native";
    Trial f(cands({"native", "routed"}), 3, 0, seed);
    run(f, {{"native", 1.0}, {"routed", 0.9}}, 0.02, seed, -1, 100000, native_after_other);
    found += winner(f) == "routed";
  }
  EXPECT_LE(false_wins, 2);
  EXPECT_GE(found, 95);
  Trial t(cands({"native", "routed"}), 3, 0, 1);
  run(t, {{"native", 1.0}, {"routed", 1.0}}, 0.0, 1, -1, 100000, native_after_other);
  EXPECT_GT(t.extra_seconds(), 0.1);  // native's switch-in calls, 0.15 s each
}

TEST(Trial, AnUndecidedTrialShowsWhatItMeasured) {
  // The report reads measured_s: while undecided, each candidate with pairs shows their median,
  // native its own, the others nothing yet.
  Trial t(cands({"native", "a", "b"}), 3, 0, 1);
  while (t.rounds() < 2 && !t.decided())
    t.measured(t.candidates()[t.current()].id == "a" ? 1.5 : 1.0);
  ASSERT_FALSE(t.decided());
  EXPECT_DOUBLE_EQ(t.candidates()[0].measured_s, 1.0);
  EXPECT_DOUBLE_EQ(t.candidates()[1].measured_s, 1.5);
  EXPECT_LT(t.candidates()[2].measured_s, 0);
}

TEST(Trial, LosersStopEarly) {
  Trial t(cands({"native", "a", "b", "c", "d"}), 3, 0, 7);
  const Outcome r = run(t, {{"native", 1.0}, {"a", 2.0}, {"b", 1.6}, {"c", 1.02}, {"d", 0.8}}, 0.03, 7);
  EXPECT_EQ(winner(t), "d");
  // The clearly slower ones get no more than the first halving's pairs, plus their first call
  // and a switch-in call before each measured one.
  EXPECT_LE(r.runs.at("a"), 2 * 3 + 1);
  EXPECT_LE(r.runs.at("b"), 2 * 3 + 1);
}

TEST(Trial, ASlowCandidateWaitsForTheBudget) {
  // A candidate twice as slow as native: the trial spends at most 2 % of the time so far on it,
  // running native alone in between, and keeps native.
  Trial t(cands({"native", "slow"}), 3, 0, 3);
  const Outcome r = run(t, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
  EXPECT_EQ(winner(t), "native");
  // Past the budget by at most the pair under way: a switch-in call and a measured one.
  EXPECT_LE(r.worst_overrun_s, 2.0 + 1e-9);
  EXPECT_LE(t.extra_seconds(), Trial::kBudgetShare * r.total_s + 2.0);
  // Its first call and 3 pairs, then dropped; a switch-in call before a measured one that
  // follows native.
  EXPECT_GE(r.runs.at("slow"), 1 + 3);
  EXPECT_LE(r.runs.at("slow"), 1 + 2 * 3);
  EXPECT_GE(r.runs.at("native"), 25 * r.runs.at("slow"));  // mostly native meanwhile
}

TEST(Trial, CallsBeforeTheTrialGrowTheBudget) {
  // With 1000 calls before it, a slow candidate's pairs fit at once: no native waits between.
  Trial t(cands({"native", "slow"}), 3, 0, 3);
  t.add_calls_before(1000);
  const Outcome r = run(t, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
  EXPECT_EQ(winner(t), "native");
  EXPECT_LE(r.calls, kPairsAtOnce);
}

TEST(Trial, OtherCommunicatorsCallsGrowTheBudget) {
  // The job spent 5000 s in all-to-all calls on other communicators, 100 s on this one: the
  // budget's 2 % is of the job's time, so the slow candidate's pairs fit with no native calls
  // in between; this communicator's time alone would have made it wait.
  Trial t(cands({"native", "slow"}), 3, 0, 3);
  t.add_calls_before(100);
  t.set_job_time(5000);
  t.set_job_time(10);  // never goes back
  const Outcome r = run(t, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
  EXPECT_EQ(winner(t), "native");
  EXPECT_LE(r.calls, kPairsAtOnce);
  Trial u(cands({"native", "slow"}), 3, 0, 3);
  u.add_calls_before(100);
  const Outcome q = run(u, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
  EXPECT_GE(q.calls, 40);
}

TEST(Trial, TheBudgetCountsTheCallsOwnTime) {
  // Each call is weighed with the application's 9 s of work that follows it (native's call
  // 1 s, the slow candidate's 2 s): the comparison sees 10 s against 11 s, but the budget's
  // 2 % is of the time in the calls, so the slow candidate's pairs wait as long as when the
  // calls are weighed alone, and the unmeasured native calls count 1 s each.
  auto calls_until_decided = [](double work, bool own_known = true) {
    Trial t(cands({"native", "slow"}), 3, 0, 3);
    int calls = 0;
    while (!t.decided() && calls < 100000) {
      ++calls;
      if (t.native_calls_owed() > 0) {
        t.unmeasured_native_call();
        continue;
      }
      const double own = t.candidates()[t.current()].id == "native" ? 1.0 : 2.0;
      t.measured(own + work, 0, own_known ? own : -1);
    }
    EXPECT_EQ(winner(t), "native");
    return calls;
  };
  const int alone = calls_until_decided(0);
  EXPECT_GE(alone, 40);
  EXPECT_GE(calls_until_decided(9), alone * 9 / 10);
  // Had the budget counted the weighed time, 2 % of ten times as much: far fewer calls.
  EXPECT_LT(calls_until_decided(9, false), alone / 3);
}

TEST(Trial, ACandidateWhoseOwnCallsAreSlowerDoesNotWin) {
  // Weighed to the next all-to-all, the candidate is 10 % faster in every pair; in its own
  // calls it is `own_factor` times native's. Slower by more than native's margin: native
  // stays; within the margin: the candidate wins, as it does where own times are unknown.
  auto verdict = [](double own_factor, bool own_known) {
    Trial t(cands({"native", "phased"}), 3, 0, 5);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-0.02, 0.02);
    for (int calls = 0; !t.decided() && calls < 100000; ++calls) {
      if (t.native_calls_owed() > 0) {
        t.unmeasured_native_call();
        continue;
      }
      const bool native = t.candidates()[t.current()].id == "native";
      const double own = (native ? 1.0 : own_factor) * (1 + u(rng));
      const double weighed = (native ? 10.0 : 9.0) * (1 + u(rng));
      t.measured(weighed, 0, own_known ? own : -1);
    }
    EXPECT_TRUE(t.decided());
    return winner(t);
  };
  EXPECT_EQ(verdict(1.10, true), "native");
  EXPECT_EQ(verdict(1.01, true), "phased");
  EXPECT_EQ(verdict(1.10, false), "phased");
}

TEST(Trial, OwnCallsSlowerThanNativeCountAgainstTheBudget) {
  // Weighed to the next all-to-all the candidate is as fast as native, but its own calls take
  // 6 s against native's 5: the job pays that second, so the budget counts it and makes the
  // candidate wait for native calls to earn it back. Where own times are unknown, the weighed
  // times are all the trial has, and it spends nothing.
  auto trial = [](bool own_known) {
    Trial t(cands({"native", "slow_own"}), 3, 0, 9);
    std::mt19937_64 rng(4);
    std::uniform_real_distribution<double> u(-0.02, 0.02);
    int waited = 0;
    for (int calls = 0; !t.decided() && calls < 100000; ++calls) {
      if (t.native_calls_owed() > 0) {
        t.unmeasured_native_call();
        ++waited;
        continue;
      }
      const bool native = t.candidates()[t.current()].id == "native";
      t.measured(10.0 * (1 + u(rng)), 0, own_known ? (native ? 5.0 : 6.0) * (1 + u(rng)) : -1);
    }
    EXPECT_TRUE(t.decided());
    EXPECT_EQ(winner(t), "native");
    return std::make_pair(t, waited);
  };
  const auto [known, known_waited] = trial(true);
  EXPECT_GT(known.extra_seconds(), 0.8 * known.rounds());
  EXPECT_GT(known_waited, 5 * known.rounds());
  const auto [unknown, unknown_waited] = trial(false);
  EXPECT_LT(std::abs(unknown.extra_seconds()), 0.2 * unknown.rounds() + 0.5);
}

TEST(Trial, LearningAndProbesComeOutOfTheSameBudget) {
  // The same 1000 calls before, but the learning and probes already spent 20 s of the 2 % (of
  // those 1000 s): the slow candidate's calls wait for native calls to earn that back first.
  Trial t(cands({"native", "slow"}), 3, 0, 3);
  t.add_calls_before(1000);
  t.add_spent(20);
  const Outcome r = run(t, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
  EXPECT_EQ(winner(t), "native");
  EXPECT_GE(r.runs.at("native"), 100);
  EXPECT_LE(t.extra_seconds() + 20, Trial::kBudgetShare * (1000 + r.total_s) + 2.0);
}

TEST(Trial, ABudgetOfTheWholeJobNeverWaits) {
  // COMMSCHED_TRIAL_BUDGET=1 ("learn and try at once"): whatever the learning spent, the pairs
  // follow each other with no native call in between. A share just below 1 waits for it.
  auto calls_with = [](double share) {
    Trial t(cands({"native", "slow"}), 3, 0, 3);
    t.set_budget_share(share);
    t.add_spent(500);
    const Outcome r = run(t, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
    EXPECT_EQ(winner(t), "native");
    return r.calls;
  };
  EXPECT_LE(calls_with(1.0), kPairsAtOnce);
  EXPECT_GE(calls_with(0.99), 400);
}

TEST(Trial, TrialsUnderWayShareOneBudget) {
  // Four patterns on four communicators take turns, each with a slow candidate, and the job's
  // time in all of their calls is every trial's base. Told what the others spent, the four
  // together stay within one budget; each on its own would spend up to its own 2 % of it.
  auto together = [](bool shared) {
    std::vector<Trial> ts;
    for (int i = 0; i < 4; ++i) ts.emplace_back(cands({"native", "slow"}), 3, 0, 3);
    double job = 0, worst = 0;
    for (int call = 0; call < 2000; ++call) {
      Trial& t = ts[call % 4];
      double others = 0;
      for (const Trial& u : ts)
        if (&u != &t && !u.decided()) others += u.spent_seconds();
      if (shared) t.set_others_spent(others);
      t.set_job_time(job);
      const double s = t.candidates()[t.current()].id == "native" ? 1.0 : 2.0;
      job += s;
      step(t, s);
      double spent = 0;
      for (const Trial& u : ts) spent += u.spent_seconds();
      worst = std::max(worst, spent - Trial::kBudgetShare * job);
    }
    for (const Trial& u : ts) EXPECT_EQ(winner(u), "native");
    return worst;
  };
  // Beyond the budget at most what each trial has under way and not yet counted: a switch-in
  // call and a measured slow call (1 s over native each). Each on its own, they overrun by more
  // than twice as much.
  EXPECT_LE(together(true), 4 * 2.0 + 0.5);
  EXPECT_GT(together(false), 16.0);
}

TEST(Trial, WhatOtherTrialsSavedPaysForThisOne) {
  // The same 1000 calls before and 20 s spent: told that another trial under way saved 20 s,
  // the slow candidate's pairs fit at once, as with nothing spent.
  Trial t(cands({"native", "slow"}), 3, 0, 3);
  t.add_calls_before(1000);
  t.add_spent(20);
  t.set_others_spent(-20);
  const Outcome r = run(t, {{"native", 1.0}, {"slow", 2.0}}, 0.0, 3);
  EXPECT_EQ(winner(t), "native");
  EXPECT_LE(r.calls, kPairsAtOnce);
}

TEST(Trial, ShareAfterAbandonedTrials) {
  EXPECT_DOUBLE_EQ(Trial::share_after(0.02, 0, 0), 0.02);
  EXPECT_DOUBLE_EQ(Trial::share_after(0.02, 0, 1), 0.01);
  EXPECT_DOUBLE_EQ(Trial::share_after(0.02, 0, 3), 0.005);
  EXPECT_DOUBLE_EQ(Trial::share_after(0.02, 3, 1), 0.016);  // verdicts win the share back
  EXPECT_DOUBLE_EQ(Trial::share_after(0.02, -1, -1), 0.02);
}

TEST(Trial, PatternsThatLeaveBeforeAVerdictSpendLess) {
  // A pattern that drifts every 50 calls of 1 s, as the MPI side sees it: each new pattern
  // starts a trial of a candidate 1.5x native's time, which its budget lets run a few calls
  // before the pattern goes, undecided; every trial's spending stays in the one budget. With
  // each abandoned trial lowering the next one's share (share_after), the job spends less on
  // trials that buy nothing; left at 2 %, it spends the whole 2 % of its time.
  auto spent_on = [](bool lower) {
    std::vector<Trial> ts;
    double job = 0, spent = 0;
    for (int pattern = 0; pattern < 12; ++pattern) {
      ts.emplace_back(cands({"native", "slow"}), 8, 0, 5);
      Trial& t = ts.back();
      t.add_calls_before(static_cast<std::uint64_t>(job));
      int abandoned = 0;
      for (const Trial& u : ts)
        if (&u != &t && !u.decided()) ++abandoned;
      for (int call = 0; call < 50; ++call) {
        t.set_job_time(job);
        t.set_others_spent(spent);
        t.set_budget_share(lower ? Trial::share_after(Trial::kBudgetShare, 0, abandoned)
                                 : Trial::kBudgetShare);
        const double s = t.candidates()[t.current()].id == "native" ? 1.0 : 1.5;
        job += s;
        step(t, s);
      }
      EXPECT_FALSE(t.decided());  // the pattern went before a verdict
      spent += t.spent_seconds();
    }
    EXPECT_LE(spent, Trial::kBudgetShare * job + 1.0 + 1e-9);
    return spent / job;
  };
  const double at_two_percent = spent_on(false), lowered = spent_on(true);
  EXPECT_GT(at_two_percent, 0.015);
  EXPECT_LT(lowered, 0.5 * at_two_percent);
}

TEST(Trial, RecheckRevertsAPlanThatGotSlower) {
  Trial t(cands({"color", "native"}), 3, 5, 1);
  std::map<std::string, double> cost{{"color", 1.0}, {"native", 2.0}};
  auto step = [&] { t.measured(cost.at(t.candidates()[t.current()].id)); };
  for (int i = 0; i < 10000 && !t.decided(); ++i) step();
  EXPECT_EQ(winner(t), "color");
  cost["color"] = 5.0;  // the machine drifts
  for (int i = 0; i < 40; ++i) step();
  EXPECT_EQ(winner(t), "native");
}

TEST(Trial, RecheckKeepsAWinnerThatIsStillBest) {
  Trial t(cands({"color", "native"}), 2, 5, 1);
  const std::map<std::string, double> cost{{"color", 1.0}, {"native", 2.0}};
  for (int i = 0; i < 200; ++i) t.measured(cost.at(t.candidates()[t.current()].id));
  EXPECT_EQ(winner(t), "color");
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
  for (int i = 0; i < 10000 && !t.decided(); ++i)
    t.measured(t.candidates()[t.current()].id == "native" ? native : 2.2e-3);
  EXPECT_EQ(winner(t), "rs_nh");  // 8 % faster than native, skew included
  EXPECT_DOUBLE_EQ(Trial::call_seconds(2.5e-3, 0.1e-3, 1), 2.5e-3);
  EXPECT_DOUBLE_EQ(Trial::call_seconds(2.2e-3, 0.0, 256), 2.2e-3);
  EXPECT_DOUBLE_EQ(Trial::call_seconds(1e-3, 2e-3, 256), 0.0);
  EXPECT_DOUBLE_EQ(Trial::call_seconds(1e-3, -1.0, 256), 1e-3);
}

TEST(EntryClock, KeepsTheLatestEntries) {
  EntryClock c;
  EXPECT_EQ(c.entry(0), -1);  // not made yet
  for (int i = 0; i < 100; ++i) c.enter(1.5 * i);
  EXPECT_EQ(c.calls, 100u);
  EXPECT_EQ(c.entry(99), 1.5 * 99);
  EXPECT_EQ(c.entry(36), 1.5 * 36);  // the oldest kept
  EXPECT_EQ(c.entry(35), -1);        // overwritten
  EXPECT_EQ(c.entry(100), -1);       // the next call, not made yet
}
