// The trace reader. Every length and count read from the file is checked against the bytes
// that remain before anything is allocated, so hostile input costs at most its own size.
#include "trace/reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/files.hpp"
#include "trace/encoding.hpp"

namespace commsched::trace {
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{1} << 32;   // far above any COMMSCHED_TRACE_LIMIT
constexpr std::size_t kMaxMetaKey = 4096;
constexpr std::size_t kMaxMetaValue = 1 << 20;
constexpr std::size_t kMaxStrategyName = 256;
constexpr std::uint64_t kMaxBody = 255;
constexpr std::uint64_t kMaxIterations = 1ull << 48;
constexpr std::uint64_t kMaxRank = std::numeric_limits<std::int32_t>::max();

const char* tag_name(std::uint8_t tag) {
  switch (static_cast<Tag>(tag)) {
    case Tag::meta: return "META";
    case Tag::comm: return "COMM";
    case Tag::strategy: return "STRATEGY";
    case Tag::pattern: return "PATTERN";
    case Tag::calls: return "CALLS";
    case Tag::footer: return "FOOTER";
  }
  return "unknown";
}

// Decodes one record's payload into `t`; returns an empty string or what is wrong.
class RecordDecoder {
 public:
  RecordDecoder(Trace& t, std::span<const std::uint8_t> payload) : t_(t), d_(payload) {}

  std::string meta() {
    std::string k = d_.str(kMaxMetaKey);
    std::string v = d_.str(kMaxMetaValue);
    if (!end_ok()) return bad("key and value");
    t_.meta.emplace_back(std::move(k), std::move(v));
    return {};
  }

  std::string comm() {
    const std::uint64_t index = d_.varint();
    CommId c;
    c.root = d_.svarint();
    c.serial = d_.svarint();
    if (!end_ok()) return bad("communicator id");
    if (index != t_.comms.size()) return "communicator " + std::to_string(index) + " out of order";
    t_.comms.push_back(c);
    return {};
  }

  std::string strategy() {
    const std::uint64_t index = d_.varint();
    std::string name = d_.str(kMaxStrategyName);
    if (!end_ok() || name.empty()) return bad("strategy name");
    if (index != t_.strategies.size())
      return "strategy " + std::to_string(index) + " out of order";
    t_.strategies.push_back(std::move(name));
    return {};
  }

  std::string pattern() {
    PatternRow p;
    const std::uint64_t handle = d_.varint();
    const std::uint64_t comm = d_.varint();
    const std::uint64_t size = d_.varint();
    const std::uint64_t rank = d_.varint();
    const std::uint64_t index = d_.varint();
    p.nonzeros = d_.varint();
    p.total_bytes = d_.varint();
    p.matrix_hash = d_.u64();
    const std::uint64_t strategy = d_.varint();
    const std::uint64_t phases = d_.varint();
    const std::uint64_t count = d_.varint();
    if (!d_.ok()) return bad("fields");
    if (handle != t_.patterns.size()) return "pattern " + std::to_string(handle) + " out of order";
    if (comm >= t_.comms.size()) return "pattern refers to an undefined communicator";
    if (size == 0 || size > kMaxRank) return "communicator size " + std::to_string(size);
    if (rank >= size) return "rank " + std::to_string(rank) + " outside a communicator of " +
                             std::to_string(size);
    if (index > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return "pattern index out of range";
    if (strategy >= t_.strategies.size()) return "pattern refers to an undefined strategy";
    if (phases > std::numeric_limits<std::uint32_t>::max()) return "phase count out of range";
    // Each entry takes at least two bytes: a count beyond that cannot be honest.
    if (count > size || count > p.nonzeros || count > d_.left() / 2)
      return "row of " + std::to_string(count) + " entries does not fit";
    p.comm = static_cast<std::uint32_t>(comm);
    p.comm_size = static_cast<std::int32_t>(size);
    p.comm_rank = static_cast<std::int32_t>(rank);
    p.pattern = static_cast<std::int64_t>(index);
    p.strategy = static_cast<std::uint32_t>(strategy);
    p.phases = static_cast<std::uint32_t>(phases);
    p.row.reserve(static_cast<std::size_t>(count));
    std::uint64_t next = 0, sum = 0;  // next: smallest peer the next entry may name
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t gap = d_.varint();
      const std::uint64_t bytes = d_.varint();
      if (!d_.ok()) return bad("row");
      if (gap >= size || next + gap >= size) return "row names a peer outside the communicator";
      if (bytes == 0) return "row holds a zero-byte entry";
      if (bytes > p.total_bytes - sum) return "row holds more bytes than the whole matrix";
      sum += bytes;
      const std::uint64_t peer = next + gap;
      p.row.push_back({static_cast<Rank>(peer), bytes});
      next = peer + 1;
    }
    if (!end_ok()) return bad("row end");
    t_.patterns.push_back(std::move(p));
    return {};
  }

