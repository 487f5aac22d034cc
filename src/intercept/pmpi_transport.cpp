#include "intercept/pmpi_transport.hpp"

#include <cstring>
#include <vector>

namespace commsched::intercept {

namespace {

// The facts of a datatype, as describe_type finds them.
struct TypeFacts {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Aint extent = 0;
  int size = 0;
  bool contiguous = false;
};

bool query_type(MPI_Datatype type, TypeFacts& f) {
  MPI_Aint lb = 0, true_lb = 0, true_extent = 0;
  f.type = type;
  if (PMPI_Type_get_extent(type, &lb, &f.extent) != MPI_SUCCESS) return false;
  if (PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) return false;
  if (PMPI_Type_size(type, &f.size) != MPI_SUCCESS) return false;
  f.contiguous = lb == 0 && true_lb == 0 && f.extent == f.size && true_extent == f.size;
  return true;
}

}  // namespace

bool describe_type(Side& s) {
  // The predefined types applications exchange most, queried once: their handles never change
  // meaning (a derived type's handle can, once freed, so those are queried every call).
  static const std::vector<TypeFacts> known = [] {
    std::vector<TypeFacts> v;
    for (MPI_Datatype t : {MPI_BYTE, MPI_CHAR, MPI_UNSIGNED_CHAR, MPI_INT, MPI_UNSIGNED, MPI_LONG,
                           MPI_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_C_DOUBLE_COMPLEX}) {
      TypeFacts f;
      if (query_type(t, f)) v.push_back(f);
    }
    return v;
  }();
  TypeFacts queried;
  const TypeFacts* f = nullptr;
  for (const TypeFacts& k : known) {
    if (k.type == s.type) {
      f = &k;
      break;
    }
  }
  if (!f) {
    if (!query_type(s.type, queried)) return false;
    f = &queried;
  }
  s.extent = f->extent;
  s.type_size = f->size;
  s.contiguous = f->contiguous;
  s.predefined = f != &queried;
  return true;
}

void prime_type_table() {
  Side s;
  s.type = MPI_BYTE;
  (void)describe_type(s);
}

std::uint8_t* PmpiTransport::bytes_at(const exec::Segment& s) const {
  switch (s.area) {
    case exec::Area::staging:
      return staging_ + s.offset;
    case exec::Area::send_msg:
    case exec::Area::recv_msg: {
      const Side& side = s.area == exec::Area::send_msg ? send_ : recv_;
      const auto peer = static_cast<std::size_t>(s.peer);
      if (side.packed) return const_cast<std::uint8_t*>(side.packed_bytes.data()) +
                              side.packed_offset[peer] + s.offset;
      return reinterpret_cast<std::uint8_t*>(side.base + side.displs[peer] * side.extent) +
             s.offset;
    }
  }
  return nullptr;
}

void PmpiTransport::post_recv(std::size_t step, const exec::Op& op) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (op.segments.size() == 1) {
    const exec::Segment& s = op.segments.front();
    if (s.area == exec::Area::recv_msg && s.whole && !recv_.packed) {
      // Straight into the user's buffer with the user's datatype.
      const auto peer = static_cast<std::size_t>(s.peer);
      check(PMPI_Irecv(recv_.base + recv_.displs[peer] * recv_.extent, recv_.counts[peer],
                       recv_.type, op.peer, tag_for(step), comm_, &req));
    } else {
      check(PMPI_Irecv(bytes_at(s), static_cast<int>(s.length), MPI_BYTE, op.peer, tag_for(step),
                       comm_, &req));
    }
  } else {
    scatters_.push_back({std::vector<std::uint8_t>(op.bytes), &op});
    check(PMPI_Irecv(scatters_.back().buffer.data(), static_cast<int>(op.bytes), MPI_BYTE, op.peer,
                     tag_for(step), comm_, &req));
  }
  requests_.push_back(req);
}

void PmpiTransport::post_send(std::size_t step, const exec::Op& op) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (op.segments.size() == 1) {
    const exec::Segment& s = op.segments.front();
    if (s.area == exec::Area::send_msg && s.whole && !send_.packed) {
      const auto peer = static_cast<std::size_t>(s.peer);
      check(PMPI_Isend(send_.base + send_.displs[peer] * send_.extent, send_.counts[peer],
                       send_.type, op.peer, tag_for(step), comm_, &req));
    } else {
      check(PMPI_Isend(bytes_at(s), static_cast<int>(s.length), MPI_BYTE, op.peer, tag_for(step),
                       comm_, &req));
    }
  } else {
    std::vector<std::uint8_t> buf;
    buf.reserve(op.bytes);
    for (const exec::Segment& s : op.segments) {
      const std::uint8_t* p = bytes_at(s);
      buf.insert(buf.end(), p, p + s.length);
    }
    gathers_.push_back(std::move(buf));
    check(PMPI_Isend(gathers_.back().data(), static_cast<int>(op.bytes), MPI_BYTE, op.peer,
                     tag_for(step), comm_, &req));
  }
  requests_.push_back(req);
}

void PmpiTransport::copy_local(const exec::LocalCopy& c) {
  // Local copies always work on bytes: the program flags them, so a non-contiguous datatype's
  // side is packed (DESIGN: whole messages keep their datatype only in their own wire op).
  // Byte copy through a scratch buffer (sources and sinks may overlap in staging).
  std::vector<std::uint8_t> buf;
  for (const exec::Segment& s : c.from) {
    const std::uint8_t* p = bytes_at(s);
    buf.insert(buf.end(), p, p + s.length);
  }
  std::size_t pos = 0;
  for (const exec::Segment& s : c.to) {
    std::memcpy(bytes_at(s), buf.data() + pos, s.length);
    pos += s.length;
  }
}

void PmpiTransport::wait_all() {
  if (!requests_.empty())
    check(PMPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
  requests_.clear();
  for (Scatter& sc : scatters_) {
    std::size_t pos = 0;
    for (const exec::Segment& s : sc.op->segments) {
      std::memcpy(bytes_at(s), sc.buffer.data() + pos, s.length);
      pos += s.length;
    }
  }
  scatters_.clear();
  gathers_.clear();
}

void PmpiTransport::barrier() { check(PMPI_Barrier(comm_)); }

}  // namespace commsched::intercept
