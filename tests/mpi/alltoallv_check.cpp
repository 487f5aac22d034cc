// alltoallv_check: every MPI_Alltoallv (intercepted when libcommsched is preloaded) is compared
// byte for byte with PMPI_Alltoallv (never intercepted) on the same inputs. Each case repeats
// its call often enough for the library to learn the pattern (COMMSCHED_LEARN_CALLS, default 3)
// and then run it optimised. Per call: fresh send data, a fresh canary-filled receive buffer, the
// reference on a separate receive buffer; bytes no receive block covers must keep the canary
// and the send buffer must come back unchanged.
//
// Prints one line per failing case and rank, then from rank 0
// "alltoallv_check: N passed, M failed"; exits 1 on any failure. Runs on any rank count.
#define OMPI_SKIP_MPICXX 1  // C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using namespace mpi_test;

constexpr std::uint8_t kCanary = 0xA5;

std::uint64_t hash(std::initializer_list<std::uint64_t> parts) {
  std::uint64_t h = 0x243F6A8885A308D3ULL;
  for (std::uint64_t p : parts) h = mix64(h ^ p);
  return h;
}

std::uint64_t u(int v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)); }

/// The pattern of call `it` on a communicator of n ranks.
using PatternFn = std::function<Matrix(int n, int it)>;

// ---------------------------------------------------------------------------------------------
// Patterns (identical on every rank: pure functions of n and the seed)

int size_of(std::uint64_t seed, int i, int j, int max_count) {
  return 1 + static_cast<int>(hash({seed, u(i), u(j), 7}) % static_cast<std::uint64_t>(max_count));
}

Matrix uniform(int n, std::uint64_t seed, int degree, int max_count) {
  Matrix m(static_cast<std::size_t>(n * n), 0);
  for (int k = 0; k < std::min(degree, n); ++k) {
    std::vector<int> perm(static_cast<std::size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = n - 1; i > 0; --i)
      std::swap(perm[i], perm[hash({seed, u(k), u(i)}) % static_cast<std::uint64_t>(i + 1)]);
    for (int i = 0; i < n; ++i) at(m, n, i, perm[i]) = size_of(seed, i, perm[i], max_count);
  }
  return m;
}

Matrix dense(int n, std::uint64_t seed, int max_count) {
  Matrix m(static_cast<std::size_t>(n * n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) at(m, n, i, j) = size_of(seed, i, j, max_count);
  return m;
}

Matrix hotspot(int n, int max_count) {
  Matrix m(static_cast<std::size_t>(n * n), 0);
  for (int i = 0; i < n; ++i) {
    at(m, n, i, 0) += 4 * max_count;
    at(m, n, i, (i + 1) % n) += 1;
  }
  return m;
}

Matrix neighbors(int n, int degree, int count) {
  Matrix m(static_cast<std::size_t>(n * n), 0);
  for (int i = 0; i < n; ++i)
    for (int k = 1; k <= std::min(degree, n); ++k) at(m, n, i, (i + k) % n) = count;
  return m;
}

/// Each entry present with probability percent/100.
Matrix random_sparse(int n, std::uint64_t seed, int percent, int max_count) {
  Matrix m(static_cast<std::size_t>(n * n), 0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (static_cast<int>(hash({seed, u(i), u(j), 3}) % 100) < percent)
        at(m, n, i, j) = size_of(seed, i, j, max_count);
  return m;
}

/// Random, but rank n-1 sends nothing and rank 0 receives nothing (n >= 2).
Matrix random_zero_rows_cols(int n, std::uint64_t seed, int max_count) {
  Matrix m = random_sparse(n, seed, 60, max_count);
  if (n >= 2)
    for (int k = 0; k < n; ++k) at(m, n, n - 1, k) = at(m, n, k, 0) = 0;
  return m;
}

Matrix self_only(int n, std::uint64_t seed, int max_count) {
  Matrix m(static_cast<std::size_t>(n * n), 0);
  for (int i = 0; i < n; ++i) at(m, n, i, i) = size_of(seed, i, i, max_count);
  return m;
}

// ---------------------------------------------------------------------------------------------
// One case: one or more streams of calls, each on its own communicator

struct Stream {
  MPI_Comm comm = MPI_COMM_WORLD;
  PatternFn pattern;
};

struct Case {
  std::string name;
  std::vector<Stream> streams;  // called in this order within each iteration
  int iterations = 8;
  const TypeLayout* send = nullptr;
  const TypeLayout* recv = nullptr;
  int recv_scale = 1;  // receive count = send count * recv_scale (MPI_INT sent, MPI_BYTE received)
  bool in_place = false;
  int gap = 0;           // elements left free before and between blocks
  bool reverse = false;  // blocks laid out in decreasing rank order
};

struct Failure {
  bool failed = false;
  void report(const std::string& name, int it, int rank, const std::string& what) {
    if (failed) return;  // the first difference says enough
    failed = true;
    std::fprintf(stderr, "alltoallv_check: FAIL case=%s iteration=%d rank=%d %s\n", name.c_str(),
                 it, rank, what.c_str());
    std::fflush(stderr);
  }
};

std::string byte_diff(const char* where, std::size_t offset, std::uint8_t got, std::uint8_t want) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: first differing byte %zu: got 0x%02x, expected 0x%02x",
                where, offset, got, want);
  return buf;
}

