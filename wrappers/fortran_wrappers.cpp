// Fortran entry points. Open MPI 4.1's Fortran bindings call PMPI_* directly, so the C wrappers
// never see Fortran calls: every mangling is defined here, converts handles with the _f2c
// functions and calls src/intercept, or the MPI library's own Fortran profiling entry point
// (found with dlsym) where MPI's Fortran layer does work of its own (init, finalize).
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <type_traits>

#include <boost/container/small_vector.hpp>

#include "intercept/intercept.hpp"
#include "intercept/nonblocking.hpp"
#include "intercept/p2p.hpp"
#include "intercept/pcontrol.hpp"
#include "wrappers/fortran_completion.hpp"
#include "wrappers/fortran_forward.hpp"
#include "wrappers/intercepted.hpp"

namespace ci = commsched::intercept;

namespace {

template <typename Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(commsched::wrappers::next_entry(name));
}

void set_ierr(MPI_Fint* ierr, int rc) {
  if (ierr) *ierr = static_cast<MPI_Fint>(rc);  // `use mpi_f08` passes nullptr when absent
}

// A Fortran constant such as MPI_IN_PLACE: the address of a common block in the MPI library,
// under whichever of its manglings the library defines (Open MPI defines them in libmpi, loaded
// with this library). Looked up once: dlsym searches every loaded library, too slow for a check
// that every Fortran call with a buffer or a status makes.
class FortranConstant {
 public:
  FortranConstant(std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (const void* s = dlsym(RTLD_DEFAULT, n); s && found_ < at_.size()) at_[found_++] = s;
  }
  bool is(const void* p) const {
    return p && std::find(at_.begin(), at_.begin() + found_, p) != at_.begin() + found_;
  }

 private:
  std::array<const void*, 4> at_{};
  std::size_t found_ = 0;
};

