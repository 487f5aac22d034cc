// Every planner of the registry against core::validate on thousands of random matrices, plus
// the properties particular to some (Δ phases for color, splitting for rs_nh, determinism).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "plan/registry.hpp"

namespace commsched {
namespace {

using core::CommMatrix;
using core::Plan;
using plan::Options;
using plan::Strategy;

constexpr Bytes kMiB = Bytes{1} << 20;

// Random matrices from a fixed seed: n 1-64, density 0-100 %, sizes 0 to 1 MiB, four size
// shapes (equal, uniform, log-uniform, heavy-tailed). std::mt19937_64 is specified exactly, and
// only its raw output is used, so the cases are the same with every standard library.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t k) { return rng_() % k; }
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  enum class Shape { equal, uniform, log_uniform, heavy };

  CommMatrix matrix(Rank n, double density, Shape shape) {
    std::vector<Bytes> dense(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0);
    const Bytes equal_size = 1 + below(kMiB);
    for (Bytes& b : dense) {
      if (unit() >= density) continue;
      switch (shape) {
        case Shape::equal: b = equal_size; break;
        case Shape::uniform: b = below(kMiB + 1); break;  // 0 allowed: dropped by the matrix
        case Shape::log_uniform: b = static_cast<Bytes>(std::exp2(unit() * 20.0)); break;
        case Shape::heavy: b = below(10) == 0 ? kMiB / 2 + below(kMiB / 2 + 1) : 1 + below(1024);
      }
    }
    return CommMatrix::from_dense(n, dense);
  }

  CommMatrix random_matrix() {
    const auto n = static_cast<Rank>(1 + below(64));
    double density = unit();
    if (below(10) == 0) density = 0.0;
    if (below(10) == 0) density = 1.0;
    return matrix(n, density, static_cast<Shape>(below(4)));
  }

 private:
  std::mt19937_64 rng_;
};

// Strategies that forward pieces through intermediate ranks (tests/unit/test_indirect.cpp
// covers them further): exempt from the direct-transfer and one-phase checks below.
const std::set<std::string_view> kIndirect{"two_stage",      "mesh2d",      "mesh2d_pure",
                                           "grid3d",         "grid3d_pure", "hypercube",
                                           "hypercube_pure", "two_level",   "node_aware",
                                           "node_aware_multi"};

// Checks what validate does not: the strategy's name and flags, no empty phase, and that every
// transfer of a direct strategy is direct (one piece, from its source to its destination).
::testing::AssertionResult well_formed(const Strategy& s, const Plan& p, const CommMatrix& m) {
  if (p.strategy != s.id) return ::testing::AssertionFailure() << "strategy " << p.strategy;
  if (p.permutation != s.permutation)
    return ::testing::AssertionFailure() << "permutation flag " << p.permutation;
  const core::Validation v = core::validate(p, m);
  if (!v.ok) return ::testing::AssertionFailure() << v.error;
  for (std::size_t k = 0; k < p.phases.size(); ++k) {
    if (p.phases[k].transfers.empty())
      return ::testing::AssertionFailure() << "phase " << k << " is empty";
    if (kIndirect.count(s.id) != 0) continue;
    for (const core::Transfer& t : p.phases[k].transfers)
      for (const core::Piece& piece : t.pieces)
        if (piece.orig_src != t.from || piece.orig_dst != t.to)
          return ::testing::AssertionFailure() << "phase " << k << ": indirect transfer";
  }
  return ::testing::AssertionSuccess();
}

std::vector<const Strategy*> planners() {
  std::vector<const Strategy*> out;
  for (const Strategy& s : plan::strategies())
    if (s.plan != nullptr) out.push_back(&s);
  return out;
}

class EveryPlanner : public ::testing::TestWithParam<const Strategy*> {};

TEST_P(EveryPlanner, RandomMatricesValidate) {
  const Strategy& s = *GetParam();
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    Generator gen(seed);
    const CommMatrix m = gen.random_matrix();
    Options opts;
    opts.seed = seed * 7919;
    const Plan p = s.plan(m, opts);
    ASSERT_TRUE(well_formed(s, p, m)) << "matrix seed " << seed << ", n " << m.size();
    if (s.id == "color") {
      ASSERT_EQ(p.phases.size(), m.max_degree()) << "matrix seed " << seed;
    }
  }
}

