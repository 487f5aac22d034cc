#pragma once
// Header-only helpers the MPI test programs share (tests/mpi, tests/reliability): the mix64
// byte patterns and a seeded choice stream, count matrices and the count/displacement tables
// of one rank, datatype layouts and the canary bookkeeping of a receive buffer, and the
// comparison of a call's buffers with PMPI's.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

// PCOLL(name): the persistent collectives where the MPI has them, MPI-4's (MPI_<name>) or Open
// MPI 4.1's pcollreq extension (MPIX_<name>); undefined elsewhere.
#if MPI_VERSION >= 4
#define PCOLL(name) MPI_##name
#elif defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PCOLL(name) MPIX_##name
#endif
#endif

namespace mpi_test {

/// splitmix64's finaliser: the source of every deterministic byte pattern and choice.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Byte k of the block rank `from` sends to rank `to` in exchange `round`: every received byte
/// says which exchange, sender and receiver it belongs to.
inline unsigned char exchange_byte(int round, int from, int to, int k) {
  return static_cast<unsigned char>(
      mix64((static_cast<std::uint64_t>(round) << 40) ^ (static_cast<std::uint64_t>(from) << 20) ^
            static_cast<std::uint64_t>(to) ^ (static_cast<std::uint64_t>(k) << 48)));
}

/// Deterministic stream of choices; every rank holding the same seed draws the same values.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(mix64(seed)) {}
  std::uint64_t next() { return mix64(state_ += 0x9E3779B97F4A7C15ULL); }
  int below(int k) { return k <= 0 ? 0 : static_cast<int>(next() % static_cast<std::uint64_t>(k)); }
  bool chance(int percent) { return below(100) < percent; }

 private:
  std::uint64_t state_;
};

/// MPI_Comm_rank and MPI_Comm_size of `comm`.
inline void rank_and_size(MPI_Comm comm, int& rank, int& size) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
}

/// Counts, row-major: m[i*n+j] = what rank i sends to rank j (elements or bytes).
using Matrix = std::vector<int>;

inline std::size_t cell(int n, int i, int j) {
  return static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j);
}
inline int at(const Matrix& m, int n, int i, int j) { return m[cell(n, i, j)]; }
inline int& at(Matrix& m, int n, int i, int j) { return m[cell(n, i, j)]; }

/// The lower triangle mirrored: MPI_IN_PLACE requires recvcounts == sendcounts.
inline Matrix symmetric(Matrix m, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) at(m, n, j, i) = at(m, n, i, j);
  return m;
}

/// One rank's arguments of a contiguous MPI_Alltoallv: counts and packed displacements.
struct CountTable {
  std::vector<int> sc, sd, rc, rd;
  int send_total = 0;
  int recv_total = 0;
};

/// The table of `rank` among n ranks where count(i, j) is what rank i sends to rank j.
template <typename Count>
CountTable count_table(int n, int rank, Count count) {
  CountTable t;
  for (int j = 0; j < n; ++j) {
    t.sc.push_back(count(rank, j));
    t.rc.push_back(count(j, rank));
    t.sd.push_back(t.send_total);
    t.rd.push_back(t.recv_total);
    t.send_total += t.sc.back();
    t.recv_total += t.rc.back();
  }
  return t;
}

/// One MPI_Alltoallv of bytes through the library on `comm`, where count(i, j) is what rank i
/// sends to rank j and fill(k) this rank's k-th byte to send, and the same call through
/// PMPI_Alltoallv: whether both delivered the same bytes.
template <typename Count, typename Fill>
bool alltoallv_as_pmpi(MPI_Comm comm, Count count, Fill fill) {
  int rank = 0, size = 1;
  rank_and_size(comm, rank, size);
  const CountTable t = count_table(size, rank, count);
  std::vector<unsigned char> send(static_cast<std::size_t>(t.send_total));
  std::vector<unsigned char> got(static_cast<std::size_t>(t.recv_total), 0xee);
  std::vector<unsigned char> ref(static_cast<std::size_t>(t.recv_total), 0xdd);
  for (int k = 0; k < t.send_total; ++k) send[static_cast<std::size_t>(k)] = fill(k);
  MPI_Alltoallv(send.data(), t.sc.data(), t.sd.data(), MPI_BYTE, got.data(), t.rc.data(),
                t.rd.data(), MPI_BYTE, comm);
  PMPI_Alltoallv(send.data(), t.sc.data(), t.sd.data(), MPI_BYTE, ref.data(), t.rc.data(),
                 t.rd.data(), MPI_BYTE, comm);
  return got == ref;
}

