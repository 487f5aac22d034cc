// MPICH: mpif.h and `use mpi` reach the C wrappers, and so do mpi_f08's posts (Isend, Irecv, ...),
// but mpi_f08's Init, Init_thread, Finalize, Pcontrol, completion calls (Wait*, Test*, Start*, Cancel, Request_free,
// Request_get_status) and many blocking calls go to PMPI directly. Finalize would never write
// the report and a deferred burst send would never be released: wrap those entries here.
#include <dlfcn.h>
#include <mpi.h>

#include "intercept/intercept.hpp"
#include "intercept/pcontrol.hpp"
#include "wrappers/fortran_completion.hpp"
#include "wrappers/fortran_forward.hpp"

namespace {
using InitF08 = void (*)(MPI_Fint*);
using InitThreadF08 = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FinalizeF08 = void (*)(MPI_Fint*);
using PcontrolF08 = void (*)(MPI_Fint*);
}

// MPI_Init and MPI_Init_thread call PMPI_Init* directly: set the library up here, where every
// rank is and no other thread calls MPI yet, as the C wrappers do.
extern "C" __attribute__((visibility("default"))) void mpi_init_f08_(MPI_Fint* ierr) {
  int rc = MPI_SUCCESS;
  if (auto next = reinterpret_cast<InitF08>(dlsym(RTLD_NEXT, "mpi_init_f08_"))) {
    next(ierr);
    rc = ierr ? static_cast<int>(*ierr) : MPI_SUCCESS;
  } else {
    rc = PMPI_Init(nullptr, nullptr);
    if (ierr) *ierr = static_cast<MPI_Fint>(rc);
  }
  int provided = MPI_THREAD_SINGLE;
  if (rc == MPI_SUCCESS && PMPI_Query_thread(&provided) == MPI_SUCCESS)
    commsched::intercept::after_init(provided);
}

extern "C" __attribute__((visibility("default"))) void mpi_init_thread_f08_(MPI_Fint* required,
                                                                           MPI_Fint* provided,
                                                                           MPI_Fint* ierr) {
  int rc = MPI_SUCCESS, p = MPI_THREAD_SINGLE;
  if (auto next = reinterpret_cast<InitThreadF08>(dlsym(RTLD_NEXT, "mpi_init_thread_f08_"))) {
    next(required, provided, ierr);
    rc = ierr ? static_cast<int>(*ierr) : MPI_SUCCESS;
    p = static_cast<int>(*provided);
  } else {
    rc = PMPI_Init_thread(nullptr, nullptr, static_cast<int>(*required), &p);
    *provided = static_cast<MPI_Fint>(p);
    if (ierr) *ierr = static_cast<MPI_Fint>(rc);
  }
  if (rc == MPI_SUCCESS) commsched::intercept::after_init(p);
}

extern "C" __attribute__((visibility("default"))) void mpi_finalize_f08_(MPI_Fint* ierr) {
  commsched::intercept::before_finalize();
  if (auto next = reinterpret_cast<FinalizeF08>(dlsym(RTLD_NEXT, "mpi_finalize_f08_"))) {
    next(ierr);
  } else {
    const int rc = PMPI_Finalize();
    if (ierr) *ierr = static_cast<MPI_Fint>(rc);
  }
}

extern "C" __attribute__((visibility("default"))) void mpi_pcontrol_f08_(MPI_Fint* level) {
  commsched::intercept::pcontrol(static_cast<int>(*level));
  if (auto next = reinterpret_cast<PcontrolF08>(dlsym(RTLD_NEXT, "mpi_pcontrol_f08_"))) {
    next(level);
  } else {
    PMPI_Pcontrol(static_cast<int>(*level));
  }
}