const void* fortran_buffer(void* p) {
  static const FortranConstant in_place{"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                        "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
  static const FortranConstant bottom{"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                      "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
  if (in_place.is(p)) return MPI_IN_PLACE;
  if (bottom.is(p)) return MPI_BOTTOM;
  return p;
}

using InitFn = void (*)(MPI_Fint*);
using InitThreadFn = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FinalizeFn = void (*)(MPI_Fint*);
using CommFreeFn = void (*)(MPI_Fint*, MPI_Fint*);

// Each Fortran function once; the manglings below forward here. `pmpi` names the MPI library's
// own Fortran profiling entry point of the same binding (mpif.h or mpi_f08).
void f_mpi_init(const char* pmpi, MPI_Fint* ierr) {
  if (auto fn = next_symbol<InitFn>(pmpi)) {
    fn(ierr);
  } else {
    set_ierr(ierr, PMPI_Init(nullptr, nullptr));
  }
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  ci::after_init(provided);
}

void f_mpi_init_thread(const char* pmpi, MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  if (auto fn = next_symbol<InitThreadFn>(pmpi)) {
    fn(required, provided, ierr);
  } else {
    int p = 0;
    set_ierr(ierr, PMPI_Init_thread(nullptr, nullptr, static_cast<int>(*required), &p));
    *provided = static_cast<MPI_Fint>(p);
  }
  ci::after_init(static_cast<int>(*provided));
}

void f_mpi_finalize(const char* pmpi, MPI_Fint* ierr) {
  ci::before_finalize();
  if (auto fn = next_symbol<FinalizeFn>(pmpi)) {
    fn(ierr);
  } else {
    set_ierr(ierr, PMPI_Finalize());
  }
}

// MPI_PCONTROL(LEVEL) has no IERROR argument.
void f_mpi_pcontrol(const char*, MPI_Fint* level) {
  ci::pcontrol(static_cast<int>(*level));
  PMPI_Pcontrol(static_cast<int>(*level));
}

// MPI_Comm_free and MPI_Comm_disconnect: the library forgets the communicator (releasing held
// burst sends on it) before MPI's own Fortran entry point, or `c_fn`, frees it.
void f_comm_release(const char* pmpi, int (*c_fn)(MPI_Comm*), MPI_Fint* comm, MPI_Fint* ierr) {
  ci::forget_comm(MPI_Comm_f2c(*comm));
  if (auto fn = next_symbol<CommFreeFn>(pmpi)) {
    fn(comm, ierr);
  } else {
    MPI_Comm c = MPI_Comm_f2c(*comm);
    set_ierr(ierr, c_fn(&c));
    *comm = MPI_Comm_c2f(c);
  }
}
void f_mpi_comm_free(const char* pmpi, MPI_Fint* comm, MPI_Fint* ierr) {
  f_comm_release(pmpi, PMPI_Comm_free, comm, ierr);
}
void f_mpi_comm_disconnect(const char* pmpi, MPI_Fint* comm, MPI_Fint* ierr) {
  f_comm_release(pmpi, PMPI_Comm_disconnect, comm, ierr);
}

// MPI_Fint arrays as int arrays (MPI_Fint is int on the supported builds; copied anyway so any
// Fortran INTEGER kind works), on the stack up to kInlinePeers entries: a job of short calls
// must not pay four allocations per call.
constexpr std::size_t kInlinePeers = 32;
using Ints = boost::container::small_vector<int, kInlinePeers>;
using Types = boost::container::small_vector<MPI_Datatype, kInlinePeers>;
Ints ints(const MPI_Fint* a, int n) {
  return a ? Ints(a, a + n) : Ints(static_cast<std::size_t>(n), 0);
}
Types types(const MPI_Fint* a, int n) {
  Types t(static_cast<std::size_t>(n), MPI_DATATYPE_NULL);
  for (int j = 0; a && j < n; ++j) t[static_cast<std::size_t>(j)] = MPI_Type_f2c(a[j]);
  return t;
}

// The entries of an all-to-all's per-peer arrays: one per rank of the group data goes to and
// comes from, the remote group on an intercommunicator.
int peers(MPI_Comm c) {
  int size = 0, inter = 0;
  if (c != MPI_COMM_NULL && PMPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && inter) {
    PMPI_Comm_remote_size(c, &size);
  } else if (c != MPI_COMM_NULL) {
    PMPI_Comm_size(c, &size);
  }
  return size;
}

void f_mpi_alltoallv(const char*, void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls,
                     MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls,
                     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const int size = peers(c);
  const Ints sc = ints(sendcounts, size), sd = ints(sdispls, size);
  const Ints rcv = ints(recvcounts, size), rd = ints(rdispls, size);
  const void* sb = fortran_buffer(sendbuf);
  set_ierr(ierr, ci::alltoallv(sb, sc.data(), sd.data(), MPI_Type_f2c(*sendtype),
                               const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(), rd.data(),
                               MPI_Type_f2c(*recvtype), c));
}

void f_mpi_alltoall(const char*, void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                    void* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* comm,
                    MPI_Fint* ierr) {
  set_ierr(ierr, ci::alltoall(fortran_buffer(sendbuf), *sendcount, MPI_Type_f2c(*sendtype),
                              const_cast<void*>(fortran_buffer(recvbuf)), *recvcount,
                              MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm)));
}

void f_mpi_alltoallw(const char*, void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls,
                     MPI_Fint* sendtypes, void* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls,
                     MPI_Fint* recvtypes, MPI_Fint* comm, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const int size = peers(c);
  const void* sb = fortran_buffer(sendbuf);
  // In place, the send arguments are ignored (and may be anything).
  const int ns = sb == MPI_IN_PLACE ? 0 : size;
  const Ints sc = ints(sendcounts, ns), sd = ints(sdispls, ns);
  const Ints rcv = ints(recvcounts, size), rd = ints(rdispls, size);
  const Types st = types(sendtypes, ns), rt = types(recvtypes, size);
  set_ierr(ierr, ci::alltoallw(sb, sb == MPI_IN_PLACE ? nullptr : sc.data(),
                               sb == MPI_IN_PLACE ? nullptr : sd.data(),
                               sb == MPI_IN_PLACE ? nullptr : st.data(),
                               const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(), rd.data(),
                               rt.data(), c));
}

void f_mpi_neighbor_alltoallv(const char*, void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls,
                              MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcounts,
                              MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm,
                              MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  int sources = 0, destinations = 0;
  ci::neighbor_degrees(c, &sources, &destinations);  // none: MPI rejects the call
  const Ints sc = ints(sendcounts, destinations), sd = ints(sdispls, destinations);
  const Ints rcv = ints(recvcounts, sources), rd = ints(rdispls, sources);
  set_ierr(ierr, ci::neighbor_alltoallv(fortran_buffer(sendbuf), sc.data(), sd.data(),
                                        MPI_Type_f2c(*sendtype),
                                        const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(),
                                        rd.data(), MPI_Type_f2c(*recvtype), c));
}

void f_mpi_neighbor_alltoall(const char*, void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                             void* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                             MPI_Fint* comm, MPI_Fint* ierr) {
  set_ierr(ierr, ci::neighbor_alltoall(fortran_buffer(sendbuf), *sendcount,
                                       MPI_Type_f2c(*sendtype),
                                       const_cast<void*>(fortran_buffer(recvbuf)), *recvcount,
                                       MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm)));
}

// Displacements are INTEGER(KIND=MPI_ADDRESS_KIND): MPI_Aint already.
void f_mpi_neighbor_alltoallw(const char*, void* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls,
                              MPI_Fint* sendtypes, void* recvbuf, MPI_Fint* recvcounts,
                              MPI_Aint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,
                              MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  int sources = 0, destinations = 0;
  ci::neighbor_degrees(c, &sources, &destinations);  // none: MPI rejects the call
  const Ints sc = ints(sendcounts, destinations), rcv = ints(recvcounts, sources);
  const Types st = types(sendtypes, destinations);
  const Types rt = types(recvtypes, sources);
  set_ierr(ierr, ci::neighbor_alltoallw(fortran_buffer(sendbuf), sc.data(), sdispls, st.data(),
                                        const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(),
                                        rdispls, rt.data(), c));
}

// Non-blocking all-to-all: the engine's calls with converted arguments (it keeps what it needs);
// every other call goes to MPI's own Fortran entry point with the arrays it was given, as MPI may
// read them until the operation completes.
using IalltoallvFn = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*,
                              MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
