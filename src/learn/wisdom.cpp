#include "learn/wisdom.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "core/files.hpp"
#include "core/parse.hpp"

#ifndef COMMSCHED_VERSION
#error "COMMSCHED_VERSION must be defined (src/learn/CMakeLists.txt passes the project version)"
#endif

namespace commsched::learn {
namespace {

constexpr std::string_view kMagic = "commsched-wisdom";
constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

/// Appends `v` as 16 hex digits, then `then` (a field separator) unless it is 0.
void append_hex16(std::string& out, std::uint64_t v, char then = 0) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 0xfu];
  if (then != 0) out += then;
}

/// Appends `v` in decimal (a double in its shortest round-trip form), then `then`.
template <typename T>
void append_number(std::string& out, T v, char then) {
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  // 40 characters hold any int64 and any double's shortest round-trip form.
  if (ec == std::errc{}) out.append(buf, end);
  out += then;
}

/// Exactly 16 hex digits, as serialize writes them.
bool read_hex16(std::string_view text, std::uint64_t& v) {
  if (text.size() != 16) return false;
  // Lower case only: one value, one spelling, so a flipped case bit is damage too.
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  const auto value = core::parse_whole<std::uint64_t>(text, 16);
  if (value) v = *value;
  return value.has_value();
}

/// A count or seconds as serialize writes them: no sign.
template <typename T>
bool read_whole(std::string_view text, T& v) {
  if (!text.empty() && text.front() == '-') return false;
  const auto value = core::parse_whole<T>(text);
  if (value) v = *value;
  return value.has_value();
}

bool valid_seconds(double s) { return std::isfinite(s) && s >= 0; }

bool valid_strategy(std::string_view id) {
  if (id.empty() || id.size() > Wisdom::kMaxStrategy) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_';
    if (!ok) return false;
  }
  return true;
}

/// `line` split at single spaces; false when it does not hold exactly `n` non-empty fields.
bool split_fields(std::string_view line, std::span<std::string_view> fields) {
  std::size_t i = 0;
  while (true) {
    const std::size_t space = line.find(' ');
    const std::string_view field = line.substr(0, space);
    if (field.empty() || i == fields.size()) return false;
    fields[i++] = field;
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return i == fields.size();
}

std::string line_error(std::size_t line, std::string_view what) {
  std::string msg = "line ";
  msg += std::to_string(line);
  msg += ": ";
  msg += what;
  return msg;
}

/// A field of a foreign header as a message shows it: the file may hold any bytes, and the
/// terminal should not receive them raw.
std::string printable(std::string_view text) {
  constexpr std::size_t kMaxShown = 32;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i)
    out += (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string errno_text(int err) { return std::generic_category().message(err); }

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

/// mkdir -p with mode 0700 (a cache directory is the user's own).
bool make_directories(const std::string& dir, std::string& error) {
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    const std::string prefix = dir.substr(0, pos);
    struct stat st {};
    if (prefix.empty() || (::stat(prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) continue;
    if (::mkdir(prefix.c_str(), 0700) == 0 || errno == EEXIST) continue;
    error = "cannot create directory " + prefix + ": " + errno_text(errno);
    return false;
  }
  return true;
}

}  // namespace

std::uint64_t text_hash(std::string_view text) { return fnv1a(kFnvOffset, text); }

std::uint64_t layout_hash(std::span<const int> node_of_rank) {
  // Renumbered by first appearance, so the hash depends on the placement, not on the ids MPI
  // happened to hand out.
  std::unordered_map<int, std::uint64_t> seen;
  std::uint64_t h = kFnvOffset;
  const auto mix = [&h](std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= kFnvPrime;
    }
  };
  mix(node_of_rank.size());
  for (const int node : node_of_rank) {
    mix(seen.try_emplace(node, seen.size()).first->second);
  }
  return h;
}

std::string_view Wisdom::library_version() { return COMMSCHED_VERSION; }

Wisdom Wisdom::parse(std::string_view text, std::string& error) {
  error.clear();
  Wisdom w;
  // Split first: the limits and the checksum are checked before any entry is believed.
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    const bool complete = end != std::string_view::npos;
    if (!complete) end = text.size();
    if (end - pos > kMaxLine) {
      error = line_error(lines.size() + 1, "longer than 1024 bytes; not a wisdom file");
      return {};
    }
    if (!complete) {
      error = line_error(lines.size() + 1, "cut short (no newline); the file is truncated");
      return {};
    }
    lines.push_back(text.substr(pos, end - pos));
    if (lines.size() > kMaxEntries + 2) {
      error = line_error(lines.size(), "more than 4096 entries; not a wisdom file");
      return {};
    }
    pos = end + 1;
  }
  if (lines.empty()) {
    error = line_error(1, "empty file");
    return {};
  }

  std::string_view header[3];
  if (!split_fields(lines[0], header) || header[0] != kMagic) {
    error = line_error(1, "not a commsched wisdom file");
    return {};
  }
  if (header[1] != std::to_string(kFormat)) {
    error = "written in wisdom format " + printable(header[1]) + ", this reads format " +
            std::to_string(kFormat);
    return {};
  }
  if (header[2] != library_version()) {
    error = "written by commsched " + printable(header[2]) + ", this is " +
            std::string(library_version());
    return {};
  }

  const std::size_t last = lines.size() - 1;
  std::string_view trailer[3];
  if (last == 0 || !split_fields(lines[last], trailer) || trailer[0] != "end") {
    error = line_error(lines.size(), "not the end line; the file is truncated or damaged");
    return {};
  }
  std::size_t count = 0;
  std::uint64_t checksum = 0;
  const std::size_t covered = static_cast<std::size_t>(lines[last].data() - text.data());
  if (!read_whole(trailer[1], count) || count != last - 1 || !read_hex16(trailer[2], checksum) ||
      checksum != text_hash(text.substr(0, covered))) {
    error = line_error(lines.size(), "checksum or entry count does not match; the file is damaged");
    return {};
  }

  for (std::size_t i = 1; i < last; ++i) {
    std::string_view f[8];
    WisdomKey key;
    Verdict v;
    const bool ok = split_fields(lines[i], f) && read_hex16(f[0], key.pattern) &&
                    read_whole(f[1], key.comm_size) && key.comm_size > 0 &&
                    read_hex16(f[2], key.layout) && read_hex16(f[3], key.machine) &&
                    valid_strategy(f[4]) && read_whole(f[5], v.native_s) &&
                    read_whole(f[6], v.chosen_s) && read_whole(f[7], v.calls);
    if (!ok) {
      error = line_error(i + 1, "not an entry (pattern comm_size layout machine strategy "
                                "native_s chosen_s calls)");
      return {};
    }
    v.strategy = f[4];
    if (w.entries_.count(key) != 0 || !w.put(key, std::move(v))) {
      error = line_error(i + 1, "repeats a key or holds a time that is not a number of seconds");
      return {};
    }
  }
  return w;
}

