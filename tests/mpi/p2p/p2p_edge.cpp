// Unusual but valid messages in one repeating burst, completed by one MPI_Waitall:
//   zero bytes   to the right on tag 110, sent from a null buffer, received into room for 4;
//   vector type  to the right on tag 111: 3 elements of MPI_Type_vector(4, 1, 2, MPI_INT) sent,
//                received as 12 contiguous ints; on tag 112 the reverse (12 ints received as 3
//                vectors: the gaps between blocks must keep their canary, MPI_Get_count in the
//                vector type 3, MPI_Get_elements 12); on tag 113, 6 ints received into room for
//                3 vectors: MPI_Get_count must say MPI_UNDEFINED and MPI_Get_elements 6;
//   MPI_PROC_NULL the line's ends (rank 0 has no left, rank n-1 no right) on tags 114 and 115:
//                such receives complete at once, count 0, buffer untouched, with the source
//                and tag native MPI gives (the standard's MPI_PROC_NULL and MPI_ANY_TAG in
//                Open MPI; PMPI's answer is the reference, see p2p::proc_null_status);
//   self         MPI_Irecv from itself posted before the matching MPI_Isend (tag 116);
//   MPI_BOTTOM   a struct type of absolute addresses over two separate arrays, sent from
//                MPI_BOTTOM to the left on tag 117;
//   intercomm    the two halves of the ranks joined by an intercommunicator: local rank r sends
//                remote rank r mod (remote size) one message on tag 118.
//   p2p_edge [--iterations N] [--inject-fault]
#include <algorithm>
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kVec = 4;  // blocks per vector element; 3 elements per message