using IalltoallFn = void (*)(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                             MPI_Fint*, MPI_Fint*);

void f_mpi_ialltoallv(const char* pmpi, void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls,
                      MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls,
                      MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  if (!ci::nb_takes(c, sb)) {
    if (auto fn = next_symbol<IalltoallvFn>(pmpi))
      return fn(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request, ierr);
    return set_ierr(ierr, MPI_ERR_INTERN);
  }
  const int size = peers(c);
  const Ints sc = ints(sendcounts, size), sd = ints(sdispls, size);
  const Ints rcv = ints(recvcounts, size), rd = ints(rdispls, size);
  MPI_Request r = MPI_REQUEST_NULL;
  set_ierr(ierr, ci::ialltoallv(sb, sc.data(), sd.data(), MPI_Type_f2c(*sendtype),
                                const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(),
                                rd.data(), MPI_Type_f2c(*recvtype), c, &r));
  *request = MPI_Request_c2f(r);
}

void f_mpi_ialltoall(const char* pmpi, void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                     void* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* comm,
                     MPI_Fint* request, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  if (!ci::nb_takes(c, sb)) {
    if (auto fn = next_symbol<IalltoallFn>(pmpi))
      return fn(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierr);
    return set_ierr(ierr, MPI_ERR_INTERN);
  }
  MPI_Request r = MPI_REQUEST_NULL;
  set_ierr(ierr, ci::ialltoall(sb, *sendcount, MPI_Type_f2c(*sendtype),
                               const_cast<void*>(fortran_buffer(recvbuf)), *recvcount,
                               MPI_Type_f2c(*recvtype), c, &r));
  *request = MPI_Request_c2f(r);
}

// The neighbourhood forms: the same, with the arrays as long as the topology's lists.
void f_mpi_ineighbor_alltoallv(const char* pmpi, void* sendbuf, MPI_Fint* sendcounts,
                               MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf,
                               MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype,
                               MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  int sources = 0, destinations = 0;
  if (!ci::nb_takes_neighbor(c, sb) || !ci::neighbor_degrees(c, &sources, &destinations)) {
    if (auto fn = next_symbol<IalltoallvFn>(pmpi))
      return fn(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request, ierr);
    return set_ierr(ierr, MPI_ERR_INTERN);
  }
  const Ints sc = ints(sendcounts, destinations), sd = ints(sdispls, destinations);
  const Ints rcv = ints(recvcounts, sources), rd = ints(rdispls, sources);
  MPI_Request r = MPI_REQUEST_NULL;
  set_ierr(ierr, ci::ineighbor_alltoallv(sb, sc.data(), sd.data(), MPI_Type_f2c(*sendtype),
                                         const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(),
                                         rd.data(), MPI_Type_f2c(*recvtype), c, &r));
  *request = MPI_Request_c2f(r);
}

void f_mpi_ineighbor_alltoall(const char* pmpi, void* sendbuf, MPI_Fint* sendcount,
                              MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount,
                              MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request,
                              MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  if (!ci::nb_takes_neighbor(c, sb)) {
    if (auto fn = next_symbol<IalltoallFn>(pmpi))
      return fn(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierr);
    return set_ierr(ierr, MPI_ERR_INTERN);
  }
  MPI_Request r = MPI_REQUEST_NULL;
  set_ierr(ierr, ci::ineighbor_alltoall(sb, *sendcount, MPI_Type_f2c(*sendtype),
                                        const_cast<void*>(fortran_buffer(recvbuf)), *recvcount,
                                        MPI_Type_f2c(*recvtype), c, &r));
  *request = MPI_Request_c2f(r);
}

// Whether the engine takes a vector or w form on `c` (non-blocking or persistent): then `ns`
// and `nr` are its arrays' lengths, the communicator's size or (`neighbor`) the topology's out-
// and in-degree.
bool engine_takes(bool neighbor, MPI_Comm c, const void* sendbuf, int& ns, int& nr) {
  if (neighbor) return ci::nb_takes_neighbor(c, sendbuf) && ci::neighbor_degrees(c, &nr, &ns);
  if (!ci::nb_takes(c, sendbuf)) return false;
  ns = nr = peers(c);
  return true;
}

