#pragma once
/// Plan: the data every strategy produces and the executor, the cost model and the tests read
/// (DESIGN.md "Plans are data").
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/types.hpp"

namespace commsched::core {

/// A byte range [offset, offset + length) of the original message orig_src -> orig_dst.
struct Piece {
  Rank orig_src;
  Rank orig_dst;
  Bytes offset;
  Bytes length;
  friend bool operator==(const Piece&, const Piece&) = default;
};

/// One message on the wire: `from` sends `to` the concatenation of `pieces`, in order.
struct Transfer {
  Rank from;
  Rank to;
  std::vector<Piece> pieces;
  Bytes bytes() const;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

/// Transfers that may run concurrently. A rank starts phase k+1 once its own transfers of
/// phase k completed (loosely synchronous), or after a barrier when the plan asks for one.
struct Phase {
  std::vector<Transfer> transfers;
  friend bool operator==(const Phase&, const Phase&) = default;
};

struct Plan {
  std::string strategy;               ///< id of the strategy that made it
  Rank n = 0;                         ///< communicator size
  std::vector<Phase> phases;
  bool barrier_between_phases = false;
  bool permutation = false;           ///< promises <= 1 send and <= 1 receive per rank per phase

  std::size_t transfer_count() const;
  Bytes wire_bytes() const;           ///< bytes sent between distinct ranks, forwarding included
};

struct Validation {
  bool ok = true;
  std::string error;  ///< first problem found, empty when ok
};

/// Checks that every byte of every message of `m` reaches its destination exactly once, that
/// nothing is forwarded before it arrived, that a phase has at most one transfer per
/// (from, to) pair, and, for permutation plans, one send and one receive per rank per phase.
Validation validate(const Plan& plan, const CommMatrix& m);

/// Appends `piece` to the transfer from -> to of `phase`, creating that transfer if needed, and
/// merges it with the previous piece when they are contiguous parts of one message.
void add_piece(Phase& phase, Rank from, Rank to, const Piece& piece);

/// Where a rank's send to `to` comes in its phase: a rank posts its sends of a phase by
/// increasing distance around the ring, the rank after itself first (exec::compile, and the
/// cost model assumes it). Were every rank to take its peers in rank order, as SimGrid's
/// MPI_Alltoallv does, all would reach the same receiver at once.
inline Rank send_order(Rank from, Rank to, Rank n) { return (to - from + n) % n; }

/// One phase holding every message of `m` whole, in row order (the `ac` plan, and the cost
/// model's native MPI_Alltoallv); no phase when `m` has no message.
Plan one_phase_plan(const CommMatrix& m, std::string strategy);

/// Staging each rank needs for a plan: the bytes of every piece it receives without being the
/// piece's destination (forwarded pieces), summed over the whole plan, exactly what
/// exec::compile allocates. Zero for every rank of a direct plan.
std::vector<Bytes> staging_bytes_per_rank(const Plan& plan);

}  // namespace commsched::core
