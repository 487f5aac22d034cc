#pragma once
/// The executor's transport over PMPI: moves a RankProgram's segments between the application's
/// buffers (with their datatypes where whole messages allow) and the pattern's staging.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "exec/program.hpp"

namespace commsched::intercept {

/// One side (send or receive) of one Alltoallv call as the application passed it.
struct Side {
  char* base = nullptr;          ///< buffer start (MPI_IN_PLACE already resolved)
  const int* counts = nullptr;
  const int* displs = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Aint extent = 0;
  int type_size = 0;
  bool contiguous = false;       ///< count elements of `type` are type_size*count plain bytes
  bool predefined = false;       ///< `type` is a predefined type: its handle's meaning is fixed
  /// When set, whole messages live packed here at byte offsets `packed_offset[peer]` (used for
  /// in-place sends, and for non-contiguous types whose messages the plan uses as raw bytes).
  bool packed = false;
  std::vector<std::uint8_t> packed_bytes;
  std::vector<std::size_t> packed_offset;
};

/// Fills type facts of `s`; false when the datatype cannot be queried.
bool describe_type(Side& s);

/// Queries the predefined types describe_type knows by heart now (MPI_Init), not in the
/// first exchange call, which would pay 5-20 us for them.
void prime_type_table();

class PmpiTransport final : public exec::Transport {
 public:
  PmpiTransport(MPI_Comm comm, Rank rank, Side& send, Side& recv, std::uint8_t* staging)
      : comm_(comm), rank_(rank), send_(send), recv_(recv), staging_(staging) {}
  PmpiTransport(const PmpiTransport&) = delete;
  PmpiTransport& operator=(const PmpiTransport&) = delete;

  void post_recv(std::size_t step, const exec::Op& op) override;
  void post_send(std::size_t step, const exec::Op& op) override;
  void copy_local(const exec::LocalCopy& c) override;
  void wait_all() override;
  void barrier() override;

  /// First PMPI error code seen (MPI_SUCCESS when none).
  int error() const { return error_; }

 private:
  std::uint8_t* bytes_at(const exec::Segment& s) const;
  void check(int rc) {
    if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  }
  static int tag_for(std::size_t step) { return static_cast<int>(step % 32000); }

  MPI_Comm comm_;
  Rank rank_;
  Side& send_;
  Side& recv_;
  std::uint8_t* staging_;
  std::vector<MPI_Request> requests_;
  // Receives of several segments land in a scratch buffer and are scattered after completion.
  struct Scatter {
    std::vector<std::uint8_t> buffer;
    const exec::Op* op;
  };
  std::vector<Scatter> scatters_;
  std::vector<std::vector<std::uint8_t>> gathers_;  // send scratch, alive until wait_all
  int error_ = MPI_SUCCESS;
};

}  // namespace commsched::intercept
