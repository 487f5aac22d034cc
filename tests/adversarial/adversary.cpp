// The adversarial corpus's MPI program (issue 25). Every case is a function chosen by name:
//
//   adversary --case NAME[,NAME...] [--iters N] [--thread multiple] [--list]
//
// Each case calls MPI exactly as an unmodified program would (so the calls go through the library
// when it is preloaded) and folds what it observed into a digest: checksums of every receive
// buffer (gaps included, so a byte written outside the type map shows), return codes and error
// classes, status fields. Rank 0 gathers the digests and prints one line per rank:
//
//   digest CASE rR HASH notes
//
// A native run and a preloaded run must print the same lines (run_corpus.sh compares them).
// Nothing here checks data against an expectation of its own: native MPI is the reference.
// Observations whose order native MPI leaves open (wildcard matches, Waitany and Testsome
// completion order) are folded in without their order.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using mpi_test::mix64;
using Bytes = std::vector<unsigned char>;

/// What one rank observed in one case: an ordered hash, an unordered sum and readable notes.
class Digest {
 public:
  void mix(std::uint64_t v) { hash_ = mix64(hash_ ^ v); }
  void mix_unordered(std::uint64_t v) { unordered_ += mix64(v); }
  void bytes(const unsigned char* p, std::size_t n) {
    std::uint64_t h = n;
    for (std::size_t k = 0; k < n; ++k) h = (h ^ p[k]) * 0x100000001B3ULL;
    mix(h);
  }
  void bytes(const Bytes& b) { bytes(b.data(), b.size()); }
  /// A return code: its class goes into the hash, anything but success into the notes. Only the
  /// class: MPICH's codes carry the index of their message in a ring, different every run.
  void rc(const char* what, int code) {
    int cls = code;
    if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
    mix(static_cast<std::uint64_t>(cls) * 131 + 1);
    if (code != MPI_SUCCESS) note(std::string(what) + "=" + class_name(cls));
  }
  /// Readable notes, each kept once with its count ("isend=MPI_ERR_RANK*5").
  void note(const std::string& s) {
    for (auto& [text, count] : notes_) {
      if (text == s) {
        ++count;
        return;
      }
    }
    notes_.emplace_back(s, 1);
  }
  std::uint64_t value() const { return mix64(hash_ ^ mix64(unordered_)); }
  std::string notes() const {
    std::string out;
    for (const auto& [text, count] : notes_)
      out += (out.empty() ? "" : " ") + text + (count > 1 ? "*" + std::to_string(count) : "");
    return out.substr(0, 400);
  }

  static std::string class_name(int cls) {
    static const std::map<int, const char*> names = {
        {MPI_SUCCESS, "MPI_SUCCESS"},       {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
        {MPI_ERR_COUNT, "MPI_ERR_COUNT"},   {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
        {MPI_ERR_TAG, "MPI_ERR_TAG"},       {MPI_ERR_COMM, "MPI_ERR_COMM"},
        {MPI_ERR_RANK, "MPI_ERR_RANK"},     {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
        {MPI_ERR_ARG, "MPI_ERR_ARG"},       {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
        {MPI_ERR_OTHER, "MPI_ERR_OTHER"},   {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
        {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"}, {MPI_ERR_PENDING, "MPI_ERR_PENDING"}};
    auto it = names.find(cls);
    return it != names.end() ? it->second : "class" + std::to_string(cls);
  }

 private:
  std::uint64_t hash_ = 0x5eed;
  std::uint64_t unordered_ = 0;
  std::vector<std::pair<std::string, int>> notes_;
};

struct Ctx {
  int iters = 8;
  int rank = 0;
  int size = 1;
};

/// Prints every rank's digest of case `name` on rank 0 of MPI_COMM_WORLD.
void publish(const std::string& name, const Digest& d) {
  int rank = 0, size = 1;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
  char line[600];
  std::snprintf(line, sizeof line, "%016llx %s", static_cast<unsigned long long>(d.value()),
                d.notes().c_str());
  int len = static_cast<int>(std::strlen(line)) + 1;
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += lens[static_cast<std::size_t>(r)];
  }
  std::vector<char> all(static_cast<std::size_t>(std::max(total, 1)));
  MPI_Gatherv(line, len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r)
      std::printf("digest %s r%d %s\n", name.c_str(), r, &all[static_cast<std::size_t>(displs[r])]);
    std::fflush(stdout);
  }
}

// --- Alltoallv helpers ---------------------------------------------------------------------

/// Elements rank `src` sends to rank `dst` under pattern `seed`: irregular, about a third zero.
int pattern_count(int seed, int src, int dst) {
  const auto h = mix64(static_cast<std::uint64_t>(seed) * 1000003 +
                       static_cast<std::uint64_t>(src) * 1009 + static_cast<std::uint64_t>(dst));
  const int c = static_cast<int>(h % 9);
  return c < 3 ? 0 : c - 2;
}

/// One rank's counts and displacements (elements of its side's type), a gap between blocks.
struct Counts {
  std::vector<int> sc, sd, rc, rd;
  int send_extent = 0;  // elements the send buffer spans
  int recv_extent = 0;
};

Counts make_counts(int peers, const std::function<int(int)>& send_to,
                   const std::function<int(int)>& recv_from, int gap = 1) {
  Counts c;
  for (int j = 0; j < peers; ++j) {
    c.sc.push_back(send_to(j));
    c.rc.push_back(recv_from(j));
  }
  c.send_extent = mpi_test::layout(c.sc, gap, false, c.sd);
  c.recv_extent = mpi_test::layout(c.rc, gap, true, c.rd);
  return c;
}

/// Counts of pattern `seed` on an intracommunicator.
Counts intra_counts(MPI_Comm comm, int seed, int gap = 1) {
  int me = 0, n = 1;
  mpi_test::rank_and_size(comm, me, n);
  return make_counts(
      n, [&](int j) { return pattern_count(seed, me, j); },
      [&](int j) { return pattern_count(seed, j, me); }, gap);
}

/// A datatype as the cases use it: handle, extent, and the offset of the buffer's origin.
struct Type {
  MPI_Datatype type = MPI_INT;
  MPI_Aint extent = 4;
  MPI_Aint origin = 0;  // bytes before the buffer pointer (a negative lower bound)
  bool owned = false;
};

Type type_of(MPI_Datatype t) {
  Type r;
  r.type = t;
  MPI_Aint lb = 0;
  MPI_Type_get_extent(t, &lb, &r.extent);
  r.origin = lb < 0 ? -lb : 0;
  return r;
}

Type committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  Type r = type_of(t);
  r.owned = true;
  return r;
}

void release(Type& t) {
  if (t.owned) MPI_Type_free(&t.type);
}

Bytes send_data(std::size_t n, std::uint64_t key) {
  Bytes b(n);
  for (std::size_t k = 0; k < n; ++k) b[k] = static_cast<unsigned char>(mix64(key + k) >> 13);
  return b;
}

std::uint64_t call_key(int rank, int call, int salt) {
  return mix64(static_cast<std::uint64_t>(rank) << 40 ^ static_cast<std::uint64_t>(call) << 20 ^
               static_cast<std::uint64_t>(salt));
}

/// One MPI_Alltoallv with fresh send data; the receive buffer (canaries in its gaps) and the
/// return code go into the digest.
int alltoallv_once(MPI_Comm comm, const Counts& c, const Type& st, const Type& rt, int call,
                   int salt, Digest& d, bool in_place = false) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const auto slen = static_cast<std::size_t>(st.origin + c.send_extent * st.extent + 16);
  const auto rlen = static_cast<std::size_t>(rt.origin + c.recv_extent * rt.extent + 16);
  Bytes send = send_data(slen, call_key(me, call, salt));
  Bytes recv(rlen, 0xEE);
  if (in_place) recv = send_data(rlen, call_key(me, call, salt));
  const int rc = MPI_Alltoallv(in_place ? MPI_IN_PLACE : send.data() + st.origin, c.sc.data(),
                               c.sd.data(), st.type, recv.data() + rt.origin, c.rc.data(),
                               c.rd.data(), rt.type, comm);
  d.rc("alltoallv", rc);
  d.bytes(recv);
  return rc;
}

/// `iters` calls of one pattern with MPI_INT on both sides.
void alltoallv_loop(MPI_Comm comm, int seed, int iters, Digest& d, int salt = 0) {
  const Counts c = intra_counts(comm, seed);
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < iters; ++i) alltoallv_once(comm, c, t, t, i, salt + seed, d);
}

// --- Held classes: datatypes, MPI_IN_PLACE, zero counts ------------------------------------

void run_typed(const Ctx& x, Digest& d, Type st, Type rt, int seed) {
  const Counts c = intra_counts(MPI_COMM_WORLD, seed, 2);
  for (int i = 0; i < x.iters; ++i) alltoallv_once(MPI_COMM_WORLD, c, st, rt, i, seed, d);
  const bool same = rt.type == st.type;
  release(st);
  if (!same) release(rt);
}

MPI_Datatype vector_type(int stride) {
  MPI_Datatype t;
  MPI_Type_vector(2, 1, stride, MPI_INT, &t);
  return t;
}

void case_basic(const Ctx& x, Digest& d) { alltoallv_loop(MPI_COMM_WORLD, 11, x.iters, d); }

void case_zero_counts(const Ctx& x, Digest& d) {
  // Odd ranks send nothing at all; then a call where nobody sends anything.
  const Counts c = make_counts(
      x.size, [&](int j) { return x.rank % 2 ? 0 : pattern_count(12, x.rank, j); },
      [&](int j) { return j % 2 ? 0 : pattern_count(12, j, x.rank); });
  const Counts z = make_counts(x.size, [](int) { return 0; }, [](int) { return 0; });
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < x.iters; ++i) alltoallv_once(MPI_COMM_WORLD, c, t, t, i, 12, d);
  for (int i = 0; i < x.iters; ++i) alltoallv_once(MPI_COMM_WORLD, z, t, t, i, 13, d);
}

void case_in_place(const Ctx& x, Digest& d) {
  mpi_test::Matrix m(static_cast<std::size_t>(x.size * x.size));
  for (int i = 0; i < x.size; ++i)
    for (int j = 0; j < x.size; ++j) mpi_test::at(m, x.size, i, j) = pattern_count(14, i, j);
  m = mpi_test::symmetric(m, x.size);
  const Counts c = make_counts(
      x.size, [&](int j) { return mpi_test::at(m, x.size, x.rank, j); },
      [&](int j) { return mpi_test::at(m, x.size, j, x.rank); });
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < x.iters; ++i) alltoallv_once(MPI_COMM_WORLD, c, t, t, i, 14, d, true);
}

