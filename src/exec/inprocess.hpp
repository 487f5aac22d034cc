#pragma once
/// Runs the RankPrograms of all n ranks in one process (unit tests, offline checks): every
/// rank's user messages and staging live in memory, and steps run in lockstep.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "exec/program.hpp"

namespace commsched::exec {

class InProcessWorld {
 public:
  /// Allocates every message of `m`; outgoing bytes are a function of (src, dst, index, salt).
  InProcessWorld(const core::CommMatrix& m, std::uint64_t salt);

  /// Runs all programs (programs[r] for rank r). False with `error` set on a protocol error:
  /// a send nobody receives, a size mismatch, a segment outside its buffer.
  bool run(std::span<const RankProgram> programs, std::string& error);

  /// True when every rank's incoming messages equal what their senders sent, byte for byte.
  bool delivered_exactly(std::string& error) const;

  static std::uint8_t expected_byte(Rank src, Rank dst, Bytes index, std::uint64_t salt);

 private:
  struct RankMemory {
    std::map<Rank, std::vector<std::uint8_t>> send;  // by destination
    std::map<Rank, std::vector<std::uint8_t>> recv;  // by source
    std::vector<std::uint8_t> staging;
  };
  std::uint8_t* locate(Rank rank, const Segment& s, std::string& error);

  const core::CommMatrix& m_;
  std::uint64_t salt_;
  std::vector<RankMemory> mem_;
};

}  // namespace commsched::exec
