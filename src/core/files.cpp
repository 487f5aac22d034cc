// Files named by users: stat before open, O_NONBLOCK so that opening a FIFO returns at once,
// fstat on the descriptor (what was opened, not what the name meant a moment earlier), reads
// bounded by the cap, and outputs that never follow a symbolic link or replace a special file.
#include "core/files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace commsched::core {
namespace {

std::string describe(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string failed(const std::string& path, const char* what, int err) {
  return path + ": " + what + " (" + std::strerror(err) + ")";
}

std::string not_regular(const std::string& path, mode_t mode) {
  return path + ": " + describe(mode) + ", not a regular file";
}

std::string too_big(const std::string& path, std::size_t max_bytes) {
  return path + ": larger than the limit of " + std::to_string(max_bytes) + " bytes";
}

// Clears O_NONBLOCK, which only served the open: a regular file ignores it, and the descriptor
// of an output may be handed to stdio.
bool make_blocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
}

}  // namespace

bool read_regular_file(const std::string& path, std::size_t max_bytes, std::string& out,
                       std::string& error) {
  out.clear();
  try {
    // stat first: a device is refused without being opened (opening some has effects).
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      error = failed(path, "cannot open", errno);
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      error = not_regular(path, st.st_mode);
      return false;
    }
    if (st.st_size < 0 || static_cast<std::size_t>(st.st_size) > max_bytes) {
      error = too_big(path, max_bytes);
      return false;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      error = failed(path, "cannot open", errno);
      return false;
    }
    // The name may have been replaced since stat: judge what was opened.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      error = not_regular(path, st.st_mode);
      ::close(fd);
      return false;
    }
    out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[64 * 1024];
    for (;;) {
      const ssize_t got = ::read(fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        error = failed(path, "cannot read", errno);
        ::close(fd);
        out.clear();
        return false;
      }
      if (got == 0) break;
      if (static_cast<std::size_t>(got) > max_bytes - out.size()) {  // it grew past the cap
        error = too_big(path, max_bytes);
        ::close(fd);
        out.clear();
        return false;
      }
      out.append(buf, static_cast<std::size_t>(got));
    }
    ::close(fd);
    return true;
  } catch (const std::bad_alloc&) {
    out.clear();
    error = path + ": out of memory reading the file";
    return false;
  }
}

int open_output(const std::string& path, OutputMode mode, std::string& error) {
  // A special file already there is refused before it is opened; O_NOFOLLOW and the fstat
  // below catch one that appears in between.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = not_regular(path, st.st_mode);
    return -1;
  }
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                    (mode == OutputMode::append ? O_APPEND : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) error = path + ": a symbolic link, not a regular file";
    else if (err == ENXIO) error = path + ": a FIFO, not a regular file";
    else error = failed(path, "cannot open for writing", err);
    return -1;
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !make_blocking(fd)) {
    error = not_regular(path, st.st_mode);
    ::close(fd);
    return -1;
  }
  return fd;
}

bool write_all(int fd, std::string_view data, const std::string& path, std::string& error) {
  while (!data.empty()) {
    const ssize_t put = ::write(fd, data.data(), data.size());
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      error = failed(path, "cannot write", put < 0 ? errno : EIO);
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(put));
  }
  return true;
}

bool close_output(int fd, const std::string& path, std::string& error) {
  // Linux releases the descriptor even when close fails, so it is never retried.
  if (::close(fd) != 0 && errno != EINTR) {
    error = failed(path, "cannot finish writing", errno);
    return false;
  }
  return true;
}

std::string unreplaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  return not_regular(path, st.st_mode);
}

bool replace_file(const std::string& path, std::string_view text, std::string& error) {
  try {
    if (std::string why = unreplaceable(path); !why.empty()) {
      error = why + "; not replaced";
      return false;
    }
    // A fresh name of our own: O_EXCL never opens what is there (a stale temporary, a FIFO or
    // a link someone placed), it tries the next name.
    std::string tmp;
    int fd = -1;
    for (int k = 0; k < 16 && fd < 0; ++k) {
      tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(k);
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
      error = failed(path, "cannot create a temporary file next to it", errno);
      return false;
    }
    const bool wrote = write_all(fd, text, path, error);
    if (!close_output(fd, path, error) || !wrote) {
      ::unlink(tmp.c_str());
      return false;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      error = failed(path, "cannot rename the temporary file onto it", errno);
      ::unlink(tmp.c_str());
      return false;
    }
    return true;
  } catch (const std::bad_alloc&) {
    error = path + ": out of memory writing the file";
    return false;
  }
}

}  // namespace commsched::core