TEST_P(EveryPlanner, Deterministic) {
  const Strategy& s = *GetParam();
  for (std::uint64_t seed = 5000; seed < 5050; ++seed) {
    Generator gen(seed);
    const CommMatrix m = gen.random_matrix();
    const CommMatrix copy = m;  // a fresh column cache must not change anything
    const Plan a = s.plan(m, Options{});
    const Plan b = s.plan(copy, Options{});
    ASSERT_EQ(a.strategy, b.strategy);
    ASSERT_EQ(a.n, b.n);
    ASSERT_EQ(a.permutation, b.permutation);
    ASSERT_EQ(a.barrier_between_phases, b.barrier_between_phases);
    ASSERT_TRUE(a.phases == b.phases) << "matrix seed " << seed;
  }
}

TEST_P(EveryPlanner, EdgeCases) {
  const Strategy& s = *GetParam();
  const Options opts;
  auto check = [&](const CommMatrix& m, const char* what) {
    const Plan p = s.plan(m, opts);
    EXPECT_EQ(p.n, m.size()) << what;
    EXPECT_TRUE(well_formed(s, p, m)) << what;
    return p;
  };
  EXPECT_TRUE(check(CommMatrix(0), "n = 0").phases.empty());
  EXPECT_TRUE(check(CommMatrix(1), "n = 1, empty").phases.empty());
  EXPECT_TRUE(check(CommMatrix(9), "n = 9, empty").phases.empty());

  CommMatrix one(1);
  one.set_row(0, {{0, 100}});
  EXPECT_EQ(check(one, "n = 1, self message").phases.size(), 1u);

  CommMatrix self(9);
  for (Rank i = 0; i < 9; ++i) self.set_row(i, {{i, Bytes(1 + 1000 * i)}});
  const Plan p = check(self, "only self messages");
  const std::size_t self_phases = s.id == "lex" ? 9 : 1;  // lex: one step per destination
  EXPECT_EQ(p.phases.size(), self_phases);

  CommMatrix single(5);  // one message, no self
  single.set_row(3, {{1, 7}});
  if (kIndirect.count(s.id) == 0) {  // a routed message takes one phase per hop
    EXPECT_EQ(check(single, "a single message").phases.size(), 1u);
  } else {
    EXPECT_GE(check(single, "a single message").phases.size(), 1u);
  }

  // Complete exchange, power of two and not: the pairwise schedules take n phases.
  for (Rank n : {8, 13}) {
    CommMatrix full(n);
    for (Rank i = 0; i < n; ++i) {
      std::vector<core::Entry> row;
      for (Rank j = 0; j < n; ++j) row.push_back({j, 64});
      full.set_row(i, std::move(row));
    }
    const Plan f = check(full, "complete exchange");
    if (s.permutation) {
      EXPECT_GE(f.phases.size(), static_cast<std::size_t>(n));
    }
    const bool exact = s.id == "color" || s.id == "lp_shift" ||
                       (n == 8 && (s.id == "lp_xor" || s.id == "pex" || s.id == "bex"));
    if (exact) {
      EXPECT_EQ(f.phases.size(), static_cast<std::size_t>(n)) << "n = " << n;
    }
  }
}

TEST_P(EveryPlanner, LargerSparseMatrix) {
  const Strategy& s = *GetParam();
  Generator gen(42);
  const Rank n = 512;
  CommMatrix m(n);
  for (Rank i = 0; i < n; ++i) {
    std::set<Rank> peers;
    while (peers.size() < 16) peers.insert(static_cast<Rank>(gen.below(n)));
    std::vector<core::Entry> row;
    for (Rank j : peers) row.push_back({j, (1 + gen.below(32)) * 1024});
    m.set_row(i, std::move(row));
  }
  const Plan p = s.plan(m, Options{});
  ASSERT_TRUE(well_formed(s, p, m));
  if (s.id == "color") {
    EXPECT_EQ(p.phases.size(), m.max_degree());
  }
}

std::string planner_name(const ::testing::TestParamInfo<const Strategy*>& param) {
  return std::string(param.param->id);
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryPlanner, ::testing::ValuesIn(planners()), planner_name);

TEST(Registry, NativeFirstThenPlannersInOrder) {
  const auto all = plan::strategies();
  ASSERT_GE(all.size(), 12u);
  EXPECT_EQ(all[0].id, "native");
  EXPECT_EQ(all[0].plan, nullptr);
  EXPECT_EQ(all[0].description, "the MPI library's own MPI_Alltoallv");
  std::set<std::string_view> ids;
  for (const Strategy& s : all) {
    EXPECT_TRUE(ids.insert(s.id).second) << "duplicate id " << s.id;
    EXPECT_FALSE(s.description.empty()) << s.id;
    EXPECT_FALSE(s.reference.empty()) << s.id;
    if (s.id != "native" && !s.on_request) {
      EXPECT_NE(s.plan, nullptr) << s.id;
    }
    EXPECT_EQ(plan::find_strategy(s.id), &s);
  }
  EXPECT_EQ(plan::find_strategy("nope"), nullptr);
  EXPECT_EQ(plan::strategy_id_list(),
            "native, ac, lex, lp_xor, lp_shift, pex, bex, greedy, rs_n, rs_n_sort, rs_nh, color, maxmin, maxsum, unif, bvn, "
            "two_stage, mesh2d, mesh2d_pure, grid3d, grid3d_pure, hypercube, hypercube_pure, "
            "two_level, node_aware, node_aware_multi, drs, native_sync");
}