void case_dt_vector(const Ctx& x, Digest& d) {
  const Type t = committed(vector_type(3));
  run_typed(x, d, t, t, 15);
}

void case_dt_indexed(const Ctx& x, Digest& d) {
  MPI_Datatype t;
  const int lens[2] = {1, 2}, displs[2] = {0, 3};
  MPI_Type_indexed(2, lens, displs, MPI_INT, &t);
  const Type ti = committed(t);
  run_typed(x, d, ti, ti, 16);
}

void case_dt_struct(const Ctx& x, Digest& d) {
  MPI_Datatype t;
  const int lens[2] = {1, 1};
  const MPI_Aint displs[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, lens, displs, types, &t);
  const Type ts = committed(t);
  run_typed(x, d, ts, ts, 17);
}

void case_dt_resized(const Ctx& x, Digest& d) {
  MPI_Datatype t;
  MPI_Type_create_resized(MPI_INT, 0, 12, &t);
  const Type tr = committed(t);
  run_typed(x, d, tr, tr, 18);
}

void case_dt_neg_lb(const Ctx& x, Digest& d) {
  // Two ints at -8 and 0: the lower bound is negative, the buffer pointer sits 8 bytes in.
  MPI_Datatype t;
  const int lens[2] = {1, 1};
  const MPI_Aint displs[2] = {-8, 0};
  MPI_Type_create_hindexed(2, lens, displs, MPI_INT, &t);
  const Type tn = committed(t);
  run_typed(x, d, tn, tn, 19);
}

void case_dt_mixed(const Ctx& x, Digest& d) {
  // Sender's vector of 2 ints against the receiver's MPI_2INT: same type signature.
  const Type sv = committed(vector_type(2));
  run_typed(x, d, sv, type_of(MPI_2INT), 20);
}

// --- Held classes: communicators ------------------------------------------------------------

void case_comm_split(const Ctx& x, Digest& d) {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, x.rank % 2, x.size - x.rank, &half);
  alltoallv_loop(half, 21, x.iters, d);
  MPI_Comm_free(&half);
}

void case_comm_dup(const Ctx& x, Digest& d) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  alltoallv_loop(dup, 22, x.iters, d);
  alltoallv_loop(MPI_COMM_WORLD, 22, x.iters, d, 1);  // the same pattern on the parent
  MPI_Comm_free(&dup);
}

void case_comm_cart(const Ctx& x, Digest& d) {
  int dims[2] = {0, 0};
  const int periods[2] = {1, 0};
  MPI_Dims_create(x.size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
  alltoallv_loop(cart, 23, x.iters, d);
  MPI_Comm_free(&cart);
}

void case_comm_graph(const Ctx& x, Digest& d) {
  // A ring as a graph topology, reordering allowed.
  std::vector<int> index, edges;
  for (int r = 0; r < x.size; ++r) {
    edges.push_back((r + 1) % x.size);
    edges.push_back((r + x.size - 1) % x.size);
    index.push_back(static_cast<int>(edges.size()));
  }
  MPI_Comm graph;
  MPI_Graph_create(MPI_COMM_WORLD, x.size, index.data(), edges.data(), 1, &graph);
  alltoallv_loop(graph, 24, x.iters, d);
  MPI_Comm_free(&graph);
}

void case_comm_dist_graph(const Ctx& x, Digest& d) {
  const int next = (x.rank + 1) % x.size, prev = (x.rank + x.size - 1) % x.size;
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, MPI_UNWEIGHTED, 1, &next,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  alltoallv_loop(g, 25, x.iters, d);
  MPI_Comm_free(&g);
}

void case_comm_create_group(const Ctx& x, Digest& d) {
  // Every rank but the last, in reverse order.
  MPI_Group world_group, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  std::vector<int> members;
  for (int r = x.size - 2; r >= 0; --r) members.push_back(r);
  MPI_Group_incl(world_group, static_cast<int>(members.size()), members.data(), &group);
  if (x.rank < x.size - 1) {
    MPI_Comm sub;
    MPI_Comm_create_group(MPI_COMM_WORLD, group, 5, &sub);
    alltoallv_loop(sub, 26, x.iters, d);
    MPI_Comm_free(&sub);
  }
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
}

/// Alltoallv over an intercommunicator of group A (colour 0) and B, from each side's view.
void inter_exchange(MPI_Comm inter, int colour, int seed, int iters, Digest& d) {
  int me = 0, remote = 0;
  MPI_Comm_rank(inter, &me);
  MPI_Comm_remote_size(inter, &remote);
  const Counts c = make_counts(
      remote, [&](int j) { return pattern_count(seed + colour, me, j); },
      [&](int j) { return pattern_count(seed + 1 - colour, j, me); });
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < iters; ++i) alltoallv_once(inter, c, t, t, i, seed, d);
}

