// The trace writer: interning of communicators and strategy names, loop compression of calls,
// a bounded in-memory buffer written to `<file>.part`, and the footer-then-rename at close.
#include "trace/writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>
#include <system_error>

#include <unistd.h>

#include "core/files.hpp"
#include "trace/encoding.hpp"

namespace commsched::trace {
namespace {

constexpr std::uint64_t kFooterReserve = 64;           // a footer is at most 48 bytes
constexpr std::size_t kBufferFlushBytes = 64 * 1024;   // buffer written to the file past this

}  // namespace

const char* call_kind_name(CallKind k) {
  switch (k) {
    case CallKind::alltoallv: return "alltoallv";
    case CallKind::burst: return "burst";
  }
  return "unknown";
}

std::string to_string(const CommId& c) {
  return std::to_string(c.root) + "." + std::to_string(c.serial);
}

std::string file_name(int world_rank) { return "rank" + std::to_string(world_rank) + ".cstrace"; }
std::string partial_file_name(int world_rank) { return file_name(world_rank) + ".part"; }

Writer::~Writer() {
  if (file_) std::fclose(file_);
}

void Writer::fail(std::string msg) {
  if (error_.empty()) error_ = std::move(msg);
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

std::vector<std::uint8_t> Writer::header(bool complete) const {
  std::vector<std::uint8_t> h;
  h.reserve(kHeaderBytes);
  detail::Encoder e(h);
  for (std::uint8_t b : kMagic) e.u8(b);
  e.u16(kFormatMajor);
  e.u16(kFormatMinor);
  e.u8(complete ? 1 : 0);
  e.u8(0);
  e.u16(static_cast<std::uint16_t>(kHeaderBytes));
  e.u32(static_cast<std::uint32_t>(world_rank_));
  e.u32(static_cast<std::uint32_t>(world_size_));
  e.u64(limit_);
  e.u32(0);
  e.u32(detail::crc32(h));
  return h;
}

bool Writer::open(const std::string& dir, int world_rank, int world_size,
                  std::uint64_t limit_bytes, std::string& error) noexcept {
  if (file_ || records_ != 0) {
    error = "the trace writer was opened before; no second trace is written";
    return false;
  }
  try {
    namespace fs = std::filesystem;
    if (dir.empty()) {
      error = "COMMSCHED_TRACE names no directory; no trace is written";
      return false;
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) {
      error = "cannot create the trace directory '" + dir + "'" +
              (ec ? ": " + ec.message() : std::string(": not a directory")) +
              "; no trace is written";
      return false;
    }
    world_rank_ = world_rank;
    world_size_ = world_size;
    limit_ = limit_bytes < kMinLimit ? kMinLimit : limit_bytes;
    part_path_ = (fs::path(dir) / partial_file_name(world_rank)).string();
    final_path_ = (fs::path(dir) / file_name(world_rank)).string();
    // Only regular files: a FIFO or device planted under either name would hang the job or be
    // replaced by the rename at close, and a symbolic link is not followed.
    std::string why = core::unreplaceable(final_path_);
    const int fd = why.empty() ? core::open_output(part_path_, core::OutputMode::truncate, why)
                               : -1;
    file_ = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
    if (!file_) {
      if (fd >= 0) {
        why = part_path_ + ": " + std::strerror(errno);
        ::close(fd);
      }
      error = "cannot write the trace file " + why + "; no trace is written";
      return false;
    }
    buffer_ = header(false);
    committed_ = buffer_.size();
    if (!write_buffer()) {
      error = error_;
      return false;
    }
    return true;
  } catch (...) {
    error = "out of memory opening the trace file; no trace is written";
    if (file_) std::fclose(file_);
    file_ = nullptr;
    return false;
  }
}

bool Writer::put_record(Tag tag, const std::vector<std::uint8_t>& payload, bool essential) {
  if (!file_) return false;
  if (truncated_ && !essential) return false;
  const std::uint64_t size = kRecordOverhead + payload.size();
  if (!essential && committed_ + size + kFooterReserve > limit_) {
    truncated_ = true;
    return false;
  }
  const std::size_t start = buffer_.size();
  detail::Encoder e(buffer_);
  e.u8(static_cast<std::uint8_t>(tag));
  e.u32(static_cast<std::uint32_t>(payload.size()));
  buffer_.insert(buffer_.end(), payload.begin(), payload.end());
  e.u32(detail::crc32(std::span(buffer_).subspan(start)));
  committed_ += size;
  ++records_;
  if (buffer_.size() >= kBufferFlushBytes) write_buffer();
  return true;
}

bool Writer::write_buffer() {
  if (!file_) return false;
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    fail("cannot write the trace file '" + part_path_ + "': " + std::strerror(errno));
    return false;
  }
  buffer_.clear();
  if (std::fflush(file_) != 0) {
    fail("cannot write the trace file '" + part_path_ + "': " + std::strerror(errno));
    return false;
  }
  return true;
}

void Writer::set_meta(std::string_view key, std::string_view value) noexcept {
  try {
    std::vector<std::uint8_t> p;
    detail::Encoder e(p);
    e.str(key);
    e.str(value);
    put_record(Tag::meta, p);
  } catch (...) {
    fail("out of memory while tracing");
  }
}

std::uint32_t Writer::comm_index(const CommId& c) {
  for (std::size_t i = 0; i < comms_.size(); ++i)
    if (comms_[i] == c) return static_cast<std::uint32_t>(i);
  std::vector<std::uint8_t> p;
  detail::Encoder e(p);
  e.varint(comms_.size());
  e.svarint(c.root);
  e.svarint(c.serial);
  put_record(Tag::comm, p);  // over the limit: truncated_, and nothing referring to it follows
  comms_.push_back(c);
  return static_cast<std::uint32_t>(comms_.size() - 1);
}

std::uint32_t Writer::strategy_index(std::string_view name) {
  for (std::size_t i = 0; i < strategies_.size(); ++i)
    if (strategies_[i] == name) return static_cast<std::uint32_t>(i);
  std::vector<std::uint8_t> p;
  detail::Encoder e(p);
  e.varint(strategies_.size());
  e.str(name);
  put_record(Tag::strategy, p);
  strategies_.emplace_back(name);
  return static_cast<std::uint32_t>(strategies_.size() - 1);
}

std::int32_t Writer::add_pattern(const PatternInfo& info) noexcept {
  try {
    if (!file_ || truncated_) return -1;
    const std::uint32_t comm = comm_index(info.comm);
    for (std::size_t i = 0; i < patterns_.size(); ++i)
      if (patterns_[i].comm == comm && patterns_[i].pattern == info.pattern &&
          patterns_[i].hash == info.matrix_hash)
        return static_cast<std::int32_t>(i);
    const std::uint32_t strategy = strategy_index(info.strategy);
    std::vector<std::uint8_t> p;
    detail::Encoder e(p);
    e.varint(patterns_.size());
    e.varint(comm);
    e.varint(static_cast<std::uint64_t>(info.comm_size));
    e.varint(static_cast<std::uint64_t>(info.comm_rank));
    e.varint(static_cast<std::uint64_t>(info.pattern));
    e.varint(info.nonzeros);
    e.varint(info.total_bytes);
    e.u64(info.matrix_hash);
    e.varint(strategy);
    e.varint(info.phases);
    e.varint(info.row.size());
    std::int64_t prev = -1;
    for (const core::Entry& en : info.row) {
      // The format needs strictly increasing peers and non-zero sizes; a row that breaks that
      // is the caller's bug, and storing it would make the file unreadable.
      if (en.peer <= prev || en.peer >= info.comm_size || en.bytes == 0) return -1;
      e.varint(static_cast<std::uint64_t>(en.peer - prev - 1));
      e.varint(en.bytes);
      prev = en.peer;
    }
    if (info.comm_size <= 0 || info.comm_rank < 0 || info.comm_rank >= info.comm_size ||
        info.pattern < 0)
      return -1;
    if (!put_record(Tag::pattern, p)) return -1;
    patterns_.push_back({comm, info.pattern, info.matrix_hash});
    return static_cast<std::int32_t>(patterns_.size() - 1);
  } catch (...) {
    fail("out of memory while tracing");
    return -1;
  }
}

void Writer::record_call(const CallInfo& c) noexcept {
  try {
    if (!file_) return;
    if (truncated_) {
      ++calls_dropped_;
      return;
    }
    Event ev;
    ev.key.kind = c.kind;
    ev.key.comm = comm_index(c.comm);
    ev.key.pattern =
        (c.pattern >= 0 && static_cast<std::size_t>(c.pattern) < patterns_.size()) ? c.pattern : -1;
    ev.key.strategy = strategy_index(c.strategy);
    ev.key.optimised = c.optimised;
    ev.key.phases = c.phases;
    ev.start = c.start_s;
    ev.duration = c.duration_s;
    if (truncated_) {  // the name records did not fit
      ++calls_dropped_;
      return;
    }
    on_event(ev);
  } catch (...) {
    fail("out of memory while tracing");
  }
}

// Loop compression. A call either continues the open loop's body, or closes that loop; then
// the newest calls are searched for a sequence of length L <= kMaxLoopBody repeated twice in a
// row, which opens a new loop. Calls that join no loop leave the window as single records.
void Writer::on_event(const Event& ev) {
  if (loop_open_) {
    if (loop_.body[iter_.size()] == ev.key) {
      iter_.push_back(ev);
      if (iter_.size() == loop_.body.size()) {
        for (std::size_t i = 0; i < iter_.size(); ++i) {
          Stat& s = loop_.stats[i];
          s.min = std::min(s.min, iter_[i].duration);
          s.max = std::max(s.max, iter_[i].duration);
          s.sum += iter_[i].duration;
        }
        ++loop_.iterations;
        loop_.t_end = iter_.back().start + iter_.back().duration;
        iter_.clear();
      }
      return;
    }
    emit_loop(loop_);
    loop_open_ = false;
    tail_ = std::move(iter_);
    iter_.clear();
  }
  tail_.push_back(ev);
  const std::size_t n = tail_.size();
  for (std::size_t len = 1; len <= kMaxLoopBody && 2 * len <= n; ++len) {
    bool repeat = true;
    for (std::size_t i = 0; i < len && repeat; ++i)
      repeat = tail_[n - 2 * len + i].key == tail_[n - len + i].key;
    if (!repeat) continue;
    for (std::size_t i = 0; i + 2 * len < n; ++i) emit_single(tail_[i]);
    loop_ = Loop();
    loop_.iterations = 2;
    loop_.t_first = tail_[n - 2 * len].start;
    loop_.t_end = tail_[n - 1].start + tail_[n - 1].duration;
    for (std::size_t i = 0; i < len; ++i) {
      const Event& a = tail_[n - 2 * len + i];
      const Event& b = tail_[n - len + i];
      loop_.body.push_back(a.key);
      loop_.stats.push_back({std::min(a.duration, b.duration), std::max(a.duration, b.duration),
                             a.duration + b.duration});
    }
    loop_open_ = true;
    tail_.clear();
    return;
  }
  if (n > 2 * kMaxLoopBody) {
    emit_single(tail_.front());
    tail_.erase(tail_.begin());
  }
}

void Writer::emit_single(const Event& ev) {
  Loop l;
  l.body.push_back(ev.key);
  l.stats.push_back({ev.duration, ev.duration, ev.duration});
  l.iterations = 1;
  l.t_first = ev.start;
  l.t_end = ev.start + ev.duration;
  emit_loop(l);
}

void Writer::emit_loop(const Loop& l) {
  const std::uint64_t calls = l.iterations * l.body.size();
  std::vector<std::uint8_t> p;
  detail::Encoder e(p);
  e.f64(l.t_first);
  e.f64(l.t_end);
  e.varint(l.iterations);
  e.varint(l.body.size());
  for (std::size_t i = 0; i < l.body.size(); ++i) {
    const Key& k = l.body[i];
    e.u8(static_cast<std::uint8_t>(k.kind));
    e.varint(k.comm);
    e.varint(static_cast<std::uint64_t>(k.pattern + 1));
    e.varint(k.strategy);
    e.u8(k.optimised ? 1 : 0);
    e.varint(k.phases);
    e.f64(l.stats[i].min);
    e.f64(l.stats[i].max);
    e.f64(l.stats[i].sum);
  }
  if (put_record(Tag::calls, p))
    calls_recorded_ += calls;
  else
    calls_dropped_ += calls;
}

// Emits every call held for compression: the open loop, its unfinished iteration, the window.
void Writer::drain() {
  if (loop_open_) {
    emit_loop(loop_);
    loop_open_ = false;
  }
  for (const Event& ev : iter_) emit_single(ev);
  iter_.clear();
  for (const Event& ev : tail_) emit_single(ev);
  tail_.clear();
}

bool Writer::flush() noexcept {
  try {
    if (!file_) return false;
    drain();
    return write_buffer();
  } catch (...) {
    fail("out of memory while tracing");
    return false;
  }
}

bool Writer::close(double t_close) noexcept {
  try {
    if (!file_) return false;
    drain();
    std::vector<std::uint8_t> p;
    detail::Encoder e(p);
    e.varint(calls_recorded_);
    e.varint(calls_dropped_);
    e.u8(truncated_ ? 1 : 0);
    e.varint(records_);
    e.f64(t_close);
    put_record(Tag::footer, p, /*essential=*/true);
    if (!write_buffer()) return false;
    // The header goes complete last: a file cut before this point still reads as partial.
    const std::vector<std::uint8_t> h = header(true);
    if (std::fseek(file_, 0, SEEK_SET) != 0 ||
        std::fwrite(h.data(), 1, h.size(), file_) != h.size() || std::fflush(file_) != 0) {
      fail("cannot finish the trace file '" + part_path_ + "': " + std::strerror(errno));
      return false;
    }
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) {
      fail("cannot finish the trace file '" + part_path_ + "': " + std::strerror(errno));
      return false;
    }
    if (std::string why = core::unreplaceable(final_path_); !why.empty()) {
      fail("cannot rename '" + part_path_ + "' onto " + why);
      return false;
    }
    std::error_code ec;
    std::filesystem::rename(part_path_, final_path_, ec);
    if (ec) {
      fail("cannot rename '" + part_path_ + "' to '" + final_path_ + "': " + ec.message());
      return false;
    }
    return true;
  } catch (...) {
    fail("out of memory while closing the trace");
    return false;
  }
}

}  // namespace commsched::trace
