#pragma once
/// trace::read_file / trace::parse: a trace file (format in trace/format.hpp) back into memory.
/// Any byte string is safe input: a bad file gives `false` and one sentence saying what is
/// wrong and where (missing, empty, truncated, corrupt, foreign, newer version) — never a crash.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/comm_matrix.hpp"
#include "trace/format.hpp"

namespace commsched::trace {

/// A PATTERN record: one rank's row of a learned matrix.
struct PatternRow {
  std::uint32_t comm = 0;          ///< index into Trace::comms
  std::int32_t comm_size = 0;
  std::int32_t comm_rank = 0;
  std::int64_t pattern = 0;        ///< index within the communicator
  std::uint64_t nonzeros = 0;      ///< of the whole matrix
  std::uint64_t total_bytes = 0;   ///< of the whole matrix
  std::uint64_t matrix_hash = 0;
  std::uint32_t strategy = 0;      ///< index into Trace::strategies
  std::uint32_t phases = 0;
  std::vector<core::Entry> row;    ///< sorted by peer, non-zero
};

/// One kind of call inside a loop, with its duration statistics over the loop's iterations.
struct CallStats {
  CallKind kind = CallKind::alltoallv;
  std::uint32_t comm = 0;          ///< index into Trace::comms
  std::int32_t pattern = -1;       ///< index into Trace::patterns, -1 none
  std::uint32_t strategy = 0;      ///< index into Trace::strategies
  bool optimised = false;
  std::uint32_t phases = 0;
  double min_s = 0, max_s = 0, sum_s = 0;
};

/// `body` ran `iterations` times in a row, from t_first to t_end (rank-local MPI_Wtime).
struct CallLoop {
  double t_first = 0, t_end = 0;
  std::uint64_t iterations = 1;
  std::vector<CallStats> body;
  std::uint64_t calls() const { return iterations * body.size(); }
};

struct Trace {
  std::uint16_t major = 0, minor = 0;
  bool complete = false;           ///< footer present: the rank finished writing
  std::int32_t world_rank = 0, world_size = 0;
  std::uint64_t limit = 0;
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<CommId> comms;
  std::vector<std::string> strategies;
  std::vector<PatternRow> patterns;
  std::vector<CallLoop> loops;
  // From the footer (zero when there is none).
  std::uint64_t calls_recorded = 0, calls_dropped = 0;
  bool truncated = false;          ///< COMMSCHED_TRACE_LIMIT was reached
  double t_close = 0;
  std::uint64_t skipped_records = 0;  ///< records of a newer minor version, not understood
  std::vector<std::string> warnings;  ///< what a partial read left out
};

struct ReadOptions {
  /// Read a partial file (no footer: the job crashed or still runs, or the file was cut) up to
  /// its last whole record, with a warning, instead of failing.
  bool accept_partial = false;
  /// Check the records' CRCs (the fuzzer turns this off to reach the record decoders).
  bool verify_checksums = true;
};

/// Decodes a whole trace held in memory. On failure returns false and says why in `error`.
bool parse(std::span<const std::uint8_t> bytes, Trace& out, std::string& error,
           const ReadOptions& options = {});
/// Reads and decodes `path`; errors start with the path.
bool read_file(const std::string& path, Trace& out, std::string& error,
               const ReadOptions& options = {});

}  // namespace commsched::trace
