#pragma once
/// Files named by users (machine files, traces, matrices, logs, reports), read and written so
/// that a FIFO cannot hang the process, a device cannot be read forever, and a symbolic link or
/// special file is never followed or replaced by an output. Every function reports a failure as
/// "PATH: why" and never throws.
#include <cstddef>
#include <string>
#include <string_view>

namespace commsched::core {

/// The most a machine file may hold: 1 MiB.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{1} << 20;
/// The most a data input (a matrix, a host list for commsched-analyze) may hold: 256 MiB.
inline constexpr std::size_t kMaxDataFileBytes = std::size_t{256} << 20;

/// Reads the whole of `path` into `out` if it is a regular file (a symbolic link to one is
/// fine) of at most `max_bytes` bytes. A FIFO, device, socket or directory is refused before it
/// is read (opened O_NONBLOCK, checked by fstat), and so is a file over the cap.
bool read_regular_file(const std::string& path, std::size_t max_bytes, std::string& out,
                       std::string& error);

/// How `path` would be opened for writing by open_output.
enum class OutputMode { truncate, append };

/// Opens `path` for writing, creating it (mode 0666 less the umask) if absent, only if it is a
/// regular file: a symbolic link there is not followed (O_NOFOLLOW), a FIFO is not waited on
/// (O_NONBLOCK), and a FIFO, device, socket or directory is refused. Returns the descriptor
/// (blocking again, close-on-exec), or -1 with `error`.
int open_output(const std::string& path, OutputMode mode, std::string& error);

/// Writes all of `data` to `fd`, retrying short writes; false with `error` ("PATH: why", e.g.
/// "No space left on device") when a write fails.
bool write_all(int fd, std::string_view data, const std::string& path, std::string& error);

/// Closes `fd` and says whether everything written reached the file (close can report a write
/// error that the writes did not: NFS, quotas).
bool close_output(int fd, const std::string& path, std::string& error);

/// Empty when a new file may be renamed onto `path`: nothing is there, or a regular file. Else
/// why not ("PATH: a symbolic link, not replaced").
std::string unreplaceable(const std::string& path);

/// Replaces `path` with `text` as a whole: written to a new temporary file next to it (created
/// O_CREAT|O_EXCL|O_NOFOLLOW, every write and the close checked), then renamed onto `path`, so
/// readers see the old file or the new one and a failure leaves nothing behind. Refused when
/// `path` is a symbolic link, FIFO, device, socket or directory (unreplaceable).
bool replace_file(const std::string& path, std::string_view text, std::string& error);

}  // namespace commsched::core
