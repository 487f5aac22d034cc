#pragma once
/// What commsched-analyze works on: every rank's trace of one job, with each learned pattern's
/// matrix assembled from the rows the ranks stored; or one matrix read from a text file.
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "trace/reader.hpp"

namespace commsched::analyze {

struct PatternKey {
  trace::CommId comm;
  std::int64_t pattern = 0;
  std::uint64_t hash = 0;
  friend auto operator<=>(const PatternKey&, const PatternKey&) = default;
};

struct PatternData {
  PatternKey key;
  std::string label;                 ///< "P0", "P1", ... in order of first appearance
  std::int32_t comm_size = 0;
  std::string strategy;              ///< chosen at learning time
  std::uint32_t phases = 0;
  std::uint64_t nonzeros = 0, total_bytes = 0;  ///< as recorded (of the whole matrix)
  core::CommMatrix matrix;           ///< assembled from the rows present
  std::vector<int> world_rank_of;    ///< comm rank -> world rank (-1: no trace from it)
  int rows_present = 0;
  bool complete = false;             ///< every comm rank's row is present
  bool verified = false;             ///< complete, and non-zeros, bytes and hash match
  // Calls, from the per-call records: counts are the maximum over ranks, times the maximum over
  // ranks of each rank's total (as the report), per kind of call.
  std::uint64_t calls = 0, calls_optimised = 0;
  double time_native_s = 0, time_optimised_s = 0;
  std::uint64_t native_calls = 0;    ///< calls behind time_native_s (max over ranks)
  std::map<std::string, std::uint64_t> strategies_used;  ///< strategy -> calls (max over ranks)
};

struct RankTrace {
  std::string path;
  trace::Trace trace;
};

struct Dataset {
  std::string source;                ///< directory or matrix file
  std::vector<RankTrace> ranks;      ///< sorted by world rank
  std::int32_t world_size = 0;
  std::vector<PatternData> patterns;
  std::uint64_t unlearned_calls = 0; ///< calls with no pattern (max over ranks)
  double unlearned_time_s = 0;
  std::vector<std::string> warnings;
  std::vector<std::string> hosts;    ///< META "host" per world rank, when the traces have it
};

/// Reads every `rank*.cstrace` in `dir` (and, with `accept_partial`, `.part` files of ranks
/// that have no whole file). Returns false with every unreadable file named in `error`.
bool load_trace_dir(const std::string& dir, bool accept_partial, Dataset& out, std::string& error);

/// A dataset of one pattern: `m`, read from `source` (no calls).
Dataset from_matrix(core::CommMatrix m, const std::string& source);

/// Traffic figures of paper 001 §2 and the colouring bound, of one matrix.
struct MatrixStats {
  Rank n = 0;
  std::size_t nonzeros = 0;
  Bytes total_bytes = 0;
  std::size_t f = 0, g = 0, h = 0;   ///< fan-out, fan-in, and their maximum (001 §2)
  Bytes r = 0, c = 0, t = 0;         ///< outgoing, incoming and overall traffic bounds
  std::size_t delta = 0;             ///< Δ: most messages any rank sends or receives
  Bytes min_size = 0, max_size = 0;
  double mean_size = 0, stddev_size = 0;  ///< of the non-zero messages
};
MatrixStats matrix_stats(const core::CommMatrix& m);

}  // namespace commsched::analyze
