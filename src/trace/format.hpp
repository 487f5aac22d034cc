#pragma once
/// The commsched trace format, version 1.0: one binary file per world rank (no MPI here).
///
/// Files. With COMMSCHED_TRACE=DIR, world rank R writes `DIR/rank<R>.cstrace.part` while the
/// job runs and renames it to `DIR/rank<R>.cstrace` once its footer is written at
/// MPI_Finalize. A crash or a still-running job leaves only the `.part` file, whose header says
/// "partial" and which has no footer: the reader rejects it unless asked to read what is there.
///
/// Layout. All integers little-endian; `varint` is unsigned LEB128 (at most 10 bytes),
/// `svarint` a zigzag-coded varint; `f64` an IEEE-754 double (8 bytes); `str` a varint length
/// followed by that many UTF-8 bytes.
///
///   header (40 bytes)
///     0  magic      8 bytes  89 43 53 54 52 41 43 45  ("\x89CSTRACE")
///     8  major      u16      1: readers refuse files of a higher major version
///    10  minor      u16      0: higher minors only add record tags, which readers skip
///    12  state      u8       0 = partial (being written), 1 = complete (footer present)
///    13  reserved   u8       0
///    14  hdr_len    u16      40
///    16  world_rank u32
///    20  world_size u32
///    24  limit      u64      COMMSCHED_TRACE_LIMIT in force (bytes)
///    32  reserved   u32      0
///    36  crc        u32      CRC-32 of bytes 0..35
///   records, each: tag u8 | len u32 | payload (len bytes) | crc u32 (CRC-32 of tag, len, payload)
///     0x01 META      key str, value str (commsched version, strategy setting, host, ...)
///     0x02 COMM      index varint (0, 1, ... in order), root svarint, serial svarint: the
///                    communicator id of the report ("root.serial")
///     0x03 STRATEGY  index varint (0, 1, ... in order), name str
///     0x04 PATTERN   handle varint (0, 1, ... in order), comm varint (COMM index),
///                    comm_size varint, comm_rank varint (this rank in that communicator),
///                    pattern varint (index within the communicator, as in the report),
///                    nonzeros varint, total_bytes varint, matrix_hash u64 (of the whole
///                    matrix: CommMatrix::hash), strategy varint (STRATEGY index), phases varint,
///                    count varint, then count entries (peer gap varint, bytes varint): this
///                    rank's row, destinations strictly increasing (first gap = the first peer,
///                    then peer - previous peer - 1), bytes > 0.
///                    Every rank stores only its own row; the analyzer assembles the matrix from
///                    all ranks' files and checks it against nonzeros, total_bytes and the hash.
///     0x05 CALLS     a loop of calls (ScalaTrace-style loop compression): t_first f64 (start of
///                    the first call), t_end f64 (end of the last call), iterations varint (>= 1),
///                    body_len varint (1..kMaxLoopBody), then body_len call kinds, each:
///                      kind u8 (CallKind), comm varint, pattern varint (handle + 1, 0 = none),
///                      strategy varint, optimised u8 (0/1), phases varint,
///                      min_s f64, max_s f64, sum_s f64 (durations over the iterations).
///                    The calls ran in the order body[0..len) repeated `iterations` times.
///                    Times are the rank's MPI_Wtime in seconds.
///     0x7F FOOTER    calls varint (calls recorded), dropped varint (calls not recorded after
///                    the size limit was reached), truncated u8, records varint (records before
///                    the footer), t_close f64. The footer is the last record.
/// Unknown tags below 0x7F are skipped (their length is known), so minor versions can add
/// records without breaking older readers.
#include <compare>
#include <cstdint>
#include <string>

namespace commsched::trace {

inline constexpr std::uint16_t kFormatMajor = 1;
inline constexpr std::uint16_t kFormatMinor = 0;
inline constexpr std::uint8_t kMagic[8] = {0x89, 'C', 'S', 'T', 'R', 'A', 'C', 'E'};
inline constexpr std::size_t kHeaderBytes = 40;
inline constexpr std::size_t kRecordOverhead = 9;  ///< tag, length, crc
/// Longest repeating sequence of calls the writer folds into one CALLS record.
inline constexpr std::size_t kMaxLoopBody = 8;
/// COMMSCHED_TRACE_LIMIT values below this count as this: a header, a few records, a footer.
inline constexpr std::uint64_t kMinLimit = 4096;

enum class Tag : std::uint8_t {
  meta = 0x01,
  comm = 0x02,
  strategy = 0x03,
  pattern = 0x04,
  calls = 0x05,
  footer = 0x7F,
};

/// What kind of operation a call record describes.
enum class CallKind : std::uint8_t {
  alltoallv = 1,  ///< one MPI_Alltoallv
  burst = 2,      ///< one burst of MPI_Isend/MPI_Irecv completed by a wait
};
inline constexpr std::uint8_t kMaxCallKind = 2;
const char* call_kind_name(CallKind k);

/// A communicator as the report names it: world rank of its rank 0 and that rank's serial.
struct CommId {
  std::int64_t root = 0;
  std::int64_t serial = 0;
  friend auto operator<=>(const CommId&, const CommId&) = default;
};
/// "root.serial", as in the report.
std::string to_string(const CommId& c);

/// Name of world rank R's trace file inside the trace directory.
std::string file_name(int world_rank);
/// Name of the file while it is written (and after a crash).
std::string partial_file_name(int world_rank);

}  // namespace commsched::trace