const Verdict* Wisdom::find(const WisdomKey& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

bool Wisdom::put(const WisdomKey& key, Verdict v) {
  if (!valid_strategy(v.strategy) || !valid_seconds(v.native_s) || !valid_seconds(v.chosen_s) ||
      key.comm_size <= 0)
    return false;
  const auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second = std::move(v);
    return true;
  }
  if (entries_.size() >= kMaxEntries) return false;
  entries_.emplace(key, std::move(v));
  return true;
}

void Wisdom::merge(const Wisdom& other) {
  for (const auto& [key, v] : other.entries_) put(key, v);
}

std::string Wisdom::serialize() const {
  std::string out(kMagic);
  out += ' ';
  append_number(out, kFormat, ' ');
  out += library_version();
  out += '\n';
  for (const auto& [key, v] : entries_) {
    append_hex16(out, key.pattern, ' ');
    append_number(out, key.comm_size, ' ');
    append_hex16(out, key.layout, ' ');
    append_hex16(out, key.machine, ' ');
    out += v.strategy;
    out += ' ';
    append_number(out, v.native_s, ' ');
    append_number(out, v.chosen_s, ' ');
    append_number(out, v.calls, '\n');
  }
  const std::uint64_t checksum = text_hash(out);
  out += "end ";
  append_number(out, entries_.size(), ' ');
  append_hex16(out, checksum, '\n');
  return out;
}

bool Wisdom::load(const std::string& path, Wisdom& out, std::string& error) {
  out = Wisdom{};
  error.clear();
  const std::string where = "wisdom file " + path + ": ";
  try {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return true;  // a job's first run
    // Regular files only, opened non-blocking, so a FIFO at the path cannot hang MPI_Init.
    std::string text, why;
    if (!core::read_regular_file(path, kMaxFileBytes, text, why)) {
      error = "wisdom file " + why;
      return false;
    }
    Wisdom w = parse(text, why);
    if (!why.empty()) {
      error = where + why;
      return false;
    }
    out = std::move(w);
    return true;
  } catch (...) {
    out = Wisdom{};
    error = where + "out of memory while reading";
    return false;
  }
}

bool Wisdom::save(const std::string& path, const Wisdom& w, std::string& error,
                  bool make_parent) {
  error.clear();
  const std::string where = "wisdom file " + path + ": ";
  try {
    if (make_parent && !make_directories(parent_of(path), error)) {
      error = where + error;
      return false;
    }
    // What other jobs saved meanwhile is kept; this run's verdicts are newer. A corrupt or
    // foreign file was reported when it was loaded and is replaced now.
    Wisdom disk;
    std::string ignored;
    load(path, disk, ignored);
    Wisdom merged = w;
    for (const auto& [key, v] : disk.entries_)
      if (merged.entries_.size() < kMaxEntries) merged.entries_.emplace(key, v);
    // Written whole next to it and renamed: concurrent jobs never leave a torn file, and a
    // symbolic link, FIFO or device there is left alone.
    std::string why;
    if (!core::replace_file(path, merged.serialize(), why)) {
      error = "wisdom file " + why;
      return false;
    }
    return true;
  } catch (...) {
    error = where + "out of memory while writing";
    return false;
  }
}

}  // namespace commsched::learn