struct Types {
  MPI_Datatype vec;  // MPI_Type_vector(4, 1, 2, MPI_INT)
  Types() {
    MPI_Type_vector(kVec, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
  }
  ~Types() { MPI_Type_free(&vec); }
  Types(const Types&) = delete;
  Types& operator=(const Types&) = delete;
};

// Offset in ints of block b (0..11) of 3 consecutive vector elements (extent 7 ints each).
int vec_offset(int b) { return (b / kVec) * (2 * kVec - 1) + 2 * (b % kVec); }
constexpr int kVecSpan = 3 * (2 * kVec - 1);  // ints spanned by 3 elements

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_edge", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int left = me == 0 ? MPI_PROC_NULL : me - 1, right = me == n - 1 ? MPI_PROC_NULL : me + 1;
    const int ring_left = p2p::ring(me, -1, n), ring_right = p2p::ring(me, 1, n);
    Types types;
    MPI_Comm half, inter;
    const int colour = me < n / 2 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, colour, me, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, colour == 0 ? n / 2 : 0, 7, &inter);
    int local_me = 0, local_n = 0, remote_n = 0;
    MPI_Comm_rank(inter, &local_me);
    MPI_Comm_size(inter, &local_n);
    MPI_Comm_remote_size(inter, &remote_n);

    for (int it = 0; it < chk.iterations(); ++it) {
      std::vector<MPI_Request> reqs;
      auto add = [&](p2p::Message& m) {
        m.post(it);
        reqs.push_back(m.req);
      };
      // Named Message kinds first: zero bytes, MPI_PROC_NULL ends, self, intercommunicator.
      p2p::Message zero_in = p2p::incoming(ring_left, 110, 0, MPI_COMM_WORLD, 4);
      p2p::Message null_in_l = p2p::incoming(left, 114, 5),
                   null_in_r = p2p::incoming(right, 115, 5);
      p2p::Message null_out_r = p2p::outgoing(right, 114, 5),
                   null_out_l = p2p::outgoing(left, 115, 5);
      p2p::Message self_in = p2p::incoming(me, 116, 9), self_out = p2p::outgoing(me, 116, 9);
      std::vector<p2p::Message> inter_in, inter_out;
      inter_out.push_back(p2p::outgoing(local_me % remote_n, 118, 4 + local_me, inter));
      for (int q = 0; q < remote_n; ++q)
        if (q % local_n == local_me) inter_in.push_back(p2p::incoming(q, 118, 4 + q, inter));
      std::vector<p2p::Message*> plain = {&zero_in, &null_in_l, &null_in_r, &self_in};
      for (p2p::Message& m : inter_in) plain.push_back(&m);
      for (p2p::Message* m : plain) add(*m);

      // Derived datatypes and MPI_BOTTOM, by hand: receives first.
      std::vector<int> as_ints(3 * kVec, -1), as_vec(kVecSpan, -1), half_vec(kVecSpan, -1),
          bottom_in(10, -1);
      const int from_left = ring_left, from_right = ring_right;
      MPI_Request r;
      MPI_Irecv(as_ints.data(), 3 * kVec, MPI_INT, from_left, 111, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      MPI_Irecv(as_vec.data(), 3, types.vec, from_left, 112, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      MPI_Irecv(half_vec.data(), 3, types.vec, from_left, 113, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      MPI_Irecv(bottom_in.data(), 10, MPI_INT, from_right, 117, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      const std::size_t first_typed = reqs.size() - 4;

      // Sends.
      MPI_Isend(nullptr, 0, MPI_INT, ring_right, 110, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      std::vector<int> vec_out(kVecSpan, -9), ints_out(3 * kVec), six_out(6);
      for (int b = 0; b < 3 * kVec; ++b)
        vec_out[vec_offset(b)] = p2p::value(me, ring_right, it, 111, b);
      p2p::fill(ints_out.data(), 3 * kVec, me, ring_right, it, 112);
      p2p::fill(six_out.data(), 6, me, ring_right, it, 113);
      MPI_Isend(vec_out.data(), 3, types.vec, ring_right, 111, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      MPI_Isend(ints_out.data(), 3 * kVec, MPI_INT, ring_right, 112, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      MPI_Isend(six_out.data(), 6, MPI_INT, ring_right, 113, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      std::vector<int> part_a(4), part_b(6);  // the two arrays of the absolute struct type
      p2p::fill(part_a.data(), 4, me, ring_left, it, 117);
      for (int k = 0; k < 6; ++k) part_b[k] = p2p::value(me, ring_left, it, 117, 4 + k);
      MPI_Aint addr[2];
      MPI_Get_address(part_a.data(), &addr[0]);
      MPI_Get_address(part_b.data(), &addr[1]);
      const int blocks[2] = {4, 6};
      const MPI_Datatype members[2] = {MPI_INT, MPI_INT};
      MPI_Datatype absolute;
      MPI_Type_create_struct(2, blocks, addr, members, &absolute);
      MPI_Type_commit(&absolute);
      MPI_Isend(MPI_BOTTOM, 1, absolute, ring_left, 117, MPI_COMM_WORLD, &r);
      reqs.push_back(r);
      for (p2p::Message* m : {&null_out_r, &null_out_l, &self_out}) add(*m);
      for (p2p::Message& m : inter_out) add(m);

      std::vector<MPI_Status> st(reqs.size());
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      MPI_Type_free(&absolute);

      for (std::size_t i = 0; i < plain.size(); ++i) plain[i]->check(chk, &st[i], it);
      const MPI_Status* ts = &st[first_typed];
      chk.status(ts[0], from_left, 111, 3 * kVec, MPI_INT, it, "vector sent, ints received");
      chk.data(as_ints.data(), 3 * kVec, from_left, it, 111);
      chk.status(ts[1], from_left, 112, 3, types.vec, it, "ints sent, vectors received");
      int elements = -1, count = -2;
      MPI_Get_elements(&ts[1], types.vec, &elements);
      chk.same(elements, 3 * kVec, it, "ints sent, vectors received", "MPI_Get_elements");
      std::vector<int> gathered(3 * kVec);
      for (int b = 0; b < 3 * kVec; ++b) gathered[b] = as_vec[vec_offset(b)];
      chk.data(gathered.data(), 3 * kVec, from_left, it, 112);
      for (int k = 0; k < kVecSpan; ++k)
        if (k % (2 * kVec - 1) % 2 == 1 &&
            !chk.same(as_vec[k], -1, it, "vector receive", "gap canary"))
          break;
      MPI_Get_count(&ts[2], types.vec, &count);
      MPI_Get_elements(&ts[2], types.vec, &elements);
      chk.same(count, MPI_UNDEFINED, it, "6 ints into vectors", "MPI_Get_count");
      chk.same(elements, 6, it, "6 ints into vectors", "MPI_Get_elements");
      chk.same(ts[2].MPI_SOURCE, from_left, it, "6 ints into vectors", "MPI_SOURCE");
      chk.same(ts[2].MPI_TAG, 113, it, "6 ints into vectors", "MPI_TAG");
      for (int b = 0; b < 6; ++b) gathered[b] = half_vec[vec_offset(b)];
      chk.data(gathered.data(), 6, from_left, it, 113);
      chk.status(ts[3], from_right, 117, 10, MPI_INT, it, "MPI_BOTTOM struct");
      chk.data(bottom_in.data(), 10, from_right, it, 117);
      chk.expect_messages(static_cast<long>(plain.size()) + 4);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  });
}