/// Splits the world by `colour_of(rank)` into two groups joined by an intercommunicator.
void with_intercomm(const Ctx& x, const std::function<int(int)>& colour_of,
                    const std::function<void(MPI_Comm, int)>& body) {
  const int colour = colour_of(x.rank);
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, colour, x.rank, &local);
  int remote_leader = -1;
  for (int r = 0; r < x.size && remote_leader < 0; ++r)
    if (colour_of(r) != colour) remote_leader = r;
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
  body(inter, colour);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

void case_inter_even(const Ctx& x, Digest& d) {
  with_intercomm(x, [&](int r) { return r < x.size / 2 ? 0 : 1; },
                 [&](MPI_Comm inter, int colour) { inter_exchange(inter, colour, 27, x.iters, d); });
}

void case_inter_small_local(const Ctx& x, Digest& d) {
  // Rank 0 alone against the rest: its remote group is larger than its local one.
  with_intercomm(x, [](int r) { return r == 0 ? 0 : 1; },
                 [&](MPI_Comm inter, int colour) { inter_exchange(inter, colour, 29, x.iters, d); });
}

void case_inter_small_remote(const Ctx& x, Digest& d) {
  // The last rank alone: group A holds everyone else.
  with_intercomm(x, [&](int r) { return r == x.size - 1 ? 1 : 0; },
                 [&](MPI_Comm inter, int colour) { inter_exchange(inter, colour, 31, x.iters, d); });
}

void case_inter_merge(const Ctx& x, Digest& d) {
  with_intercomm(x, [](int r) { return r % 2; }, [&](MPI_Comm inter, int colour) {
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, colour, &merged);
    alltoallv_loop(merged, 33, x.iters, d);
    MPI_Comm_free(&merged);
  });
}

// --- Held classes: error handlers ------------------------------------------------------------

/// The pattern on a duplicate of MPI_COMM_WORLD with error handler `h`, every call valid.
void errh_loop(const Ctx& x, Digest& d, MPI_Errhandler h, int seed) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, h);
  alltoallv_loop(dup, seed, x.iters, d);
  MPI_Comm_free(&dup);
}

void case_errh_return_valid(const Ctx& x, Digest& d) { errh_loop(x, d, MPI_ERRORS_RETURN, 34); }
void case_errh_fatal_valid(const Ctx& x, Digest& d) { errh_loop(x, d, MPI_ERRORS_ARE_FATAL, 35); }

int custom_calls = 0;
void count_error(MPI_Comm*, int*, ...) { ++custom_calls; }

void case_errh_custom(const Ctx& x, Digest& d) {
  // A user handler that returns: the call's code comes back and the handler ran once per error.
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Errhandler h;
  MPI_Comm_create_errhandler(count_error, &h);
  MPI_Comm_set_errhandler(dup, h);
  custom_calls = 0;
  alltoallv_loop(dup, 36, x.iters, d);
  Counts c = intra_counts(dup, 36);
  for (auto& v : c.sc) v = -1;
  alltoallv_once(dup, c, type_of(MPI_INT), type_of(MPI_INT), 99, 36, d);
  d.note("handler_calls=" + std::to_string(custom_calls));
  d.mix(static_cast<std::uint64_t>(custom_calls));
  MPI_Errhandler_free(&h);
  MPI_Comm_free(&dup);
}

/// The entries of an all-to-all's per-peer arrays on `comm`: its size, or its remote group's on
/// an intercommunicator.
int peers_of(MPI_Comm comm) {
  int n = 1, inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (inter) {
    MPI_Comm_remote_size(comm, &n);
  } else {
    MPI_Comm_size(comm, &n);
  }
  return n;
}

// --- MPI_Alltoallw and the neighbourhood all-to-alls ---------------------------------------------

/// One MPI_Alltoallw of (peer % 3 + 1) * `scale` ints to every peer of `comm` (its remote group
/// on an intercommunicator), blocks 8 bytes apart; `null_type_peer` >= 0 gives that peer
/// MPI_DATATYPE_NULL (MPI rejects the call).
void alltoallw_once(MPI_Comm comm, int scale, int call, int salt, Digest& d,
                    int null_type_peer = -1) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const int n = peers_of(comm);
  std::vector<int> sc(static_cast<std::size_t>(n)), rc(sc), sd(sc), rd(sc);
  std::vector<MPI_Datatype> st(sc.size(), MPI_INT), rt(sc.size(), MPI_INT);
  int at_s = 0, at_r = 0;
  for (int j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    // (sender's rank in its group % 3 + 1) * scale: on an intercommunicator too, where the
    // receiver numbers the sender by that rank.
    sc[k] = (me % 3 + 1) * scale;
    rc[k] = (j % 3 + 1) * scale;
    sd[k] = at_s;
    rd[k] = at_r;
    at_s += sc[k] * 4 + 8;
    at_r += rc[k] * 4 + 8;
  }
  if (null_type_peer >= 0 && null_type_peer < n)
    st[static_cast<std::size_t>(null_type_peer)] = MPI_DATATYPE_NULL;
  Bytes send = send_data(static_cast<std::size_t>(at_s) + 8, call_key(me, call, salt));
  Bytes recv(static_cast<std::size_t>(at_r) + 8, 0xEE);
  const int code = MPI_Alltoallw(send.data(), sc.data(), sd.data(), st.data(), recv.data(),
                                 rc.data(), rd.data(), rt.data(), comm);
  d.rc("alltoallw", code);
  d.bytes(recv);
}

void case_alltoallw_comms(const Ctx& x, Digest& d) {
  for (int i = 0; i < x.iters; ++i) alltoallw_once(MPI_COMM_WORLD, 2, i, 60, d);
  // Rank 0 alone against the rest: the per-peer arrays are as long as the remote group.
  with_intercomm(x, [](int r) { return r == 0 ? 0 : 1; }, [&](MPI_Comm inter, int) {
    for (int i = 0; i < x.iters; ++i) alltoallw_once(inter, 1, i, 61, d);
  });
}

void case_err_alltoallw(const Ctx& x, Digest& d) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  for (int i = 0; i < x.iters; ++i) alltoallw_once(c, 1, i, 62, d);  // learned
  for (int i = 0; i < 3; ++i) alltoallw_once(c, 1, i, 63, d, x.size - 1);  // a null datatype
  for (int i = 0; i < x.iters; ++i) alltoallw_once(c, 1, i, 64, d);  // the pattern again
  MPI_Comm_free(&c);
}

/// One MPI_Neighbor_alltoall of `count` ints per neighbour of `comm`; the receive buffer holds
/// `slots` blocks (a communicator without a topology: MPI rejects the call).
void neighbor_once(MPI_Comm comm, int count, int slots, int call, int salt, Digest& d) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const auto len = static_cast<std::size_t>(slots * count * 4 + 16);
  Bytes send = send_data(len, call_key(me, call, salt));
  Bytes recv(len, 0xEE);
  d.rc("neighbor_alltoall",
       MPI_Neighbor_alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, comm));
  d.bytes(recv);
}

