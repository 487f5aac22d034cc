#include "learn/wisdom.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <random>
#include <system_error>
#include <unordered_map>
#include <vector>

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
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  return ec == std::errc{} && end == text.data() + text.size();
}

template <typename T>
bool read_whole(std::string_view text, T& v) {
  if (text.empty() || text.front() == '+' || text.front() == '-') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc{} && end == text.data() + text.size();
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

/// Closes a descriptor on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  /// Closes now and reports whether close succeeded (a failed close can lose written data).
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

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

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// A suffix no other writer (another process, or another thread of this one) picks.
std::string temp_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t r = static_cast<std::uint64_t>(
                        std::chrono::steady_clock::now().time_since_epoch().count()) ^
                    (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
  try {
    std::random_device device;
    r ^= (static_cast<std::uint64_t>(device()) << 32) | device();
  } catch (...) {
    // No entropy source: the clock and counter still differ between tries.
  }
  std::string s = ".tmp.";
  s += std::to_string(::getpid());
  s += '.';
  append_hex16(s, r);
  return s;
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
    // Non-blocking, so a FIFO at the path cannot hang the job's MPI_Init.
    Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) {
      if (errno == ENOENT) return true;  // no wisdom yet: the first run of a job
      error = where + errno_text(errno);
      return false;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      error = where + errno_text(errno);
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      error = where + "not a regular file";
      return false;
    }
    if (st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
      error = where + "larger than 1 MiB; not a wisdom file";
      return false;
    }
    // Read to the end (the file may have changed since fstat), never past the cap.
    std::string text(kMaxFileBytes + 1, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = where + errno_text(errno);
        return false;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got > kMaxFileBytes) {
      error = where + "larger than 1 MiB; not a wisdom file";
      return false;
    }
    text.resize(got);
    std::string why;
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
  std::string tmp;
  try {
    const std::string dir = parent_of(path);
    if (make_parent && !make_directories(dir, error)) {
      error = where + error;
      return false;
    }
    // rename() would replace a symlink itself, not its target, and a FIFO or device is no
    // place for a cache: leave whatever the user put there alone.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode)) {
        error = where + "exists and is not a regular file; not replaced";
        return false;
      }
    } else if (errno != ENOENT) {
      error = where + errno_text(errno);
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
    const std::string text = merged.serialize();

    int raw = -1;
    for (int attempt = 0; attempt < 4 && raw < 0; ++attempt) {
      tmp = path + temp_suffix();
      raw = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (raw < 0 && errno != EEXIST) break;
    }
    if (raw < 0) {
      error = where + "cannot create " + tmp + ": " + errno_text(errno);
      tmp.clear();
      return false;
    }
    Fd fd(raw);
    if (!write_all(fd.get(), text) || ::fsync(fd.get()) != 0 || !fd.close()) {
      error = where + "cannot write " + tmp + ": " + errno_text(errno);
      ::unlink(tmp.c_str());
      return false;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      error = where + "cannot rename " + tmp + " onto it: " + errno_text(errno);
      ::unlink(tmp.c_str());
      return false;
    }
    // Best effort: the rename itself survives a crash only once the directory is synced.
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    return true;
  } catch (...) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    error = where + "out of memory while writing";
    return false;
  }
}

}  // namespace commsched::learn
