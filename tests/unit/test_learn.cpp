// The pattern state machine: learns after K identical calls agreed by all ranks, runs the plan
// only while every rank's counts are the learned ones, and relearns after any change.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "core/comm_matrix.hpp"
#include "learn/choose.hpp"
#include "learn/in_step.hpp"
#include "learn/learner.hpp"
#include "plan/registry.hpp"

namespace cs = commsched;
using cs::Bytes;
using cs::learn::Action;
using cs::learn::Learner;

namespace {

// Simulates n ranks' learners with an exact min-reduction, as the MPI side does.
struct Ranks {
  std::vector<Learner> l;
  Ranks(int n, int k) : l(static_cast<std::size_t>(n), Learner(k)) {}
  std::vector<Action> call(const std::vector<std::vector<Bytes>>& counts,
                           std::vector<bool> can_run = {}) {
    std::int64_t agreed = INT64_MAX;
    for (std::size_t r = 0; r < l.size(); ++r)
      agreed = std::min(agreed, l[r].vote(counts[r], counts[r], can_run.empty() || can_run[r]));
    std::vector<Action> acts;
    for (auto& x : l) acts.push_back(x.decide(agreed));
    return acts;
  }
};

bool all(const std::vector<Action>& a, Action x) {
  return std::all_of(a.begin(), a.end(), [x](Action y) { return y == x; });
}

// An exchange of `bytes` between every two distinct ranks of `n`.
cs::core::CommMatrix every_peer(int n, Bytes bytes) {
  std::vector<Bytes> dense(static_cast<std::size_t>(n * n), bytes);
  for (int i = 0; i < n; ++i) dense[static_cast<std::size_t>(i * (n + 1))] = 0;
  return cs::core::CommMatrix::from_dense(n, dense);
}

// The usable candidates plan_chosen lists (width 3) from the pool entries' predicted times,
// native's last, in its order.
std::vector<std::string> chosen_ids(const cs::core::CommMatrix& m,
                                    const std::vector<std::string>& pool,
                                    const std::vector<double>& predicted) {
  std::vector<cs::learn::Prediction> p(predicted.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i].predicted_s = predicted[i];
  std::vector<std::string> ids;
  for (const auto& c : cs::learn::plan_chosen(m, pool, p, cs::plan::Options{}, 3, ~Bytes{0}))
    if (c.rejected.empty()) ids.push_back(c.id);
  return ids;
}

}  // namespace

TEST(Learner, LearnsAfterKIdenticalCalls) {
  Ranks r(3, 3);
  const std::vector<std::vector<Bytes>> c{{1, 2, 3}, {0, 5, 0}, {4, 4, 4}};
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));
  EXPECT_TRUE(all(r.call(c), Action::run_plan));
  EXPECT_TRUE(all(r.call(c), Action::run_plan));
}

TEST(Learner, OneRankChangingStopsEveryRank) {
  Ranks r(3, 2);
  std::vector<std::vector<Bytes>> c{{1, 2, 3}, {0, 5, 0}, {4, 4, 4}};
  r.call(c);
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));
  for (auto& x : r.l) x.planned(true);
  c[1][1] = 6;  // only rank 1 changes
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));  // the new pattern, learned anew
  for (auto& x : r.l) x.planned(true);
  c[1][1] = 5;  // back to the first pattern: seen often enough recently, learned at once
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));
}

TEST(Learner, AlternatingPatternsAreLearned) {
  // A, B, A, B ... on one communicator (an FFT's forward and backward transposes): with only
  // consecutive repeats counted, neither would ever be learned.
  Ranks r(2, 3);
  const std::vector<std::vector<Bytes>> a{{1, 2}, {3, 4}}, b{{2, 1}, {4, 3}};
  int learned = 0, planned_runs = 0;
  for (int call = 0; call < 40; ++call) {
    const auto acts = r.call(call % 2 ? b : a);
    if (acts[0] == Action::learn_and_run) {
      ++learned;
      for (auto& x : r.l) x.planned(true);
    }
    if (acts[0] == Action::run_plan) ++planned_runs;
  }
  EXPECT_GE(learned, 30);  // from call 5 on, every call is learned again (or hits the cache)
}

TEST(Learner, ChangeOnOneRankDuringLearningDelaysEveryone) {
  Ranks r(2, 3);
  std::vector<std::vector<Bytes>> c{{1, 1}, {2, 2}};
  r.call(c);
  r.call(c);
  c[0][0] = 9;
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));
}

TEST(Learner, RankThatCannotRunVotesNative) {
  Ranks r(2, 1);
  const std::vector<std::vector<Bytes>> c{{1, 1}, {2, 2}};
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));
  for (auto& x : r.l) x.planned(true);
  EXPECT_TRUE(all(r.call(c, {true, false}), Action::native));
}

TEST(Learner, PinnedNativeStaysNativeUntilCountsChange) {
  Ranks r(2, 2);
  std::vector<std::vector<Bytes>> c{{1, 1}, {2, 2}};
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(all(r.call(c), Action::learn_and_run));
  for (auto& x : r.l) x.planned(false);
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(r.l[0].pinned_native());
  c[0][1] = 3;
  EXPECT_TRUE(all(r.call(c), Action::native));
  EXPECT_TRUE(r.l[0].learning());
}

TEST(Learner, RandomChangesNeverRunAStalePlan) {
  // Whatever the counts do, run_plan is returned only when every rank's counts equal those
  // they had when the pattern was learned.
  std::mt19937 rng(5);
  const int n = 4;
  Ranks r(n, 2);
  std::vector<std::vector<Bytes>> c(n, std::vector<Bytes>(n, 1)), learned;
  for (int call = 0; call < 5000; ++call) {
    if (rng() % 5 == 0) {
      c[rng() % n][rng() % n] = rng() % 3;
    }
    const auto acts = r.call(c);
    ASSERT_TRUE(std::all_of(acts.begin(), acts.end(), [&](Action a) { return a == acts[0]; }));
    if (acts[0] == Action::learn_and_run) {
      learned = c;
      for (auto& x : r.l) x.planned(true);
    }
    if (acts[0] == Action::run_plan) {
      ASSERT_EQ(c, learned) << "call " << call;
    }
  }
}

