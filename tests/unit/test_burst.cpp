// Burst signatures, the repeat counter and the release order, without MPI.
#include <gtest/gtest.h>

#include <random>

#include "burst/burst.hpp"

using namespace commsched::burst;

namespace {

Post send_to(int peer, int tag, std::uint64_t bytes, int me = 0, int n = 8, std::uint32_t comm = 1) {
  return Post{Kind::send, comm, peer, tag, bytes, ((peer - me) % n + n) % n};
}
Post recv_from(int peer, int tag, std::uint64_t bytes, int me = 0, int n = 8) {
  return Post{Kind::recv, 1, peer, tag, bytes, ((peer - me) % n + n) % n};
}

}  // namespace

TEST(BurstSignature, HashSeparatesEveryField) {
  const Signature base{recv_from(1, 7, 64), send_to(2, 7, 64)};
  const std::uint64_t h = signature_hash(base);
  EXPECT_EQ(h, signature_hash(Signature(base)));
  auto changed = [&](auto edit) {
    Signature s = base;
    edit(s);
    return signature_hash(s);
  };
  EXPECT_NE(h, changed([](Signature& s) { s[1].peer = 3; }));
  EXPECT_NE(h, changed([](Signature& s) { s[1].tag = 8; }));
  EXPECT_NE(h, changed([](Signature& s) { s[1].bytes = 65; }));
  EXPECT_NE(h, changed([](Signature& s) { s[1].comm = 2; }));
  EXPECT_NE(h, changed([](Signature& s) { s[0].kind = Kind::send; }));
  EXPECT_NE(h, changed([](Signature& s) { std::swap(s[0], s[1]); }));  // order matters
  EXPECT_NE(h, changed([](Signature& s) { s.push_back(s.back()); }));
}

TEST(BurstLearner, SubstitutesOnlyAfterConsecutiveRepeats) {
  Learner l(3);
  const Signature a{recv_from(1, 0, 8), send_to(1, 0, 8)};
  const Signature b{recv_from(2, 0, 8), send_to(2, 0, 8)};
  EXPECT_EQ(l.expected(), nullptr);
  l.finish(a, true);
  l.finish(a, true);
  EXPECT_EQ(l.expected(), nullptr);
  l.finish(a, true);
  ASSERT_NE(l.expected(), nullptr);
  EXPECT_EQ(*l.expected(), a);
  // A different burst: nothing stale stays expected; it must repeat from scratch.
  l.finish(b, true);
  EXPECT_EQ(l.expected(), nullptr);
  l.finish(b, true);
  l.finish(b, true);
  ASSERT_NE(l.expected(), nullptr);
  EXPECT_EQ(*l.expected(), b);
  // A burst with a wildcard or a cancel (not clean) resets, even when its posts are the same.
  l.finish(b, false);
  EXPECT_EQ(l.expected(), nullptr);
  EXPECT_EQ(l.repeats(), 0);
}

TEST(BurstLearner, EmptyBurstsNeverLearn) {
  Learner l(1);
  l.finish({}, true);
  EXPECT_EQ(l.expected(), nullptr);
}

TEST(BurstOrder, ShiftOrderByRingDistance) {
  // Rank 5 of 8 posts to 4, 6, 0 in that order: released to 6 (distance 1), 0 (3), 4 (7).
  const Signature s{send_to(4, 0, 8, 5), send_to(6, 0, 8, 5), send_to(0, 0, 8, 5)};
  EXPECT_EQ(release_order(s), (std::vector<std::size_t>{1, 2, 0}));
}

TEST(BurstOrder, DenseExchangeHasNoSharedReceiverPerStep) {
  // Every rank posts to every other rank in rank order (the usual loop); released in shift
  // order, step k of every rank targets a different receiver.
  const int n = 9;
  std::vector<std::vector<int>> targets(n);
  for (int me = 0; me < n; ++me) {
    Signature s;
    for (int p = 0; p < n; ++p)
      if (p != me) s.push_back(send_to(p, 0, 100, me, n));
    for (std::size_t i : release_order(s)) targets[me].push_back(s[i].peer);
  }
  for (int step = 0; step < n - 1; ++step) {
    std::vector<int> hits(n, 0);
    for (int me = 0; me < n; ++me) ++hits[targets[me][step]];
    for (int r = 0; r < n; ++r) EXPECT_LE(hits[r], 1) << "step " << step << " receiver " << r;
  }
}

TEST(BurstOrder, RandomBurstsKeepPerPeerTagOrder) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 12);
    const int me = static_cast<int>(rng() % n);
    Signature s;
    const int posts = static_cast<int>(rng() % 40);
    for (int i = 0; i < posts; ++i) {
      Post p = send_to(static_cast<int>(rng() % n), static_cast<int>(rng() % 3), rng() % 100, me, n,
                       1 + static_cast<std::uint32_t>(rng() % 2));
      s.push_back(p);
    }
    const auto order = release_order(s);
    ASSERT_TRUE(keeps_matching_order(s, order)) << "trial " << trial;
    // Same (communicator, peer) keeps its relative order too, whatever the tags.
    for (std::size_t a = 0; a < order.size(); ++a)
      for (std::size_t b = a + 1; b < order.size(); ++b)
        if (s[order[a]].peer == s[order[b]].peer && s[order[a]].comm == s[order[b]].comm) {
          ASSERT_LT(order[a], order[b]);
        }
  }
}

TEST(BurstOrder, CheckerRejectsOvertaking) {
  const Signature s{send_to(1, 5, 8), send_to(1, 5, 16)};
  const std::vector<std::size_t> swapped{1, 0};
  EXPECT_FALSE(keeps_matching_order(s, swapped));
  const std::vector<std::size_t> same{0, 1};
  EXPECT_TRUE(keeps_matching_order(s, same));
  const std::vector<std::size_t> dup{0, 0};
  EXPECT_FALSE(keeps_matching_order(s, dup));
}

TEST(BurstHold, OnlyWhereShiftOrderChangesSendsToThreePeers) {
  // Rank 0 of 8: shift order is 1, 2, 3, ...
  EXPECT_FALSE(hold_can_help(Signature{send_to(3, 0, 64), send_to(3, 0, 64), send_to(3, 1, 64)}))
      << "one peer: nothing to reorder";
  EXPECT_FALSE(hold_can_help(Signature{send_to(2, 0, 64), send_to(1, 0, 64)}))
      << "two peers: a swap cannot spread receivers";
  EXPECT_FALSE(hold_can_help(Signature{send_to(1, 0, 8), send_to(2, 0, 8), send_to(3, 0, 8)}))
      << "already in shift order";
  EXPECT_TRUE(hold_can_help(Signature{send_to(3, 0, 8), send_to(2, 0, 8), send_to(1, 0, 8)}));
  // Receives neither count as peers nor change the order.
  EXPECT_FALSE(hold_can_help(Signature{recv_from(3, 0, 8), recv_from(2, 0, 8), send_to(1, 0, 8),
                                       send_to(2, 0, 8)}));
  EXPECT_TRUE(hold_can_help(Signature{recv_from(1, 0, 8), send_to(4, 0, 8), recv_from(2, 0, 8),
                                      send_to(1, 0, 8), send_to(6, 0, 8)}));
  // One peer on two communicators is two destinations.
  EXPECT_TRUE(hold_can_help(Signature{send_to(2, 0, 8, 0, 8, 1), send_to(2, 0, 8, 0, 8, 2),
                                      send_to(1, 0, 8, 0, 8, 1)}));
  EXPECT_FALSE(hold_can_help(Signature{}));
}
