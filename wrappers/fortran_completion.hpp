#pragma once
// Fortran completion calls (wait, test and friends, start, cancel, request free and get-status)
// for bindings that call PMPI_* directly: Open MPI's mpif.h / `use mpi` / `use mpi_f08`, and
// MPICH's `use mpi_f08`. Handles are converted with the _f2c/_c2f functions, statuses by the
// binding's `Status` policy, and the work is done by src/intercept/p2p.cpp as for C:
//
//   struct Status {
//     static bool ignore(const void* status);        // MPI_STATUS_IGNORE of this binding
//     static bool ignore_all(const void* statuses);  // MPI_STATUSES_IGNORE of this binding
//     static void c2f(const MPI_Status& c, void* statuses, std::size_t index);
//   };
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "intercept/p2p.hpp"

namespace commsched::wrappers {

template <typename Status>
struct FortranCompletion {
  static void set_ierr(MPI_Fint* ierr, int rc) {
    if (ierr) *ierr = static_cast<MPI_Fint>(rc);  // optional in mpi_f08
  }
  static std::vector<MPI_Request> f2c(MPI_Fint n, const MPI_Fint* f) {
    std::vector<MPI_Request> c(static_cast<std::size_t>(n > 0 ? n : 0));
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = MPI_Request_f2c(f[i]);
    return c;
  }
  static void c2f(const std::vector<MPI_Request>& c, MPI_Fint* f) {
    for (std::size_t i = 0; i < c.size(); ++i) f[i] = MPI_Request_c2f(c[i]);
  }
  static void status_c2f(const MPI_Status& c, void* f) {
    if (!Status::ignore(f)) Status::c2f(c, f, 0);
  }
  static void logical_c2f(int c, MPI_Fint* f) { *f = c ? 1 : 0; }  // gfortran's .TRUE. is 1
  // Fortran indices are 1-based; MPI_UNDEFINED stays as it is.
  static MPI_Fint index_c2f(int i) { return static_cast<MPI_Fint>(i == MPI_UNDEFINED ? i : i + 1); }

  static void startall(MPI_Fint* count, MPI_Fint* reqs, MPI_Fint* ierr) {
    std::vector<MPI_Request> c = f2c(*count, reqs);
    set_ierr(ierr, intercept::startall(static_cast<int>(c.size()), c.data()));
    c2f(c, reqs);
  }
  static void start(MPI_Fint* req, MPI_Fint* ierr) {
    MPI_Fint one = 1;
    startall(&one, req, ierr);
  }
  static void wait(MPI_Fint* req, void* status, MPI_Fint* ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    MPI_Status s{};
    set_ierr(ierr, intercept::wait(&r, &s));
    *req = MPI_Request_c2f(r);
    status_c2f(s, status);
  }
  static void all(bool wait, MPI_Fint* count, MPI_Fint* reqs, MPI_Fint* flag, void* statuses,
                  MPI_Fint* ierr) {
    std::vector<MPI_Request> c = f2c(*count, reqs);
    std::vector<MPI_Status> s(c.size());
    int f = 1;
    const int n = static_cast<int>(c.size());
    set_ierr(ierr, wait ? intercept::waitall(n, c.data(), s.data())
                        : intercept::testall(n, c.data(), &f, s.data()));
    c2f(c, reqs);
    if (flag) logical_c2f(f, flag);
    if (!f || Status::ignore_all(statuses)) return;
    for (std::size_t i = 0; i < s.size(); ++i) Status::c2f(s[i], statuses, i);
  }
  static void waitall(MPI_Fint* count, MPI_Fint* reqs, void* statuses, MPI_Fint* ierr) {
    all(true, count, reqs, nullptr, statuses, ierr);
  }
  static void testall(MPI_Fint* count, MPI_Fint* reqs, MPI_Fint* flag, void* statuses,
                      MPI_Fint* ierr) {
    all(false, count, reqs, flag, statuses, ierr);
  }
  static void any(bool wait, MPI_Fint* count, MPI_Fint* reqs, MPI_Fint* index, MPI_Fint* flag,
                  void* status, MPI_Fint* ierr) {
    std::vector<MPI_Request> c = f2c(*count, reqs);
    MPI_Status s{};
    int i = MPI_UNDEFINED, f = 1;
    const int n = static_cast<int>(c.size());
    set_ierr(ierr, wait ? intercept::waitany(n, c.data(), &i, &s)
                        : intercept::testany(n, c.data(), &i, &f, &s));
    c2f(c, reqs);
    *index = index_c2f(i);
    if (flag) logical_c2f(f, flag);
    if (f && i != MPI_UNDEFINED) status_c2f(s, status);
  }
  static void waitany(MPI_Fint* count, MPI_Fint* reqs, MPI_Fint* index, void* status,
                      MPI_Fint* ierr) {
    any(true, count, reqs, index, nullptr, status, ierr);
  }
  static void testany(MPI_Fint* count, MPI_Fint* reqs, MPI_Fint* index, MPI_Fint* flag,
                      void* status, MPI_Fint* ierr) {
    any(false, count, reqs, index, flag, status, ierr);
  }
  static void some(bool wait, MPI_Fint* incount, MPI_Fint* reqs, MPI_Fint* outcount,
                   MPI_Fint* indices, void* statuses, MPI_Fint* ierr) {
    std::vector<MPI_Request> c = f2c(*incount, reqs);
    std::vector<MPI_Status> s(c.size());
    std::vector<int> idx(c.size());
    int out = 0;
    const int n = static_cast<int>(c.size());
    set_ierr(ierr, wait ? intercept::waitsome(n, c.data(), &out, idx.data(), s.data())
                        : intercept::testsome(n, c.data(), &out, idx.data(), s.data()));
    c2f(c, reqs);
    *outcount = static_cast<MPI_Fint>(out);
    if (out == MPI_UNDEFINED) return;
    for (int k = 0; k < out; ++k) indices[k] = index_c2f(idx[static_cast<std::size_t>(k)]);
    if (Status::ignore_all(statuses)) return;
    for (int k = 0; k < out; ++k)  // packed: status k belongs to indices[k]
      Status::c2f(s[static_cast<std::size_t>(k)], statuses, static_cast<std::size_t>(k));
  }
  static void waitsome(MPI_Fint* incount, MPI_Fint* reqs, MPI_Fint* outcount, MPI_Fint* indices,
                       void* statuses, MPI_Fint* ierr) {
    some(true, incount, reqs, outcount, indices, statuses, ierr);
  }
  static void testsome(MPI_Fint* incount, MPI_Fint* reqs, MPI_Fint* outcount, MPI_Fint* indices,
                       void* statuses, MPI_Fint* ierr) {
    some(false, incount, reqs, outcount, indices, statuses, ierr);
  }
  static void test(MPI_Fint* req, MPI_Fint* flag, void* status, MPI_Fint* ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    MPI_Status s{};
    int f = 0;
    set_ierr(ierr, intercept::test(&r, &f, &s));
    *req = MPI_Request_c2f(r);
    logical_c2f(f, flag);
    if (f) status_c2f(s, status);
  }
  static void request_free(MPI_Fint* req, MPI_Fint* ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    set_ierr(ierr, intercept::request_free(&r));
    *req = MPI_Request_c2f(r);
  }
  static void cancel(MPI_Fint* req, MPI_Fint* ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    set_ierr(ierr, intercept::cancel(&r));
  }
  static void request_get_status(MPI_Fint* req, MPI_Fint* flag, void* status, MPI_Fint* ierr) {
    MPI_Status s{};
    int f = 0;
    set_ierr(ierr, intercept::request_get_status(MPI_Request_f2c(*req), &f, &s));
    logical_c2f(f, flag);
    if (f) status_c2f(s, status);
  }
};

}  // namespace commsched::wrappers