// The w forms (MPI_IALLTOALLW, and MPI_INEIGHBOR_ALLTOALLW, whose displacements are
// INTEGER(KIND=MPI_ADDRESS_KIND), MPI_Aint already): every block its own datatype.
template <typename D>
void f_iw(const char* pmpi, void* sendbuf, MPI_Fint* sendcounts, D* sdispls, MPI_Fint* sendtypes,
          void* recvbuf, MPI_Fint* recvcounts, D* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,
          MPI_Fint* request, MPI_Fint* ierr) {
  constexpr bool neighbor = std::is_same_v<D, MPI_Aint>;
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  int ns = 0, nr = 0;
  if (!engine_takes(neighbor, c, sb, ns, nr)) {
    using Fn = void (*)(void*, MPI_Fint*, D*, MPI_Fint*, void*, MPI_Fint*, D*, MPI_Fint*,
                        MPI_Fint*, MPI_Fint*, MPI_Fint*);
    if (auto fn = next_symbol<Fn>(pmpi))
      return fn(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm, request, ierr);
    return set_ierr(ierr, MPI_ERR_INTERN);
  }
  const Ints sc = ints(sendcounts, ns), rcv = ints(recvcounts, nr);
  const Types st = types(sendtypes, ns), rt = types(recvtypes, nr);
  void* rb = const_cast<void*>(fortran_buffer(recvbuf));
  MPI_Request r = MPI_REQUEST_NULL;
  if constexpr (neighbor) {
    set_ierr(ierr, ci::ineighbor_alltoallw(sb, sc.data(), sdispls, st.data(), rb, rcv.data(),
                                           rdispls, rt.data(), c, &r));
  } else {
    const Ints sd = ints(sdispls, ns), rd = ints(rdispls, nr);
    set_ierr(ierr, ci::ialltoallw(sb, sc.data(), sd.data(), st.data(), rb, rcv.data(), rd.data(),
                                  rt.data(), c, &r));
  }
  *request = MPI_Request_c2f(r);
}

// The entry points' shape, as COMMSCHED_FORTRAN expects them.
template <typename... A>
void f_mpi_ialltoallw(const char* pmpi, A... a) { f_iw(pmpi, a...); }
template <typename... A>
void f_mpi_ineighbor_alltoallw(const char* pmpi, A... a) { f_iw(pmpi, a...); }

#ifdef COMMSCHED_PCOLLREQ
// The persistent forms of Open MPI's pcollreq extension (MPIX_ALLTOALLV_INIT and the like):
// bound by the engine with converted arguments (the binding keeps copies); every other call goes
// to MPI's own Fortran entry point with the arrays it was given, which MPI may read until the
// request is freed. MPI_START, MPI_STARTALL and MPI_REQUEST_FREE are wrapped below.
using AlltoallvInitFn = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*,
                                 MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
using AlltoallInitFn = void (*)(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*,
                                MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);

// The vector forms (MPIX_ALLTOALLV_INIT, MPIX_NEIGHBOR_ALLTOALLV_INIT): counts and
// displacements as long as the communicator, or as the topology's lists.
void f_vector_init(bool neighbor, const char* pmpi, void* sendbuf, MPI_Fint* sendcounts,
                   MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcounts,
                   MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* info,
                   MPI_Fint* request, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  int ns = 0, nr = 0;
  if (engine_takes(neighbor, c, sb, ns, nr)) {
    const Ints sc = ints(sendcounts, ns), sd = ints(sdispls, ns);
    const Ints rc = ints(recvcounts, nr), rd = ints(rdispls, nr);
    const auto bind = neighbor ? ci::bind_neighbor_alltoallv_init : ci::bind_alltoallv_init;
    MPI_Request r = MPI_REQUEST_NULL;
    if (bind(sb, sc.data(), sd.data(), MPI_Type_f2c(*sendtype),
             const_cast<void*>(fortran_buffer(recvbuf)), rc.data(), rd.data(),
             MPI_Type_f2c(*recvtype), c, &r)) {
      *request = MPI_Request_c2f(r);
      return set_ierr(ierr, MPI_SUCCESS);
    }
  }
  ci::nb_passed();
  if (auto fn = next_symbol<AlltoallvInitFn>(pmpi))
    return fn(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
              comm, info, request, ierr);
  set_ierr(ierr, MPI_ERR_INTERN);
}

// The regular forms (MPIX_ALLTOALL_INIT, MPIX_NEIGHBOR_ALLTOALL_INIT).
void f_regular_init(bool neighbor, const char* pmpi, void* sendbuf, MPI_Fint* sendcount,
                    MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                    MPI_Fint* comm, MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  const bool takes = neighbor ? ci::nb_takes_neighbor(c, sb) : ci::nb_takes(c, sb);
  const auto bind = neighbor ? ci::bind_neighbor_alltoall_init : ci::bind_alltoall_init;
  MPI_Request r = MPI_REQUEST_NULL;
  if (takes && bind(sb, *sendcount, MPI_Type_f2c(*sendtype),
                    const_cast<void*>(fortran_buffer(recvbuf)), *recvcount,
                    MPI_Type_f2c(*recvtype), c, &r)) {
    *request = MPI_Request_c2f(r);
    return set_ierr(ierr, MPI_SUCCESS);
  }
  ci::nb_passed();
  if (auto fn = next_symbol<AlltoallInitFn>(pmpi))
    return fn(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request,
              ierr);
  set_ierr(ierr, MPI_ERR_INTERN);
}