TEST(Learner, RepeatIsAVoteWithThePreviousCounts) {
  // Between probes the MPI side hands a call whose counts equal the previous call's to
  // repeat() instead of vote(): streaks, and so every later decision, must come out the same.
  std::mt19937 rng(11);
  Learner voted(3), repeated(3);
  std::vector<Bytes> counts{1, 2, 3, 4}, previous;
  for (int call = 0; call < 4000; ++call) {
    if (rng() % 4 == 0) counts[rng() % counts.size()] = rng() % 3;
    const bool probe = rng() % 8 == 0;
    if (probe) {
      const std::int64_t a = voted.vote(counts, counts, true);
      ASSERT_EQ(a, repeated.vote(counts, counts, true)) << "call " << call;
      const Action x = voted.decide(a);
      ASSERT_EQ(x, repeated.decide(a)) << "call " << call;
      if (x == Action::learn_and_run) {
        voted.planned(true);
        repeated.planned(true);
      }
    } else if (voted.learning()) {
      voted.vote(counts, counts, false);
      if (counts == previous)
        repeated.repeat(Learner::counts_hash(counts, counts));
      else
        repeated.vote(counts, counts, false);
    } else {
      continue;  // the MPI side runs a learned pattern here; only probes touch the learner
    }
    ASSERT_EQ(voted.streak(), repeated.streak()) << "call " << call;
    previous = counts;
  }
}

TEST(ChooseAuto, DocumentedRule) {
  using cs::core::CommMatrix;
  EXPECT_EQ(cs::learn::choose_auto(CommMatrix(2)), "native");
  std::vector<Bytes> ring(64, 0), skew(64, 0), dense(64, 5);
  for (int i = 0; i < 8; ++i) ring[static_cast<std::size_t>(i * 8 + (i + 1) % 8)] = 100;
  skew = ring;
  skew[1] = 1000000;  // one message ~8x the mean and more
  EXPECT_EQ(cs::learn::choose_auto(CommMatrix::from_dense(8, ring)), "color");
  EXPECT_EQ(cs::learn::choose_auto(CommMatrix::from_dense(8, skew)), "rs_nh");
  EXPECT_EQ(cs::learn::choose_auto(CommMatrix::from_dense(8, dense)), "native");
  // One hot receiver does not make a pattern dense.
  std::vector<Bytes> hot = ring;
  for (int i = 1; i < 8; ++i) hot[static_cast<std::size_t>(i * 8)] = 100;
  EXPECT_EQ(cs::learn::choose_auto(CommMatrix::from_dense(8, hot)), "color");
}

// auto spread over the ranks: every rank predicting its share of the pool, then a MIN-reduction
// of the packed shares and plan_chosen, gives exactly the candidates plan_candidates gives when
// one process predicts everything (ids, order, predictions, rejections).
TEST(ChooseAuto, SharedPredictionsGiveTheSameCandidates) {
  std::mt19937_64 rng(7);
  const cs::learn::Predictor predict = [](const cs::core::Plan* p) {
    if (!p) return 1e-3;
    double t = 1e-5 * static_cast<double>(p->phases.size());
    for (const auto& ph : p->phases) t += 1e-7 * static_cast<double>(ph.transfers.size());
    return t;
  };
  for (int trial = 0; trial < 6; ++trial) {
    const int n = 5 + trial * 3;
    std::vector<Bytes> dense(static_cast<std::size_t>(n * n), 0);
    for (auto& b : dense)
      if (rng() % 3 == 0) b = 1 + rng() % 4096;
    const auto m = cs::core::CommMatrix::from_dense(n, dense);
    cs::plan::Options opt;
    // trial 1: a staging bound that rejects the forwarding planners.
    const Bytes max_staging = trial == 1 ? 0 : ~Bytes{0};
    const auto whole = cs::learn::plan_candidates(m, "auto", opt, {}, predict, 3, max_staging);
    const auto pool = cs::learn::auto_pool({});
    for (const std::size_t parts : {std::size_t{1}, std::size_t{2}, std::size_t{7}, pool.size(),
                                    pool.size() + 9}) {
      std::vector<double> reduced;
      for (std::size_t r = 0; r < parts; ++r) {
        const auto mine = cs::learn::pack_predictions(
            cs::learn::predict_share(m, pool, opt, predict, max_staging, r, parts));
        if (reduced.empty()) reduced = mine;
        for (std::size_t i = 0; i < mine.size(); ++i) reduced[i] = std::min(reduced[i], mine[i]);
      }
      const auto split = cs::learn::plan_chosen(m, pool, cs::learn::unpack_predictions(reduced),
                                                opt, 3, max_staging);
      ASSERT_EQ(split.size(), whole.size()) << "n=" << n << " parts=" << parts;
      for (std::size_t i = 0; i < split.size(); ++i) {
        EXPECT_EQ(split[i].id, whole[i].id) << "n=" << n << " parts=" << parts << " i=" << i;
        EXPECT_EQ(split[i].predicted_s, whole[i].predicted_s);
        EXPECT_EQ(split[i].rejected.empty(), whole[i].rejected.empty());
        if (whole[i].rejected.rfind("needs", 0) == 0) {
          EXPECT_EQ(split[i].rejected, whole[i].rejected);
        }
        EXPECT_EQ(split[i].plan.phases.size(), whole[i].plan.phases.size());
      }
      if (trial == 1) {
        EXPECT_TRUE(std::any_of(split.begin(), split.end(),
                                [](const auto& c) { return !c.rejected.empty(); }));
      }
    }
  }
}

