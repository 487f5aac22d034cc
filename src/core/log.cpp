#include "core/log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

namespace commsched::core {
namespace {

struct LogState {
  std::mutex mu;
  LogLevel level = LogLevel::warn;
  int rank = -1;
  std::FILE* out = nullptr;  // nullptr: stderr
  std::set<std::string, std::less<>> seen;
};

LogState& state() {
  static LogState* s = new LogState;  // never destroyed: may be used during exit
  return *s;
}

void emit(std::string_view tag, std::string_view msg) {
  LogState& s = state();
  std::FILE* f = s.out ? s.out : stderr;
  if (s.rank >= 0)
    std::fprintf(f, "[commsched r%d] %.*s%.*s\n", s.rank, static_cast<int>(tag.size()), tag.data(),
                 static_cast<int>(msg.size()), msg.data());
  else
    std::fprintf(f, "[commsched] %.*s%.*s\n", static_cast<int>(tag.size()), tag.data(),
                 static_cast<int>(msg.size()), msg.data());
  std::fflush(f);
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
    s.out = std::fopen(path.c_str(), "a");
    // Every rank tries its own file; one warning for the job, from rank 0.
    if (!s.out && world_rank <= 0)
      emit("warning: ", "cannot open COMMSCHED_LOG_FILE '" + path + "'; logging to stderr");
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