TEST(Registry, BarrierOptionReachesLinearPermutations) {
  Options opts;
  opts.barrier_between_phases = true;
  CommMatrix m(4);
  m.set_row(0, {{1, 10}, {2, 10}});
  for (const char* id : {"lp_xor", "lp_shift"})
    EXPECT_TRUE(plan::find_strategy(id)->plan(m, opts).barrier_between_phases) << id;
  EXPECT_FALSE(plan::find_strategy("lp_xor")->plan(m, Options{}).barrier_between_phases);
}

TEST(Schedules, PaperStepStructure) {
  // 8 ranks, complete exchange without self messages: pex step j pairs i with i XOR j (002
  // Table 2); bex pairs virtual ranks (002 Fig. 4); lp_shift step k sends i -> i + k.
  CommMatrix full(8);
  for (Rank i = 0; i < 8; ++i) {
    std::vector<core::Entry> row;
    for (Rank j = 0; j < 8; ++j)
      if (j != i) row.push_back({j, 1});
    full.set_row(i, std::move(row));
  }
  const Plan pex = plan::find_strategy("pex")->plan(full, Options{});
  const Plan bex = plan::find_strategy("bex")->plan(full, Options{});
  const Plan shift = plan::find_strategy("lp_shift")->plan(full, Options{});
  ASSERT_EQ(pex.phases.size(), 7u);
  ASSERT_EQ(bex.phases.size(), 7u);
  ASSERT_EQ(shift.phases.size(), 7u);
  for (Rank j = 1; j < 8; ++j) {
    for (const core::Transfer& t : pex.phases[static_cast<std::size_t>(j - 1)].transfers)
      EXPECT_EQ(t.to, t.from ^ j);
    for (const core::Transfer& t : bex.phases[static_cast<std::size_t>(j - 1)].transfers) {
      const Rank node = (((t.from + 1) % 8) ^ j) - 1;
      EXPECT_EQ(t.to, node == -1 ? 7 : node);
    }
    for (const core::Transfer& t : shift.phases[static_cast<std::size_t>(j - 1)].transfers)
      EXPECT_EQ(t.to, (t.from + j) % 8);
  }
  // pex runs the self message last, lp_xor first.
  CommMatrix m(4);
  m.set_row(0, {{0, 5}, {1, 5}});
  EXPECT_EQ(plan::find_strategy("pex")->plan(m, Options{}).phases.back().transfers[0].to, 0);
  EXPECT_EQ(plan::find_strategy("lp_xor")->plan(m, Options{}).phases.front().transfers[0].to, 0);
}

TEST(Schedules, RandomisedPlannersFollowTheSeed) {
  Generator gen(77);
  const CommMatrix m = gen.matrix(48, 0.5, Generator::Shape::log_uniform);
  for (const char* id : {"rs_n", "rs_n_sort", "rs_nh"}) {
    Options a, b;
    a.seed = 1;
    b.seed = 2;
    const auto* s = plan::find_strategy(id);
    EXPECT_FALSE(s->plan(m, a).phases == s->plan(m, b).phases) << id;
  }
}

// Pieces of one message, in plan order: offsets must increase and tile the message.
std::map<std::pair<Rank, Rank>, std::vector<core::Piece>> pieces_by_message(const Plan& p) {
  std::map<std::pair<Rank, Rank>, std::vector<core::Piece>> out;
  for (const core::Phase& ph : p.phases)
    for (const core::Transfer& t : ph.transfers)
      for (const core::Piece& piece : t.pieces)
        out[{piece.orig_src, piece.orig_dst}].push_back(piece);
  return out;
}

struct RuleCase {
  plan::LambdaRule rule;
  const char* name;
  bool must_split;
  bool may_split;
};

