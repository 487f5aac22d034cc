#pragma once
/// Wisdom across runs (issue 24): the verdicts of `auto`'s trials kept in a file, so a rerun of
/// the same job on the same machine skips the trial. Pure apart from the two file helpers; the
/// MPI side computes the key's hashes, reads the file on rank 0 at MPI_Init and writes it on
/// rank 0 at MPI_Finalize.
///
/// The file is small line-oriented text:
///
///     commsched-wisdom 1 <library version>
///     <pattern> <comm_size> <layout> <machine> <strategy> <native_s> <chosen_s> <calls>
///     ...
///     end <entries> <checksum>
///
/// hashes as 16 hex digits, times in seconds per call (shortest round-trip decimal; 0 where
/// the trial measured ratios only, as the non-blocking engine's `nb_*` verdicts), entries
/// sorted by key, and the checksum (FNV-1a, 16 hex digits) over every byte before the `end`
/// line, so a truncated or damaged file is detected rather than half read. A file another
/// library version wrote is foreign: its plans and cost model may differ, so it is ignored
/// whole. A verdict measured on another machine or node layout is stale: its key differs, so
/// it simply never matches.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

namespace commsched::learn {

/// What a verdict holds for: hashes the caller computes the same way in every run.
struct WisdomKey {
  std::uint64_t pattern = 0;   ///< CommMatrix::hash() of the global matrix
  std::int32_t comm_size = 0;  ///< ranks in the communicator
  std::uint64_t layout = 0;    ///< layout_hash() of each rank's node
  std::uint64_t machine = 0;   ///< text_hash() of the machine model's canonical TOML

  friend bool operator==(const WisdomKey&, const WisdomKey&) = default;
  friend bool operator<(const WisdomKey& a, const WisdomKey& b) {
    return std::tie(a.pattern, a.comm_size, a.layout, a.machine) <
           std::tie(b.pattern, b.comm_size, b.layout, b.machine);
  }
};

/// The outcome of one trial.
struct Verdict {
  std::string strategy;   ///< the strategy id that won ("native" included)
  double native_s = 0;    ///< native's measured seconds per call
  double chosen_s = 0;    ///< the winner's measured seconds per call
  std::uint64_t calls = 0;  ///< calls the trial measured

  friend bool operator==(const Verdict&, const Verdict&) = default;
};

/// FNV-1a of `text`: stable across runs, compilers and library builds (std::hash is not).
std::uint64_t text_hash(std::string_view text);

/// The layout part of a key from each rank's node id (any ids: they are renumbered by first
/// appearance in rank order, so the same placement hashes the same in every run).
std::uint64_t layout_hash(std::span<const int> node_of_rank);

class Wisdom {
 public:
  static constexpr int kFormat = 1;                  ///< the header's format number
  static constexpr std::size_t kMaxEntries = 4096;   ///< more: the file is corrupt
  static constexpr std::size_t kMaxLine = 1024;      ///< longer lines: the file is corrupt
  static constexpr std::size_t kMaxFileBytes = 1u << 20;  ///< load refuses larger files
  static constexpr std::size_t kMaxStrategy = 64;    ///< longest strategy id stored

  /// The library version this build writes and accepts (CMake's project version).
  static std::string_view library_version();

  /// Reads a file's text. A malformed, truncated or oversized text gives an empty Wisdom and
  /// `error` naming the line; a foreign one (another library version) gives an empty Wisdom and
  /// "written by commsched X, this is Y". `error` is cleared on success.
  static Wisdom parse(std::string_view text, std::string& error);

  /// The verdict stored for `key`, or null.
  const Verdict* find(const WisdomKey& key) const;
  /// Stores `v` for `key`, replacing an older verdict. False (nothing stored) when the verdict
  /// cannot be written back (strategy id empty, longer than kMaxStrategy or not [A-Za-z0-9_],
  /// a negative or non-finite time) or when the table already holds kMaxEntries other keys.
  bool put(const WisdomKey& key, Verdict v);
  /// Puts every entry of `other` in key order: on the same key `other`'s verdict, the newer,
  /// wins.
  void merge(const Wisdom& other);

  /// The file's text; the same entries give the same bytes.
  std::string serialize() const;

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::map<WisdomKey, Verdict>& entries() const { return entries_; }

  /// Reads `path` into `out`. A missing file is no error: true, `out` empty, `error` empty.
  /// False, `out` empty and one message in `error` (naming the path) when the path is not a
  /// regular file (a FIFO cannot block: the open does not wait), is larger than kMaxFileBytes,
  /// cannot be read, or parse() rejects it.
  static bool load(const std::string& path, Wisdom& out, std::string& error);

  /// Writes `w` to `path`, merged over what the file holds now (`w` wins on the same key; a
  /// corrupt or foreign file is replaced). Written to a fresh `path.tmp.<pid>.<random>`,
  /// synced and renamed onto `path`, so a reader or a concurrent writer sees the old file or
  /// the new one, never a mixture (a concurrent writer's new verdicts may be lost: the next run
  /// measures them again). Refuses a `path` that exists and is not a regular file (a symlink, a
  /// FIFO, a device). `make_parent`: create missing parent directories (mode 0700), for the
  /// default cache location. False with one message in `error` on any failure, leaving no
  /// temporary file behind.
  static bool save(const std::string& path, const Wisdom& w, std::string& error,
                   bool make_parent = false);

 private:
  std::map<WisdomKey, Verdict> entries_;
};

}  // namespace commsched::learn
