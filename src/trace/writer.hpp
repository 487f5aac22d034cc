#pragma once
/// trace::Writer: what one rank records for COMMSCHED_TRACE (format in trace/format.hpp).
/// Never throws, never aborts: a failure switches the writer off and is reported once through
/// the return value and last_error(). Not thread-safe; calls are serialised by the caller.
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/comm_matrix.hpp"
#include "trace/format.hpp"

namespace commsched::trace {

/// A learned pattern as this rank knows it (the whole matrix is known to every rank; only this
/// rank's row is stored, see format.hpp).
struct PatternInfo {
  CommId comm;
  std::int32_t comm_size = 0;
  std::int32_t comm_rank = 0;              ///< this rank in the communicator
  std::int64_t pattern = 0;                ///< index within the communicator (the report's)
  std::uint64_t nonzeros = 0;              ///< of the whole matrix
  std::uint64_t total_bytes = 0;           ///< of the whole matrix
  std::uint64_t matrix_hash = 0;           ///< CommMatrix::hash() of the whole matrix
  std::string_view strategy;               ///< chosen at learning time ("native" if none)
  std::uint32_t phases = 0;
  std::span<const core::Entry> row;        ///< this rank's row: non-zero, sorted by peer
};

/// One call as the library saw it.
struct CallInfo {
  CallKind kind = CallKind::alltoallv;
  CommId comm;
  double start_s = 0;                      ///< MPI_Wtime at entry
  double duration_s = 0;
  std::int32_t pattern = -1;               ///< handle from add_pattern; -1: none (learning)
  std::string_view strategy = "native";    ///< what moved the bytes
  bool optimised = false;                  ///< a plan ran (false: PMPI_Alltoallv)
  std::uint32_t phases = 0;                ///< phases of the plan that ran (0 native)
};

class Writer {
 public:
  Writer() = default;
  ~Writer();  ///< closes the file without a footer: what was flushed stays as a `.part` file
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Creates `dir` if needed and opens `dir/rank<world_rank>.cstrace.part`. On failure returns
  /// false with one sentence in `error` (which directory or file, and the system's reason).
  /// `limit_bytes` bounds the final file (values below kMinLimit count as kMinLimit).
  bool open(const std::string& dir, int world_rank, int world_size, std::uint64_t limit_bytes,
            std::string& error) noexcept;
  bool is_open() const noexcept { return file_ != nullptr; }

  /// A key/value note for the analyzer (version, settings). Stored once per call.
  void set_meta(std::string_view key, std::string_view value) noexcept;
  /// Stores a pattern once; calling again with the same (comm, pattern, matrix_hash) returns
  /// the same handle. Returns -1 when nothing is recorded (closed, failed, or over the limit).
  std::int32_t add_pattern(const PatternInfo& p) noexcept;
  /// Records a call; consecutive repetitions of up to kMaxLoopBody calls are folded into one
  /// loop record, so a steady loop costs a few dozen bytes in all.
  void record_call(const CallInfo& c) noexcept;
  /// Writes everything recorded so far to the `.part` file (for a hung job's mid-run flush).
  /// Call from normal context, never from a signal handler.
  bool flush() noexcept;
  /// Writes the footer, marks the header complete and renames the file to its final name.
  /// Returns false (reason in last_error()) when that failed; the writer is closed either way.
  bool close(double t_close = 0) noexcept;

  const std::string& last_error() const noexcept { return error_; }
  std::string final_path() const { return final_path_; }
  bool truncated() const noexcept { return truncated_; }
  std::uint64_t calls_recorded() const noexcept { return calls_recorded_; }
  std::uint64_t calls_dropped() const noexcept { return calls_dropped_; }

 private:
  struct Key {
    CallKind kind;
    std::uint32_t comm;
    std::int32_t pattern;
    std::uint32_t strategy;
    bool optimised;
    std::uint32_t phases;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct Event {
    Key key;
    double start;
    double duration;
  };
  struct Stat {
    double min, max, sum;
  };
  struct Loop {
    std::vector<Key> body;
    std::vector<Stat> stats;
    std::uint64_t iterations = 0;
    double t_first = 0, t_end = 0;
  };

  std::uint32_t comm_index(const CommId& c);
  std::uint32_t strategy_index(std::string_view name);
  void on_event(const Event& e);
  void emit_loop(const Loop& l);
  void emit_single(const Event& e);
  void drain();
  /// Appends one record to the buffer if it fits the limit; false (and truncated_) if not.
  bool put_record(Tag tag, const std::vector<std::uint8_t>& payload, bool essential = false);
  bool write_buffer();
  void fail(std::string msg);
  std::vector<std::uint8_t> header(bool complete) const;

  std::FILE* file_ = nullptr;
  std::string part_path_, final_path_, error_;
  int world_rank_ = 0, world_size_ = 0;
  std::uint64_t limit_ = 0;
  std::uint64_t committed_ = 0;  // bytes in the file plus the buffer
  std::uint64_t records_ = 0;
  std::vector<std::uint8_t> buffer_;
  bool truncated_ = false;
  std::uint64_t calls_recorded_ = 0, calls_dropped_ = 0;

  std::vector<CommId> comms_;
  std::vector<std::string> strategies_;
  struct PatternKey {
    std::uint32_t comm;
    std::int64_t pattern;
    std::uint64_t hash;
  };
  std::vector<PatternKey> patterns_;

  // Loop compression state: an open loop, the calls of its unfinished iteration, and the recent
  // calls that belong to no loop yet (at most 2 * kMaxLoopBody).
  Loop loop_;
  bool loop_open_ = false;
  std::vector<Event> iter_;
  std::vector<Event> tail_;
};

}  // namespace commsched::trace