namespace {
// MPICH's mpi_f08 status is MPI_F08_status (the C status's fields as MPI_Fint; its converter
// PMPI_Status_c2f08 lives in the Fortran library, which C programs do not load).
struct F08Status {
  static bool ignore(const void* p) { return p == nullptr || p == MPI_F08_STATUS_IGNORE; }
  static bool ignore_all(const void* p) { return p == nullptr || p == MPI_F08_STATUSES_IGNORE; }
  static void c2f(const MPI_Status& c, void* f, std::size_t index) {
    MPI_F08_status& out = static_cast<MPI_F08_status*>(f)[index];
    out.count_lo = static_cast<MPI_Fint>(c.count_lo);
    out.count_hi_and_cancelled = static_cast<MPI_Fint>(c.count_hi_and_cancelled);
    out.MPI_SOURCE = static_cast<MPI_Fint>(c.MPI_SOURCE);
    out.MPI_TAG = static_cast<MPI_Fint>(c.MPI_TAG);
    out.MPI_ERROR = static_cast<MPI_Fint>(c.MPI_ERROR);
  }
};
using Completion = commsched::wrappers::FortranCompletion<F08Status>;
}  // namespace

#define COMMSCHED_F08_COMPLETION(name, params, body) \
  extern "C" __attribute__((visibility("default"))) void mpi_##name##_f08_ params { body; }
COMMSCHED_FORTRAN_COMPLETION(COMMSCHED_F08_COMPLETION, Completion)

// Blocking calls: mpi_f08 names them <name>_f08_, or <name>_f08ts_ with choice buffers.
#define COMMSCHED_F08_FLUSH_ONE(symbol, nf)                                                     \
  extern "C" __attribute__((visibility("default"))) void symbol(COMMSCHED_F_ARGS_##nf) {        \
    commsched::wrappers::fortran_forward(#symbol, #symbol, e, COMMSCHED_F_NAMES_##nf);         \
  }
#define COMMSCHED_F08_FLUSH(cname, fname, cparams, cargs, nf) \
  COMMSCHED_F08_FLUSH_ONE(mpi_##fname##_f08_, nf)             \
  COMMSCHED_F08_FLUSH_ONE(mpi_##fname##_f08ts_, nf)
COMMSCHED_FLUSH_POINTS(COMMSCHED_F08_FLUSH)
COMMSCHED_FLUSH_POINTS_IO(COMMSCHED_F08_FLUSH)
// With one string argument, whose length gfortran passes after ierr, by value.
#define COMMSCHED_F08_FLUSH_STRING(cname, fname, cparams, cargs, nf)                             \
  extern "C" __attribute__((visibility("default"))) void mpi_##fname##_f08_(                   \
      COMMSCHED_F_ARGS_##nf, std::size_t length) {                                              \
    commsched::wrappers::fortran_forward("mpi_" #fname "_f08_", "mpi_" #fname "_f08_", e,     \
                                         COMMSCHED_F_NAMES_##nf, length);                       \
  }
COMMSCHED_FLUSH_POINTS_STRING(COMMSCHED_F08_FLUSH_STRING)

// Blocking collectives: the same, then intercept::collective_done.
#define COMMSCHED_F08_COLLECTIVE_ONE(symbol, nf)                                                \
  extern "C" __attribute__((visibility("default"))) void symbol(COMMSCHED_F_ARGS_##nf) {        \
    commsched::wrappers::fortran_collective(#symbol, #symbol, e, COMMSCHED_F_LAST_##nf,        \
                                            COMMSCHED_F_NAMES_##nf);                            \
  }
#define COMMSCHED_F08_COLLECTIVE(cname, fname, cparams, cargs, nf) \
  COMMSCHED_F08_COLLECTIVE_ONE(mpi_##fname##_f08_, nf)             \
  COMMSCHED_F08_COLLECTIVE_ONE(mpi_##fname##_f08ts_, nf)
COMMSCHED_BLOCKING_COLLECTIVES(COMMSCHED_F08_COLLECTIVE)

// Communicator creation calls PMPI directly too: intercept::comm_made is called here.
#define COMMSCHED_F08_CREATE(cname, fname, cparams, cargs, nf)                                   \
  extern "C" __attribute__((visibility("default"))) void mpi_##fname##_f08_(                   \
      COMMSCHED_F_ARGS_##nf) {                                                                  \
    commsched::wrappers::fortran_made("mpi_" #fname "_f08_", "mpi_" #fname "_f08_", e,        \
                                      commsched::wrappers::whole_parent(#cname), a1,           \
                                      COMMSCHED_F_LAST_##nf, COMMSCHED_F_NAMES_##nf);          \
  }
COMMSCHED_COMM_CREATORS(COMMSCHED_F08_CREATE)
