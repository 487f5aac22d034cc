// Level collective's agreement without MPI: the vote's fingerprints (equality, alignment,
// content), the verdict, the cycle learner, call classes and the packed exchange layout. Each
// test sums the shares "ranks" would contribute, as the MPI_SUM reduction does.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "burst/agree.hpp"

using namespace commsched::burst;

namespace {

Post post(Kind k, int peer, int tag, std::uint64_t bytes) {
  return Post{k, 1, peer, tag, bytes, 0};
}

// A random consistent exchange among n ranks: each rank's burst (receives and sends in a
// shuffled order), every send matched by a receive of the same size.
std::vector<Signature> random_exchange(int n, std::mt19937_64& rng) {
  std::vector<Signature> b(static_cast<std::size_t>(n));
  for (int src = 0; src < n; ++src)
    for (int dst = 0; dst < n; ++dst) {
      const int msgs = static_cast<int>(rng() % 3);
      for (int k = 0; k < msgs; ++k) {
        const int tag = static_cast<int>(rng() % 2);
        const std::uint64_t bytes = rng() % 100;
        b[static_cast<std::size_t>(src)].push_back(post(Kind::send, dst, tag, bytes));
        b[static_cast<std::size_t>(dst)].push_back(post(Kind::recv, src, tag, bytes));
      }
    }
  // Reorder within a rank but keep each (kind, peer, tag) sequence in order (MPI's matching).
  for (auto& s : b) {
    std::vector<std::uint64_t> r(s.size());
    for (auto& x : r) x = rng();
    std::map<std::tuple<Kind, int, int>, std::uint64_t> first;
    for (std::size_t i = 0; i < s.size(); ++i) {
      auto [it, fresh] = first.emplace(std::make_tuple(s[i].kind, s[i].peer, s[i].tag), r[i]);
      r[i] = it->second + i;  // same key: increasing, so order inside the key is kept
    }
    std::vector<std::size_t> idx(s.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t c) { return r[a] < r[c]; });
    Signature out;
    for (std::size_t i : idx) out.push_back(s[i]);
    s = out;
  }
  return b;
}

std::uint64_t content_total(const std::vector<Signature>& b) {
  std::uint64_t sum = 0;
  for (std::size_t r = 0; r < b.size(); ++r) sum += content_share(b[r], static_cast<int>(r));
  return sum;
}

}  // namespace

TEST(BurstAgree, EqualShareSumsToZeroOnlyWhenAllRanksAgree) {
  for (int n : {1, 2, 3, 7, 64}) {
    std::uint64_t same = 0;
    for (int r = 0; r < n; ++r) same += equal_share(12345, r, n);
    EXPECT_EQ(same, 0u) << n;
    if (n < 2) continue;
    for (int odd = 0; odd < n; ++odd) {
      std::uint64_t sum = 0;
      for (int r = 0; r < n; ++r) sum += equal_share(r == odd ? 12346 : 12345, r, n);
      EXPECT_NE(sum, 0u) << n << " " << odd;
    }
  }
}

TEST(BurstAgree, ContentOfConsistentExchangesIsZeroAndAnyChangeIsCaught) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 9);
    auto b = random_exchange(n, rng);
    EXPECT_EQ(content_total(b), 0u);
    // One receive of another size, tag or source; one extra send; one missing receive.
    for (int edit = 0; edit < 4; ++edit) {
      auto c = b;
      std::vector<std::pair<std::size_t, std::size_t>> recvs;
      for (std::size_t r = 0; r < c.size(); ++r)
        for (std::size_t i = 0; i < c[r].size(); ++i)
          if (c[r][i].kind == Kind::recv) recvs.emplace_back(r, i);
      if (recvs.empty()) continue;
      auto [r, i] = recvs[rng() % recvs.size()];
      switch (edit) {
        case 0: c[r][i].bytes += 1; break;
        case 1: c[r][i].tag += 5; break;
        case 2: c[r][i].peer = (c[r][i].peer + 1) % n == c[r][i].peer ? n : (c[r][i].peer + 1) % n; break;
        case 3: c[r].erase(c[r].begin() + static_cast<std::ptrdiff_t>(i)); break;
      }
      EXPECT_NE(content_total(c), 0u) << "trial " << trial << " edit " << edit;
    }
  }
}

