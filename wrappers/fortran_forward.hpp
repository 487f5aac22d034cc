#pragma once
// Fortran flush points: a Fortran MPI call the library does not otherwise handle, with `nf`
// by-reference arguments (the last one ierr), releases deferred burst sends and is forwarded
// unchanged to the MPI library's own entry point, found with dlsym(RTLD_NEXT).
#include <dlfcn.h>
#include <mpi.h>

#include <cstddef>  // std::size_t: a Fortran string's length
#include <mutex>
#include <unordered_map>

#include "intercept/nonblocking.hpp"
#include "wrappers/flush_points.hpp"

namespace commsched::wrappers {

// The MPI library's own entry point `name` (dlsym(RTLD_NEXT)), or nullptr. Each name is looked
// up once: dlsym searches every loaded library, which a call forwarded on every use must not
// pay. Keyed by the name's address (the callers pass string literals): no string is hashed per
// call. A name not found is looked up again the next time (a library may be loaded later). The
// cache is never destroyed: a Fortran call from another library's exit handler still finds it.
inline void* next_entry(const char* name) {
  static auto* mu = new std::mutex;
  static auto* found = new std::unordered_map<const char*, void*>;
  {
    std::lock_guard lock(*mu);
    if (auto it = found->find(name); it != found->end()) return it->second;
  }
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn) {
    std::lock_guard lock(*mu);
    found->emplace(name, fn);
  }
  return fn;
}

template <typename... Args>
void fortran_forward(const char* first, const char* second, MPI_Fint* ierr, Args... args) {
  intercept::flush_point(first);
  using Fn = void (*)(Args...);
  for (const char* name : {first, second}) {
    if (auto fn = reinterpret_cast<Fn>(next_entry(name))) return fn(args...);
  }
  if (ierr) *ierr = MPI_ERR_INTERN;
}

inline MPI_Comm comm_of(void* fortran_handle) {
  return MPI_Comm_f2c(*static_cast<MPI_Fint*>(fortran_handle));
}

// A blocking collective forwarded as above, then intercept::collective_done on its
// communicator `comm` (a Fortran handle, the argument before ierr).
template <typename... Args>
void fortran_collective(const char* first, const char* second, MPI_Fint* ierr, void* comm,
                        Args... args) {
  fortran_forward(first, second, ierr, args...);
  if (!ierr || *ierr == MPI_SUCCESS) intercept::collective_done(comm_of(comm));
}

// A communicator constructor forwarded as above, then intercept::comm_made on its parent (the
// first argument; none where `whole` is false: not all its ranks take part) and the new
// communicator (the argument before ierr).
template <typename... Args>
void fortran_made(const char* first, const char* second, MPI_Fint* ierr, bool whole,
                  void* parent, void* made, Args... args) {
  fortran_forward(first, second, ierr, args...);
  if (!ierr || *ierr == MPI_SUCCESS)
    intercept::comm_made(whole ? comm_of(parent) : MPI_COMM_NULL, comm_of(made));
}

}  // namespace commsched::wrappers

#define COMMSCHED_F_ARGS_2 void *a1, MPI_Fint *e
#define COMMSCHED_F_ARGS_3 void *a1, void *a2, MPI_Fint *e
#define COMMSCHED_F_ARGS_4 void *a1, void *a2, void *a3, MPI_Fint *e
#define COMMSCHED_F_ARGS_5 void *a1, void *a2, void *a3, void *a4, MPI_Fint *e
#define COMMSCHED_F_ARGS_6 void *a1, void *a2, void *a3, void *a4, void *a5, MPI_Fint *e
#define COMMSCHED_F_ARGS_7 void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, MPI_Fint *e
#define COMMSCHED_F_ARGS_8 \
  void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, MPI_Fint *e
#define COMMSCHED_F_ARGS_9 \
  void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, MPI_Fint *e
#define COMMSCHED_F_ARGS_10                                                                    \
  void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, \
      MPI_Fint *e
#define COMMSCHED_F_ARGS_11                                                                    \
  void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, \
      void *a10, MPI_Fint *e
#define COMMSCHED_F_ARGS_13                                                                    \
  void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, \
      void *a10, void *a11, void *a12, MPI_Fint *e
#define COMMSCHED_F_NAMES_2 a1, e
#define COMMSCHED_F_NAMES_3 a1, a2, e
#define COMMSCHED_F_NAMES_4 a1, a2, a3, e
#define COMMSCHED_F_NAMES_5 a1, a2, a3, a4, e
#define COMMSCHED_F_NAMES_6 a1, a2, a3, a4, a5, e
#define COMMSCHED_F_NAMES_7 a1, a2, a3, a4, a5, a6, e
#define COMMSCHED_F_NAMES_8 a1, a2, a3, a4, a5, a6, a7, e
#define COMMSCHED_F_NAMES_9 a1, a2, a3, a4, a5, a6, a7, a8, e
#define COMMSCHED_F_NAMES_10 a1, a2, a3, a4, a5, a6, a7, a8, a9, e
#define COMMSCHED_F_NAMES_11 a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, e
#define COMMSCHED_F_NAMES_13 a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, e
// The argument before ierr: a communicator-making call's new communicator, a collective's
// communicator.
#define COMMSCHED_F_LAST_2 a1
#define COMMSCHED_F_LAST_3 a2
#define COMMSCHED_F_LAST_4 a3
#define COMMSCHED_F_LAST_5 a4
#define COMMSCHED_F_LAST_6 a5
#define COMMSCHED_F_LAST_7 a6
#define COMMSCHED_F_LAST_8 a7
#define COMMSCHED_F_LAST_9 a8
#define COMMSCHED_F_LAST_10 a9
#define COMMSCHED_F_LAST_11 a10