/// Displacements (in elements of the side's type) for blocks of `counts`, `gap` elements left
/// free before and between blocks, in decreasing rank order when `reverse`; returns the extent
/// count the buffer needs.
inline int layout(const std::vector<int>& counts, int gap, bool reverse, std::vector<int>& displs) {
  const int n = static_cast<int>(counts.size());
  displs.assign(counts.size(), 0);
  int pos = gap;
  for (int k = 0; k < n; ++k) {
    const int j = reverse ? n - 1 - k : k;
    displs[static_cast<std::size_t>(j)] = pos;
    pos += counts[static_cast<std::size_t>(j)] + gap;
  }
  return pos;
}

/// A datatype and the byte segments one element covers inside its extent (for the canary check).
struct TypeLayout {
  const char* name = "";
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Aint extent = 0;
  std::vector<std::pair<int, int>> segments;  // (offset, length) in bytes
  bool owned = false;                         // created here, to be freed by its user
};

inline TypeLayout builtin(MPI_Datatype t, int size, const char* name = "") {
  TypeLayout l;
  l.name = name;
  l.type = t;
  l.extent = size;
  l.segments = {{0, size}};
  return l;
}

/// MPI_Type_vector(blocks, 1, 2, MPI_INT), committed, optionally resized to a larger extent so
/// each element also ends with a gap.
inline TypeLayout strided_ints(int blocks, MPI_Aint resized_extent, const char* name = "") {
  TypeLayout l;
  l.name = name;
  MPI_Type_vector(blocks, 1, 2, MPI_INT, &l.type);
  if (resized_extent > 0) {
    MPI_Datatype r;
    MPI_Type_create_resized(l.type, 0, resized_extent, &r);
    MPI_Type_free(&l.type);
    l.type = r;
  }
  MPI_Type_commit(&l.type);
  MPI_Aint lb = 0;
  MPI_Type_get_extent(l.type, &lb, &l.extent);
  for (int b = 0; b < blocks; ++b) l.segments.emplace_back(8 * b, 4);
  l.owned = true;
  return l;
}

/// covered[b] = true where an element of some receive block lies.
inline std::vector<bool> covered_bytes(std::size_t size, const TypeLayout& t,
                                       const std::vector<int>& counts,
                                       const std::vector<int>& displs) {
  std::vector<bool> covered(size, false);
  for (std::size_t j = 0; j < counts.size(); ++j)
    for (int e = 0; e < counts[j]; ++e)
      for (auto [off, len] : t.segments)
        for (int b = 0; b < len; ++b)
          covered[static_cast<std::size_t>((displs[j] + e) * t.extent + off + b)] = true;
  return covered;
}

/// The data a call sends, byte k = mix64(key + k) >> shift: with `in_place` into the covered
/// bytes of `recv` (the rest keeps its canary), else into all of `send`.
inline void fill_send_data(bool in_place, std::uint64_t key, int shift,
                           std::vector<std::uint8_t>& send, std::vector<std::uint8_t>& recv,
                           const std::vector<bool>& covered) {
  if (in_place) {
    for (std::size_t b = 0; b < recv.size(); ++b)
      if (covered[b]) recv[b] = static_cast<std::uint8_t>(mix64(key + b) >> shift);
  } else {
    for (std::size_t b = 0; b < send.size(); ++b)
      send[b] = static_cast<std::uint8_t>(mix64(key + b) >> shift);
  }
}

