// alltoallv_fuzz: many random MPI_Alltoallv cases in one launch (issue 9, part 3b), each call
// compared byte for byte with PMPI_Alltoallv (never intercepted) on the same inputs.
//
// A case is drawn from its seed alone, identically on every rank: a sub-communicator
// (MPI_COMM_WORLD, a dup, or MPI_Comm_split into 1-3 colours with random keys, some ranks
// possibly sitting out), a datatype (MPI_BYTE, MPI_INT, a strided MPI_Type_vector, a resized
// vector with gaps, or MPI_INT sent and MPI_BYTE received), in place or not, gaps and reversed
// block order, a random matrix (density 0-100 %, zero rows and columns, self messages) and a
// schedule of 4-14 calls whose counts change at random calls: the whole matrix, one pair, or
// one rank's message to itself (a change only that rank can see). The first stretch repeats
// long enough for the library to learn (COMMSCHED_LEARN_CALLS, default 3) and run its plan.
//
//   alltoallv_fuzz [--cases N] [--seed S] [--inplace-noncontig avoid|only]  (defaults 25, 1)
//
// Case k uses seed S + k; a failure prints the seed, and `--seed SEED --cases 1` replays that
// case (on a fresh library state). Rank 0 prints
// "alltoallv_fuzz: N cases, M mismatches (C calls, B bytes compared)"; exits 1 on a mismatch.
#define OMPI_SKIP_MPICXX 1  // C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using namespace mpi_test;

constexpr std::uint8_t kCanary = 0x5A;

Matrix random_matrix(Rng& r, int n, int max_count) {
  Matrix m(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0);
  int density = r.below(101);
  if (r.chance(10)) density = 0;
  if (r.chance(10)) density = 100;
  const bool equal = r.chance(15);
  const int equal_count = 1 + r.below(max_count);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (r.below(100) < density) at(m, n, i, j) = equal ? equal_count : 1 + r.below(max_count);
  switch (r.below(5)) {
    case 0:  // some ranks send nothing, some receive nothing
      for (int k = 0; k < n; ++k) {
        if (r.chance(30)) for (int j = 0; j < n; ++j) at(m, n, k, j) = 0;
        if (r.chance(30)) for (int i = 0; i < n; ++i) at(m, n, i, k) = 0;
      }
      break;
    case 1:  // self messages only
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j) at(m, n, i, j) = 0;
      break;
    case 2:  // a hot receiver
      for (int i = 0, hot = r.below(n); i < n; ++i) at(m, n, i, hot) = max_count * 3 + i;
      break;
    default: break;
  }
  return m;
}

struct Totals {
  long long calls = 0;
  long long bytes = 0;
};