// A strategy the user named shares the cost model's work the same way: its prediction and
// native's are each made by one rank (native's alone took a rank a minute on a dense 1024-rank
// matrix), and plan_forced gives every rank the list plan_candidates gives in one process.
TEST(ChooseForced, SharedPredictionsGiveTheSameCandidates) {
  std::mt19937_64 rng(11);
  int native_predictions = 0, plan_predictions = 0;
  const cs::learn::Predictor predict = [&](const cs::core::Plan* p) {
    if (!p) {
      ++native_predictions;
      return 1e-3;
    }
    ++plan_predictions;
    return 1e-5 * static_cast<double>(p->phases.size() + 1);
  };
  const std::vector<Bytes> stagings{0, ~Bytes{0}};
  for (const std::string id : {"color", "mesh2d", "two_stage", "native", "drs"}) {
    for (const int n : {5, 9, 16}) {
      std::vector<Bytes> dense(static_cast<std::size_t>(n * n), 0);
      for (auto& b : dense)
        if (rng() % 2 == 0) b = 1 + rng() % 4096;
      const auto m = cs::core::CommMatrix::from_dense(n, dense);
      cs::plan::Options opt;
      for (const Bytes max_staging : stagings) {  // 0 rejects the forwarding planners
        const auto whole =
            cs::learn::plan_candidates(m, id, opt, {}, predict, 3, max_staging);
        const auto pool = cs::learn::forced_pool(id);
        EXPECT_EQ(pool.size(), id == "native" ? 0u : 1u);
        native_predictions = plan_predictions = 0;
        std::vector<double> reduced;
        const std::size_t parts = 4;
        for (std::size_t r = 0; r < parts; ++r) {
          const auto mine = cs::learn::pack_predictions(
              cs::learn::predict_share(m, pool, opt, predict, max_staging, r, parts));
          if (reduced.empty()) reduced = mine;
          for (std::size_t i = 0; i < mine.size(); ++i) reduced[i] = std::min(reduced[i], mine[i]);
        }
        EXPECT_EQ(native_predictions, id == "drs" ? 2 : 1) << id;  // drs predicts as native
        EXPECT_LE(plan_predictions, 1) << id;
        const auto split = cs::learn::plan_forced(m, id, cs::learn::unpack_predictions(reduced),
                                                  opt, max_staging);
        ASSERT_EQ(split.size(), whole.size()) << id << " n=" << n;
        ASSERT_EQ(split.size(), id == "native" ? 1u : 2u);
        EXPECT_EQ(split.back().id, "native");
        for (std::size_t i = 0; i < split.size(); ++i) {
          EXPECT_EQ(split[i].id, whole[i].id);
          EXPECT_EQ(split[i].predicted_s, whole[i].predicted_s) << id << " n=" << n << " " << i;
          EXPECT_EQ(split[i].rejected, whole[i].rejected);
          EXPECT_EQ(split[i].plan.phases.size(), whole[i].plan.phases.size());
        }
      }
    }
  }
}

// native_sync plans nothing and the model sees no skew between ranks: it is predicted as
// native and, where COMMSCHED_CANDIDATES names it, tried right behind native, outside the
// width (the `keep` plans are all still tried); unnamed, auto leaves it out; forced, it runs
// beside native.
TEST(ChooseAuto, InStepComesRightBehindNative) {
  const auto m = every_peer(8, 4096);
  // One-phase plans look faster than native, several phases slower.
  const cs::learn::Predictor predict = [](const cs::core::Plan* p) {
    return p ? 1e-3 * static_cast<double>(p->phases.size()) + 1e-6 * static_cast<double>(
                                                                  p->transfer_count())
             : 2e-3;
  };
  const auto ids = [](const std::vector<cs::learn::CandidatePlan>& c) {
    std::vector<std::string> out;
    for (const auto& x : c)
      if (x.rejected.empty()) out.push_back(x.id);
    return out;
  };
  std::vector<std::string> planners;  // every strategy with a plan
  for (const cs::plan::Strategy& st : cs::plan::strategies())
    if (st.plan) planners.emplace_back(st.id);
  std::vector<std::string> with_sync = planners;
  with_sync.emplace_back("native_sync");
  for (const std::size_t keep : {std::size_t{1}, std::size_t{3}}) {
    const auto c = cs::learn::plan_candidates(m, "auto", cs::plan::Options{}, with_sync, predict,
                                              keep, ~Bytes{0});
    std::vector<std::string> expected = ids(cs::learn::plan_candidates(
        m, "auto", cs::plan::Options{}, planners, predict, keep, ~Bytes{0}));
    EXPECT_EQ(ids(cs::learn::plan_candidates(m, "auto", cs::plan::Options{}, {}, predict, keep,
                                             ~Bytes{0})),
              expected)
        << "unnamed, auto leaves native_sync out";
    const auto native = std::find(expected.begin(), expected.end(), "native");
    ASSERT_NE(native, expected.end());
    ASSERT_NE(native, expected.begin()) << "a one-phase plan is predicted before native";
    expected.insert(native + 1, "native_sync");
    EXPECT_EQ(ids(c), expected) << "keep " << keep;
    for (const auto& x : c) {
      if (x.id == "native_sync") {
        EXPECT_EQ(x.predicted_s, 2e-3);
        EXPECT_TRUE(x.plan.phases.empty());
      }
    }
  }
  const auto without = ids(cs::learn::plan_candidates(m, "auto", cs::plan::Options{},
                                                      {"color", "pex"}, predict, 3, ~Bytes{0}));
  EXPECT_EQ(std::count(without.begin(), without.end(), "native_sync"), 0);
  const auto named = ids(cs::learn::plan_candidates(m, "auto", cs::plan::Options{},
                                                    {"pex", "native_sync"}, predict, 3, ~Bytes{0}));
  EXPECT_EQ(named, (std::vector<std::string>{"native", "native_sync", "pex"}));
  const auto forced =
      ids(cs::learn::plan_candidates(m, "native_sync", cs::plan::Options{}, {}, predict, 3,
                                     ~Bytes{0}));
  EXPECT_EQ(forced, (std::vector<std::string>{"native_sync", "native"}));
}