// The w forms (MPIX_ALLTOALLW_INIT, and MPIX_NEIGHBOR_ALLTOALLW_INIT, whose displacements are
// INTEGER(KIND=MPI_ADDRESS_KIND)): a datatype per block.
template <typename D>
void f_w_init(const char* pmpi, void* sendbuf, MPI_Fint* sendcounts, D* sdispls,
              MPI_Fint* sendtypes, void* recvbuf, MPI_Fint* recvcounts, D* rdispls,
              MPI_Fint* recvtypes, MPI_Fint* comm, MPI_Fint* info, MPI_Fint* request,
              MPI_Fint* ierr) {
  constexpr bool neighbor = std::is_same_v<D, MPI_Aint>;
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* sb = fortran_buffer(sendbuf);
  int ns = 0, nr = 0;
  if (engine_takes(neighbor, c, sb, ns, nr)) {
    const Ints sc = ints(sendcounts, ns), rc = ints(recvcounts, nr);
    const Types st = types(sendtypes, ns), rt = types(recvtypes, nr);
    void* rb = const_cast<void*>(fortran_buffer(recvbuf));
    MPI_Request r = MPI_REQUEST_NULL;
    bool bound = false;
    if constexpr (neighbor) {
      bound = ci::bind_neighbor_alltoallw_init(sb, sc.data(), sdispls, st.data(), rb, rc.data(),
                                               rdispls, rt.data(), c, &r);
    } else {
      const Ints sd = ints(sdispls, ns), rd = ints(rdispls, nr);
      bound = ci::bind_alltoallw_init(sb, sc.data(), sd.data(), st.data(), rb, rc.data(),
                                      rd.data(), rt.data(), c, &r);
    }
    if (bound) {
      *request = MPI_Request_c2f(r);
      return set_ierr(ierr, MPI_SUCCESS);
    }
  }
  ci::nb_passed();
  using Fn = void (*)(void*, MPI_Fint*, D*, MPI_Fint*, void*, MPI_Fint*, D*, MPI_Fint*,
                      MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
  if (auto fn = next_symbol<Fn>(pmpi))
    return fn(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
              comm, info, request, ierr);
  set_ierr(ierr, MPI_ERR_INTERN);
}

// The entry points' shape, as COMMSCHED_FORTRAN expects them.
template <typename... A>
void f_mpix_alltoallw_init(const char* pmpi, A... a) { f_w_init(pmpi, a...); }
template <typename... A>
void f_mpix_neighbor_alltoallw_init(const char* pmpi, A... a) { f_w_init(pmpi, a...); }
template <typename... A>
void f_mpix_alltoallv_init(const char* pmpi, A... a) { f_vector_init(false, pmpi, a...); }
template <typename... A>
void f_mpix_neighbor_alltoallv_init(const char* pmpi, A... a) { f_vector_init(true, pmpi, a...); }
template <typename... A>
void f_mpix_alltoall_init(const char* pmpi, A... a) { f_regular_init(false, pmpi, a...); }
template <typename... A>
void f_mpix_neighbor_alltoall_init(const char* pmpi, A... a) { f_regular_init(true, pmpi, a...); }
#endif

}  // namespace

#define COMMSCHED_F_EXPORT extern "C" __attribute__((visibility("default")))

// name_, name__, name, NAME call the mpif.h / `use mpi` profiling entry pmpi_<name>_;
// name_f08_ calls pmpi_<name>_f08_.
#define COMMSCHED_FORTRAN(cname, fname, params, args)                                      \
  COMMSCHED_F_EXPORT void fname##_ params { f_##fname("p" #fname "_", COMMSCHED_UNPAREN args); } \
  COMMSCHED_F_EXPORT void fname##__ params { f_##fname("p" #fname "_", COMMSCHED_UNPAREN args); } \
  COMMSCHED_F_EXPORT void fname params { f_##fname("p" #fname "_", COMMSCHED_UNPAREN args); }    \
  COMMSCHED_F_EXPORT void fname##_f08_ params {                                             \
    f_##fname("p" #fname "_f08_", COMMSCHED_UNPAREN args);                                  \
  }
#define COMMSCHED_UNPAREN(...) __VA_ARGS__

COMMSCHED_INTERCEPTED(COMMSCHED_FORTRAN)
#ifdef COMMSCHED_PCOLLREQ
COMMSCHED_INTERCEPTED_PCOLLREQ(COMMSCHED_FORTRAN)
#endif

// Upper-case manglings (some compilers): spelled out because the preprocessor cannot upcase.
COMMSCHED_F_EXPORT void MPI_INIT(MPI_Fint* ierr) { f_mpi_init("pmpi_init_", ierr); }
COMMSCHED_F_EXPORT void MPI_INIT_THREAD(MPI_Fint* r, MPI_Fint* p, MPI_Fint* ierr) {
  f_mpi_init_thread("pmpi_init_thread_", r, p, ierr);
}
COMMSCHED_F_EXPORT void MPI_FINALIZE(MPI_Fint* ierr) { f_mpi_finalize("pmpi_finalize_", ierr); }
COMMSCHED_F_EXPORT void MPI_PCONTROL(MPI_Fint* level) { f_mpi_pcontrol(nullptr, level); }
COMMSCHED_F_EXPORT void MPI_COMM_FREE(MPI_Fint* comm, MPI_Fint* ierr) {
  f_mpi_comm_free("pmpi_comm_free_", comm, ierr);
}
COMMSCHED_F_EXPORT void MPI_COMM_DISCONNECT(MPI_Fint* comm, MPI_Fint* ierr) {
  f_mpi_comm_disconnect("pmpi_comm_disconnect_", comm, ierr);
}
COMMSCHED_F_EXPORT void MPI_ALLTOALLV(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st, void* rb,
                                      MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                      MPI_Fint* ierr) {
  f_mpi_alltoallv(nullptr, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);
}