  std::string calls() {
    CallLoop l;
    l.t_first = d_.f64();
    l.t_end = d_.f64();
    l.iterations = d_.varint();
    const std::uint64_t len = d_.varint();
    if (!d_.ok()) return bad("loop header");
    if (!std::isfinite(l.t_first) || !std::isfinite(l.t_end)) return "non-finite time";
    if (l.iterations == 0 || l.iterations > kMaxIterations) return "iteration count out of range";
    if (len == 0 || len > kMaxBody || len > d_.left() / 30)  // an entry takes >= 30 bytes
      return "loop body of " + std::to_string(len) + " calls does not fit";
    for (std::uint64_t i = 0; i < len; ++i) {
      CallStats c;
      const std::uint8_t kind = d_.u8();
      const std::uint64_t comm = d_.varint();
      const std::uint64_t pattern = d_.varint();
      const std::uint64_t strategy = d_.varint();
      const std::uint8_t optimised = d_.u8();
      const std::uint64_t phases = d_.varint();
      c.min_s = d_.f64();
      c.max_s = d_.f64();
      c.sum_s = d_.f64();
      if (!d_.ok()) return bad("call");
      if (kind == 0 || kind > kMaxCallKind) return "unknown call kind " + std::to_string(kind);
      if (comm >= t_.comms.size()) return "call refers to an undefined communicator";
      if (pattern > t_.patterns.size()) return "call refers to an undefined pattern";
      if (strategy >= t_.strategies.size()) return "call refers to an undefined strategy";
      if (optimised > 1) return "optimised flag is not 0 or 1";
      if (phases > std::numeric_limits<std::uint32_t>::max()) return "phase count out of range";
      if (!std::isfinite(c.min_s) || !std::isfinite(c.max_s) || !std::isfinite(c.sum_s) ||
          c.min_s > c.max_s)
        return "bad duration statistics";
      c.kind = static_cast<CallKind>(kind);
      c.comm = static_cast<std::uint32_t>(comm);
      c.pattern = static_cast<std::int32_t>(pattern) - 1;
      c.strategy = static_cast<std::uint32_t>(strategy);
      c.optimised = optimised == 1;
      c.phases = static_cast<std::uint32_t>(phases);
      l.body.push_back(c);
    }
    if (!end_ok()) return bad("loop end");
    t_.loops.push_back(std::move(l));
    return {};
  }

  std::string footer(std::uint64_t records_before) {
    t_.calls_recorded = d_.varint();
    t_.calls_dropped = d_.varint();
    const std::uint8_t truncated = d_.u8();
    const std::uint64_t records = d_.varint();
    t_.t_close = d_.f64();
    if (!end_ok() || truncated > 1) return bad("fields");
    t_.truncated = truncated == 1;
    if (records != records_before)
      return "footer counts " + std::to_string(records) + " records, the file holds " +
             std::to_string(records_before);
    std::uint64_t calls = 0;
    for (const CallLoop& l : t_.loops) {  // a loop holds < 2^56 calls; saturate the sum
      const std::uint64_t c = l.calls();
      calls = c > std::numeric_limits<std::uint64_t>::max() - calls
                  ? std::numeric_limits<std::uint64_t>::max()
                  : calls + c;
    }
    if (calls != t_.calls_recorded)
      return "footer counts " + std::to_string(t_.calls_recorded) + " calls, the records hold " +
             std::to_string(calls);
    return {};
  }

 private:
  bool end_ok() const { return d_.done(); }
  static std::string bad(const char* what) { return std::string("cannot decode its ") + what; }
  Trace& t_;
  detail::Decoder d_;
};

}  // namespace