TEST(BurstAgree, MatchKeysBalanceWhenEveryMessageHasItsReceive) {
  // Running sums as p2p.cpp keeps them: + on a send post, - on a receive post.
  std::mt19937_64 rng(5);
  const int n = 5;
  auto b = random_exchange(n, rng);
  std::vector<std::uint64_t> align(n, 0);
  for (int r = 0; r < n; ++r)
    for (const Post& p : b[static_cast<std::size_t>(r)])
      align[static_cast<std::size_t>(r)] += p.kind == Kind::send ? match_key(r, p.peer, p.tag)
                                                                  : 0 - match_key(p.peer, r, p.tag);
  std::uint64_t sum = 0;
  for (auto a : align) sum += a;
  EXPECT_EQ(sum, 0u);
  // One message in flight (a send whose receive is not posted yet): caught.
  align[0] += match_key(0, 3, 9);
  sum = 0;
  for (auto a : align) sum += a;
  EXPECT_NE(sum, 0u);
}

TEST(BurstAgree, Verdict) {
  Vote v{};
  v[yes] = 4;
  EXPECT_EQ(verdict(v, 4), Verdict::go);
  EXPECT_EQ(verdict(v, 5), Verdict::native);  // a rank voted no: native, vote again
  v[content] = 1;
  EXPECT_EQ(verdict(v, 4), Verdict::quit);   // all promised, but inconsistent: structural
  v[content] = 0;
  v[aligned] = 7;
  EXPECT_EQ(verdict(v, 4), Verdict::quit);
  v[aligned] = 0;
  v[same] = 3;
  EXPECT_EQ(verdict(v, 4), Verdict::quit);
  v[same] = 0;
  v[quit] = 1;
  EXPECT_EQ(verdict(v, 4), Verdict::quit);
  v[yes] = 0;
  EXPECT_EQ(verdict(v, 4), Verdict::quit);
}

TEST(BurstAgree, CycleLearnerNeedsRepeatsAndResets) {
  CycleLearner c(2);
  const std::vector<std::uint64_t> a{1, 2}, b{1, 3};
  EXPECT_EQ(c.expected(), nullptr);
  c.finish(a);
  EXPECT_EQ(c.expected(), nullptr);
  c.finish(a);
  ASSERT_NE(c.expected(), nullptr);
  EXPECT_EQ(*c.expected(), a);
  const std::uint64_t ha = c.hash();
  c.finish(b);
  EXPECT_EQ(c.expected(), nullptr);
  c.finish(b);
  EXPECT_NE(c.hash(), ha);
  c.reset();
  EXPECT_EQ(c.expected(), nullptr);
  CycleLearner empty(1);
  empty.finish({});
  ASSERT_NE(empty.expected(), nullptr);  // no calls between bursts is a cycle too
  EXPECT_TRUE(empty.expected()->empty());
}

TEST(BurstAgree, CallClassesAcrossSpellings) {
  for (const char* n : {"Allreduce", "MPI_Allreduce", "pmpi_allreduce_", "pmpi_allreduce__",
                        "mpi_allreduce_f08_", "MPI_ALLREDUCE", "mpi_allreduce_f08ts_",
                        "Allreduce_c"}) {
    EXPECT_TRUE(classify_call(n).in_cycle) << n;
    EXPECT_EQ(classify_call(n).id, classify_call("allreduce").id) << n;
  }
  EXPECT_NE(classify_call("Reduce").id, classify_call("Allreduce").id);
  for (const char* n : {"Send", "Recv", "Sendrecv", "Probe", "Iprobe", "p2p:wait", "startall",
                        "cancel", "request_free", "pmpi_recv_", "Isend_c", "Isendrecv",
                        "Win_wait", "Win_lock", "Comm_accept", "File_open",
                        "mpi_file_write_at_all_", "File_read_all_c", "File_close"})
    EXPECT_FALSE(classify_call(n).in_cycle) << n;
  for (const char* n : {"Barrier", "Bcast", "Alltoallv", "Comm_free", "Win_fence", "Gatherv",
                        "Comm_dup", "Comm_split", "mpi_comm_split_type_", "Cart_create",
                        "Dist_graph_create_adjacent", "Intercomm_merge", "Neighbor_allgather",
                        "mpi_neighbor_alltoallw_", "Alltoallv_c", "Neighbor_alltoallw_c"})
    EXPECT_TRUE(classify_call(n).in_cycle) << n;
}