COMMSCHED_F_EXPORT void MPI_ALLTOALL(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb, MPI_Fint* rc,
                                     MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* ierr) {
  f_mpi_alltoall(nullptr, sb, sc, st, rb, rc, rt, comm, ierr);
}

COMMSCHED_F_EXPORT void MPI_ALLTOALLW(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st, void* rb,
                                      MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                      MPI_Fint* ierr) {
  f_mpi_alltoallw(nullptr, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);
}

COMMSCHED_F_EXPORT void MPI_NEIGHBOR_ALLTOALLV(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st,
                                               void* rb, MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt,
                                               MPI_Fint* comm, MPI_Fint* ierr) {
  f_mpi_neighbor_alltoallv(nullptr, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);
}

COMMSCHED_F_EXPORT void MPI_NEIGHBOR_ALLTOALL(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb,
                                              MPI_Fint* rc, MPI_Fint* rt, MPI_Fint* comm,
                                              MPI_Fint* ierr) {
  f_mpi_neighbor_alltoall(nullptr, sb, sc, st, rb, rc, rt, comm, ierr);
}

COMMSCHED_F_EXPORT void MPI_NEIGHBOR_ALLTOALLW(void* sb, MPI_Fint* sc, MPI_Aint* sd, MPI_Fint* st,
                                               void* rb, MPI_Fint* rc, MPI_Aint* rd, MPI_Fint* rt,
                                               MPI_Fint* comm, MPI_Fint* ierr) {
  f_mpi_neighbor_alltoallw(nullptr, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);
}

COMMSCHED_F_EXPORT void MPI_IALLTOALLV(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st, void* rb,
                                       MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                       MPI_Fint* req, MPI_Fint* ierr) {
  f_mpi_ialltoallv("pmpi_ialltoallv_", sb, sc, sd, st, rb, rc, rd, rt, comm, req, ierr);
}

COMMSCHED_F_EXPORT void MPI_IALLTOALL(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb, MPI_Fint* rc,
                                      MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* req, MPI_Fint* ierr) {
  f_mpi_ialltoall("pmpi_ialltoall_", sb, sc, st, rb, rc, rt, comm, req, ierr);
}

COMMSCHED_F_EXPORT void MPI_INEIGHBOR_ALLTOALLV(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st,
                                                void* rb, MPI_Fint* rc, MPI_Fint* rd,
                                                MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* req,
                                                MPI_Fint* ierr) {
  f_mpi_ineighbor_alltoallv("pmpi_ineighbor_alltoallv_", sb, sc, sd, st, rb, rc, rd, rt, comm,
                            req, ierr);
}

COMMSCHED_F_EXPORT void MPI_INEIGHBOR_ALLTOALL(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb,
                                               MPI_Fint* rc, MPI_Fint* rt, MPI_Fint* comm,
                                               MPI_Fint* req, MPI_Fint* ierr) {
  f_mpi_ineighbor_alltoall("pmpi_ineighbor_alltoall_", sb, sc, st, rb, rc, rt, comm, req, ierr);
}

COMMSCHED_F_EXPORT void MPI_IALLTOALLW(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st, void* rb,
                                       MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                       MPI_Fint* req, MPI_Fint* ierr) {
  f_mpi_ialltoallw("pmpi_ialltoallw_", sb, sc, sd, st, rb, rc, rd, rt, comm, req, ierr);
}

COMMSCHED_F_EXPORT void MPI_INEIGHBOR_ALLTOALLW(void* sb, MPI_Fint* sc, MPI_Aint* sd, MPI_Fint* st,
                                                void* rb, MPI_Fint* rc, MPI_Aint* rd,
                                                MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* req,
                                                MPI_Fint* ierr) {
  f_mpi_ineighbor_alltoallw("pmpi_ineighbor_alltoallw_", sb, sc, sd, st, rb, rc, rd, rt, comm,
                            req, ierr);
}

#ifdef COMMSCHED_PCOLLREQ
COMMSCHED_F_EXPORT void MPIX_ALLTOALLV_INIT(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st,
                                            void* rb, MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt,
                                            MPI_Fint* comm, MPI_Fint* info, MPI_Fint* req,
                                            MPI_Fint* ierr) {
  f_mpix_alltoallv_init("pmpix_alltoallv_init_", sb, sc, sd, st, rb, rc, rd, rt, comm, info, req,
                        ierr);
}

COMMSCHED_F_EXPORT void MPIX_ALLTOALL_INIT(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb,
                                           MPI_Fint* rc, MPI_Fint* rt, MPI_Fint* comm,
                                           MPI_Fint* info, MPI_Fint* req, MPI_Fint* ierr) {
  f_mpix_alltoall_init("pmpix_alltoall_init_", sb, sc, st, rb, rc, rt, comm, info, req, ierr);
}

COMMSCHED_F_EXPORT void MPIX_NEIGHBOR_ALLTOALLV_INIT(void* sb, MPI_Fint* sc, MPI_Fint* sd,
                                                     MPI_Fint* st, void* rb, MPI_Fint* rc,
                                                     MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                                     MPI_Fint* info, MPI_Fint* req,
                                                     MPI_Fint* ierr) {
  f_mpix_neighbor_alltoallv_init("pmpix_neighbor_alltoallv_init_", sb, sc, sd, st, rb, rc, rd, rt,
                                 comm, info, req, ierr);
}