// auto's trial runs distinct plans: a strategy whose plan repeats a better-predicted one (the
// hybrid routes with only small messages are their pure variants) is listed as such, untried,
// and the next distinct plan takes its slot.
TEST(ChooseAuto, IdenticalPlansAreTriedOnce) {
  std::vector<Bytes> dense(64 * 64, 64);  // all-to-all of 64 B: every message routed
  const auto m = cs::core::CommMatrix::from_dense(64, dense);
  // Only the two routes and their pure twins, predicted mesh2d < mesh2d_pure < grid3d < ...
  const std::vector<std::string> allowed{"mesh2d", "mesh2d_pure", "grid3d", "grid3d_pure"};
  const cs::learn::Predictor predict = [](const cs::core::Plan* p) {
    return p ? 1e-5 * static_cast<double>(p->phases.size()) : 1.0;
  };
  const auto c = cs::learn::plan_candidates(m, "auto", cs::plan::Options{}, allowed, predict, 3,
                                            ~Bytes{0});
  std::vector<std::string> tried, twins;
  for (const auto& x : c) (x.rejected.empty() ? tried : twins).push_back(x.id);
  // mesh2d (2 phases) and grid3d (3 phases) once each, then native; their twins untried.
  EXPECT_EQ(tried, (std::vector<std::string>{"mesh2d", "grid3d", "native"}));
  EXPECT_EQ(twins, (std::vector<std::string>{"mesh2d_pure", "grid3d_pure"}));
  for (const auto& x : c) {
    if (!x.rejected.empty()) {
      EXPECT_EQ(x.rejected.rfind("same plan as ", 0), 0u) << x.rejected;
    }
  }
}

// Plans the model cannot tell apart (as many phases, the same predicted time) are one trial
// candidate: the first in the pool is tried, the others are listed untried and use up their
// slots, so a uniform exchange whose direct schedules all look alike tries few.
TEST(ChooseAuto, LookalikePlansAreTriedOnce) {
  const auto m = every_peer(4, 8192);  // a 4-rank remap: 8 KiB to every peer
  // A model that sees only the number of phases: every 3-phase schedule is alike.
  const cs::learn::Predictor predict = [](const cs::core::Plan* p) {
    return p ? 1e-5 * static_cast<double>(p->phases.size()) : 1e-4;
  };
  const auto c = cs::learn::plan_candidates(m, "auto", cs::plan::Options{}, {}, predict, 8,
                                            ~Bytes{0});
  std::vector<std::size_t> tried_phases;
  std::size_t lookalikes = 0;
  for (const auto& x : c) {
    if (x.rejected.empty() && x.id != "native" && x.id != "native_sync")
      tried_phases.push_back(x.plan.phases.size());
    if (x.rejected.rfind("predicted the same as ", 0) == 0) ++lookalikes;
  }
  // One plan per phase count; the rest of the eight slots went to their lookalikes.
  std::vector<std::size_t> distinct = tried_phases;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(distinct.size(), tried_phases.size());
  EXPECT_GE(lookalikes, 1u);
  EXPECT_EQ(tried_phases.size() + lookalikes, 8u);
  // A real difference in the prediction keeps both: with lp_shift predicted a little faster
  // than the other 3-phase schedules, both it and the first of those are tried.
  const std::vector<std::string> allowed{"lp_shift", "lp_xor", "pex"};
  std::vector<cs::learn::Prediction> agreed(allowed.size() + 1);
  agreed[0].predicted_s = 3e-5 * (1 - 1e-6);
  agreed[1].predicted_s = 3e-5;
  agreed[2].predicted_s = 3e-5;
  agreed[3].predicted_s = 1e-4;
  std::vector<std::string> ids;
  for (const auto& x :
       cs::learn::plan_chosen(m, allowed, agreed, cs::plan::Options{}, 3, ~Bytes{0}))
    if (x.rejected.empty()) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"lp_shift", "lp_xor", "native"}));
}

