// large_count_check: MPI-4's large-count all-to-alls, intercepted when libcommsched is
// preloaded, compared byte for byte with PMPI's on the same inputs, each case repeated past
// learning: MPI_Alltoallv_c, MPI_Alltoall_c, MPI_Alltoallw_c, MPI_Neighbor_alltoallv_c,
// MPI_Neighbor_alltoall_c, MPI_Neighbor_alltoallw_c, the non-blocking MPI_Ialltoallv_c,
// MPI_Ialltoall_c, MPI_Ialltoallw_c, MPI_Ineighbor_alltoallv_c, MPI_Ineighbor_alltoall_c,
// MPI_Ineighbor_alltoallw_c and their persistent _init_c forms.
// Also: the int and large-count forms of MPI_Alltoallv alternating on one pattern, and a call
// whose displacements do not fit in int on rank 0 alone (MPI_BOTTOM with absolute addresses),
// which every rank must then run as MPI's own.
//
// Prints one line per failing case and rank, then from rank 0
// "large_count_check: N passed, M failed"; exits 1 on any failure, 77 where the MPI has no
// large-count forms (before MPI-4).
#define OMPI_SKIP_MPICXX 1  // C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "mpi_test_util.hpp"

#if MPI_VERSION >= 4
namespace {

using mpi_test::mix64;

constexpr int kCalls = 12;  // enough for learning at call 3 and a forced strategy's runs
constexpr std::uint8_t kCanary = 0xA5;

// Bytes rank `from` sends rank `to` (both sides compute the same): 0 to 60, some pairs empty.
int bytes(int from, int to) { return ((from * 5 + to * 3) % 4) * 20; }

// One call: `library` through MPI_*_c (the library's when preloaded), else PMPI_*_c; sends
// `send` (already filled), receives into `recv`. Returns MPI's code.
using Call = std::function<int(bool library, std::vector<std::uint8_t>& send,
                               std::vector<std::uint8_t>& recv)>;

// Runs `call` kCalls times through the library and PMPI on the same send data, into buffers
// filled with the canary; returns the number of calls that differed on this rank.
int run_case(const char* name, std::size_t send_size, std::size_t recv_size, bool in_place,
             const Call& call) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int wrong = 0;
  for (int c = 0; c < kCalls; ++c) {
    std::vector<std::uint8_t> send(send_size + 1), got(recv_size + 1, kCanary), want;
    for (std::size_t i = 0; i < send.size(); ++i)
      send[i] = static_cast<std::uint8_t>(mix64((static_cast<std::uint64_t>(rank) << 40) ^
                                                (static_cast<std::uint64_t>(c) << 32) ^ i));
    if (in_place) got.assign(send.begin(), send.end());
    want = got;
    std::vector<std::uint8_t> send_copy = send;
    const int rc_got = call(true, send, got);
    const int rc_want = call(false, send_copy, want);
    if (rc_got != rc_want || got != want || send != send_copy) {
      ++wrong;
      std::printf("large_count_check: %s rank %d call %d: rc %d/%d, first difference at byte %zu\n",
                  name, rank, c, rc_got, rc_want, mpi_test::first_difference(got, want));
    }
  }
  return wrong;
}

// Per-peer layout of one side: counts and displacements with a one-byte hole before each block.
struct Side {
  std::vector<MPI_Count> counts;
  std::vector<MPI_Aint> displs;
  std::size_t size = 0;
};