void case_neighbor_topologies(const Ctx& x, Digest& d) {
  // Periodic rings of one, two and more ranks: below three a neighbour is listed twice.
  MPI_Comm part;
  MPI_Comm_split(MPI_COMM_WORLD, x.rank < 1 ? 0 : (x.rank < 3 ? 1 : 2), x.rank, &part);
  int n = 1, wrap = 1;
  MPI_Comm_size(part, &n);
  MPI_Comm ring;
  MPI_Cart_create(part, 1, &n, &wrap, 0, &ring);
  for (int i = 0; i < x.iters; ++i) neighbor_once(ring, 3, 2, i, 65, d);
  MPI_Comm_free(&ring);
  MPI_Comm_free(&part);
  // A weighted distributed graph: every rank to the next two, weights ignored by the exchange.
  const int to[2] = {(x.rank + 1) % x.size, (x.rank + 2) % x.size};
  const int from[2] = {(x.rank + x.size - 1) % x.size, (x.rank + x.size - 2) % x.size};
  const int w[2] = {5, 1};
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, from, w, 2, to, w, MPI_INFO_NULL, 0, &graph);
  for (int i = 0; i < x.iters; ++i) neighbor_once(graph, 4, 2, i, 66, d);
  MPI_Comm_free(&graph);
}

void case_err_neighbor_no_topology(const Ctx& x, Digest& d) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  for (int i = 0; i < 3; ++i) neighbor_once(c, 2, x.size, i, 67, d);
  MPI_Comm_free(&c);
}

// --- MPI_Alltoall: the regular exchange through the same steps ---------------------------------

/// One MPI_Alltoall of `count` elements of `st` per peer (received as `rcount` of `rt`), fresh
/// send data; the receive buffer (canaries past its end) and the return code go into the digest.
int alltoall_once(MPI_Comm comm, int count, const Type& st, int rcount, const Type& rt, int call,
                  int salt, Digest& d, bool in_place = false) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const int n = peers_of(comm);
  const auto blocks = static_cast<std::size_t>(n);
  const auto slen = static_cast<std::size_t>(st.origin + std::max(count, 0) * st.extent) * blocks + 16;
  const auto rlen = static_cast<std::size_t>(rt.origin + std::max(rcount, 0) * rt.extent) * blocks + 16;
  Bytes send = send_data(slen, call_key(me, call, salt));
  Bytes recv(rlen, 0xEE);
  if (in_place) recv = send_data(rlen, call_key(me, call, salt));
  const int rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : send.data() + st.origin, count, st.type,
                              recv.data() + rt.origin, rcount, rt.type, comm);
  d.rc("alltoall", rc);
  d.bytes(recv);
  return rc;
}

void alltoall_loop(MPI_Comm comm, int count, int iters, int salt, Digest& d) {
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < iters; ++i) alltoall_once(comm, count, t, count, t, i, salt, d);
}

void case_alltoall_basic(const Ctx& x, Digest& d) {
  alltoall_loop(MPI_COMM_WORLD, 3, x.iters, 40, d);
  alltoall_loop(MPI_COMM_WORLD, 0, x.iters, 41, d);  // zero counts: a pattern of its own
}

void case_alltoall_in_place(const Ctx& x, Digest& d) {
  const Type t = type_of(MPI_DOUBLE);
  for (int i = 0; i < x.iters; ++i) alltoall_once(MPI_COMM_WORLD, 0, t, 5, t, i, 42, d, true);
}

void case_alltoall_dt(const Ctx& x, Digest& d) {
  // Every other int of a vector sent, received as contiguous ints; then a negative lower bound.
  Type vec = committed(vector_type(2)), neg;
  for (int i = 0; i < x.iters; ++i)
    alltoall_once(MPI_COMM_WORLD, 3, vec, 6, type_of(MPI_INT), i, 43, d);
  MPI_Datatype resized;
  MPI_Type_create_resized(MPI_INT, -4, 8, &resized);
  neg = committed(resized);
  for (int i = 0; i < x.iters; ++i) alltoall_once(MPI_COMM_WORLD, 2, neg, 2, neg, i, 44, d);
  release(vec);
  release(neg);
}

void case_alltoall_comms(const Ctx& x, Digest& d) {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, x.rank % 2, -x.rank, &half);
  alltoall_loop(half, 7, x.iters, 45, d);
  MPI_Comm_free(&half);
  with_intercomm(x, [](int r) { return r == 0 ? 0 : 1; },
                 [&](MPI_Comm inter, int) { alltoall_loop(inter, 2, x.iters, 46, d); });
}

void case_err_alltoall(const Ctx& x, Digest& d) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  alltoall_loop(c, 4, x.iters, 47, d);  // learned, then invalid calls, then the pattern again
  const Type t = type_of(MPI_INT);
  Type null_type;
  null_type.type = MPI_DATATYPE_NULL;
  for (int b = 0; b < 5; ++b) {
    alltoall_once(c, -1, t, 4, t, 90, 47, d);
    alltoall_once(c, 4, t, -2, t, 91, 47, d);
    alltoall_once(c, 4, null_type, 4, t, 92, 47, d);
  }
  alltoall_loop(c, 4, 3, 48, d);
  MPI_Comm_free(&c);
}

// --- Class 1: datatypes freed while an operation is pending, handles reused -----------------