TEST(RsNh, EveryLambdaRule) {
  const RuleCase cases[] = {{plan::LambdaRule::fixed, "fixed", true, true},
                            {plan::LambdaRule::incremental, "incremental", true, true},
                            {plan::LambdaRule::proportional, "proportional", false, true},
                            {plan::LambdaRule::one, "one", false, false}};
  const Strategy& s = *plan::find_strategy("rs_nh");
  for (const RuleCase& c : cases) {
    std::size_t split_messages = 0;
    for (std::uint64_t seed = 1; seed <= 150; ++seed) {
      Generator gen(seed * 31 + 3);
      const auto n = static_cast<Rank>(8 + gen.below(57));
      const auto shape = seed % 2 ? Generator::Shape::heavy : Generator::Shape::log_uniform;
      const CommMatrix m = gen.matrix(n, 0.2 + 0.8 * gen.unit(), shape);
      Options opts;
      opts.lambda_rule = c.rule;
      opts.seed = seed;
      const Plan p = s.plan(m, opts);
      ASSERT_TRUE(well_formed(s, p, m)) << c.name << ", seed " << seed;
      for (const auto& [msg, pieces] : pieces_by_message(p)) {
        Bytes next = 0;
        for (const core::Piece& piece : pieces) {
          ASSERT_EQ(piece.offset, next) << c.name << ", seed " << seed << ": out of order";
          next += piece.length;
        }
        if (pieces.size() > 1) ++split_messages;
      }
    }
    if (c.must_split) {
      EXPECT_GT(split_messages, 0u) << c.name;
    }
    if (!c.may_split) {
      EXPECT_EQ(split_messages, 0u) << c.name;
    }
  }
}

TEST(RsNh, FixedLambdaExtremesAndFreeBandwidth) {
  const Strategy& s = *plan::find_strategy("rs_nh");
  for (double lambda : {0.0, 0.25, 0.5, 1.0, 2.0}) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      Generator gen(seed + 900);
      const CommMatrix m = gen.matrix(static_cast<Rank>(2 + gen.below(40)), gen.unit(),
                                      Generator::Shape::heavy);
      Options opts;
      opts.lambda_rule = plan::LambdaRule::fixed;
      opts.lambda_fixed = lambda;
      ASSERT_TRUE(well_formed(s, s.plan(m, opts), m)) << "λ " << lambda << ", seed " << seed;
    }
  }
  Generator gen(5);
  const CommMatrix m = gen.matrix(32, 0.6, Generator::Shape::heavy);
  Options free_bw;
  free_bw.beta_s_per_byte = 0.0;  // τ/φ infinite: incremental λ must settle on 1, no splitting
  const Plan p = s.plan(m, free_bw);
  ASSERT_TRUE(well_formed(s, p, m));
  EXPECT_EQ(p.transfer_count(), m.nonzeros());
}

TEST(RsNh, SplittingShortensTheLargestPhase) {
  // One huge message per row next to small ones: capped phases keep the big ones moving
  // alongside the small ones, so the sum of per-phase maxima shrinks against λ = 1.
  const Strategy& s = *plan::find_strategy("rs_nh");
  Generator gen(11);
  const CommMatrix m = gen.matrix(64, 0.5, Generator::Shape::heavy);
  auto critical = [](const Plan& p) {
    Bytes sum = 0;
    for (const core::Phase& ph : p.phases) {
      Bytes most = 0;
      for (const core::Transfer& t : ph.transfers) most = std::max(most, t.bytes());
      sum += most;
    }
    return sum;
  };
  Options split, whole;
  split.lambda_rule = plan::LambdaRule::fixed;
  whole.lambda_rule = plan::LambdaRule::one;
  const Plan a = s.plan(m, split), b = s.plan(m, whole);
  ASSERT_TRUE(well_formed(s, a, m));
  ASSERT_TRUE(well_formed(s, b, m));
  EXPECT_GT(a.transfer_count(), b.transfer_count());
  EXPECT_LE(critical(a), critical(b));
}

TEST(Color, LargeMessagesShareTheFirstPhases) {
  // Every rank sends one 1 MiB message (a permutation) and 7 small ones: the 1 MiB messages
  // form one colour class, which comes first.
  const Rank n = 16;
  CommMatrix m(n);
  for (Rank i = 0; i < n; ++i) {
    std::vector<core::Entry> row;
    for (Rank k = 0; k < 8; ++k) row.push_back({(i + k) % n, k == 3 ? kMiB : Bytes{100}});
    m.set_row(i, std::move(row));
  }
  const Plan p = plan::find_strategy("color")->plan(m, Options{});
  ASSERT_TRUE(core::validate(p, m).ok);
  ASSERT_EQ(p.phases.size(), 8u);
  ASSERT_EQ(p.phases[0].transfers.size(), static_cast<std::size_t>(n));
  for (const core::Transfer& t : p.phases[0].transfers) EXPECT_EQ(t.bytes(), kMiB);
}

}  // namespace
}  // namespace commsched
