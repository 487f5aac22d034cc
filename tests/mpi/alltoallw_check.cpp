// alltoallw_check: every MPI_Alltoallw (intercepted when libcommsched is preloaded) is compared
// byte for byte with PMPI_Alltoallw (never intercepted) on the same inputs. Each case repeats its
// call often enough for the library to learn the pattern and run it optimised. Cases the library
// substitutes (one datatype per side at displacements that are multiples of its extent):
// irregular counts of ints, a strided derived type received as contiguous ints, zero counts,
// in place. Cases it must leave to MPI, with every rank agreeing: per-peer datatypes that differ,
// a displacement between elements, and one rank alone using two datatypes.
//
// Prints one line per failing case and rank, then from rank 0
// "alltoallw_check: N passed, M failed"; exits 1 on any failure. Runs on any rank count.
#define OMPI_SKIP_MPICXX 1  // C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using mpi_test::mix64;

constexpr int kCalls = 12;  // enough for learning at call 3 and a forced strategy's runs
constexpr std::uint8_t kCanary = 0xA5;

enum class Shape {
  irregular,      // ints, counts (rank + peer) % 4 * 5, packed one after another
  strided,        // send a strided vector type, receive contiguous ints
  zeros,          // every count zero
  in_place,       // irregular ints, in place
  mixed_types,    // two datatypes of the same size, different layouts: not describable
  odd_offset,     // ints at byte displacements off by 2: not describable
  one_rank_mixed  // rank 0 alone mixes datatypes; the others could run
};

struct Layout {
  std::vector<int> counts, displs;  // displacements in bytes
  std::vector<MPI_Datatype> types;
  std::size_t bytes = 0;
};

// The layout of one side on `rank` for peer blocks of `count(peer)` elements.
template <typename CountFn, typename TypeFn>
Layout layout(int n, CountFn count, TypeFn type, int gap, int align) {
  Layout l;
  std::size_t at = 0;
  for (int j = 0; j < n; ++j) {
    at = (at + static_cast<std::size_t>(align) - 1) / static_cast<std::size_t>(align) *
         static_cast<std::size_t>(align);
    MPI_Datatype t = type(j);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(t, &lb, &extent);
    l.counts.push_back(count(j));
    l.displs.push_back(static_cast<int>(at) + gap);
    l.types.push_back(t);
    at += static_cast<std::size_t>(extent) * static_cast<std::size_t>(count(j)) +
          static_cast<std::size_t>(gap) + static_cast<std::size_t>(extent);  // a hole after
  }
  l.bytes = at + 8;
  return l;
}

int run_case(Shape shape, const char* name, MPI_Datatype strided, MPI_Datatype pair) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  // The elements rank `from` sends rank `to`, so both sides agree on every count.
  auto elements = [&](int from, int to) {
    return shape == Shape::zeros ? 0 : ((from + to) % 4) * 5 + (from == to ? 1 : 0);
  };
  // mixed_types sends strided elements to ranks of the other parity and pairs of ints to the
  // others: read as one of them, the bytes on the wire would still add up, but be the wrong ones.
  auto send_type = [&](int to) {
    if (shape == Shape::strided) return strided;
    if (shape == Shape::mixed_types) return (rank + to) % 2 ? strided : pair;
    if (shape == Shape::one_rank_mixed && rank == 0 && to % 2 == 1) return MPI_DOUBLE;
    return MPI_INT;
  };
  auto recv_type = [&](int from) {
    if (shape == Shape::one_rank_mixed && from == 0 && rank % 2 == 1) return MPI_DOUBLE;
    return MPI_INT;
  };
  // A strided element or a pair carries 2 ints; a double the size of 2 ints is sent as 1 double.
  const bool two_ints = shape == Shape::strided || shape == Shape::mixed_types;
  auto recv_elements = [&](int from) { return two_ints ? 2 * elements(from, rank)
                                                       : elements(from, rank); };
  const int gap = shape == Shape::odd_offset ? 2 : 0;
  // Blocks of mixed_types start at multiples of 24 bytes, so only their datatypes differ.
  const int align = shape == Shape::mixed_types ? 24 : 1;
  Layout s = layout(n, [&](int to) { return elements(rank, to); }, send_type, gap, align);
  Layout r = layout(n, recv_elements, recv_type, gap, align);
  if (shape == Shape::in_place) s = r;
  int wrong = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<std::uint8_t> send(s.bytes), got(r.bytes, kCanary), want(r.bytes, kCanary);
    for (std::size_t i = 0; i < send.size(); ++i)
      send[i] = static_cast<std::uint8_t>(mix64((static_cast<std::uint64_t>(rank) << 40) ^
                                                (static_cast<std::uint64_t>(call) << 32) ^ i));
    int rc_got = MPI_SUCCESS, rc_want = MPI_SUCCESS;
    if (shape == Shape::in_place) {
      got = send;
      want = send;
      rc_got = MPI_Alltoallw(MPI_IN_PLACE, nullptr, nullptr, nullptr, got.data(), r.counts.data(),
                             r.displs.data(), r.types.data(), MPI_COMM_WORLD);
      rc_want = PMPI_Alltoallw(MPI_IN_PLACE, nullptr, nullptr, nullptr, want.data(),
                               r.counts.data(), r.displs.data(), r.types.data(), MPI_COMM_WORLD);
    } else {
      const std::vector<std::uint8_t> before = send;
      rc_got = MPI_Alltoallw(send.data(), s.counts.data(), s.displs.data(), s.types.data(),
                             got.data(), r.counts.data(), r.displs.data(), r.types.data(),
                             MPI_COMM_WORLD);
      rc_want = PMPI_Alltoallw(send.data(), s.counts.data(), s.displs.data(), s.types.data(),
                               want.data(), r.counts.data(), r.displs.data(), r.types.data(),
                               MPI_COMM_WORLD);
      if (send != before) ++wrong;  // the send buffer must come back unchanged
    }
    if (rc_got != rc_want || got != want) {
      ++wrong;
      std::printf("alltoallw_check: %s rank %d call %d: rc %d/%d, first difference at byte %zu\n",
                  name, rank, call, rc_got, rc_want, mpi_test::first_difference(got, want));
    }
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Datatype strided = MPI_DATATYPE_NULL, pair = MPI_DATATYPE_NULL;  // 2 ints of every 3; 2 ints
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  const std::pair<Shape, const char*> cases[] = {
      {Shape::irregular, "irregular ints"},  {Shape::strided, "strided as ints"},
      {Shape::zeros, "zero counts"},         {Shape::in_place, "in place"},
      {Shape::mixed_types, "mixed types"},   {Shape::odd_offset, "odd byte offsets"},
      {Shape::one_rank_mixed, "one rank mixes types"},
  };
  int passed = 0, failed = 0;
  for (const auto& [shape, name] : cases) {
    const int mine = run_case(shape, name, strided, pair);
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    (any ? failed : passed) += 1;
  }
  MPI_Type_free(&strided);
  MPI_Type_free(&pair);
  if (rank == 0) std::printf("alltoallw_check: %d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
