// neighbor_check: every MPI_Neighbor_alltoallv, MPI_Neighbor_alltoall and MPI_Neighbor_alltoallw
// (intercepted when libcommsched is preloaded) is compared byte for byte with PMPI's on the same
// inputs, each case repeated past learning. Topologies: an irregular distributed graph (with a
// self edge on some ranks), a graph made by MPI_Graph_create, a 2-D Cartesian grid without
// wrap-around (neighbours MPI_PROC_NULL at the edges), a periodic ring, which lists one
// neighbour twice below three ranks (the library must leave that to MPI, every rank agreeing),
// and a fan-in graph whose ranks without neighbours on a side pass no arrays for it. Blocks sit
// at displacements with holes between them, which must keep their canary; some cases send a
// strided derived type; one MPI_Neighbor_alltoallw case mixes two datatypes of the same layout
// (not describable as one exchange: native on every rank).
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

// Which call a case makes: MPI_Neighbor_alltoallv, MPI_Neighbor_alltoall, or
// MPI_Neighbor_alltoallw with one datatype per side or with two alternating ones.
enum class Form { v, regular, w, w_mixed };

template <class T>
T* or_null(std::vector<T>& v) {
  return v.empty() ? nullptr : v.data();
}

// Runs one case kCalls times; `regular` elements per neighbour for Form::regular. Returns the
// number of calls whose bytes differed on this rank.
int run_case(const char* name, MPI_Comm comm, Form form, int regular, MPI_Datatype send_type,
             int send_per_element, MPI_Datatype same_as_int) {
  if (form != Form::regular) regular = 0;
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
  // The w form: byte displacements, a datatype per neighbour.
  std::vector<MPI_Aint> sdw, rdw;
  std::vector<MPI_Datatype> stypes, rtypes;
  for (std::size_t i = 0; i < sd.size(); ++i) {
    sdw.push_back(static_cast<MPI_Aint>(sd[i]) * sext);
    stypes.push_back(form == Form::w_mixed && i % 2 == 1 ? same_as_int : send_type);
  }
  for (int d : rd) {
    rdw.push_back(static_cast<MPI_Aint>(d) * static_cast<MPI_Aint>(sizeof(int)));
    rtypes.push_back(MPI_INT);
  }
#ifdef MPICH_VERSION
  // MPICH 4.0's MPI_Neighbor_alltoallw reads its datatype arrays as far as the communicator's
  // size, not the degree (it crashes on shorter ones, or on none): give it that many entries.
  int size = 0;
  MPI_Comm_size(comm, &size);
  const auto pad = [size](auto& v, auto value) {
    if (v.size() < static_cast<std::size_t>(size)) v.resize(static_cast<std::size_t>(size), value);
  };
  std::vector<int> scw = sc, rcw = rc;
  pad(scw, 0);
  pad(rcw, 0);
  pad(sdw, MPI_Aint{0});
  pad(rdw, MPI_Aint{0});
  pad(stypes, MPI_INT);
  pad(rtypes, MPI_INT);
#else
  std::vector<int>& scw = sc;
  std::vector<int>& rcw = rc;
#endif
  int wrong = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<std::uint8_t> send(sbytes), got(rbytes, kCanary), want(rbytes, kCanary);
    for (std::size_t i = 0; i < send.size(); ++i)
      send[i] = static_cast<std::uint8_t>(mix64((static_cast<std::uint64_t>(rank) << 40) ^
                                                (static_cast<std::uint64_t>(call) << 32) ^ i));
    const std::vector<std::uint8_t> before = send;
    int rc_got = MPI_SUCCESS, rc_want = MPI_SUCCESS;
    if (form == Form::regular) {
      rc_got = MPI_Neighbor_alltoall(send.data(), regular, send_type, got.data(),
                                     regular * send_per_element, MPI_INT, comm);
      rc_want = PMPI_Neighbor_alltoall(send.data(), regular, send_type, want.data(),
                                       regular * send_per_element, MPI_INT, comm);
    } else if (form == Form::v) {
      rc_got = MPI_Neighbor_alltoallv(send.data(), or_null(sc), or_null(sd), send_type,
                                      got.data(), or_null(rc), or_null(rd), MPI_INT, comm);
      rc_want = PMPI_Neighbor_alltoallv(send.data(), or_null(sc), or_null(sd), send_type,
                                        want.data(), or_null(rc), or_null(rd), MPI_INT, comm);
    } else {
      rc_got = MPI_Neighbor_alltoallw(send.data(), or_null(scw), or_null(sdw), or_null(stypes),
                                      got.data(), or_null(rcw), or_null(rdw), or_null(rtypes),
                                      comm);
      rc_want = PMPI_Neighbor_alltoallw(send.data(), or_null(scw), or_null(sdw),
                                        or_null(stypes), want.data(), or_null(rcw), or_null(rdw),
                                        or_null(rtypes), comm);
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
           ring = MPI_COMM_NULL, fan_in = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()), sources.data(),
                                 MPI_UNWEIGHTED, static_cast<int>(destinations.size()),
                                 destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  // Fan-in: every other rank sends to rank 0, which sends nothing; only rank 0 receives.
  std::vector<int> fan_sources;
  if (rank == 0)
    for (int j = 1; j < n; ++j) fan_sources.push_back(j);
  const int to_root = 0;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(fan_sources.size()),
                                 or_null(fan_sources), MPI_UNWEIGHTED, rank == 0 ? 0 : 1,
                                 rank == 0 ? nullptr : &to_root, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &fan_in);
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
  MPI_Datatype same_as_int = MPI_DATATYPE_NULL;  // MPI_INT's layout under another handle
  MPI_Type_contiguous(1, MPI_INT, &same_as_int);
  MPI_Type_commit(&same_as_int);

  struct Case {
    const char* name;
    MPI_Comm comm;
    Form form;
    int regular;
    MPI_Datatype type;
    int ints_per_element;
  };
  const Case cases[] = {
      {"dist graph v", graph, Form::v, 0, MPI_INT, 1},
      {"dist graph x7", graph, Form::regular, 7, MPI_INT, 1},
      {"dist graph v strided", graph, Form::v, 0, strided, 2},
      {"graph ring v", old_graph, Form::v, 0, MPI_INT, 1},
      {"cart 2-D v", grid, Form::v, 0, MPI_INT, 1},
      {"cart 2-D x5", grid, Form::regular, 5, MPI_INT, 1},
      {"periodic ring v", ring, Form::v, 0, MPI_INT, 1},
      {"fan-in v", fan_in, Form::v, 0, MPI_INT, 1},
      {"dist graph w", graph, Form::w, 0, MPI_INT, 1},
      {"dist graph w strided", graph, Form::w, 0, strided, 2},
      {"dist graph w mixed types", graph, Form::w_mixed, 0, MPI_INT, 1},
      {"cart 2-D w", grid, Form::w, 0, MPI_INT, 1},
      {"periodic ring w", ring, Form::w, 0, MPI_INT, 1},
      {"fan-in w", fan_in, Form::w, 0, MPI_INT, 1},
  };
  int passed = 0, failed = 0;
  for (const Case& c : cases) {
#ifdef MPICH_VERSION
    // MPICH 4.0's own MPI_Neighbor_alltoallw delivers nothing on the fan-in graph, whose ranks'
    // in- and out-degrees differ: PMPI's result is no reference there.
    if (c.comm == fan_in && c.form == Form::w) continue;
#endif
    const int mine =
        run_case(c.name, c.comm, c.form, c.regular, c.type, c.ints_per_element, same_as_int);
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    (any ? failed : passed) += 1;
  }
  MPI_Type_free(&strided);
  MPI_Type_free(&same_as_int);
  for (MPI_Comm* c : {&graph, &old_graph, &grid, &ring, &fan_in}) MPI_Comm_free(c);
  if (rank == 0) std::printf("neighbor_check: %d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
