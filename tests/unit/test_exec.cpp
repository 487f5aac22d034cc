// The executor on the in-process transport: random plans (direct, split, and forwarded through
// intermediates) run for n ranks in one process, and every destination byte is checked.
#include <gtest/gtest.h>

#include <random>

#include "core/plan.hpp"
#include "exec/inprocess.hpp"
#include "exec/program.hpp"

namespace cs = commsched;
using cs::Bytes;
using cs::Rank;

namespace {

cs::core::CommMatrix random_matrix(std::mt19937_64& rng, Rank n) {
  std::uniform_real_distribution<double> u(0, 1);
  const double density = u(rng);
  const Bytes max_size = Bytes{1} << std::uniform_int_distribution<int>(0, 16)(rng);
  std::vector<Bytes> dense(static_cast<std::size_t>(n * n));
  for (auto& b : dense)
    if (u(rng) < density) b = std::uniform_int_distribution<Bytes>(1, max_size)(rng);
  return cs::core::CommMatrix::from_dense(n, dense);
}

// Splits every message into 1-3 pieces; each piece travels over 0-2 random intermediates,
// one hop per phase, starting at a random phase.
cs::core::Plan random_plan(std::mt19937_64& rng, const cs::core::CommMatrix& m) {
  cs::core::Plan plan;
  plan.strategy = "random";
  plan.n = m.size();
  auto ensure = [&](std::size_t k) {
    if (plan.phases.size() <= k) plan.phases.resize(k + 1);
    return &plan.phases[k];
  };
  for (Rank i = 0; i < m.size(); ++i)
    for (const auto& e : m.row(i)) {
      const int pieces = std::uniform_int_distribution<int>(1, 3)(rng);
      Bytes off = 0;
      for (int k = 0; k < pieces && off < e.bytes; ++k) {
        const Bytes len = (k + 1 == pieces) ? e.bytes - off
                                            : std::uniform_int_distribution<Bytes>(1, e.bytes - off)(rng);
        const cs::core::Piece piece{i, e.peer, off, len};
        off += len;
        std::size_t phase = std::uniform_int_distribution<std::size_t>(0, 3)(rng);
        Rank at = i;
        const int hops = std::uniform_int_distribution<int>(0, 2)(rng);
        for (int h = 0; h < hops; ++h) {
          const Rank via = std::uniform_int_distribution<Rank>(0, m.size() - 1)(rng);
          if (via == e.peer) continue;  // reaching the destination delivers, it cannot forward
          cs::core::add_piece(*ensure(phase), at, via, piece);
          at = via;
          ++phase;
        }
        cs::core::add_piece(*ensure(phase), at, e.peer, piece);
      }
    }
  return plan;
}

}  // namespace

TEST(Executor, RandomPlansDeliverEveryByte) {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 400; ++trial) {
    const Rank n = std::uniform_int_distribution<Rank>(1, 12)(rng);
    const auto m = random_matrix(rng, n);
    const auto plan = random_plan(rng, m);
    const auto v = cs::core::validate(plan, m);
    ASSERT_TRUE(v.ok) << "trial " << trial << ": " << v.error;
    std::vector<cs::exec::RankProgram> progs;
    for (Rank r = 0; r < n; ++r) progs.push_back(cs::exec::compile(plan, m, r));
    cs::exec::InProcessWorld world(m, static_cast<std::uint64_t>(trial));
    std::string err;
    ASSERT_TRUE(world.run(progs, err)) << "trial " << trial << ": " << err;
    ASSERT_TRUE(world.delivered_exactly(err)) << "trial " << trial << ": " << err;
  }
}

TEST(Executor, StagingOnlyForForwardedBytes) {
  // 0 -> 2 through 1: rank 1 stages the 10 bytes, the others stage nothing.
  const auto m = cs::core::CommMatrix::from_dense(3, std::vector<Bytes>{0, 0, 10, 0, 0, 0, 0, 0, 0});
  cs::core::Plan plan{"via1", 3, {}, false, false};
  plan.phases.resize(2);
  cs::core::add_piece(plan.phases[0], 0, 1, {0, 2, 0, 10});
  cs::core::add_piece(plan.phases[1], 1, 2, {0, 2, 0, 10});
  ASSERT_TRUE(cs::core::validate(plan, m).ok);
  EXPECT_EQ(cs::exec::compile(plan, m, 0).staging_bytes, 0u);
  EXPECT_EQ(cs::exec::compile(plan, m, 1).staging_bytes, 10u);
  EXPECT_EQ(cs::exec::compile(plan, m, 2).staging_bytes, 0u);
  const auto p0 = cs::exec::compile(plan, m, 0);
  ASSERT_EQ(p0.steps[0].sends.size(), 1u);
  EXPECT_TRUE(p0.steps[0].sends[0].segments[0].whole);
}

