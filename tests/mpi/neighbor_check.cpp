// neighbor_check: every MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall (intercepted when
// libcommsched is preloaded) is compared byte for byte with PMPI's on the same inputs, each case
// repeated past learning. Topologies: an irregular distributed graph (with a self edge on some
// ranks), a graph made by MPI_Graph_create, a 2-D Cartesian grid without wrap-around (neighbours
// MPI_PROC_NULL at the edges) and a periodic ring, which lists one neighbour twice below three
// ranks (the library must leave that to MPI, every rank agreeing). Blocks sit at displacements
// with holes between them, which must keep their canary; one case sends a strided derived type.
//
// Prints one line per failing case and rank, then from rank 0
// "neighbor_check: N passed, M failed"; exits 1 on any failure. Runs on any rank count.
#define OMPI_SKIP_MPICXX 1  // C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using mpi_test::mix64;

constexpr int kCalls = 12;  // enough for learning at call 3 and a forced strategy's runs
constexpr std::uint8_t kCanary = 0xA5;

// Elements rank `from` sends rank `to` (both sides compute the same).
int elements(int from, int to) { return ((from * 7 + to * 3) % 5) * 4 + 1; }

// Runs one case kCalls times; `regular` uses MPI_Neighbor_alltoall with `regular` elements per
// neighbour. Returns the number of calls whose bytes differed on this rank.
int run_case(const char* name, MPI_Comm comm, int regular, MPI_Datatype send_type,
             int send_per_element) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const mpi_test::Lists l = mpi_test::lists_of(comm);
  MPI_Aint lb = 0, sext = 0;
  MPI_Type_get_extent(send_type, &lb, &sext);
  // Send blocks of `send_type`, received as ints (send_per_element ints each).
  std::vector<int> sc, sd, rc, rd;
  std::size_t sbytes = 0, rbytes = 0;
  for (std::size_t i = 0; i < l.destinations.size(); ++i) {
    const int to = l.destinations[i];
    const int c = regular ? regular : (to == MPI_PROC_NULL ? 3 : elements(rank, to));
    sc.push_back(c);
    sd.push_back(regular ? static_cast<int>(i) * c : static_cast<int>(sbytes / sext) + 1);
    sbytes = regular ? (i + 1) * c * static_cast<std::size_t>(sext)
                     : sbytes + static_cast<std::size_t>(c + 1) * static_cast<std::size_t>(sext);
  }
  for (std::size_t i = 0; i < l.sources.size(); ++i) {
    const int from = l.sources[i];
    const int c = (regular ? regular : (from == MPI_PROC_NULL ? 3 : elements(from, rank))) *
                  send_per_element;
    rc.push_back(c);
    rd.push_back(regular ? static_cast<int>(i) * c : static_cast<int>(rbytes / sizeof(int)) + 2);
    rbytes = regular ? (i + 1) * c * sizeof(int) : rbytes + (c + 2) * sizeof(int);
  }
  sbytes += static_cast<std::size_t>(sext) * 2 + 8;
  rbytes += 16;
  int wrong = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<std::uint8_t> send(sbytes), got(rbytes, kCanary), want(rbytes, kCanary);
    for (std::size_t i = 0; i < send.size(); ++i)
      send[i] = static_cast<std::uint8_t>(mix64((static_cast<std::uint64_t>(rank) << 40) ^
                                                (static_cast<std::uint64_t>(call) << 32) ^ i));
    const std::vector<std::uint8_t> before = send;
    int rc_got = MPI_SUCCESS, rc_want = MPI_SUCCESS;
    if (regular) {
      rc_got = MPI_Neighbor_alltoall(send.data(), regular, send_type, got.data(),
                                     regular * send_per_element, MPI_INT, comm);
      rc_want = PMPI_Neighbor_alltoall(send.data(), regular, send_type, want.data(),
                                       regular * send_per_element, MPI_INT, comm);
    } else {
      rc_got = MPI_Neighbor_alltoallv(send.data(), sc.data(), sd.data(), send_type, got.data(),
                                      rc.data(), rd.data(), MPI_INT, comm);
      rc_want = PMPI_Neighbor_alltoallv(send.data(), sc.data(), sd.data(), send_type, want.data(),
                                        rc.data(), rd.data(), MPI_INT, comm);
    }
    if (send != before) ++wrong;  // the send buffer must come back unchanged
    if (rc_got != rc_want || got != want) {
      ++wrong;
      std::printf("neighbor_check: %s rank %d call %d: rc %d/%d, first difference at byte %zu\n",
                  name, rank, call, rc_got, rc_want, mpi_test::first_difference(got, want));
    }
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  // An irregular directed graph: rank i sends to i+1, i+3 and 2i+1 (mod n), once each (a self
  // edge where one of them is i); it receives from every rank that sends to it.
  auto targets = [n](int i) {
    std::vector<int> t;
    for (int j : {(i + 1) % n, (i + 3) % n, (2 * i + 1) % n})
      if (std::find(t.begin(), t.end(), j) == t.end()) t.push_back(j);
    return t;
  };
  std::vector<int> sources, destinations = targets(rank);
  for (int j = 0; j < n; ++j) {
    const std::vector<int> t = targets(j);
    if (std::find(t.begin(), t.end(), rank) != t.end()) sources.push_back(j);
  }
  std::reverse(sources.begin(), sources.end());  // any order: MPI keeps the one given
  MPI_Comm graph = MPI_COMM_NULL, old_graph = MPI_COMM_NULL, grid = MPI_COMM_NULL,
           ring = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()), sources.data(),
                                 MPI_UNWEIGHTED, static_cast<int>(destinations.size()),
                                 destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  // MPI_Graph_create: a ring (each rank's neighbours i-1 and i+1) as index/edges arrays.
  std::vector<int> index, edges;
  for (int i = 0; i < n; ++i) {
    edges.push_back((i + n - 1) % n);
    edges.push_back((i + 1) % n);
    index.push_back(static_cast<int>(edges.size()));
  }
  MPI_Graph_create(MPI_COMM_WORLD, n, index.data(), edges.data(), 0, &old_graph);
  int dims[2] = {0, 0}, periods[2] = {0, 0}, wrap = 1;
  MPI_Dims_create(n, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &wrap, 0, &ring);
  MPI_Datatype strided = MPI_DATATYPE_NULL;  // 2 ints of every 3
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);

  struct Case {
    const char* name;
    MPI_Comm comm;
    int regular;
    MPI_Datatype type;
    int ints_per_element;
  };
  const Case cases[] = {
      {"dist graph v", graph, 0, MPI_INT, 1},
      {"dist graph x7", graph, 7, MPI_INT, 1},
      {"dist graph v strided", graph, 0, strided, 2},
      {"graph ring v", old_graph, 0, MPI_INT, 1},
      {"cart 2-D v", grid, 0, MPI_INT, 1},
      {"cart 2-D x5", grid, 5, MPI_INT, 1},
      {"periodic ring v", ring, 0, MPI_INT, 1},
  };
  int passed = 0, failed = 0;
  for (const Case& c : cases) {
    const int mine = run_case(c.name, c.comm, c.regular, c.type, c.ints_per_element);
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    (any ? failed : passed) += 1;
  }
  MPI_Type_free(&strided);
  for (MPI_Comm* c : {&graph, &old_graph, &grid, &ring}) MPI_Comm_free(c);
  if (rank == 0) std::printf("neighbor_check: %d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