/// A burst to every peer: receives of contiguous ints, sends of `make_type(iteration, peer)`
/// freed right after MPI_Isend when `free_early` (legal: the pending send keeps it alive).
void burst_with_types(const Ctx& x, Digest& d, MPI_Comm comm, int seed,
                      const std::function<MPI_Datatype(int, int)>& make_type, bool free_early,
                      bool free_recv_type = false) {
  for (int i = 0; i < x.iters; ++i) {
    std::vector<MPI_Request> reqs;
    std::vector<Bytes> recvs, sends;
    std::vector<MPI_Datatype> to_free;
    for (int j = 0; j < x.size; ++j) {
      const int n = 1 + pattern_count(seed, j, x.rank);
      recvs.emplace_back(static_cast<std::size_t>(n) * 8 + 8, 0xEE);
      MPI_Datatype rt = MPI_INT;
      if (free_recv_type) {
        MPI_Type_contiguous(1, MPI_INT, &rt);
        MPI_Type_commit(&rt);
      }
      reqs.push_back(MPI_REQUEST_NULL);
      d.rc("irecv", MPI_Irecv(recvs.back().data(), 2 * n, rt, j, 40 + j, comm, &reqs.back()));
      if (free_recv_type) MPI_Type_free(&rt);
    }
    for (int k = 1; k <= x.size; ++k) {
      const int j = (x.rank + k) % x.size;
      const int n = 1 + pattern_count(seed, x.rank, j);
      MPI_Datatype t = make_type(i, j);
      MPI_Type_commit(&t);
      MPI_Aint lb = 0, extent = 0;
      MPI_Type_get_extent(t, &lb, &extent);
      sends.push_back(send_data(static_cast<std::size_t>(n * extent + 16), call_key(x.rank, i, j)));
      reqs.push_back(MPI_REQUEST_NULL);
      d.rc("isend", MPI_Isend(sends.back().data(), n, t, j, 40 + x.rank, comm, &reqs.back()));
      if (free_early) {
        MPI_Type_free(&t);
      } else {
        to_free.push_back(t);
      }
    }
    d.rc("waitall", MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
    for (auto& t : to_free) MPI_Type_free(&t);
    for (const auto& r : recvs) d.bytes(r);
  }
}

void case_dt_free_after_isend(const Ctx& x, Digest& d) {
  burst_with_types(x, d, MPI_COMM_WORLD, 41, [](int, int) { return vector_type(3); }, true);
}

void case_dt_free_after_isend_reuse(const Ctx& x, Digest& d) {
  // Each send frees its type and the next makes one of another layout (same size), which MPI is
  // free to give the same handle.
  burst_with_types(
      x, d, MPI_COMM_WORLD, 42, [](int i, int j) { return vector_type(2 + (i + j) % 3); }, true);
}

void case_dt_free_after_irecv(const Ctx& x, Digest& d) {
  burst_with_types(x, d, MPI_COMM_WORLD, 43, [](int, int) { return vector_type(2); }, true, true);
}

void case_dt_keep_until_wait(const Ctx& x, Digest& d) {
  // The control: the same burst, types freed only after MPI_Waitall.
  burst_with_types(x, d, MPI_COMM_WORLD, 41, [](int, int) { return vector_type(3); }, false);
}

void case_dt_free_after_alltoallv(const Ctx& x, Digest& d) {
  const Counts c = intra_counts(MPI_COMM_WORLD, 44, 2);
  for (int i = 0; i < x.iters; ++i) {
    Type t = committed(vector_type(3));
    alltoallv_once(MPI_COMM_WORLD, c, t, t, i, 44, d);
    release(t);
  }
}

void case_dt_reuse_handle_alltoallv(const Ctx& x, Digest& d) {
  // Same counts every call, a new datatype each call whose layout alternates: a learned plan must
  // not keep the previous type's layout.
  const Counts c = intra_counts(MPI_COMM_WORLD, 45, 3);
  for (int i = 0; i < x.iters + 4; ++i) {
    Type t = committed(vector_type(2 + (i / 4) % 2));
    alltoallv_once(MPI_COMM_WORLD, c, t, t, i, 45, d);
    release(t);
  }
}

void case_dt_reuse_handle_mixed(const Ctx& x, Digest& d) {
  // Send side derived and recreated every call, receive side MPI_INT: the byte counts never change.
  const Counts c = make_counts(
      x.size, [&](int j) { return pattern_count(46, x.rank, j); },
      [&](int j) { return 2 * pattern_count(46, j, x.rank); });
  for (int i = 0; i < x.iters + 4; ++i) {
    Type t = committed(vector_type(2 + i % 2));
    alltoallv_once(MPI_COMM_WORLD, c, t, type_of(MPI_INT), i, 46, d);
    release(t);
  }
}

// --- Class 3: communicators released and their handles reused --------------------------------

void comm_cycles(const Ctx& x, Digest& d, bool disconnect) {
  for (int cycle = 0; cycle < 4; ++cycle) {
    MPI_Comm c;
    if (cycle % 2 == 0) {
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    } else {  // another size: every rank but the last, the last alone
      MPI_Comm_split(MPI_COMM_WORLD, x.rank == x.size - 1 ? 1 : 0, x.rank, &c);
    }
    alltoallv_loop(c, 50 + cycle, x.iters, d);
    if (disconnect) {
      MPI_Comm_disconnect(&c);
    } else {
      MPI_Comm_free(&c);
    }
  }
}

void case_comm_disconnect_reuse(const Ctx& x, Digest& d) { comm_cycles(x, d, true); }
void case_comm_free_reuse(const Ctx& x, Digest& d) { comm_cycles(x, d, false); }

void case_comm_free_burst_reuse(const Ctx& x, Digest& d) {
  // Bursts learned on a communicator that is then freed; the next one (maybe the same handle)
  // has another size and other peers.
  for (int cycle = 0; cycle < 3; ++cycle) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, cycle == 1 ? x.rank % 2 : 0, x.rank, &c);
    int me = 0, n = 1;
    mpi_test::rank_and_size(c, me, n);
    for (int i = 0; i < x.iters; ++i) {
      std::vector<MPI_Request> reqs(2 * static_cast<std::size_t>(n), MPI_REQUEST_NULL);
      std::vector<int> in(static_cast<std::size_t>(n) * 4, -1), out(static_cast<std::size_t>(n) * 4);
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = me * 1000 + i * 10 + static_cast<int>(k);
      for (int j = 0; j < n; ++j) MPI_Irecv(&in[static_cast<std::size_t>(j) * 4], 4, MPI_INT, j, 60, c, &reqs[static_cast<std::size_t>(j)]);
      for (int j = 0; j < n; ++j)
        MPI_Isend(&out[static_cast<std::size_t>(j) * 4], 4, MPI_INT, j, 60, c,
                  &reqs[static_cast<std::size_t>(n + j)]);
      d.rc("waitall", MPI_Waitall(2 * n, reqs.data(), MPI_STATUSES_IGNORE));
      d.bytes(reinterpret_cast<const unsigned char*>(in.data()), in.size() * sizeof(int));
    }
    MPI_Comm_free(&c);
  }
}

// --- Classes 6 and 7: invalid arguments under MPI_ERRORS_RETURN -----------------------------

/// A duplicate of MPI_COMM_WORLD that returns errors, for the error cases.
MPI_Comm returning_comm() {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

/// Learns pattern `seed` on `c`, then runs `bad` (the invalid calls) five times in a row, so a
/// repeated invalid call could itself be learned, then the pattern again.
void learned_then(const Ctx& x, Digest& d, MPI_Comm c, int seed,
                  const std::function<void(const Counts&)>& bad) {
  const Counts counts = intra_counts(c, seed);
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < x.iters; ++i) alltoallv_once(c, counts, t, t, i, seed, d);
  for (int b = 0; b < 5; ++b) bad(counts);
  for (int i = 0; i < 3; ++i) alltoallv_once(c, counts, t, t, 100 + i, seed, d);
}

void case_err_dtnull_alltoallv(const Ctx& x, Digest& d) {
  MPI_Comm c = returning_comm();
  learned_then(x, d, c, 70, [&](const Counts& counts) {
    Type null_type;
    null_type.type = MPI_DATATYPE_NULL;
    alltoallv_once(c, counts, null_type, type_of(MPI_INT), 90, 70, d);
    alltoallv_once(c, counts, type_of(MPI_INT), null_type, 91, 70, d);
  });
  MPI_Comm_free(&c);
}

void case_err_negcount_alltoallv(const Ctx& x, Digest& d) {
  MPI_Comm c = returning_comm();
  learned_then(x, d, c, 71, [&](const Counts& counts) {
    Counts bad = counts;
    bad.sc[static_cast<std::size_t>((x.rank + 1) % x.size)] = -3;
    alltoallv_once(c, bad, type_of(MPI_INT), type_of(MPI_INT), 92, 71, d);
    bad = counts;
    bad.rc[0] = -1;
    alltoallv_once(c, bad, type_of(MPI_INT), type_of(MPI_INT), 93, 71, d);
  });
  MPI_Comm_free(&c);
}

