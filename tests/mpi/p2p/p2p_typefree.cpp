// Derived datatypes freed right after the post (MPI lets pending operations complete normally):
// each iteration every rank posts one receive from every other rank and one send to every other
// rank, in reverse ring order (to me-1, me-2, ...: the shift order differs, so the library may
// hold the sends), each with a datatype made for that post and freed at once with MPI_Type_free.
// Sends alternate between a vector (stride 2) and an indexed type over the same elements,
// receives use a vector of stride 3; what lies between the elements must stay untouched.
//   p2p_typefree [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kTag = 40;
constexpr int kGap = -7;  // between a send's elements: must never arrive

int elements(int src, int dst) { return 5 + 37 * ((src + 2 * dst) % 5); }

MPI_Datatype send_type(int n, int it) {
  MPI_Datatype t;
  if (it % 2 == 0) {
    MPI_Type_vector(n, 1, 2, MPI_INT, &t);
  } else {
    std::vector<int> lengths(static_cast<std::size_t>(n), 1), displs(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) displs[static_cast<std::size_t>(k)] = 2 * k;
    MPI_Type_indexed(n, lengths.data(), displs.data(), MPI_INT, &t);
  }
  MPI_Type_commit(&t);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_typefree", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    std::vector<std::vector<int>> out(static_cast<std::size_t>(n)), in(static_cast<std::size_t>(n));
    std::vector<MPI_Request> reqs;
    for (int it = 0; it < chk.iterations(); ++it) {
      reqs.clear();
      for (int d = 1; d < n; ++d) {
        const int src = p2p::ring(me, d, n), count = elements(src, me);
        std::vector<int>& buf = in[static_cast<std::size_t>(src)];
        buf.assign(static_cast<std::size_t>(3 * count), -1);
        MPI_Datatype t;
        MPI_Type_vector(count, 1, 3, MPI_INT, &t);
        MPI_Type_commit(&t);
        reqs.push_back(MPI_REQUEST_NULL);
        MPI_Irecv(buf.data(), 1, t, src, kTag, MPI_COMM_WORLD, &reqs.back());
        MPI_Type_free(&t);
      }
      for (int d = n - 1; d >= 1; --d) {
        const int dst = p2p::ring(me, d, n), count = elements(me, dst);
        std::vector<int>& buf = out[static_cast<std::size_t>(dst)];
        buf.assign(static_cast<std::size_t>(2 * count), kGap);
        for (int k = 0; k < count; ++k)
          buf[static_cast<std::size_t>(2 * k)] = p2p::value(me, dst, it, kTag, k);
        MPI_Datatype t = send_type(count, it);
        reqs.push_back(MPI_REQUEST_NULL);
        MPI_Isend(buf.data(), 1, t, dst, kTag, MPI_COMM_WORLD, &reqs.back());
        MPI_Type_free(&t);
      }
      std::vector<MPI_Status> st(reqs.size());
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      for (int d = 1; d < n; ++d) {
        const int src = p2p::ring(me, d, n), count = elements(src, me);
        const std::vector<int>& buf = in[static_cast<std::size_t>(src)];
        std::vector<int> got(static_cast<std::size_t>(count));
        for (int k = 0; k < count; ++k) {
          got[static_cast<std::size_t>(k)] = buf[static_cast<std::size_t>(3 * k)];
          for (int g = 1; g < 3; ++g)
            chk.same(buf[static_cast<std::size_t>(3 * k + g)], -1, it, "receive", "gap element");
        }
        const MPI_Status& s = st[static_cast<std::size_t>(d - 1)];
        chk.same(s.MPI_SOURCE, src, it, "receive", "MPI_SOURCE");
        chk.same(s.MPI_TAG, kTag, it, "receive", "MPI_TAG");
        int ints = -1;
        MPI_Get_count(&s, MPI_INT, &ints);
        chk.same(ints, count, it, "receive", "MPI_Get_count(MPI_INT)");
        chk.data(got.data(), count, src, it, kTag);
      }
      chk.expect_messages(n - 1);
    }
  });
}