Side side(int n, const std::function<int(int)>& count_of) {
  Side s;
  for (int j = 0; j < n; ++j) {
    s.counts.push_back(count_of(j));
    s.displs.push_back(static_cast<MPI_Aint>(s.size) + 1);
    s.size += static_cast<std::size_t>(count_of(j)) + 1;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, n);
  const Side out = side(n, [&](int j) { return bytes(rank, j); });
  const Side in = side(n, [&](int j) { return bytes(j, rank); });
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), MPI_BYTE);
  // A ring with two successors each (one when n is 2), as a distributed graph.
  std::vector<int> succ, pred;
  for (int k = 1; k <= 2 && k < n; ++k) {
    succ.push_back((rank + k) % n);
    pred.push_back((rank - k + n) % n);
  }
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(pred.size()), pred.data(),
                                 MPI_UNWEIGHTED, static_cast<int>(succ.size()), succ.data(),
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  const auto k = static_cast<int>(succ.size());
  const auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const Side nout = side(k, [&](int i) { return bytes(rank, at(succ, i)) + 4; });
  const Side nin = side(k, [&](int i) { return bytes(at(pred, i), rank) + 4; });
  const MPI_Count regular = 24;
  const auto all = static_cast<std::size_t>(n) * regular;

  int passed = 0, failed = 0;
  const auto tally = [&](int mine) {
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    (any ? failed : passed) += 1;
  };
  tally(run_case("Alltoallv_c", out.size, in.size, false, [&](bool lib, auto& s, auto& r) {
    return (lib ? MPI_Alltoallv_c : PMPI_Alltoallv_c)(s.data(), out.counts.data(),
                                                      out.displs.data(), MPI_BYTE, r.data(),
                                                      in.counts.data(), in.displs.data(),
                                                      MPI_BYTE, MPI_COMM_WORLD);
  }));
  // The same pattern through MPI_Alltoallv and MPI_Alltoallv_c in turn: one pattern to learn.
  const std::vector<int> oc(out.counts.begin(), out.counts.end()),
      od(out.displs.begin(), out.displs.end()), ic(in.counts.begin(), in.counts.end()),
      id(in.displs.begin(), in.displs.end());
  int turn = 0;
  tally(run_case("Alltoallv and Alltoallv_c in turn", out.size, in.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   if (lib && turn++ % 2 == 0)
                     return MPI_Alltoallv(s.data(), oc.data(), od.data(), MPI_BYTE, r.data(),
                                          ic.data(), id.data(), MPI_BYTE, MPI_COMM_WORLD);
                   return (lib ? MPI_Alltoallv_c : PMPI_Alltoallv_c)(
                       s.data(), out.counts.data(), out.displs.data(), MPI_BYTE, r.data(),
                       in.counts.data(), in.displs.data(), MPI_BYTE, MPI_COMM_WORLD);
                 }));
  // In place: the receive side's counts, which MPI requires to match the senders'.
  const Side sym = side(n, [&](int j) { return (rank + j) % 3 * 8; });
  tally(run_case("Alltoallv_c in place", sym.size, sym.size, true, [&](bool lib, auto&, auto& r) {
    return (lib ? MPI_Alltoallv_c : PMPI_Alltoallv_c)(MPI_IN_PLACE, nullptr, nullptr,
                                                      MPI_DATATYPE_NULL, r.data(),
                                                      sym.counts.data(), sym.displs.data(),
                                                      MPI_BYTE, MPI_COMM_WORLD);
  }));
  tally(run_case("Alltoall_c", all, all, false, [&](bool lib, auto& s, auto& r) {
    return (lib ? MPI_Alltoall_c : PMPI_Alltoall_c)(s.data(), regular, MPI_BYTE, r.data(),
                                                    regular, MPI_BYTE, MPI_COMM_WORLD);
  }));
  tally(run_case("Alltoallw_c", out.size, in.size, false, [&](bool lib, auto& s, auto& r) {
    return (lib ? MPI_Alltoallw_c : PMPI_Alltoallw_c)(s.data(), out.counts.data(),
                                                      out.displs.data(), types.data(), r.data(),
                                                      in.counts.data(), in.displs.data(),
                                                      types.data(), MPI_COMM_WORLD);
  }));
  tally(run_case("Neighbor_alltoallv_c", nout.size, nin.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   return (lib ? MPI_Neighbor_alltoallv_c : PMPI_Neighbor_alltoallv_c)(
                       s.data(), nout.counts.data(), nout.displs.data(), MPI_BYTE, r.data(),
                       nin.counts.data(), nin.displs.data(), MPI_BYTE, graph);
                 }));
  const auto kall = static_cast<std::size_t>(k) * regular;
  tally(run_case("Neighbor_alltoall_c", kall, kall, false, [&](bool lib, auto& s, auto& r) {
    return (lib ? MPI_Neighbor_alltoall_c : PMPI_Neighbor_alltoall_c)(
        s.data(), regular, MPI_BYTE, r.data(), regular, MPI_BYTE, graph);
  }));
  tally(run_case("Neighbor_alltoallw_c", nout.size, nin.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   return (lib ? MPI_Neighbor_alltoallw_c : PMPI_Neighbor_alltoallw_c)(
                       s.data(), nout.counts.data(), nout.displs.data(), types.data(), r.data(),
                       nin.counts.data(), nin.displs.data(), types.data(), graph);
                 }));
  // The non-blocking forms, each waited for at once (run by the library's engine under
  // COMMSCHED_NONBLOCKING, else MPI's own).
  const auto waited = [](int rc, MPI_Request& q) {
    return rc == MPI_SUCCESS ? MPI_Wait(&q, MPI_STATUS_IGNORE) : rc;
  };
  tally(run_case("Ialltoallv_c", out.size, in.size, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return waited((lib ? MPI_Ialltoallv_c : PMPI_Ialltoallv_c)(
                      s.data(), out.counts.data(), out.displs.data(), MPI_BYTE, r.data(),
                      in.counts.data(), in.displs.data(), MPI_BYTE, MPI_COMM_WORLD, &q),
                  q);
  }));
  tally(run_case("Ialltoall_c", all, all, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return waited((lib ? MPI_Ialltoall_c : PMPI_Ialltoall_c)(s.data(), regular, MPI_BYTE,
                                                              r.data(), regular, MPI_BYTE,
                                                              MPI_COMM_WORLD, &q),
                  q);
  }));
  tally(run_case("Ineighbor_alltoallv_c", nout.size, nin.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   MPI_Request q = MPI_REQUEST_NULL;
                   return waited(
                       (lib ? MPI_Ineighbor_alltoallv_c : PMPI_Ineighbor_alltoallv_c)(
                           s.data(), nout.counts.data(), nout.displs.data(), MPI_BYTE, r.data(),
                           nin.counts.data(), nin.displs.data(), MPI_BYTE, graph, &q),
                       q);
                 }));
  tally(run_case("Ineighbor_alltoall_c", kall, kall, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return waited((lib ? MPI_Ineighbor_alltoall_c : PMPI_Ineighbor_alltoall_c)(
                      s.data(), regular, MPI_BYTE, r.data(), regular, MPI_BYTE, graph, &q),
                  q);
  }));
  tally(run_case("Ialltoallw_c", out.size, in.size, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return waited((lib ? MPI_Ialltoallw_c : PMPI_Ialltoallw_c)(
                      s.data(), out.counts.data(), out.displs.data(), types.data(), r.data(),
                      in.counts.data(), in.displs.data(), types.data(), MPI_COMM_WORLD, &q),
                  q);
  }));
  tally(run_case("Ineighbor_alltoallw_c", nout.size, nin.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   MPI_Request q = MPI_REQUEST_NULL;
                   return waited(
                       (lib ? MPI_Ineighbor_alltoallw_c : PMPI_Ineighbor_alltoallw_c)(
                           s.data(), nout.counts.data(), nout.displs.data(), types.data(),
                           r.data(), nin.counts.data(), nin.displs.data(), types.data(), graph,
                           &q),
                       q);
                 }));
  // The persistent forms: bound, started and waited for once per call, then freed.
  const auto once = [](int rc, MPI_Request& q, bool lib) {
    if (rc != MPI_SUCCESS) return rc;
    rc = lib ? MPI_Start(&q) : PMPI_Start(&q);
    if (rc == MPI_SUCCESS)
      rc = lib ? MPI_Wait(&q, MPI_STATUS_IGNORE) : PMPI_Wait(&q, MPI_STATUS_IGNORE);
    const int freed = lib ? MPI_Request_free(&q) : PMPI_Request_free(&q);
    return rc == MPI_SUCCESS ? freed : rc;
  };
  tally(run_case("Alltoallv_init_c", out.size, in.size, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return once((lib ? MPI_Alltoallv_init_c : PMPI_Alltoallv_init_c)(
                    s.data(), out.counts.data(), out.displs.data(), MPI_BYTE, r.data(),
                    in.counts.data(), in.displs.data(), MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL,
                    &q),
                q, lib);
  }));
  tally(run_case("Alltoall_init_c", all, all, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return once((lib ? MPI_Alltoall_init_c : PMPI_Alltoall_init_c)(
                    s.data(), regular, MPI_BYTE, r.data(), regular, MPI_BYTE, MPI_COMM_WORLD,
                    MPI_INFO_NULL, &q),
                q, lib);
  }));
  tally(run_case("Neighbor_alltoallv_init_c", nout.size, nin.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   MPI_Request q = MPI_REQUEST_NULL;
                   return once(
                       (lib ? MPI_Neighbor_alltoallv_init_c : PMPI_Neighbor_alltoallv_init_c)(
                           s.data(), nout.counts.data(), nout.displs.data(), MPI_BYTE, r.data(),
                           nin.counts.data(), nin.displs.data(), MPI_BYTE, graph, MPI_INFO_NULL,
                           &q),
                       q, lib);
                 }));
  tally(run_case("Neighbor_alltoall_init_c", kall, kall, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return once((lib ? MPI_Neighbor_alltoall_init_c : PMPI_Neighbor_alltoall_init_c)(
                    s.data(), regular, MPI_BYTE, r.data(), regular, MPI_BYTE, graph,
                    MPI_INFO_NULL, &q),
                q, lib);
  }));
  tally(run_case("Alltoallw_init_c", out.size, in.size, false, [&](bool lib, auto& s, auto& r) {
    MPI_Request q = MPI_REQUEST_NULL;
    return once((lib ? MPI_Alltoallw_init_c : PMPI_Alltoallw_init_c)(
                    s.data(), out.counts.data(), out.displs.data(), types.data(), r.data(),
                    in.counts.data(), in.displs.data(), types.data(), MPI_COMM_WORLD,
                    MPI_INFO_NULL, &q),
                q, lib);
  }));
  tally(run_case("Neighbor_alltoallw_init_c", nout.size, nin.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   MPI_Request q = MPI_REQUEST_NULL;
                   return once(
                       (lib ? MPI_Neighbor_alltoallw_init_c : PMPI_Neighbor_alltoallw_init_c)(
                           s.data(), nout.counts.data(), nout.displs.data(), types.data(),
                           r.data(), nin.counts.data(), nin.displs.data(), types.data(), graph,
                           MPI_INFO_NULL, &q),
                       q, lib);
                 }));
  // Rank 0 sends from MPI_BOTTOM at absolute addresses, past int on a 64-bit address space: it
  // votes native, and every rank runs MPI's own call.
  std::vector<MPI_Aint> absolute(out.displs.size());
  bool past_int = false;
  tally(run_case("Alltoallv_c from MPI_BOTTOM on rank 0", out.size, in.size, false,
                 [&](bool lib, auto& s, auto& r) {
                   const MPI_Aint* sd = out.displs.data();
                   const void* from = s.data();
                   if (rank == 0) {
                     MPI_Aint base = 0;
                     MPI_Get_address(s.data(), &base);
                     for (std::size_t j = 0; j < absolute.size(); ++j)
                       absolute[j] = base + out.displs[j];
                     past_int = base > INT_MAX;
                     sd = absolute.data();
                     from = MPI_BOTTOM;
                   }
                   return (lib ? MPI_Alltoallv_c : PMPI_Alltoallv_c)(
                       from, out.counts.data(), sd, MPI_BYTE, r.data(), in.counts.data(),
                       in.displs.data(), MPI_BYTE, MPI_COMM_WORLD);
                 }));
  MPI_Comm_free(&graph);
  if (rank == 0) {
    if (!past_int) std::printf("large_count_check: rank 0's addresses fit in int here\n");
    std::printf("large_count_check: %d passed, %d failed\n", passed, failed);
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
#else
int main() {
  std::printf("large_count_check: skipped (no large-count forms before MPI-4)\n");
  return 77;
}
#endif
