// MPICH: mpif.h and `use mpi` reach the C wrappers, but `use mpi_f08`'s Finalize goes to PMPI
// directly, so the report would never be written. Wrap that one entry and forward to MPICH's.
#include <dlfcn.h>
#include <mpi.h>

#include "intercept/intercept.hpp"

namespace {
using FinalizeF08 = void (*)(MPI_Fint*);
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