void run_call(const Case& c, std::size_t s, int it, std::uint64_t case_id, Failure& f) {
  const Stream& st = c.streams[s];
  int rank = 0, n = 1, world_rank = 0;
  rank_and_size(st.comm, rank, n);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const Matrix m = st.pattern(n, it);

  std::vector<int> scounts(static_cast<std::size_t>(n)), rcounts(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    scounts[j] = at(m, n, rank, j);
    rcounts[j] = at(m, n, j, rank) * c.recv_scale;
  }
  std::vector<int> sdispls, rdispls;
  const int s_elems = layout(scounts, c.gap, c.reverse, sdispls);
  const int r_elems = layout(rcounts, c.gap, c.reverse, rdispls);
  // Never zero-sized, so no buffer pointer is null.
  const std::size_t s_bytes = static_cast<std::size_t>(std::max<MPI_Aint>(1, s_elems * c.send->extent));
  const std::size_t r_bytes = static_cast<std::size_t>(std::max<MPI_Aint>(1, r_elems * c.recv->extent));
  const std::uint64_t key = hash({case_id, s, u(rank), u(it)});
  const std::vector<bool> covered = covered_bytes(r_bytes, *c.recv, rcounts, rdispls);

  // Deterministic contents: a function of (case, stream, rank, call, offset). In place, the data
  // to send sits in the receive blocks; everything else is canary.
  std::vector<std::uint8_t> sendbuf(s_bytes), recv_ref(r_bytes, kCanary);
  fill_send_data(c.in_place, key, 24, sendbuf, recv_ref, covered);
  std::vector<std::uint8_t> recv_test = recv_ref;
  const std::vector<std::uint8_t> send_copy = sendbuf;

  // With MPI_IN_PLACE the send arguments are ignored; pass the receive ones, as most codes do.
  const void* sb = c.in_place ? MPI_IN_PLACE : static_cast<const void*>(sendbuf.data());
  const int* sc = c.in_place ? rcounts.data() : scounts.data();
  const int* sd = c.in_place ? rdispls.data() : sdispls.data();
  MPI_Datatype stype = c.in_place ? c.recv->type : c.send->type;

  const int rc_ref = PMPI_Alltoallv(sb, sc, sd, stype, recv_ref.data(), rcounts.data(),
                                    rdispls.data(), c.recv->type, st.comm);
  const int rc = MPI_Alltoallv(sb, sc, sd, stype, recv_test.data(), rcounts.data(),
                               rdispls.data(), c.recv->type, st.comm);

  if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
    f.report(c.name, it, world_rank,
             "return code " + std::to_string(rc) + " (reference " + std::to_string(rc_ref) + ")");
    return;
  }
  if (const std::size_t b = first_difference(recv_test, recv_ref); b < r_bytes) {
    f.report(c.name, it, world_rank,
             byte_diff(covered[b] ? "recvbuf vs PMPI reference" : "recvbuf vs PMPI reference (gap)",
                       b, recv_test[b], recv_ref[b]));
    return;
  }
  for (std::size_t b = 0; b < r_bytes; ++b)
    if (!covered[b] && recv_test[b] != kCanary) {
      f.report(c.name, it, world_rank, byte_diff("canary overwritten", b, recv_test[b], kCanary));
      return;
    }
  if (const std::size_t b = first_difference(sendbuf, send_copy); b < s_bytes)
    f.report(c.name, it, world_rank, byte_diff("sendbuf modified", b, sendbuf[b], send_copy[b]));
}

/// True when the case passed on every rank.
bool run_case(const Case& c, std::uint64_t case_id) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  Failure f;
  for (int it = 0; it < c.iterations; ++it)
    for (std::size_t s = 0; s < c.streams.size(); ++s) run_call(c, s, it, case_id, f);
  int failed = f.failed ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed == 0;
}

PatternFn fixed(std::function<Matrix(int)> make) {
  return [make](int n, int) { return make(n); };
}

