// Fortran entry points. Open MPI 4.1's Fortran bindings call PMPI_* directly, so the C wrappers
// never see Fortran calls: every mangling is defined here, converts handles with the _f2c
// functions and calls src/intercept, or the MPI library's own Fortran profiling entry point
// (found with dlsym) where MPI's Fortran layer does work of its own (init, finalize).
#include <dlfcn.h>
#include <mpi.h>

#include <vector>

#include "intercept/intercept.hpp"
#include "wrappers/intercepted.hpp"

namespace ci = commsched::intercept;

namespace {

template <typename Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void set_ierr(MPI_Fint* ierr, int rc) {
  if (ierr) *ierr = static_cast<MPI_Fint>(rc);  // `use mpi_f08` passes nullptr when absent
}

// Fortran's MPI_IN_PLACE and MPI_BOTTOM are addresses of common blocks in the MPI library.
bool is_symbol(const void* p, const char* const* names) {
  for (const char* const* n = names; *n; ++n) {
    const void* s = dlsym(RTLD_DEFAULT, *n);
    if (s && s == p) return true;
  }
  return false;
}
const void* fortran_buffer(void* p) {
  static const char* const in_place[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                         "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE", nullptr};
  static const char* const bottom[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                       "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM", nullptr};
  if (is_symbol(p, in_place)) return MPI_IN_PLACE;
  if (is_symbol(p, bottom)) return MPI_BOTTOM;
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

void f_mpi_comm_free(const char* pmpi, MPI_Fint* comm, MPI_Fint* ierr) {
  ci::forget_comm(MPI_Comm_f2c(*comm));
  if (auto fn = next_symbol<CommFreeFn>(pmpi)) {
    fn(comm, ierr);
  } else {
    MPI_Comm c = MPI_Comm_f2c(*comm);
    set_ierr(ierr, PMPI_Comm_free(&c));
    *comm = MPI_Comm_c2f(c);
  }
}

void f_mpi_alltoallv(const char*, void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls,
                     MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls,
                     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  int size = 0;
  PMPI_Comm_size(c, &size);
  // MPI_Fint is int on the supported builds; copy anyway so any Fortran INTEGER kind works.
  std::vector<int> sc(sendcounts, sendcounts + size), sd(sdispls, sdispls + size);
  std::vector<int> rcv(recvcounts, recvcounts + size), rd(rdispls, rdispls + size);
  const void* sb = fortran_buffer(sendbuf);
  set_ierr(ierr, ci::alltoallv(sb, sc.data(), sd.data(), MPI_Type_f2c(*sendtype),
                               const_cast<void*>(fortran_buffer(recvbuf)), rcv.data(), rd.data(),
                               MPI_Type_f2c(*recvtype), c));
}

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

// Upper-case manglings (some compilers): spelled out because the preprocessor cannot upcase.
COMMSCHED_F_EXPORT void MPI_INIT(MPI_Fint* ierr) { f_mpi_init("pmpi_init_", ierr); }
COMMSCHED_F_EXPORT void MPI_INIT_THREAD(MPI_Fint* r, MPI_Fint* p, MPI_Fint* ierr) {
  f_mpi_init_thread("pmpi_init_thread_", r, p, ierr);
}
COMMSCHED_F_EXPORT void MPI_FINALIZE(MPI_Fint* ierr) { f_mpi_finalize("pmpi_finalize_", ierr); }
COMMSCHED_F_EXPORT void MPI_COMM_FREE(MPI_Fint* comm, MPI_Fint* ierr) {
  f_mpi_comm_free("pmpi_comm_free_", comm, ierr);
}
COMMSCHED_F_EXPORT void MPI_ALLTOALLV(void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st, void* rb,
                                      MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm,
                                      MPI_Fint* ierr) {
  f_mpi_alltoallv(nullptr, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);
}