void case_err_comm_null(const Ctx& x, Digest& d) {
  // MPI_COMM_NULL: the error goes to MPI_COMM_WORLD's handler, set to return here.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  learned_then(x, d, MPI_COMM_WORLD, 72, [&](const Counts& counts) {
    const int s = 0;
    int r = 0;
    d.rc("alltoallv_null", MPI_Alltoallv(&s, counts.sc.data(), counts.sd.data(), MPI_INT, &r,
                                         counts.rc.data(), counts.rd.data(), MPI_INT,
                                         MPI_COMM_NULL));
  });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/// A burst to every peer (ints, tag 80) repeated until learned, then five bursts with the send
/// to the next rank replaced by `bad_send` (a repeated invalid post could itself be learned and
/// held), then clean bursts again.
void burst_then(const Ctx& x, Digest& d, MPI_Comm c,
                const std::function<int(const int*, MPI_Request*)>& bad_send) {
  const int victim = (x.rank + 1) % x.size;
  for (int i = 0; i < x.iters + 8; ++i) {
    const bool bad_now = i >= x.iters && i < x.iters + 5;
    std::vector<int> in(static_cast<std::size_t>(x.size) * 3, -1),
        out(static_cast<std::size_t>(x.size) * 3);
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = x.rank * 1000 + i * 10 + static_cast<int>(k);
    std::vector<MPI_Request> reqs(2 * static_cast<std::size_t>(x.size), MPI_REQUEST_NULL);
    for (int j = 0; j < x.size; ++j) {
      if (bad_now && j == (x.rank + x.size - 1) % x.size) continue;  // its sender misbehaves
      d.rc("irecv", MPI_Irecv(&in[static_cast<std::size_t>(j) * 3], 3, MPI_INT, j, 80, c,
                              &reqs[static_cast<std::size_t>(j)]));
    }
    for (int k = 1; k <= x.size; ++k) {
      const int j = (x.rank + k) % x.size;
      const int* buf = &out[static_cast<std::size_t>(j) * 3];
      MPI_Request* req = &reqs[static_cast<std::size_t>(x.size + j)];
      if (bad_now && j == victim) {
        d.rc("bad_isend", bad_send(buf, req));
        if (*req != MPI_REQUEST_NULL) d.note("bad_isend_gave_request");
      } else {
        d.rc("isend", MPI_Isend(buf, 3, MPI_INT, j, 80, c, req));
      }
    }
    std::vector<MPI_Status> st(reqs.size());
    d.rc("waitall", MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
    d.bytes(reinterpret_cast<const unsigned char*>(in.data()), in.size() * sizeof(int));
  }
}

void case_err_dtnull_isend(const Ctx& x, Digest& d) {
  MPI_Comm c = returning_comm();
  const int victim = (x.rank + 1) % x.size;
  burst_then(x, d, c, [&](const int* buf, MPI_Request* req) {
    return MPI_Isend(buf, 3, MPI_DATATYPE_NULL, victim, 80, c, req);
  });
  MPI_Comm_free(&c);
}

void case_err_dtnull_isend_world(const Ctx& x, Digest& d) {
  // The same on MPI_COMM_WORLD, where level collective votes on bursts.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int victim = (x.rank + 1) % x.size;
  burst_then(x, d, MPI_COMM_WORLD, [&](const int* buf, MPI_Request* req) {
    return MPI_Isend(buf, 3, MPI_DATATYPE_NULL, victim, 80, MPI_COMM_WORLD, req);
  });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

void case_err_isend_badrank(const Ctx& x, Digest& d) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  burst_then(x, d, MPI_COMM_WORLD, [&](const int* buf, MPI_Request* req) {
    return MPI_Isend(buf, 3, MPI_INT, x.size + 2, 80, MPI_COMM_WORLD, req);
  });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

void case_err_isend_negcount(const Ctx& x, Digest& d) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int victim = (x.rank + 1) % x.size;
  burst_then(x, d, MPI_COMM_WORLD, [&](const int* buf, MPI_Request* req) {
    return MPI_Isend(buf, -2, MPI_INT, victim, 80, MPI_COMM_WORLD, req);
  });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

void case_err_isend_badtag(const Ctx& x, Digest& d) {
  MPI_Comm c = returning_comm();
  const int victim = (x.rank + 1) % x.size;
  burst_then(x, d, c, [&](const int* buf, MPI_Request* req) {
    return MPI_Isend(buf, 3, MPI_INT, victim, -7, c, req);
  });
  MPI_Comm_free(&c);
}

void case_err_fatal_negcount(const Ctx& x, Digest& d) {
  // MPI_ERRORS_ARE_FATAL: native aborts the job; the library must not turn that into success.
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  learned_then(x, d, c, 73, [&](const Counts& counts) {
    Counts bad = counts;
    bad.sc[0] = -1;
    alltoallv_once(c, bad, type_of(MPI_INT), type_of(MPI_INT), 94, 73, d);
  });
  MPI_Comm_free(&c);
}

// --- Held classes: bursts --------------------------------------------------------------------

/// Irregular bursts to every peer on `comm`; `complete` finishes the requests.
void burst_loop(const Ctx& x, Digest& d, MPI_Comm comm, int seed, bool wildcard,
                const std::function<void(std::vector<MPI_Request>&, int)>& complete) {
  int me = 0, n = 1;
  mpi_test::rank_and_size(comm, me, n);
  for (int i = 0; i < x.iters; ++i) {
    std::vector<std::vector<int>> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    std::vector<MPI_Request> reqs;
    for (int j = 0; j < n; ++j) {
      const int cnt = pattern_count(seed, j, me);
      if (cnt == 0) continue;
      in[static_cast<std::size_t>(j)].assign(static_cast<std::size_t>(cnt) + 8, -1);
      reqs.push_back(MPI_REQUEST_NULL);
      MPI_Irecv(in[static_cast<std::size_t>(j)].data(), cnt + 8, MPI_INT, wildcard ? MPI_ANY_SOURCE : j,
                wildcard ? 90 + cnt : 90, comm, &reqs.back());
    }
    const auto recvs = reqs.size();
    for (int k = 1; k <= n; ++k) {
      const int j = (me + k) % n;
      const int cnt = pattern_count(seed, me, j);
      if (cnt == 0) continue;
      auto& o = out[static_cast<std::size_t>(j)];
      for (int e = 0; e < cnt; ++e) o.push_back(me * 100000 + j * 1000 + i * 10 + e);
      reqs.push_back(MPI_REQUEST_NULL);
      MPI_Isend(o.data(), cnt, MPI_INT, j, wildcard ? 90 + cnt : 90, comm, &reqs.back());
    }
    complete(reqs, static_cast<int>(recvs));
    // Wildcards: which buffer got which message is timing; the multiset of contents is not.
    for (const auto& b : in) {
      const auto h = mix64(b.size()) ^
                     [&] { std::uint64_t s = 0; for (int v : b) s = mix64(s ^ static_cast<std::uint64_t>(v)); return s; }();
      if (wildcard) {
        d.mix_unordered(h);
      } else {
        d.mix(h);
      }
    }
  }
}

void waitall_statuses(Digest& d, std::vector<MPI_Request>& reqs, int recvs, bool wildcard) {
  std::vector<MPI_Status> st(reqs.size());
  d.rc("waitall", MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  for (int k = 0; k < recvs; ++k) {
    int count = 0;
    MPI_Get_count(&st[static_cast<std::size_t>(k)], MPI_INT, &count);
    const auto v = mix64(static_cast<std::uint64_t>(st[static_cast<std::size_t>(k)].MPI_SOURCE) * 7919 +
                         static_cast<std::uint64_t>(st[static_cast<std::size_t>(k)].MPI_TAG) * 31 +
                         static_cast<std::uint64_t>(count));
    if (wildcard) {
      d.mix_unordered(v);
    } else {
      d.mix(v);
    }
  }
}

void case_burst_waitall(const Ctx& x, Digest& d) {
  burst_loop(x, d, MPI_COMM_WORLD, 101, false,
             [&](std::vector<MPI_Request>& r, int recvs) { waitall_statuses(d, r, recvs, false); });
}

void case_burst_wildcard(const Ctx& x, Digest& d) {
  burst_loop(x, d, MPI_COMM_WORLD, 102, true,
             [&](std::vector<MPI_Request>& r, int recvs) { waitall_statuses(d, r, recvs, true); });
}

void case_burst_waitany(const Ctx& x, Digest& d) {
  burst_loop(x, d, MPI_COMM_WORLD, 103, false, [&](std::vector<MPI_Request>& r, int) {
    for (std::size_t done = 0; done < r.size(); ++done) {
      int index = -1;
      MPI_Status st;
      d.rc("waitany", MPI_Waitany(static_cast<int>(r.size()), r.data(), &index, &st));
      d.mix_unordered(static_cast<std::uint64_t>(index));
    }
  });
}

void case_burst_testsome(const Ctx& x, Digest& d) {
  burst_loop(x, d, MPI_COMM_WORLD, 104, false, [&](std::vector<MPI_Request>& r, int) {
    std::vector<int> idx(r.size());
    std::size_t done = 0;
    const double give_up = MPI_Wtime() + 20;
    int first_error = MPI_SUCCESS;  // how many calls it takes is timing: only errors count
    while (done < r.size() && MPI_Wtime() < give_up) {
      int outcount = 0;
      const int code = MPI_Testsome(static_cast<int>(r.size()), r.data(), &outcount, idx.data(),
                                    MPI_STATUSES_IGNORE);
      if (first_error == MPI_SUCCESS) first_error = code;
      if (outcount == MPI_UNDEFINED) break;
      for (int k = 0; k < outcount; ++k) d.mix_unordered(static_cast<std::uint64_t>(idx[static_cast<std::size_t>(k)]));
      done += static_cast<std::size_t>(outcount);
    }
    d.rc("testsome", first_error);
    if (done < r.size()) d.note("testsome_gave_up");
  });
}

void case_burst_testall(const Ctx& x, Digest& d) {
  burst_loop(x, d, MPI_COMM_WORLD, 105, false, [&](std::vector<MPI_Request>& r, int) {
    int flag = 0;
    const double give_up = MPI_Wtime() + 20;
    while (!flag && MPI_Wtime() < give_up)
      MPI_Testall(static_cast<int>(r.size()), r.data(), &flag, MPI_STATUSES_IGNORE);
    if (!flag) d.note("testall_gave_up");
  });
}

void case_burst_cancel(const Ctx& x, Digest& d) {
  // Each burst also posts a receive nobody sends to, cancelled before the Waitall.
  burst_loop(x, d, MPI_COMM_WORLD, 106, false, [&](std::vector<MPI_Request>& r, int recvs) {
    int dummy = 0;
    MPI_Request extra;
    MPI_Irecv(&dummy, 1, MPI_INT, x.rank, 999, MPI_COMM_WORLD, &extra);
    MPI_Cancel(&extra);
    MPI_Status st;
    MPI_Wait(&extra, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    d.mix(static_cast<std::uint64_t>(cancelled));
    waitall_statuses(d, r, recvs, false);
  });
}

void case_burst_request_free(const Ctx& x, Digest& d) {
  // Sends freed at once; the receives alone are waited for, then a barrier ends the iteration.
  burst_loop(x, d, MPI_COMM_WORLD, 107, false, [&](std::vector<MPI_Request>& r, int recvs) {
    for (std::size_t k = static_cast<std::size_t>(recvs); k < r.size(); ++k) MPI_Request_free(&r[k]);
    d.rc("waitall", MPI_Waitall(recvs, r.data(), MPI_STATUSES_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
  });
}

void case_burst_subcomm(const Ctx& x, Digest& d) {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, x.rank % 2, x.rank, &half);
  burst_loop(x, d, half, 108, false,
             [&](std::vector<MPI_Request>& r, int recvs) { waitall_statuses(d, r, recvs, false); });
  MPI_Comm_free(&half);
}

void case_burst_persistent(const Ctx& x, Digest& d) {
  // Persistent requests on a ring, started each iteration.
  const int next = (x.rank + 1) % x.size, prev = (x.rank + x.size - 1) % x.size;
  std::vector<int> in(6), out(6);
  MPI_Request reqs[2];
  MPI_Recv_init(in.data(), 6, MPI_INT, prev, 5, MPI_COMM_WORLD, &reqs[0]);
  MPI_Send_init(out.data(), 6, MPI_INT, next, 5, MPI_COMM_WORLD, &reqs[1]);
  for (int i = 0; i < x.iters; ++i) {
    for (int k = 0; k < 6; ++k) out[static_cast<std::size_t>(k)] = x.rank * 100 + i * 10 + k;
    MPI_Startall(2, reqs);
    d.rc("waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    d.bytes(reinterpret_cast<const unsigned char*>(in.data()), in.size() * sizeof(int));
  }
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
}

void case_burst_large(const Ctx& x, Digest& d) {
  // Messages past the eager limit (rendezvous) in a ring burst, both directions.
  const int next = (x.rank + 1) % x.size, prev = (x.rank + x.size - 1) % x.size;
  const std::size_t n = 300000;
  for (int i = 0; i < x.iters; ++i) {
    Bytes a = send_data(n, call_key(x.rank, i, 1)), b = send_data(n + 7, call_key(x.rank, i, 2));
    Bytes ra(n + 7, 0xEE), rb(n, 0xEE);
    MPI_Request reqs[4];
    MPI_Irecv(ra.data(), static_cast<int>(n + 7), MPI_BYTE, next, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(rb.data(), static_cast<int>(n), MPI_BYTE, prev, 2, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(a.data(), static_cast<int>(n), MPI_BYTE, next, 2, MPI_COMM_WORLD, &reqs[2]);
    MPI_Isend(b.data(), static_cast<int>(n + 7), MPI_BYTE, prev, 1, MPI_COMM_WORLD, &reqs[3]);
    d.rc("waitall", MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    d.bytes(ra);
    d.bytes(rb);
  }
}

void case_burst_issend(const Ctx& x, Digest& d) {
  const int next = (x.rank + 1) % x.size, prev = (x.rank + x.size - 1) % x.size;
  for (int i = 0; i < x.iters; ++i) {
    int out[4] = {x.rank, i, 7, 9}, in[4] = {-1, -1, -1, -1};
    MPI_Request reqs[2];
    MPI_Irecv(in, 4, MPI_INT, prev, 3, MPI_COMM_WORLD, &reqs[0]);
    MPI_Issend(out, 4, MPI_INT, next, 3, MPI_COMM_WORLD, &reqs[1]);
    d.rc("waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    d.bytes(reinterpret_cast<const unsigned char*>(in), sizeof in);
  }
}

void case_burst_then_blocking(const Ctx& x, Digest& d) {
  // A learned burst interrupted by blocking calls between its posts.
  const int next = (x.rank + 1) % x.size, prev = (x.rank + x.size - 1) % x.size;
  for (int i = 0; i < x.iters; ++i) {
    int a[3] = {x.rank, i, 1}, b[3] = {-1, -1, -1}, c[2] = {x.rank, i}, e[2] = {-1, -1};
    MPI_Request reqs[2];
    MPI_Irecv(b, 3, MPI_INT, prev, 8, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(a, 3, MPI_INT, next, 8, MPI_COMM_WORLD, &reqs[1]);
    MPI_Sendrecv(c, 2, MPI_INT, prev, 9, e, 2, MPI_INT, next, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    d.rc("waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    d.bytes(reinterpret_cast<const unsigned char*>(b), sizeof b);
    d.bytes(reinterpret_cast<const unsigned char*>(e), sizeof e);
  }
}

// --- Strategies: one small irregular pattern, skewed ------------------------------------------

void case_strategy_irregular(const Ctx& x, Digest& d) {
  // Mostly small messages, one large diagonal: every strategy plans something non-trivial.
  const auto count = [&](int s, int r) {
    if ((s + 1) % x.size == r) return 400 + 37 * s;
    return pattern_count(120, s, r);
  };
  const Counts c = make_counts(
      x.size, [&](int j) { return count(x.rank, j); }, [&](int j) { return count(j, x.rank); });
  const Type t = type_of(MPI_INT);
  for (int i = 0; i < x.iters + 4; ++i) alltoallv_once(MPI_COMM_WORLD, c, t, t, i, 120, d);
  // A derived type on the same byte counts (the packed path of indirect strategies).
  Type v = committed(vector_type(2));
  const Counts half = make_counts(
      x.size, [&](int j) { return count(x.rank, j); }, [&](int j) { return count(j, x.rank); }, 3);
  for (int i = 0; i < x.iters; ++i) alltoallv_once(MPI_COMM_WORLD, half, v, v, i, 121, d);
  release(v);
}

// --- Threads: MPI_THREAD_MULTIPLE, two threads on two communicators ----------------------------

void case_threads_two_comms(const Ctx& x, Digest& d) {
  int provided = 0;
  MPI_Query_thread(&provided);
  d.note(provided == MPI_THREAD_MULTIPLE ? "multiple" : "not_multiple");
  if (provided != MPI_THREAD_MULTIPLE) return;
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  Digest da, db;
  std::thread t1([&] { alltoallv_loop(a, 130, x.iters, da); });
  std::thread t2([&] { alltoallv_loop(b, 131, x.iters, db); });
  t1.join();
  t2.join();
  d.mix(da.value());
  d.mix(db.value());
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

const std::map<std::string, void (*)(const Ctx&, Digest&)>& cases() {
  static const std::map<std::string, void (*)(const Ctx&, Digest&)> table = {
      {"basic", case_basic},
      {"zero_counts", case_zero_counts},
      {"in_place", case_in_place},
      {"dt_vector", case_dt_vector},
      {"dt_indexed", case_dt_indexed},
      {"dt_struct", case_dt_struct},
      {"dt_resized", case_dt_resized},
      {"dt_neg_lb", case_dt_neg_lb},
      {"dt_mixed", case_dt_mixed},
      {"comm_split", case_comm_split},
      {"comm_dup", case_comm_dup},
      {"comm_cart", case_comm_cart},
      {"comm_graph", case_comm_graph},
      {"comm_dist_graph", case_comm_dist_graph},
      {"comm_create_group", case_comm_create_group},
      {"inter_even", case_inter_even},
      {"inter_small_local", case_inter_small_local},
      {"inter_small_remote", case_inter_small_remote},
      {"inter_merge", case_inter_merge},
      {"errh_return_valid", case_errh_return_valid},
      {"errh_fatal_valid", case_errh_fatal_valid},
      {"errh_custom", case_errh_custom},
      {"dt_free_after_isend", case_dt_free_after_isend},
      {"dt_free_after_isend_reuse", case_dt_free_after_isend_reuse},
      {"dt_free_after_irecv", case_dt_free_after_irecv},
      {"dt_keep_until_wait", case_dt_keep_until_wait},
      {"dt_free_after_alltoallv", case_dt_free_after_alltoallv},
      {"dt_reuse_handle_alltoallv", case_dt_reuse_handle_alltoallv},
      {"dt_reuse_handle_mixed", case_dt_reuse_handle_mixed},
      {"comm_disconnect_reuse", case_comm_disconnect_reuse},
      {"comm_free_reuse", case_comm_free_reuse},
      {"comm_free_burst_reuse", case_comm_free_burst_reuse},
      {"err_dtnull_alltoallv", case_err_dtnull_alltoallv},
      {"err_negcount_alltoallv", case_err_negcount_alltoallv},
      {"err_comm_null", case_err_comm_null},
      {"err_dtnull_isend", case_err_dtnull_isend},
      {"err_dtnull_isend_world", case_err_dtnull_isend_world},
      {"err_isend_badrank", case_err_isend_badrank},
      {"err_isend_negcount", case_err_isend_negcount},
      {"err_isend_badtag", case_err_isend_badtag},
      {"err_fatal_negcount", case_err_fatal_negcount},
      {"burst_waitall", case_burst_waitall},
      {"burst_wildcard", case_burst_wildcard},
      {"burst_waitany", case_burst_waitany},
      {"burst_testsome", case_burst_testsome},
      {"burst_testall", case_burst_testall},
      {"burst_cancel", case_burst_cancel},
      {"burst_request_free", case_burst_request_free},
      {"burst_subcomm", case_burst_subcomm},
      {"burst_persistent", case_burst_persistent},
      {"burst_large", case_burst_large},
      {"burst_issend", case_burst_issend},
      {"burst_then_blocking", case_burst_then_blocking},
      {"strategy_irregular", case_strategy_irregular},
      {"alltoall_basic", case_alltoall_basic},
      {"alltoall_in_place", case_alltoall_in_place},
      {"alltoall_dt", case_alltoall_dt},
      {"alltoall_comms", case_alltoall_comms},
      {"err_alltoall", case_err_alltoall},
      {"alltoallw_comms", case_alltoallw_comms},
      {"err_alltoallw", case_err_alltoallw},
      {"neighbor_topologies", case_neighbor_topologies},
      {"err_neighbor_no_topology", case_err_neighbor_no_topology},
      {"threads_two_comms", case_threads_two_comms},
  };
  return table;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string names;
  Ctx x;
  bool multiple = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--case" && k + 1 < argc) {
      names = argv[++k];
    } else if (a == "--iters" && k + 1 < argc) {
      x.iters = std::max(1, std::atoi(argv[++k]));
    } else if (a == "--thread" && k + 1 < argc) {
      multiple = std::string(argv[++k]) == "multiple";
    } else if (a == "--list") {
      for (const auto& [name, fn] : cases()) std::printf("%s\n", name.c_str());
      return 0;
    } else {
      std::fprintf(stderr, "adversary: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  const auto selected = split_names(names);
  for (const auto& n : selected) {
    if (!cases().count(n)) {
      std::fprintf(stderr, "adversary: unknown case '%s' (--list)\n", n.c_str());
      return 2;
    }
  }
  if (multiple) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  mpi_test::rank_and_size(MPI_COMM_WORLD, x.rank, x.size);
  for (const auto& n : selected) {
    Digest d;
    cases().at(n)(x, d);
    publish(n, d);
  }
  if (x.rank == 0) std::printf("adversary: done\n");
  MPI_Finalize();
  return 0;
}