// auto's trial widens where calls are predicted cheap: 3 candidates beside native, up to 8 while
// (calls + 1) rounds of them and native fit the trial's budget.
TEST(ChooseAuto, TrialWidensForCheapCalls) {
  using cs::learn::Prediction;
  using cs::learn::trial_width;
  auto preds = [](std::vector<double> pool, double native) {
    std::vector<Prediction> p(pool.size() + 1);
    for (std::size_t i = 0; i < pool.size(); ++i) p[i].predicted_s = pool[i];
    p.back().predicted_s = native;
    return p;
  };
  const std::vector<double> ten(10, 1e-3);  // ten strategies of 1 ms, native 1 ms
  // Every strategy taken: 9 ms per round, 4 rounds (3 measured and the first) fit 0.1 s.
  EXPECT_EQ(trial_width(preds(ten, 1e-3), 3, 0.1), cs::learn::kTrialKeepMost);
  // 0.025 s: (1 + k) ms * 4 <= 25 ms gives k = 5.
  EXPECT_EQ(trial_width(preds(ten, 1e-3), 3, 0.025), 5u);
  // Ten measured rounds: (1 + k) * 11 ms <= 66 ms gives k = 5.
  EXPECT_EQ(trial_width(preds(ten, 1e-3), 10, 0.066), 5u);
  // Expensive calls, no budget, or fewer strategies than the usual width: the usual width.
  EXPECT_EQ(trial_width(preds(ten, 1.0), 3, 0.1), cs::learn::kTrialKeep);
  EXPECT_EQ(trial_width(preds(ten, 1e-3), 3, 0.0), cs::learn::kTrialKeep);
  EXPECT_EQ(trial_width(preds({1e-3, 1e-3}, 1e-3), 3, 0.1), cs::learn::kTrialKeep);
  // The cheapest predictions are the ones counted, whatever their order in the pool; rejected
  // and unpredicted entries are not candidates.
  std::vector<Prediction> mixed = preds({9.0, 1e-3, 1e-3, 1e-3, 1e-3, 9.0, 1e-3, 1e-3}, 1e-3);
  mixed[2].rejected = 2;
  mixed[3].predicted_s = Prediction::kNone;
  EXPECT_EQ(trial_width(mixed, 3, 0.1), 4u);  // four cheap ones; a 9 s one does not fit
  // native_sync is tried beside the width: not counted in it, its time (native's) in the round.
  EXPECT_EQ(trial_width(mixed, 3, 0.1, 1), 3u);
  EXPECT_EQ(trial_width(preds(ten, 1e-3), 3, 0.025, 0), 4u);  // (2 + k) ms * 4 <= 25 ms
  // The width is what plan_chosen keeps: more distinct plans are tried.
  const cs::core::CommMatrix m = cs::core::CommMatrix::from_dense(
      8, [] {
        std::vector<Bytes> d(64, 0);
        std::mt19937 rng(7);
        for (int i = 0; i < 8; ++i)
          for (int j = 0; j < 8; ++j)
            if (i != j && rng() % 2) d[static_cast<std::size_t>(i * 8 + j)] = 1 + rng() % 5000;
        return d;
      }());
  std::vector<std::string> named;  // every planner, and native_sync
  for (const cs::plan::Strategy& st : cs::plan::strategies())
    if (st.plan || st.id == "native_sync") named.emplace_back(st.id);
  const std::vector<std::string> pool = cs::learn::auto_pool(named);
  std::vector<Prediction> cheap(pool.size() + 1);
  for (std::size_t i = 0; i < cheap.size(); ++i)
    cheap[i].predicted_s =  // distinct: lookalikes would be tried once
        1e-4 * static_cast<double>(1 + i % 3) * (1 + 1e-3 * static_cast<double>(i));
  const auto in_step = static_cast<std::size_t>(
      std::find(pool.begin(), pool.end(), "native_sync") - pool.begin());
  ASSERT_LT(in_step, pool.size());
  const std::size_t k = trial_width(cheap, 3, 0.1, in_step);
  ASSERT_EQ(k, cs::learn::kTrialKeepMost);
  const auto c = cs::learn::plan_chosen(m, pool, cheap, cs::plan::Options{}, k, ~Bytes{0});
  const auto tried = std::count_if(c.begin(), c.end(), [](const auto& x) {
    return x.rejected.empty() && x.id != "native" && x.id != "native_sync";
  });
  EXPECT_EQ(static_cast<std::size_t>(tried), k);
}

// Where the model puts native first, the trial tries plans of several phases before a
// one-phase plan (ac posts everything at once, as native does, so shares the receiver
// contention the model does not see); a plan predicted to beat native still goes first.
TEST(ChooseAuto, PhasedPlansGoFirstBehindNative) {
  const auto m = every_peer(8, 4096);
  const std::vector<std::string> pool = {"ac", "lp_shift", "rs_nh"};
  auto chosen = [&](double ac, double lp, double rs, double native) {
    return chosen_ids(m, pool, {ac, lp, rs, native});
  };
  using V = std::vector<std::string>;
  // Native predicted best: the phased plans, in predicted order, then ac.
  EXPECT_EQ(chosen(1.1, 1.3, 1.2, 1.0), (V{"native", "rs_nh", "lp_shift", "ac"}));
  // ac predicted to beat native: it runs first, the rest as before.
  EXPECT_EQ(chosen(0.9, 1.3, 1.2, 1.0), (V{"ac", "native", "rs_nh", "lp_shift"}));
  // Every plan predicted faster than native: the predicted order alone.
  EXPECT_EQ(chosen(0.5, 0.7, 0.6, 1.0), (V{"ac", "rs_nh", "lp_shift", "native"}));
}