// A rank posts its sends of a step around the ring from the rank after itself, whatever order
// the plan lists them in: were every rank to start with rank 0, all would reach it at once.
TEST(Executor, SendsGoAroundTheRingFromTheNextRank) {
  std::vector<Bytes> dense(25, 4);
  for (Rank i = 0; i < 5; ++i) dense[static_cast<std::size_t>(i * 5 + i)] = 0;
  const auto m = cs::core::CommMatrix::from_dense(5, dense);
  const cs::core::Plan plan = cs::core::one_phase_plan(m, "ac");  // rows in rank order
  for (Rank r = 0; r < 5; ++r) {
    const auto prog = cs::exec::compile(plan, m, r);
    ASSERT_EQ(prog.steps.size(), 1u);
    std::vector<Rank> peers;
    for (const auto& op : prog.steps[0].sends) peers.push_back(op.peer);
    std::vector<Rank> expected;
    for (Rank k = 1; k < 5; ++k) expected.push_back((r + k) % 5);
    EXPECT_EQ(peers, expected) << "rank " << r;
  }
}

TEST(Executor, SplitMessagesAreMarkedPartial) {
  const auto m = cs::core::CommMatrix::from_dense(2, std::vector<Bytes>{0, 8, 0, 0});
  cs::core::Plan plan{"split", 2, {}, false, true};
  plan.phases.resize(2);
  cs::core::add_piece(plan.phases[0], 0, 1, {0, 1, 0, 3});
  cs::core::add_piece(plan.phases[1], 0, 1, {0, 1, 3, 5});
  ASSERT_TRUE(cs::core::validate(plan, m).ok);
  const auto p0 = cs::exec::compile(plan, m, 0);
  const auto p1 = cs::exec::compile(plan, m, 1);
  EXPECT_TRUE(p0.reads_send_bytes);
  EXPECT_TRUE(p1.writes_recv_bytes);
  cs::exec::InProcessWorld world(m, 7);
  std::string err;
  std::vector<cs::exec::RankProgram> progs{p0, p1};
  ASSERT_TRUE(world.run(progs, err)) << err;
  EXPECT_TRUE(world.delivered_exactly(err)) << err;
}

TEST(Executor, WholeMessagesKeepTheirDatatypeOnlyInTheirOwnOp) {
  // 0 -> 1 whole and alone: the user's datatype can be used. 0 -> 0 (a local copy) and two
  // messages combined in one transfer through 2 need raw bytes.
  const auto m = cs::core::CommMatrix::from_dense(3, std::vector<Bytes>{4, 4, 0, 0, 0, 0, 0, 0, 0});
  cs::core::Plan direct{"d", 3, {}, false, false};
  direct.phases.resize(1);
  cs::core::add_piece(direct.phases[0], 0, 1, {0, 1, 0, 4});
  cs::core::add_piece(direct.phases[0], 0, 0, {0, 0, 0, 4});
  ASSERT_TRUE(cs::core::validate(direct, m).ok);
  EXPECT_TRUE(cs::exec::compile(direct, m, 0).reads_send_bytes);  // the local copy
  EXPECT_FALSE(cs::exec::compile(direct, m, 1).writes_recv_bytes);
  const auto m2 = cs::core::CommMatrix::from_dense(3, std::vector<Bytes>{0, 4, 4, 0, 0, 0, 0, 0, 0});
  cs::core::Plan via{"v", 3, {}, false, false};
  via.phases.resize(2);
  cs::core::add_piece(via.phases[0], 0, 2, {0, 1, 0, 4});
  cs::core::add_piece(via.phases[0], 0, 2, {0, 2, 0, 4});
  cs::core::add_piece(via.phases[1], 2, 1, {0, 1, 0, 4});
  ASSERT_TRUE(cs::core::validate(via, m2).ok);
  EXPECT_TRUE(cs::exec::compile(via, m2, 0).reads_send_bytes);    // two messages in one op
  EXPECT_TRUE(cs::exec::compile(via, m2, 2).writes_recv_bytes);   // 0->2 arrives with 0->1
  EXPECT_FALSE(cs::exec::compile(via, m2, 1).writes_recv_bytes);  // 0->1 arrives alone
}

TEST(Executor, BrokenProgramIsCaught) {
  // A receive nobody sends must be reported, not silently skipped.
  const auto m = cs::core::CommMatrix::from_dense(2, std::vector<Bytes>{0, 4, 0, 0});
  cs::core::Plan plan{"x", 2, {}, false, false};
  plan.phases.resize(1);
  cs::core::add_piece(plan.phases[0], 0, 1, {0, 1, 0, 4});
  std::vector<cs::exec::RankProgram> progs{cs::exec::compile(plan, m, 0),
                                           cs::exec::compile(plan, m, 1)};
  progs[0].steps[0].sends.clear();
  cs::exec::InProcessWorld world(m, 1);
  std::string err;
  EXPECT_FALSE(world.run(progs, err));
  EXPECT_NE(err.find("nothing sent"), std::string::npos) << err;
}