TEST(BurstAgree, LayoutPairsSendsAndReceivesInTheSameOrder) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 7);
    auto b = random_exchange(n, rng);
    std::vector<Layout> sl, rl;
    for (const auto& s : b) {
      sl.push_back(layout(s, Kind::send, n));
      rl.push_back(layout(s, Kind::recv, n));
    }
    // Every message: the sender's offset within its block for dst equals the receiver's offset
    // within its block for src, so an Alltoallv of the packed buffers delivers it in place.
    for (int src = 0; src < n; ++src) {
      const auto& s = b[static_cast<std::size_t>(src)];
      const Layout& l = sl[static_cast<std::size_t>(src)];
      ASSERT_TRUE(l.fits);
      for (int dst = 0; dst < n; ++dst)
        EXPECT_EQ(l.counts[static_cast<std::size_t>(dst)],
                  rl[static_cast<std::size_t>(dst)].counts[static_cast<std::size_t>(src)]);
      std::map<std::tuple<int, int>, int> ord;
      for (std::size_t k = 0; k < l.index.size(); ++k) {
        const Post& p = s[l.index[k]];
        const int o = ord[{p.peer, p.tag}]++;
        const auto within = l.offset[k] - static_cast<std::size_t>(l.displs[static_cast<std::size_t>(p.peer)]);
        // Find the receiver's o-th receive from src with this tag.
        const auto& rs = b[static_cast<std::size_t>(p.peer)];
        const Layout& rlay = rl[static_cast<std::size_t>(p.peer)];
        int seen = 0;
        bool found = false;
        for (std::size_t q = 0; q < rlay.index.size(); ++q) {
          const Post& rp = rs[rlay.index[q]];
          if (rp.peer != src || rp.tag != p.tag) continue;
          if (seen++ != o) continue;
          EXPECT_EQ(rp.bytes, p.bytes);
          EXPECT_EQ(rlay.offset[q] - static_cast<std::size_t>(rlay.displs[static_cast<std::size_t>(src)]), within);
          found = true;
          break;
        }
        EXPECT_TRUE(found);
      }
    }
  }
}

TEST(BurstAgree, ModeTrialKeepsTheFasterWayAndRechecks) {
  // Collective exchanges cost 2 ms, local bursts 1 ms: after 3 samples each, local wins.
  ModeTrial t(3, 10);
  int collective_runs = 0;
  for (int i = 0; i < 6; ++i) {
    const bool c = t.collective();
    collective_runs += c;
    t.sample(c, c ? 2e-3 : 1e-3);
  }
  EXPECT_EQ(collective_runs, 3);  // alternated while measuring
  ASSERT_TRUE(t.decided());
  EXPECT_FALSE(t.collective());
  // It runs local for `recheck` bursts, then measures collective again (3 times) and, when the
  // network changed so that collective is now faster, switches.
  int local_runs = 0;
  while (!t.collective()) {
    t.sample(false, 1e-3);
    ++local_runs;
    ASSERT_LT(local_runs, 100);
  }
  EXPECT_EQ(local_runs, 10);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(t.collective());
    t.sample(true, 0.5e-3);
  }
  EXPECT_TRUE(t.collective());
  // Deterministic: the same samples in the same order give the same decisions.
  ModeTrial a(4, 0), b(4, 0);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(a.collective(), b.collective());
    const bool c = a.collective();
    const double s = 1e-3 * (1 + static_cast<double>(rng() % 100) / 100.0);
    a.sample(c, s);
    b.sample(c, s);
  }
}

TEST(BurstAgree, ModeTrialMarginKeepsLocalUnlessClearlyBeaten) {
  // Level local's held-vs-native trial: held ("collective") must be 3 % faster.
  ModeTrial t(2, 0, 0.03);
  for (int i = 0; i < 2; ++i) {
    t.sample(true, 0.99);
    t.sample(false, 1.0);
  }
  ASSERT_TRUE(t.decided());
  EXPECT_FALSE(t.winner_collective()) << "1 % faster is within the margin";
  ModeTrial u(2, 0, 0.03);
  for (int i = 0; i < 2; ++i) {
    u.sample(true, 0.9);
    u.sample(false, 1.0);
  }
  ASSERT_TRUE(u.decided());
  EXPECT_TRUE(u.winner_collective());
  EXPECT_TRUE(u.collective());
}

TEST(BurstAgree, ModeTrialFastestIgnoresDelaysOfOneWay) {
  // Held bursts intrinsically 5 % slower, native ones often delayed by the neighbours: the
  // median is fooled, the fastest burst of each way is not.
  ModeTrial by_median(4, 0, 0.03), by_fastest(4, 0, 0.03, true);
  for (double native : {2.0, 1.0, 2.0, 2.0}) {
    for (ModeTrial* t : {&by_median, &by_fastest}) {
      t->sample(true, 1.05);
      t->sample(false, native);
    }
  }
  ASSERT_TRUE(by_median.decided());
  ASSERT_TRUE(by_fastest.decided());
  EXPECT_TRUE(by_median.winner_collective());
  EXPECT_FALSE(by_fastest.winner_collective());
}
