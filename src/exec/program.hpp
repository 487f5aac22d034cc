#pragma once
/// A Plan compiled for one rank: per step, what it receives, sends and copies locally, with
/// every byte located in the rank's user messages or its staging buffer. Pure C++: the PMPI
/// transport and the in-process transport run the same RankProgram.
#include <cstdint>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "core/types.hpp"

namespace commsched::exec {

/// Where a run of bytes lives on this rank during one call.
enum class Area : std::uint8_t {
  send_msg,  ///< this rank's outgoing message to `peer` (its packed byte representation)
  recv_msg,  ///< this rank's incoming message from `peer`
  staging,   ///< the rank's staging buffer (forwarded pieces); `peer` unused
};

struct Segment {
  Area area;
  Rank peer;
  Bytes offset;
  Bytes length;
  bool whole;  ///< covers the complete user message (the transport may use the user datatype)
  friend bool operator==(const Segment&, const Segment&) = default;
};

/// One message on the wire: its bytes are the concatenation of `segments`.
struct Op {
  Rank peer;
  Bytes bytes;
  std::vector<Segment> segments;
};

/// A transfer from this rank to itself: copy `from` (concatenated) into `to` (concatenated).
struct LocalCopy {
  std::vector<Segment> from;
  std::vector<Segment> to;
};

struct Step {
  std::vector<Op> recvs;
  std::vector<Op> sends;
  std::vector<LocalCopy> copies;
};

struct RankProgram {
  Rank rank = 0;
  Rank n = 0;
  std::vector<Step> steps;       ///< one per plan phase (possibly empty for this rank)
  Bytes staging_bytes = 0;       ///< staging this rank needs (forwarded pieces only)
  bool barrier_between_steps = false;
  /// Some outgoing user message is read as raw bytes (split, combined with others in one
  /// transfer, or copied locally), not sent whole with its datatype: a non-contiguous send
  /// datatype then needs a packed copy.
  bool reads_send_bytes = false;
  /// The same for incoming user messages and the receive datatype.
  bool writes_recv_bytes = false;
};

/// Compiles `plan` (already validated against `m`) for `rank`.
RankProgram compile(const core::Plan& plan, const core::CommMatrix& m, Rank rank);

/// The wire operations a RankProgram needs from its transport.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Post (non-blocking) a receive/send of `op` for step `step`.
  virtual void post_recv(std::size_t step, const Op& op) = 0;
  virtual void post_send(std::size_t step, const Op& op) = 0;
  virtual void copy_local(const LocalCopy& c) = 0;
  /// Completes everything posted.
  virtual void wait_all() = 0;
  virtual void barrier() = 0;
};

/// Posts step `k` of `p`: receives first, then local copies, then sends. The caller completes it
/// with Transport::wait_all (and a barrier when the program asks for one).
void post_step(const RankProgram& p, std::size_t k, Transport& t);

/// Runs the whole program on one transport (the MPI path).
void run(const RankProgram& p, Transport& t);

}  // namespace commsched::exec