// Behind native, a direct schedule of several phases goes before a route, even one the model
// puts just ahead of it: the route's relayed bytes cross the network twice, while a direct
// schedule spreads the receivers' load without adding a byte. A route predicted to beat native
// still goes first.
TEST(ChooseAuto, DirectPlansGoBeforeRoutesBehindNative) {
  const auto m = every_peer(16, 8192);
  const std::vector<std::string> pool = {"ac", "lp_shift", "mesh2d_pure"};
  auto chosen = [&](double ac, double lp, double route, double native) {
    return chosen_ids(m, pool, {ac, lp, route, native});
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(chosen(1.3, 1.2, 1.1, 1.0), (V{"native", "lp_shift", "mesh2d_pure", "ac"}));
  EXPECT_EQ(chosen(1.3, 1.2, 0.9, 1.0), (V{"mesh2d_pure", "native", "lp_shift", "ac"}));
}

TEST(Learner, StreakCountsTheRecentHistory) {
  // streak() is how often the current counts' hash appears among the last kHistory calls,
  // capped at the learn count, whatever shortcut repeat() takes for a run of equal hashes:
  // checked against a plain count over runs, alternations and random hashes.
  for (const int k : {1, 2, 3, 5, 16}) {
    std::mt19937 rng(static_cast<unsigned>(k));
    Learner l(k);
    std::vector<std::uint64_t> seen;
    std::uint64_t h = 1;
    for (int call = 0; call < 5000; ++call) {
      const unsigned r = rng() % 16;
      if (r < 2) h = rng() % 6;           // a new (or a recent) pattern
      else if (r < 4) h = h == 1 ? 2 : 1;  // two patterns alternating
      l.repeat(h);
      seen.push_back(h);
      const auto from = seen.size() > Learner::kHistory ? seen.end() - Learner::kHistory
                                                        : seen.begin();
      const auto count = static_cast<int>(std::count(from, seen.end(), h));
      ASSERT_EQ(l.streak(), std::min(count, k)) << "k " << k << ", call " << call;
    }
  }
}

TEST(InStep, EpochsFollowTheJobClock) {
  using cs::learn::InStepPhase;
  const cs::learn::InStepClock clock{0.5};
  // N S S N N S, repeating, from the job clock's zero.
  const bool expected[] = {false, true, true, false, false, true};
  for (long long k = 0; k < 18; ++k)
    EXPECT_EQ(cs::learn::in_step_epoch(k), expected[k % 6]) << k;
  // Joined at 1.3 s (epoch 2): in step up to 1.5 s, then six whole epochs, 3 to 8, to 4.5 s.
  const double decide_at = cs::learn::in_step_decide_at(1.3, clock);
  EXPECT_DOUBLE_EQ(decide_at, 4.5);
  EXPECT_EQ(cs::learn::in_step_phase(1.3, decide_at, clock), InStepPhase::lead_in);
  EXPECT_EQ(cs::learn::in_step_phase(1.6, decide_at, clock), InStepPhase::native);
  EXPECT_EQ(cs::learn::in_step_phase(2.6, decide_at, clock), InStepPhase::sync);
  EXPECT_EQ(cs::learn::in_step_phase(4.49, decide_at, clock), InStepPhase::sync);
  EXPECT_EQ(cs::learn::in_step_phase(4.5, decide_at, clock), InStepPhase::decide);
  EXPECT_EQ(cs::learn::in_step_phase(1e9, decide_at, clock), InStepPhase::decide);
  // Whole epochs of each kind, whatever the epoch joined: three of each.
  for (double t = 0; t < 3; t += 0.25) {
    const double end = cs::learn::in_step_decide_at(t, clock);
    int sync = 0;
    for (long long k = clock.epoch(t) + 1; k < clock.epoch(end); ++k)
      sync += cs::learn::in_step_epoch(k);
    EXPECT_EQ(sync, 3) << t;
  }
}

TEST(InStep, JoinsWhereCallsAreFarApartAndABarrierIsCheap) {
  EXPECT_TRUE(cs::learn::in_step_joins(0.045, 0.0004));  // a 4-rank remap over TCP
  EXPECT_TRUE(cs::learn::in_step_joins(0.135, 0.003));   // a 16-rank one, once a time step
  EXPECT_FALSE(cs::learn::in_step_joins(0.010, 0));      // a 2-D FFT's calls, 10 ms apart
  EXPECT_FALSE(cs::learn::in_step_joins(0.0005, 0));
  EXPECT_TRUE(cs::learn::in_step_joins(0.1, 0.0049));
  EXPECT_FALSE(cs::learn::in_step_joins(0.1, 0.0051));   // a barrier above 5 % of the time
}

TEST(InStep, CloseCallsStayOutBeforeTheBarrierIsTimed) {
  // The gauge's second allreduce (the barrier's cost) is made only where it can matter.
  EXPECT_FALSE(cs::learn::in_step_may_join(0.010));
  EXPECT_FALSE(cs::learn::in_step_may_join(3e-6));
  EXPECT_TRUE(cs::learn::in_step_may_join(0.045));
  for (double period : {1e-6, 0.01, 0.019, 0.02, 0.05, 1.0}) {
    if (!cs::learn::in_step_may_join(period)) {
      EXPECT_FALSE(cs::learn::in_step_joins(period, 0)) << period;
    }
  }
}

TEST(InStep, CycleIsTheSteadiestLag) {
  // Three calls close together, then a long gap: a 3-D FFT's transposes in each time step.
  std::vector<double> burst;
  for (int step = 0; step < 4; ++step)
    for (double at : {0.0, 0.004, 0.009}) burst.push_back(0.135 * step + at);
  EXPECT_EQ(cs::learn::in_step_cycle(burst.data(), static_cast<int>(burst.size())), 3);
  std::vector<double> even;
  for (int i = 0; i < 12; ++i) even.push_back(0.05 * i + 0.001 * std::sin(1.7 * i * i));
  EXPECT_EQ(cs::learn::in_step_cycle(even.data(), 12), 1);
  const double two[] = {0, 1};
  EXPECT_EQ(cs::learn::in_step_cycle(two, 2), 1);
}

TEST(InStep, ForecastFindsTheNextEntryOfACycle) {
  cs::learn::EntryForecast f;
  // Three calls a time step of about a second: 0.05 s apart, then 0.9 s to the next step.
  std::vector<double> entries;
  for (int step = 0; step < 6; ++step)
    for (double at : {0.0, 0.05, 0.1}) entries.push_back(1.0 * step + at + 0.01 * step * step);
  f.add(entries[0]);
  // Too few entries for a cycle: the last one plus the period.
  EXPECT_DOUBLE_EQ(f.next(3, 1.0 / 3), entries[0] + 1.0 / 3);
  for (std::size_t i = 1; i < entries.size() - 1; ++i) {
    f.add(entries[i]);
    if (i >= 3) {
      EXPECT_NEAR(f.next(3, 1.0 / 3), entries[i + 1], 0.025) << i;
    }
  }
  // Never before an earlier forecast, even where the entries would say so.
  cs::learn::EntryForecast g;
  g.add(1.0);
  EXPECT_DOUBLE_EQ(g.next(1, 0.5), 1.5);
  g.add(1.1);
  EXPECT_DOUBLE_EQ(g.next(1, 0.5), 1.5);  // 1.1 + 0.1 = 1.2 would go back
  EXPECT_DOUBLE_EQ(g.next(1, 0.5), 1.5);
  g.reset();
  EXPECT_TRUE(g.empty());
  g.add(0.2);
  EXPECT_DOUBLE_EQ(g.next(1, 0.1), 0.3);
}

TEST(InStep, ForecastPutsCallsASecondApartInTheirOwnEpoch) {
  // A communicator called once a time step, about a second apart, in epochs of 2 s: the
  // previous call's entry names the wrong epoch for about half the calls; the forecast for
  // almost none.
  const cs::learn::InStepClock clock{2.0};
  cs::learn::EntryForecast f;
  double t = 0.3;
  int wrong_previous = 0, wrong_forecast = 0, calls = 0;
  f.add(t);
  for (int i = 1; i < 200; ++i, ++calls) {
    const double next = t + 1.0 + 0.02 * std::sin(1.7 * i * i);
    wrong_previous += clock.epoch(t) != clock.epoch(next);
    wrong_forecast += clock.epoch(f.next(1, 1.0)) != clock.epoch(next);
    f.add(next);
    t = next;
  }
  EXPECT_GT(wrong_previous, calls * 4 / 10);
  EXPECT_LT(wrong_forecast, calls / 20);
}

TEST(InStep, MeterTimesWholeCyclesInEachKindOfEpoch) {
  const cs::learn::InStepClock clock{0.5};
  // A job in steps of `native_step` or `sync_step` seconds, three calls each close together.
  auto run = [&](double native_step, double sync_step) {
    cs::learn::InStepMeter meter;
    for (double t = 1.0; t < 4.0;) {
      const long long k = clock.epoch(t);
      const bool sync = cs::learn::in_step_epoch(k);
      const double step = sync ? sync_step : native_step;
      for (double at : {0.0, 0.1, 0.2}) meter.note(k, sync, t + at * step, 3);
      t += step;
    }
    meter.close();
    return meter.totals();
  };
  const auto faster = run(0.135, 0.120);
  EXPECT_NEAR(cs::learn::in_step_ratio(faster), 0.120 / 0.135, 0.01);
  EXPECT_TRUE(cs::learn::in_step_wins(faster));
  const auto same = run(0.135, 0.135);
  EXPECT_NEAR(cs::learn::in_step_ratio(same), 1.0, 0.01);
  EXPECT_FALSE(cs::learn::in_step_wins(same));
  EXPECT_FALSE(cs::learn::in_step_wins(run(0.135, 0.150)));
  // Within the margin: not worth a barrier per call.
  EXPECT_FALSE(cs::learn::in_step_wins(run(0.135, 0.133)));
  // Two calls per epoch give no whole cycle after the second: nothing measured, native stays.
  cs::learn::InStepMeter sparse;
  for (double t = 1.1; t < 4.0; t += 0.25) sparse.note(clock.epoch(t), false, t, 1);
  sparse.close();
  EXPECT_EQ(cs::learn::in_step_ratio(sparse.totals()), -1);
  EXPECT_FALSE(cs::learn::in_step_wins(sparse.totals()));
}

TEST(InStep, PoolWeighsCommunicatorsByTheirOwnPeriod) {
  const cs::learn::InStepClock clock{0.5};
  // One communicator's calls `period` apart, `gain` faster in step, noted from `start` to `end`
  // and poured into `pool` on every call (twice on some: pouring again adds nothing).
  auto run = [&](double period, double gain, double start, double end,
                 std::array<double, 4>& pool) {
    cs::learn::InStepMeter meter;
    int calls = 0;
    for (double t = start; t < end; ++calls) {
      const long long k = clock.epoch(t);
      const bool sync = cs::learn::in_step_epoch(k);
      meter.note(k, sync, t, 1);
      meter.pour(pool, period);
      if (calls % 2 == 0) meter.pour(pool, period);
      t += sync ? period * gain : period;
    }
    meter.close();
    meter.pour(pool, period);
  };
  // Calls 40 ms and 200 ms apart, both 6 % faster in step: the pool says so.
  std::array<double, 4> both{};
  run(0.04, 0.94, 1.0, 4.0, both);
  run(0.2, 0.94, 1.0, 4.0, both);
  EXPECT_NEAR(cs::learn::in_step_ratio(both), 0.94, 0.01);
  EXPECT_TRUE(cs::learn::in_step_wins(both));
  // No gain on either, the close calls measured in the trial's last three epochs only (in
  // step, native, in step: a communicator that joined late). In seconds alone, their short
  // intervals would pull in step's time per interval down (0.8 of native's); in units of each
  // one's period they do not.
  std::array<double, 4> mixed{};
  run(0.04, 1.0, 2.5, 4.0, mixed);
  run(0.2, 1.0, 1.0, 4.0, mixed);
  EXPECT_NEAR(cs::learn::in_step_ratio(mixed), 1.0, 0.01);
  EXPECT_FALSE(cs::learn::in_step_wins(mixed));
}

TEST(InStep, PhaseTrialRunsAnotherRoundWhenUnclear) {
  using cs::learn::PhaseVerdict;
  auto pools = [](double r) { return std::array<double, 4>{100, 100 * 0.1 * r, 100, 10}; };
  for (int round : {1, 2, 3}) {
    const bool last = round >= cs::learn::kPhaseRounds;
    // Phased at least 3 % faster keeps the schedules in any round.
    EXPECT_EQ(cs::learn::phase_verdict(pools(0.94), round), PhaseVerdict::keep) << round;
    EXPECT_EQ(cs::learn::phase_verdict(pools(0.969), round), PhaseVerdict::keep) << round;
    // Between the margin and 8 % slower, one round cannot tell: another, up to the last.
    for (double r : {0.98, 1.0, 1.05, 1.079})
      EXPECT_EQ(cs::learn::phase_verdict(pools(r), round),
                last ? PhaseVerdict::leave : PhaseVerdict::again)
          << r << " " << round;
    // Clearly slower leaves them at once.
    EXPECT_EQ(cs::learn::phase_verdict(pools(1.081), round), PhaseVerdict::leave) << round;
    EXPECT_EQ(cs::learn::phase_verdict(pools(1.14), round), PhaseVerdict::leave) << round;
  }
  // Nothing measured on a side (a communicator that joined late emptied its ranks' pools):
  // another round, up to the last.
  const std::array<double, 4> none{0, 0, 100, 10};
  EXPECT_EQ(cs::learn::phase_verdict(none, 1), PhaseVerdict::again);
  EXPECT_EQ(cs::learn::phase_verdict(none, 2), PhaseVerdict::again);
  EXPECT_EQ(cs::learn::phase_verdict(none, cs::learn::kPhaseRounds), PhaseVerdict::leave);
}

TEST(InStep, PhaseTrialKeepsOnLessWhereAnotherCommunicatorKept) {
  using cs::learn::PhaseVerdict;
  auto pools = [](double r) { return std::array<double, 4>{100, 100 * 0.1 * r, 100, 10}; };
  for (int round : {1, 2, 3}) {
    const bool last = round >= cs::learn::kPhaseRounds;
    // Word that another communicator kept its schedules: phased faster at all keeps, in any
    // round (LAMMPS on a 64^3 mesh left communicators at 0.972 and 0.987 after three rounds).
    for (double r : {0.94, 0.972, 0.987, 0.999})
      EXPECT_EQ(cs::learn::phase_verdict(pools(r), round, true), PhaseVerdict::keep)
          << r << " " << round;
    // Not faster: as without the word.
    for (double r : {1.0, 1.05})
      EXPECT_EQ(cs::learn::phase_verdict(pools(r), round, true),
                last ? PhaseVerdict::leave : PhaseVerdict::again)
          << r << " " << round;
    EXPECT_EQ(cs::learn::phase_verdict(pools(1.09), round, true), PhaseVerdict::leave) << round;
  }
  // Nothing measured on a side keeps nothing, word or not.
  const std::array<double, 4> none{0, 0, 100, 10};
  EXPECT_EQ(cs::learn::phase_verdict(none, 1, true), PhaseVerdict::again);
  EXPECT_EQ(cs::learn::phase_verdict(none, cs::learn::kPhaseRounds, true), PhaseVerdict::leave);
}

TEST(InStep, PhaseTrialTriesOnlySchedulesThatSpreadTheLoad) {
  using cs::learn::is_phase_schedule;
  // Rounds of one send and one receive per rank, several of them.
  for (const char* id : {"lp_shift", "lp_xor", "pex", "maxsum", "color", "rs_nh"})
    EXPECT_TRUE(is_phase_schedule(id, 3)) << id;
  // One round is everything at once: MPI's own call.
  EXPECT_FALSE(is_phase_schedule("lp_shift", 1));
  // All at once (ac), routes, and what has no plan, whatever their phase count.
  for (const char* id : {"ac", "lex", "mesh2d_pure", "grid3d", "hypercube", "native", "drs",
                         "native_sync", "no_such"})
    EXPECT_FALSE(is_phase_schedule(id, 3)) << id;
}

TEST(InStep, PhaseTrialTriesTheScheduleItsPairsMeasuredFastest) {
  using cs::learn::Trial;
  std::vector<cs::learn::TrialCandidate> cands;
  for (const char* id : {"native", "mesh2d_pure", "maxsum", "lp_xor", "drs"})
    cands.push_back({id, -1, -1});
  Trial trial(cands, 3, 0, 7);
  const std::vector<bool> schedules{false, true, true, true, false};
  // Nothing measured yet: the first schedule in the trial's order.
  EXPECT_EQ(cs::learn::phase_schedule(trial, schedules), 1);
  // The pattern's own trial pairs mesh2d_pure (5 % slower than native) and maxsum (8 %
  // faster), as PETSc's ghost exchange measured them, until maxsum has pairs.
  const double cost[] = {1.0, 1.05, 0.92, 0.9, 1.0};
  for (int call = 0; call < 10000 && !trial.decided() && trial.paired_ratio(2) < 0; ++call) {
    if (trial.native_calls_owed() > 0) {
      trial.unmeasured_native_call();
    } else {
      trial.measured(cost[trial.current()]);
    }
  }
  ASSERT_NEAR(trial.paired_ratio(1), 1.05, 1e-9);
  ASSERT_NEAR(trial.paired_ratio(2), 0.92, 1e-9);
  EXPECT_LT(trial.paired_ratio(3), 0);  // lp_xor not reached
  EXPECT_EQ(cs::learn::phase_schedule(trial, schedules), 2);
  // Without maxsum, lp_xor (unmeasured, native's equal) goes before mesh2d_pure, measured
  // slower; without either, mesh2d_pure is all there is.
  EXPECT_EQ(cs::learn::phase_schedule(trial, {false, true, false, true, false}), 3);
  EXPECT_EQ(cs::learn::phase_schedule(trial, {false, true, false, false, false}), 1);
  // No schedule: the phase trial has nothing to try.
  EXPECT_EQ(cs::learn::phase_schedule(trial, {false, false, false, false, false}), -1);
  EXPECT_EQ(cs::learn::phase_schedule(trial, {}), -1);
}

TEST(InStep, LossDecidesWhoMustProveIt) {
  using cs::learn::InStepLoss;
  // {in-step intervals, seconds, native intervals, seconds}: in step at `r` of native's time.
  auto pools = [](double r) { return std::array<double, 4>{100, 100 * 0.1 * r, 100, 10}; };
  for (double r : {0.9, 0.99, 1.0, 1.02, 1.05, 1.079, 1.081, 1.2}) {
    // No node loses packets: never, however the trial came out.
    EXPECT_FALSE(cs::learn::in_step_keeps(pools(r), InStepLoss::none)) << r;
    // Loss seen: kept unless slower in step by more than a barrier's 5 % and the 3 % margin.
    EXPECT_EQ(cs::learn::in_step_keeps(pools(r), InStepLoss::seen), r < 1.08) << r;
    // Cannot tell: in step must win by the margin.
    EXPECT_EQ(cs::learn::in_step_keeps(pools(r), InStepLoss::unknown), r <= 0.97) << r;
  }
  // Nothing measured on one side (calls too far apart for an epoch to time): with loss seen,
  // nothing says in step is slower; where that cannot be told, nothing says it wins.
  const std::array<double, 4> none{0, 0, 100, 10};
  EXPECT_TRUE(cs::learn::in_step_keeps(none, InStepLoss::seen));
  EXPECT_FALSE(cs::learn::in_step_keeps(none, InStepLoss::unknown));
  EXPECT_FALSE(cs::learn::in_step_keeps(none, InStepLoss::none));
}
