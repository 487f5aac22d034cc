// Error codes inside a learned burst, with MPI_ERRORS_RETURN on MPI_COMM_WORLD: each iteration
// every rank posts receives from and sends to every other rank (sends in reverse ring order, so
// the library may hold them) and, after the first send, one MPI_Isend MPI rejects, part of the
// burst that repeats: to a rank past the end, with a negative count, with MPI_DATATYPE_NULL, with
// a negative tag, or with a derived datatype never committed (each for 8 iterations, so the
// library learns the burst with it). The error class
// it returns must equal that of what PMPI_Isend (the MPI library itself, never the preloaded
// one) returns for the same arguments, the job must go on, and the burst's MPI_Waitall must succeed
// with every message intact.
//   p2p_errors [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kTag = 50;

// The rejected Isend of kind `kind` (0..4), through `isend` (MPI_Isend or PMPI_Isend).
template <typename Isend>
int bad_isend(Isend isend, int kind, const int* buf, int n) {
  static MPI_Datatype uncommitted = [] {
    MPI_Datatype t;
    MPI_Type_vector(1, 1, 2, MPI_INT, &t);
    return t;
  }();
  MPI_Request req = MPI_REQUEST_NULL;
  switch (kind) {
    case 0: return isend(buf, 1, MPI_INT, n + 3, kTag, MPI_COMM_WORLD, &req);
    case 1: return isend(buf, -2, MPI_INT, 0, kTag, MPI_COMM_WORLD, &req);
    case 2: return isend(buf, 1, MPI_DATATYPE_NULL, 0, kTag, MPI_COMM_WORLD, &req);
    case 3: return isend(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &req);
    default: return isend(buf, 1, uncommitted, 0, kTag, MPI_COMM_WORLD, &req);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto error_class = [](int code) {
    int cls = code;
    if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
    return cls;
  };
  return p2p::run(argc, argv, "p2p_errors", 48, [&error_class](p2p::Checker& chk) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int me = chk.rank(), n = chk.size();
    const int junk[1] = {0};
    std::vector<MPI_Request> reqs;
    for (int it = 0; it < chk.iterations(); ++it) {
      std::vector<p2p::Message> burst;
      for (int d = 1; d < n; ++d) burst.push_back(p2p::incoming(p2p::ring(me, d, n), kTag, 30 + d));
      for (int d = n - 1; d >= 1; --d)
        burst.push_back(p2p::outgoing(p2p::ring(me, d, n), kTag, 30 + (n - d)));
      reqs.clear();
      for (std::size_t i = 0; i < burst.size(); ++i) {
        burst[i].post(it);
        reqs.push_back(burst[i].req);
        if (i == static_cast<std::size_t>(n - 1)) {  // after the first send
          const int kind = (it / 8) % 5;
          const int want = bad_isend(PMPI_Isend, kind, junk, n);
          const int got = bad_isend(MPI_Isend, kind, junk, n);
          chk.same(want != MPI_SUCCESS, 1, it, "PMPI_Isend", "rejects");
          // Classes, not codes: MPICH's codes carry a per-call serial number.
          chk.same(error_class(got), error_class(want), it, "MPI_Isend", "error class");
        }
      }
      std::vector<MPI_Status> st(reqs.size());
      const int rc = MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      chk.same(rc, MPI_SUCCESS, it, "MPI_Waitall", "return code");
      p2p::check_all(chk, burst, st.data(), it);
      chk.expect_messages(p2p::receives(burst));
    }
  });
}