COMMSCHED_F_EXPORT void MPIX_ALLTOALLW_INIT(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st,
                                            void* rb, MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt,
                                            MPI_Fint* comm, MPI_Fint* info, MPI_Fint* req,
                                            MPI_Fint* ierr) {
  f_mpix_alltoallw_init("pmpix_alltoallw_init_", sb, sc, sd, st, rb, rc, rd, rt, comm, info, req,
                        ierr);
}

COMMSCHED_F_EXPORT void MPIX_NEIGHBOR_ALLTOALLW_INIT(void* sb, MPI_Fint* sc, MPI_Aint* sd,
                                                     MPI_Fint* st, void* rb, MPI_Fint* rc,
                                                     MPI_Aint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                                     MPI_Fint* info, MPI_Fint* req,
                                                     MPI_Fint* ierr) {
  f_mpix_neighbor_alltoallw_init("pmpix_neighbor_alltoallw_init_", sb, sc, sd, st, rb, rc, rd, rt,
                                 comm, info, req, ierr);
}

COMMSCHED_F_EXPORT void MPIX_NEIGHBOR_ALLTOALL_INIT(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb,
                                                    MPI_Fint* rc, MPI_Fint* rt, MPI_Fint* comm,
                                                    MPI_Fint* info, MPI_Fint* req,
                                                    MPI_Fint* ierr) {
  f_mpix_neighbor_alltoall_init("pmpix_neighbor_alltoall_init_", sb, sc, st, rb, rc, rt, comm,
                                info, req, ierr);
}
#endif

// --- Isend/Irecv bursts ----------------------------------------------------------------------
// Open MPI's Fortran point-to-point calls go to PMPI_* directly too. Handles and statuses are
// converted here (a `use mpi_f08` handle or status has the same layout as mpif.h's), and the
// work is done by src/intercept/p2p.cpp exactly as for C.
namespace {

// mpif.h's status (MPI_STATUS_SIZE integers); Open MPI's mpi_f08 status has the same layout.
struct FortranStatus {
  static bool ignore(const void* p) {
    static const FortranConstant ignore{"mpi_fortran_status_ignore_", "mpi_fortran_status_ignore",
                                        "mpi_fortran_status_ignore__",
                                        "MPI_FORTRAN_STATUS_IGNORE"};
    return p == nullptr || p == MPI_F_STATUS_IGNORE || ignore.is(p);
  }
  static bool ignore_all(const void* p) {
    static const FortranConstant ignore{"mpi_fortran_statuses_ignore_",
                                        "mpi_fortran_statuses_ignore",
                                        "mpi_fortran_statuses_ignore__",
                                        "MPI_FORTRAN_STATUSES_IGNORE"};
    return p == nullptr || p == MPI_F_STATUSES_IGNORE || ignore.is(p);
  }
  static void c2f(const MPI_Status& c, void* f, std::size_t index) {
    constexpr std::size_t kInts = sizeof(MPI_Status) / sizeof(MPI_Fint);
    PMPI_Status_c2f(&c, static_cast<MPI_Fint*>(f) + index * kInts);
  }
};
using Completion = commsched::wrappers::FortranCompletion<FortranStatus>;

using PostFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
void f_post(PostFn fn, void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* peer, MPI_Fint* tag,
            MPI_Fint* comm, MPI_Fint* req, MPI_Fint* ierr) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = fn(fortran_buffer(buf), static_cast<int>(*count), MPI_Type_f2c(*type),
                    static_cast<int>(*peer), static_cast<int>(*tag), MPI_Comm_f2c(*comm), &r);
  if (rc == MPI_SUCCESS) *req = MPI_Request_c2f(r);
  set_ierr(ierr, rc);
}
int c_isend(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::isend(b, c, t, p, g, m, r);
}
int c_irecv(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::irecv(const_cast<void*>(b), c, t, p, g, m, r);
}
int c_issend(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::isend_mode(ci::SendMode::synchronous, b, c, t, p, g, m, r);
}
int c_irsend(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::isend_mode(ci::SendMode::ready, b, c, t, p, g, m, r);
}
int c_ibsend(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::isend_mode(ci::SendMode::buffered, b, c, t, p, g, m, r);
}
int c_send_init(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::send_init(b, c, t, p, g, m, r);
}
int c_recv_init(const void* b, int c, MPI_Datatype t, int p, int g, MPI_Comm m, MPI_Request* r) {
  return ci::recv_init(const_cast<void*>(b), c, t, p, g, m, r);
}

}  // namespace

// Every mangling of one Fortran binding calls `body` (which may use the parameters).
#define COMMSCHED_F_ALL(fname, params, body)                     \
  COMMSCHED_F_EXPORT void fname##_ params { body; }              \
  COMMSCHED_F_EXPORT void fname##__ params { body; }             \
  COMMSCHED_F_EXPORT void fname params { body; }                 \
  COMMSCHED_F_EXPORT void fname##_f08_ params { body; }