bool parse(std::span<const std::uint8_t> bytes, Trace& out, std::string& error,
           const ReadOptions& options) {
  out = Trace{};
  const std::size_t size = bytes.size();
  if (size == 0) {
    error = "empty file (0 bytes): the rank never wrote its trace";
    return false;
  }
  const std::size_t magic_len = std::min<std::size_t>(size, sizeof kMagic);
  if (std::memcmp(bytes.data(), kMagic, magic_len) != 0) {
    error = "not a commsched trace (the file does not start with the trace magic)";
    return false;
  }
  if (size < kHeaderBytes) {
    error = "truncated inside the header (" + std::to_string(size) + " of " +
            std::to_string(kHeaderBytes) + " bytes)";
    return false;
  }
  detail::Decoder h(bytes.first(kHeaderBytes));
  h.u64();  // magic
  out.major = h.u16();
  out.minor = h.u16();
  const std::uint8_t state = h.u8();
  h.u8();
  const std::uint16_t header_len = h.u16();
  const std::uint32_t world_rank = h.u32();
  const std::uint32_t world_size = h.u32();
  out.limit = h.u64();
  h.u32();
  const std::uint32_t crc = h.u32();
  const std::string version = std::to_string(out.major) + "." + std::to_string(out.minor);
  if (out.major > kFormatMajor) {
    error = "written by a newer commsched (trace format " + version + "); this reader knows " +
            "format " + std::to_string(kFormatMajor) + ".x: use a newer commsched-analyze";
    return false;
  }
  if (out.major == 0) {
    error = "unknown trace format version " + version;
    return false;
  }
  if (crc != detail::crc32(bytes.first(kHeaderBytes - 4))) {
    error = "corrupt header (checksum mismatch)";
    return false;
  }
  if (state > 1 || header_len < kHeaderBytes || world_size == 0 || world_size > kMaxRank ||
      world_rank >= world_size) {
    error = "corrupt header (impossible state, length or rank)";
    return false;
  }
  if (header_len > size) {
    error = "truncated inside the header";
    return false;
  }
  out.world_rank = static_cast<std::int32_t>(world_rank);
  out.world_size = static_cast<std::int32_t>(world_size);

  // A problem that ends a partial file: an error, or (accept_partial) a warning and a stop.
  auto cut = [&](const std::string& why) {
    if (!options.accept_partial) {
      error = why + (state == 0 ? "; the header says the file is partial (the job crashed or is "
                                  "still running)"
                                : "");
      return false;
    }
    out.warnings.push_back(why + "; read the " + std::to_string(out.loops.size()) +
                           " call records before it");
    return true;
  };

  std::size_t pos = header_len;
  std::uint64_t records = 0;
  bool footer = false;
  while (pos < size) {
    const std::string at = " at byte " + std::to_string(pos);
    if (footer) {
      error = "data after the footer" + at;
      return false;
    }
    if (size - pos < kRecordOverhead) {
      if (!cut("truncated: the file ends inside a record" + at)) return false;
      break;
    }
    detail::Decoder rh(bytes.subspan(pos, 5));
    const std::uint8_t tag = rh.u8();
    const std::uint32_t len = rh.u32();
    if (len > size - pos - kRecordOverhead) {
      if (!cut("truncated: the file ends inside a record" + at + " (it needs " +
               std::to_string(len + kRecordOverhead) + " bytes, " + std::to_string(size - pos) +
               " remain)"))
        return false;
      break;
    }
    const auto whole = bytes.subspan(pos, 5 + len);
    detail::Decoder crc_dec(bytes.subspan(pos + 5 + len, 4));
    if (options.verify_checksums && crc_dec.u32() != detail::crc32(whole)) {
      if (!cut("corrupt record" + at + " (checksum mismatch)")) return false;
      break;
    }
    const auto payload = bytes.subspan(pos + 5, len);
    RecordDecoder rd(out, payload);
    std::string problem;
    switch (static_cast<Tag>(tag)) {
      case Tag::meta: problem = rd.meta(); break;
      case Tag::comm: problem = rd.comm(); break;
      case Tag::strategy: problem = rd.strategy(); break;
      case Tag::pattern: problem = rd.pattern(); break;
      case Tag::calls: problem = rd.calls(); break;
      case Tag::footer:
        problem = rd.footer(records);
        footer = true;
        break;
      default: ++out.skipped_records; break;
    }
    if (!problem.empty()) {
      error = std::string("malformed ") + tag_name(tag) + " record" + at + ": " + problem;
      return false;
    }
    ++records;
    pos += kRecordOverhead + len;
  }
  if (!footer) {
    if (!options.accept_partial) {
      error = "truncated: no footer after " + std::to_string(records) + " records" +
              (state == 0 ? " (a partial file: the job crashed or is still running)"
                          : " (the file was cut)");
      return false;
    }
    out.warnings.push_back("partial trace: no footer after " + std::to_string(records) +
                           " records (the job crashed, is still running, or the file was cut)");
  }
  if (out.skipped_records)
    out.warnings.push_back(std::to_string(out.skipped_records) + " records of format " + version +
                           " not understood and skipped");
  out.complete = footer;
  return true;
}

bool read_file(const std::string& path, Trace& out, std::string& error,
               const ReadOptions& options) {
  out = Trace{};
  std::string bytes;
  if (!core::read_regular_file(path, kMaxFileBytes, bytes, error)) return false;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  if (!parse({data, bytes.size()}, out, error, options)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

}  // namespace commsched::trace