/// A new random pattern every k calls.
PatternFn changing(std::uint64_t seed, int k, int percent, int max_count) {
  return [=](int n, int it) {
    return random_sparse(n, seed + static_cast<std::uint64_t>(it / k), percent, max_count);
  };
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  rank_and_size(MPI_COMM_WORLD, rank, size);

  TypeLayout byte_t = builtin(MPI_BYTE, 1);
  TypeLayout int_t = builtin(MPI_INT, 4);
  TypeLayout vec_t = strided_ints(3, 0);       // ints at 0, 2, 4 of an extent of 5 ints
  TypeLayout vec_rs_t = strided_ints(2, 16);  // ints at 0, 2 of an extent of 4 ints

  std::vector<Case> cases;
  auto add = [&](std::string name, PatternFn p, const TypeLayout& t) {
    Case c;
    c.name = std::move(name);
    c.streams = {{MPI_COMM_WORLD, std::move(p)}};
    c.send = c.recv = &t;
    cases.push_back(std::move(c));
    return &cases.back();
  };
  // Patterns, in bytes
  add("byte_uniform", fixed([](int n) { return uniform(n, 11, 3, 64); }), byte_t);
  add("byte_dense", fixed([](int n) { return dense(n, 12, 32); }), byte_t);
  add("byte_hotspot", fixed([](int n) { return hotspot(n, 64); }), byte_t);
  add("byte_neighbors", fixed([](int n) { return neighbors(n, 2, 48); }), byte_t);
  add("byte_random_zero_rows_cols", fixed([](int n) { return random_zero_rows_cols(n, 13, 50); }),
      byte_t);
  add("byte_self_only", fixed([](int n) { return self_only(n, 14, 40); }), byte_t);
  add("byte_all_zero", fixed([](int n) { return Matrix(static_cast<std::size_t>(n * n), 0); }),
      byte_t);
  add("byte_large_uniform", fixed([](int n) { return uniform(n, 15, 2, 40000); }), byte_t);
  // Datatypes and layouts
  add("int_random", fixed([](int n) { return random_sparse(n, 16, 50, 30); }), int_t);
  Case* c = add("int_gaps_reversed", fixed([](int n) { return dense(n, 17, 20); }), int_t);
  c->gap = 3;
  c->reverse = true;
  add("vector_stride2", fixed([](int n) { return uniform(n, 18, 3, 10); }), vec_t);
  c = add("vector_resized_gaps", fixed([](int n) { return random_sparse(n, 19, 70, 10); }),
          vec_rs_t);
  c->gap = 1;
  c = add("mixed_int_send_byte_recv", fixed([](int n) { return random_sparse(n, 20, 60, 25); }),
          int_t);
  c->recv = &byte_t;
  c->recv_scale = 4;
  // MPI_IN_PLACE (symmetric counts)
  c = add("in_place_byte", fixed([](int n) { return symmetric(random_sparse(n, 21, 60, 40), n); }),
          byte_t);
  c->in_place = true;
  c->gap = 2;
  c = add("in_place_int", fixed([](int n) { return symmetric(dense(n, 22, 12), n); }), int_t);
  c->in_place = true;
  // Counts that change
  add("change_every_2", changing(23, 2, 50, 40), byte_t)->iterations = 12;
  add("change_every_4", changing(24, 4, 50, 40), byte_t)->iterations = 16;
  // Only the pair (0, n-1) changes, on calls 5 and 9: the other ranks see their usual counts, so
  // only agreement across all ranks keeps a stale schedule from being used.
  c = add("one_pair_changes",
          [](int n, int it) {
            Matrix m = dense(n, 25, 30);
            if (it == 5 || it == 9) at(m, n, 0, n - 1) += 3;
            return m;
          },
          byte_t);
  c->iterations = 12;

  std::vector<bool> results;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    results.push_back(run_case(cases[k], k + 1));
    names.push_back(cases[k].name);
  }

  // Communicators other than MPI_COMM_WORLD. The second split comes after the first is freed,
  // so it may reuse the handle: state the library kept for the old communicator must not leak.
  {
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    Case s;
    s.name = "comm_split_even_odd";
    s.streams = {{half, fixed([](int n) { return uniform(n, 26, 2, 50); })}};
    s.send = s.recv = &byte_t;
    results.push_back(run_case(s, 100));
    names.push_back(s.name);
    MPI_Comm_free(&half);

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);  // reversed order
    s.name = "comm_split_again_reversed";
    s.streams = {{half, fixed([](int n) { return random_sparse(n, 27, 60, 50); })}};
    results.push_back(run_case(s, 101));
    names.push_back(s.name);
    MPI_Comm_free(&half);
  }
  {  // two communicators, each with its own stable pattern, calls interleaved
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    Case s;
    s.name = "interleaved_world_and_dup";
    s.streams = {{MPI_COMM_WORLD, fixed([](int n) { return uniform(n, 28, 2, 40); })},
                 {dup, fixed([](int n) { return neighbors(n, 1, 33); })}};
    s.send = s.recv = &byte_t;
    results.push_back(run_case(s, 102));
    names.push_back(s.name);
    MPI_Comm_free(&dup);
  }

  for (TypeLayout* t : {&vec_t, &vec_rs_t})
    if (t->owned) MPI_Type_free(&t->type);

  const int failed = static_cast<int>(std::count(results.begin(), results.end(), false));
  const int passed = static_cast<int>(results.size()) - failed;
  if (rank == 0) {
    for (std::size_t k = 0; k < results.size(); ++k)
      if (!results[k]) std::printf("alltoallv_check: case %s failed\n", names[k].c_str());
    std::printf("alltoallv_check: %d passed, %d failed\n", passed, failed);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