/// Offset of the first byte where `got` differs from `want` (same size), or got.size().
inline std::size_t first_difference(const std::vector<std::uint8_t>& got,
                                    const std::vector<std::uint8_t>& want) {
  std::size_t b = 0;
  while (b < got.size() && got[b] == want[b]) ++b;
  return b;
}

/// A communicator's neighbour lists: block i of a neighbourhood call goes to destinations[i]
/// and comes from sources[i] (MPI_PROC_NULL where a Cartesian shift falls off).
struct Lists {
  std::vector<int> sources, destinations;
};

inline Lists lists_of(MPI_Comm comm) {
  Lists l;
  int kind = MPI_UNDEFINED, rank = 0;
  MPI_Topo_test(comm, &kind);
  MPI_Comm_rank(comm, &rank);
  if (kind == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    l.sources.resize(static_cast<std::size_t>(in));
    l.destinations.resize(static_cast<std::size_t>(out));
    MPI_Dist_graph_neighbors(comm, in, l.sources.data(), MPI_UNWEIGHTED, out,
                             l.destinations.data(), MPI_UNWEIGHTED);
  } else if (kind == MPI_GRAPH) {
    int count = 0;
    MPI_Graph_neighbors_count(comm, rank, &count);
    l.sources.resize(static_cast<std::size_t>(count));
    MPI_Graph_neighbors(comm, rank, count, l.sources.data());
    l.destinations = l.sources;
  } else {
    int dims = 0;
    MPI_Cartdim_get(comm, &dims);
    for (int d = 0; d < dims; ++d) {
      int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
      MPI_Cart_shift(comm, d, 1, &below, &above);
      l.sources.push_back(below);
      l.sources.push_back(above);
    }
    l.destinations = l.sources;
  }
  return l;
}

/// Waits for `req` (a collective's, started on every rank) while a rank blocks elsewhere first:
/// the last rank of MPI_COMM_WORLD receives a word from rank 0 (tag `tag`) before its wait,
/// and rank 0 sends it only after its own wait. Deadlocks where a rank holds back the
/// exchange's messages while it blocks.
inline void wait_behind_receive(MPI_Request& req, int tag) {
  int rank = 0, size = 0;
  rank_and_size(MPI_COMM_WORLD, rank, size);
  int word = tag;
  if (rank == 0) {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Send(&word, 1, MPI_INT, size - 1, tag, MPI_COMM_WORLD);
  } else if (rank == size - 1) {
    MPI_Recv(&word, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
}

/// A distributed graph of MPI_COMM_WORLD with this rank's lists `l`, as given.
inline MPI_Comm adjacent_graph_of(const Lists& l) {
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(l.sources.size()),
                                 l.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(l.destinations.size()), l.destinations.data(),
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  return g;
}

/// Computation between a non-blocking call's start and its wait.
inline double busy(int n) {
  double x = 0;
  for (int i = 0; i < n; ++i) x += 1.0 / (1.0 + i);
  return x;
}

/// Four ways applications complete a non-blocking exchange, each exchange checked after:
/// computation between start and wait, MPI_Test polling, a second exchange in flight and
/// waited first, and a blocking receive before the wait (wait_behind_receive). `start(round)`
/// and `start_second(round)` return a started exchange (movable, with `req` and `check()`).
template <typename Start, typename StartSecond>
void complete_four_ways(Start start, StartSecond start_second, int& round) {
  volatile double sink = 0;
  auto a = start(++round);
  sink = sink + busy(20000);
  MPI_Wait(&a.req, MPI_STATUS_IGNORE);
  a.check();

  auto b = start(++round);
  for (int flag = 0; !flag;) MPI_Test(&b.req, &flag, MPI_STATUS_IGNORE);
  b.check();

  auto c = start(++round);
  auto w = start_second(++round);
  MPI_Wait(&w.req, MPI_STATUS_IGNORE);
  MPI_Wait(&c.req, MPI_STATUS_IGNORE);
  c.check();
  w.check();

  auto d = start(++round);
  wait_behind_receive(d.req, 5);
  d.check();
}

}  // namespace mpi_test
