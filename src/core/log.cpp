#include "core/log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include <unistd.h>

#include "core/files.hpp"

namespace commsched::core {
namespace {

struct LogState {
  std::mutex mu;
  LogLevel level = LogLevel::warn;
  int rank = -1;
  std::FILE* out = nullptr;  // nullptr: stderr
  std::string out_path;
  std::set<std::string, std::less<>> seen;
};

LogState& state() {
  static LogState* s = new LogState;  // never destroyed: may be used during exit
  return *s;
}

// One line to f; false when it did not reach f (a full disk, a quota).
bool put_line(std::FILE* f, int rank, std::string_view tag, std::string_view msg) {
  const int put =
      rank >= 0
          ? std::fprintf(f, "[commsched r%d] %.*s%.*s\n", rank, static_cast<int>(tag.size()),
                         tag.data(), static_cast<int>(msg.size()), msg.data())
          : std::fprintf(f, "[commsched] %.*s%.*s\n", static_cast<int>(tag.size()), tag.data(),
                         static_cast<int>(msg.size()), msg.data());
  return std::fflush(f) == 0 && put >= 0;
}

void emit(std::string_view tag, std::string_view msg) {
  LogState& s = state();
  if (!s.out) {
    put_line(stderr, s.rank, tag, msg);
    return;
  }
  if (put_line(s.out, s.rank, tag, msg)) return;
  // The log file lost this line: say so once on stderr, and log there from now on, this line
  // included, rather than lose more.
  const int err = errno;
  std::fclose(s.out);
  s.out = nullptr;
  put_line(stderr, s.rank, "warning: ",
           "cannot write COMMSCHED_LOG_FILE '" + s.out_path + "' (" + std::strerror(err) +
               "); logging to stderr from here");
  put_line(stderr, s.rank, tag, msg);
}

bool first_time(LogState& s, std::string_view key) {
  if (s.seen.find(key) != s.seen.end()) return false;
  s.seen.emplace(key);
  return true;
}

}  // namespace

void log_configure(LogLevel level, int world_rank, const std::string& file_path) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  s.level = level;
  s.rank = world_rank;
  if (!file_path.empty() && !s.out) {
    // One file per rank so ranks never interleave lines: PATH.rN
    const std::string path = file_path + ".r" + std::to_string(world_rank);
    // Only a regular file (created if absent): a FIFO would hang the job, a symbolic link may
    // point anywhere, and a device is not a log.
    std::string error;
    const int fd = open_output(path, OutputMode::append, error);
    s.out = fd >= 0 ? ::fdopen(fd, "a") : nullptr;
    if (fd >= 0 && !s.out) {
      error = path + ": " + std::strerror(errno);
      ::close(fd);
    }
    if (s.out) s.out_path = path;
    // Every rank tries its own file; one warning for the job, from rank 0.
    if (!s.out && world_rank <= 0)
      emit("warning: ", "cannot use COMMSCHED_LOG_FILE: " + error + "; logging to stderr");
  }
}

LogLevel log_level() { return state().level; }
int log_rank() { return state().rank; }

void log_warn(std::string_view msg) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  if (s.level >= LogLevel::warn) emit("warning: ", msg);
}

void log_warn_once(std::string_view key, std::string_view msg) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  if (s.level >= LogLevel::warn && first_time(s, key)) emit("warning: ", msg);
}

void log_info(std::string_view msg) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  if (s.level >= LogLevel::info && s.rank <= 0) emit("", msg);
}

void log_info_once(std::string_view key, std::string_view msg) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  if (s.level >= LogLevel::info && s.rank <= 0 && first_time(s, key)) emit("", msg);
}

void log_debug(std::string_view msg) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  if (s.level >= LogLevel::debug) emit("debug: ", msg);
}

}  // namespace commsched::core