/// One call on `comm` with counts from `m`; "" when it matched PMPI, else the first difference.
std::string one_call(MPI_Comm comm, const Matrix& m_in, const TypeLayout& st, const TypeLayout& rt,
                     int recv_scale, bool in_place, int gap, bool reverse, std::uint64_t key,
                     Totals& totals) {
  int rank = 0, n = 1;
  rank_and_size(comm, rank, n);
  Matrix m = m_in;
  std::vector<int> sc(static_cast<std::size_t>(n)), rc(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    sc[static_cast<std::size_t>(j)] = at(m, n, rank, j);
    rc[static_cast<std::size_t>(j)] = at(m, n, j, rank) * recv_scale;
  }
  std::vector<int> sd, rd;
  const int s_elems = layout(sc, gap, reverse, sd);
  const int r_elems = layout(rc, gap, reverse, rd);
  const auto s_bytes = static_cast<std::size_t>(std::max<MPI_Aint>(1, s_elems * st.extent));
  const auto r_bytes = static_cast<std::size_t>(std::max<MPI_Aint>(1, r_elems * rt.extent));
  const std::vector<bool> covered = covered_bytes(r_bytes, rt, rc, rd);

  std::vector<std::uint8_t> sendbuf(s_bytes), ref(r_bytes, kCanary);
  fill_send_data(in_place, key, 32, sendbuf, ref, covered);
  std::vector<std::uint8_t> test = ref;
  const std::vector<std::uint8_t> send_copy = sendbuf;
  const void* sb = in_place ? MPI_IN_PLACE : static_cast<const void*>(sendbuf.data());
  const int* scp = in_place ? rc.data() : sc.data();
  const int* sdp = in_place ? rd.data() : sd.data();
  MPI_Datatype stype = in_place ? rt.type : st.type;
  const int rc_ref =
      PMPI_Alltoallv(sb, scp, sdp, stype, ref.data(), rc.data(), rd.data(), rt.type, comm);
  const int rc_test =
      MPI_Alltoallv(sb, scp, sdp, stype, test.data(), rc.data(), rd.data(), rt.type, comm);
  ++totals.calls;
  totals.bytes += static_cast<long long>(r_bytes);
  char buf[200];
  if (rc_ref != MPI_SUCCESS || rc_test != MPI_SUCCESS) {
    std::snprintf(buf, sizeof buf, "return code %d (PMPI %d)", rc_test, rc_ref);
    return buf;
  }
  for (std::size_t b = 0; b < r_bytes; ++b)
    if (test[b] != ref[b] || (!covered[b] && test[b] != kCanary)) {
      std::snprintf(buf, sizeof buf, "recvbuf byte %zu (%s): got 0x%02x, PMPI 0x%02x", b,
                    covered[b] ? "data" : "gap", test[b], ref[b]);
      return buf;
    }
  if (sendbuf != send_copy) return "sendbuf modified";
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank = 0, world_size = 1;
  rank_and_size(MPI_COMM_WORLD, world_rank, world_size);
  long long cases = 25;
  std::uint64_t base_seed = 1;
  // --inplace-noncontig avoid|only: leave out, or run nothing but, MPI_IN_PLACE with a strided
  // vector type (the regression test of a bug this program found; tests/mpi/CMakeLists.txt).
  bool avoid_inplace_noncontig = false, only_inplace_noncontig = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--cases") == 0) cases = std::atoll(argv[i + 1]);
    else if (std::strcmp(argv[i], "--seed") == 0) base_seed = std::strtoull(argv[i + 1], nullptr, 0);
    else if (std::strcmp(argv[i], "--inplace-noncontig") == 0) {
      avoid_inplace_noncontig = std::strcmp(argv[i + 1], "avoid") == 0;
      only_inplace_noncontig = std::strcmp(argv[i + 1], "only") == 0;
    }
  }

  TypeLayout byte_t = builtin(MPI_BYTE, 1, "byte");
  TypeLayout int_t = builtin(MPI_INT, 4, "int");
  TypeLayout vec_t = strided_ints(3, 0, "vector3");  // ints at 0, 2, 4 of an extent of 5 ints
  TypeLayout vec_rs_t = strided_ints(2, 16, "vector2_resized");  // ints at 0, 2 of 4 ints

  long long mismatches = 0;
  Totals totals;
  for (long long k = 0; k < cases; ++k) {
    const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(k);
    Rng r(seed);
    // The communicator.
    MPI_Comm comm = MPI_COMM_WORLD;
    bool owned = false;
    int color = 0;
    const int comm_kind = r.below(4);
    if (comm_kind == 1) {
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      owned = true;
    } else if (comm_kind >= 2) {
      const int colors = 1 + r.below(std::min(3, world_size));
      std::vector<int> color_of(static_cast<std::size_t>(world_size)), key_of(color_of.size());
      for (int w = 0; w < world_size; ++w) {
        color_of[static_cast<std::size_t>(w)] = r.chance(8) ? MPI_UNDEFINED : r.below(colors);
        key_of[static_cast<std::size_t>(w)] = r.below(1000);
      }
      color = color_of[static_cast<std::size_t>(world_rank)];
      MPI_Comm_split(MPI_COMM_WORLD, color, key_of[static_cast<std::size_t>(world_rank)], &comm);
      owned = true;
    }
    // Types and layout.
    const TypeLayout* st = &byte_t;
    const TypeLayout* rt = &byte_t;
    int recv_scale = 1;
    switch (r.below(5)) {
      case 0: break;
      case 1: st = rt = &int_t; break;
      case 2: st = rt = &vec_t; break;
      case 3: st = rt = &vec_rs_t; break;
      default: st = &int_t; recv_scale = 4; break;  // MPI_INT sent, MPI_BYTE received
    }
    bool in_place = recv_scale == 1 && r.chance(25);
    if (avoid_inplace_noncontig && in_place && st != &byte_t && st != &int_t) in_place = false;
    if (only_inplace_noncontig) {  // the regression case: in place with a strided vector
      st = rt = r.chance(50) ? &vec_t : &vec_rs_t;
      recv_scale = 1;
      in_place = true;
    }
    const int gap = r.chance(30) ? 1 + r.below(3) : 0;
    const bool reverse = r.chance(30);
    const int max_count = r.chance(10) ? 2000 : 1 + r.below(48);
    const int first_stretch = 5 + r.below(3);  // >= 4 identical calls: learned, then run
    const int calls = first_stretch + r.below(9);
    // Draws that depend on the sub-communicator come from a stream of their own, keyed by the
    // colour, so every member of a group agrees however many groups there are.
    Rng cr(seed * 1000003 + static_cast<std::uint64_t>(color + 7));
    std::string failure;
    int failed_calls = 0;
    if (comm != MPI_COMM_NULL) {
      int n = 1, rank = 0;
      MPI_Comm_size(comm, &n);
      MPI_Comm_rank(comm, &rank);
      Matrix m = random_matrix(cr, n, max_count);
      if (in_place) m = symmetric(m, n);
      for (int c = 0; c < calls; ++c) {
        if (c >= first_stretch && cr.chance(35)) {
          switch (cr.below(3)) {
            case 0:  // the whole matrix
              m = random_matrix(cr, n, max_count);
              if (in_place) m = symmetric(m, n);
              break;
            case 1: {  // one pair (both directions when in place)
              const int i = cr.below(n), j = cr.below(n);
              at(m, n, i, j) = at(m, n, i, j) > 0 && cr.chance(50) ? 0 : at(m, n, i, j) + 1 + cr.below(5);
              if (in_place) at(m, n, j, i) = at(m, n, i, j);
              break;
            }
            default: {  // one rank's message to itself: only that rank sees the change
              const int i = cr.below(n);
              at(m, n, i, i) = at(m, n, i, i) > 0 && cr.chance(50) ? 0 : at(m, n, i, i) + 1 + cr.below(5);
              break;
            }
          }
        }
        const std::uint64_t key = mix64(seed ^ mix64(static_cast<std::uint64_t>(c) * 131 +
                                                     static_cast<std::uint64_t>(world_rank)));
        std::string err = one_call(comm, m, *st, *rt, recv_scale, in_place, gap, reverse, key, totals);
        if (!err.empty()) ++failed_calls;
        if (!err.empty() && failure.empty()) {
          failure = err;
          std::fprintf(stderr,
                       "alltoallv_fuzz: FAIL seed=%llu call=%d world_rank=%d comm_rank=%d/%d "
                       "type=%s in_place=%d gap=%d reverse=%d: %s\n"
                       "  replay: alltoallv_fuzz --seed %llu --cases 1\n",
                       static_cast<unsigned long long>(seed), c, world_rank, rank, n, st->name,
                       in_place ? 1 : 0, gap, reverse ? 1 : 0, err.c_str(),
                       static_cast<unsigned long long>(seed));
        }
      }
      if (failed_calls > 1)
        std::fprintf(stderr, "alltoallv_fuzz: seed=%llu world_rank=%d: %d of %d calls differ\n",
                     static_cast<unsigned long long>(seed), world_rank, failed_calls, calls);
      if (owned) MPI_Comm_free(&comm);
    }
    int bad = failure.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    mismatches += bad;
  }
  long long local[2] = {totals.calls, totals.bytes}, sum[2] = {0, 0};
  MPI_Reduce(local, sum, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Type_free(&vec_t.type);
  MPI_Type_free(&vec_rs_t.type);
  if (world_rank == 0) {
    std::printf("alltoallv_fuzz: %lld cases, %lld mismatches (%lld calls, %lld bytes compared)\n",
                cases, mismatches, sum[0], sum[1]);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return mismatches == 0 ? 0 : 1;
}