// Defines `prefix<name><suffix>` for every completion call of one binding, forwarding to
// FortranCompletion<Status>; MANGLE(name, params, body) emits the symbols of one function.
#define COMMSCHED_FORTRAN_COMPLETION(MANGLE, F)                                                  \
  MANGLE(start, (MPI_Fint * r, MPI_Fint * e), F::start(r, e))                                    \
  MANGLE(startall, (MPI_Fint * n, MPI_Fint * r, MPI_Fint * e), F::startall(n, r, e))             \
  MANGLE(wait, (MPI_Fint * r, void* s, MPI_Fint* e), F::wait(r, s, e))                           \
  MANGLE(waitall, (MPI_Fint * n, MPI_Fint * r, void* s, MPI_Fint* e), F::waitall(n, r, s, e))    \
  MANGLE(waitany, (MPI_Fint * n, MPI_Fint * r, MPI_Fint * i, void* s, MPI_Fint* e),              \
         F::waitany(n, r, i, s, e))                                                              \
  MANGLE(waitsome, (MPI_Fint * n, MPI_Fint * r, MPI_Fint * o, MPI_Fint * i, void* s, MPI_Fint* e), \
         F::waitsome(n, r, o, i, s, e))                                                          \
  MANGLE(test, (MPI_Fint * r, MPI_Fint * f, void* s, MPI_Fint* e), F::test(r, f, s, e))          \
  MANGLE(testall, (MPI_Fint * n, MPI_Fint * r, MPI_Fint * f, void* s, MPI_Fint* e),              \
         F::testall(n, r, f, s, e))                                                              \
  MANGLE(testany, (MPI_Fint * n, MPI_Fint * r, MPI_Fint * i, MPI_Fint * f, void* s, MPI_Fint* e), \
         F::testany(n, r, i, f, s, e))                                                           \
  MANGLE(testsome, (MPI_Fint * n, MPI_Fint * r, MPI_Fint * o, MPI_Fint * i, void* s, MPI_Fint* e), \
         F::testsome(n, r, o, i, s, e))                                                          \
  MANGLE(request_free, (MPI_Fint * r, MPI_Fint * e), F::request_free(r, e))                      \
  MANGLE(cancel, (MPI_Fint * r, MPI_Fint * e), F::cancel(r, e))                                  \
  MANGLE(request_get_status, (MPI_Fint * r, MPI_Fint * f, void* s, MPI_Fint* e),                 \
         F::request_get_status(r, f, s, e))