#define COMMSCHED_F_POST(name)                                                                  \
  COMMSCHED_F_ALL(mpi_##name,                                                                   \
                  (void* b, MPI_Fint* c, MPI_Fint* t, MPI_Fint* p, MPI_Fint* g, MPI_Fint* m,    \
                   MPI_Fint* r, MPI_Fint* e),                                                   \
                  f_post(c_##name, b, c, t, p, g, m, r, e))
COMMSCHED_F_POST(isend)
COMMSCHED_F_POST(irecv)
COMMSCHED_F_POST(issend)
COMMSCHED_F_POST(irsend)
COMMSCHED_F_POST(ibsend)
COMMSCHED_F_POST(send_init)
COMMSCHED_F_POST(recv_init)

#define COMMSCHED_F_COMPLETION(name, params, body) COMMSCHED_F_ALL(mpi_##name, params, body)
COMMSCHED_FORTRAN_COMPLETION(COMMSCHED_F_COMPLETION, Completion)

// Each of the four Fortran spellings of `fname` through ONE(extra, symbol, pmpi, plain, nf): the
// mpif.h manglings forward to pmpi_<name>_, mpi_f08's to pmpi_<name>_f08_.
#define COMMSCHED_F_SPELLINGS(ONE, extra, fname, nf)                                            \
  ONE(extra, mpi_##fname##_, "pmpi_" #fname "_", "mpi_" #fname "_", nf)                         \
  ONE(extra, mpi_##fname##__, "pmpi_" #fname "_", "mpi_" #fname "_", nf)                        \
  ONE(extra, mpi_##fname, "pmpi_" #fname "_", "mpi_" #fname "_", nf)                            \
  ONE(extra, mpi_##fname##_f08_, "pmpi_" #fname "_f08_", "mpi_" #fname "_f08_", nf)

// Flush points: nf by-reference arguments, the last one ierr, forwarded unchanged.
#define COMMSCHED_F_FLUSH_ONE(unused, symbol, pmpi, plain, nf)                                  \
  COMMSCHED_F_EXPORT void symbol(COMMSCHED_F_ARGS_##nf) {                                       \
    commsched::wrappers::fortran_forward(pmpi, plain, e, COMMSCHED_F_NAMES_##nf);              \
  }
#define COMMSCHED_F_FLUSH(cname, fname, cparams, cargs, nf) \
  COMMSCHED_F_SPELLINGS(COMMSCHED_F_FLUSH_ONE, , fname, nf)
COMMSCHED_FLUSH_POINTS(COMMSCHED_F_FLUSH)
COMMSCHED_FLUSH_POINTS_IO(COMMSCHED_F_FLUSH)

// Flush points with one string argument: gfortran passes its length after ierr, by value.
#define COMMSCHED_F_FLUSH_STRING_ONE(unused, symbol, pmpi, plain, nf)                           \
  COMMSCHED_F_EXPORT void symbol(COMMSCHED_F_ARGS_##nf, std::size_t length) {                   \
    commsched::wrappers::fortran_forward(pmpi, plain, e, COMMSCHED_F_NAMES_##nf, length);      \
  }
#define COMMSCHED_F_FLUSH_STRING(cname, fname, cparams, cargs, nf) \
  COMMSCHED_F_SPELLINGS(COMMSCHED_F_FLUSH_STRING_ONE, , fname, nf)
COMMSCHED_FLUSH_POINTS_STRING(COMMSCHED_F_FLUSH_STRING)

// Blocking collectives and communicator creation: forwarded the same way, then
// intercept::collective_done or intercept::comm_made (fortran_forward.hpp).
#define COMMSCHED_F_COLLECTIVE_ONE(unused, symbol, pmpi, plain, nf)                             \
  COMMSCHED_F_EXPORT void symbol(COMMSCHED_F_ARGS_##nf) {                                       \
    commsched::wrappers::fortran_collective(pmpi, plain, e, COMMSCHED_F_LAST_##nf,             \
                                            COMMSCHED_F_NAMES_##nf);                            \
  }
#define COMMSCHED_F_CREATE_ONE(whole, symbol, pmpi, plain, nf)                                  \
  COMMSCHED_F_EXPORT void symbol(COMMSCHED_F_ARGS_##nf) {                                       \
    commsched::wrappers::fortran_made(pmpi, plain, e, whole, a1, COMMSCHED_F_LAST_##nf,        \
                                      COMMSCHED_F_NAMES_##nf);                                  \
  }
#define COMMSCHED_F_COLLECTIVE(cname, fname, cparams, cargs, nf) \
  COMMSCHED_F_SPELLINGS(COMMSCHED_F_COLLECTIVE_ONE, , fname, nf)
#define COMMSCHED_F_CREATE(cname, fname, cparams, cargs, nf) \
  COMMSCHED_F_SPELLINGS(COMMSCHED_F_CREATE_ONE, commsched::wrappers::whole_parent(#cname), fname, nf)
COMMSCHED_BLOCKING_COLLECTIVES(COMMSCHED_F_COLLECTIVE)
COMMSCHED_COMM_CREATORS(COMMSCHED_F_CREATE)
