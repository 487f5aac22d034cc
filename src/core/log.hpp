#pragma once
/// Logging to stderr (or COMMSCHED_LOG_FILE) with a `[commsched rN]` prefix.
/// Warnings can be keyed so each condition is reported once per process.
#include <string>
#include <string_view>

namespace commsched::core {

enum class LogLevel { quiet = 0, warn = 1, info = 2, debug = 3 };

/// Set once at init; before that the level is `warn` and the rank unknown (-1).
void log_configure(LogLevel level, int world_rank, const std::string& file_path);
LogLevel log_level();
int log_rank();

void log_warn(std::string_view msg);
/// Warns only the first time `key` is seen in this process.
void log_warn_once(std::string_view key, std::string_view msg);
/// Info goes out from rank 0 only (or before the rank is known).
void log_info(std::string_view msg);
void log_info_once(std::string_view key, std::string_view msg);
void log_debug(std::string_view msg);

}  // namespace commsched::core
