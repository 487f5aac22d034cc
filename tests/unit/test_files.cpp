// Files named by users (core/files.hpp): regular files read and written; FIFOs, devices,
// directories, symbolic links and oversized files refused at once, with the path in the error.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/files.hpp"
#include "core/log.hpp"
#include "core/netstat.hpp"
#include "core/parse.hpp"

namespace fs = std::filesystem;
using namespace commsched;

namespace {

// A fresh directory per test, removed after it.
class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("commsched_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string fifo(const std::string& name) const {
    const std::string p = path(name);
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p;
  }
  static void write(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  fs::path dir_;
};

// Runs f with files limited to `bytes` (SIGXFSZ ignored): writes past it fail with EFBIG,
// as they would on a full disk.
template <class F>
void with_file_size_limit(rlim_t bytes, F f) {
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = bytes;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  f();
  ::setrlimit(RLIMIT_FSIZE, &old);
}

// A path and why it is refused.
struct Refusal {
  std::string path;
  const char* why;
};

// Runs f and says how long it took: a refusal must not wait on anything.
template <class F>
double seconds(F f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST_F(Files, ReadsARegularFileAndALinkToOne) {
  const std::string p = path("m.toml");
  write(p, "abc\n");
  std::string text, error;
  ASSERT_TRUE(core::read_regular_file(p, 100, text, error)) << error;
  EXPECT_EQ(text, "abc\n");
  fs::create_symlink(p, path("link.toml"));
  ASSERT_TRUE(core::read_regular_file(path("link.toml"), 100, text, error)) << error;
  EXPECT_EQ(text, "abc\n");
  write(p, "");
  ASSERT_TRUE(core::read_regular_file(p, 100, text, error)) << error;
  EXPECT_EQ(text, "");
}

TEST_F(Files, ReadRefusesFifoDeviceDirectoryAndOversizedFiles) {
  const std::string big = path("big");
  write(big, std::string(101, 'x'));
  fs::create_symlink("/dev/zero", path("zero_link"));
  const std::string p_fifo = fifo("fifo");
  const Refusal cases[] = {
      {p_fifo, "a FIFO, not a regular file"},
      {"/dev/zero", "a character device, not a regular file"},
      {"/dev/urandom", "a character device, not a regular file"},
      {path("zero_link"), "a character device, not a regular file"},
      {dir_.string(), "a directory, not a regular file"},
      {big, "larger than the limit of 100 bytes"},
      {path("absent"), "cannot open (No such file or directory)"},
  };
  for (const auto& c : cases) {
    std::string text = "old", error;
    const double t = seconds([&] {
      EXPECT_FALSE(core::read_regular_file(c.path, 100, text, error)) << c.path;
    });
    EXPECT_LT(t, 1.0) << c.path;
    EXPECT_EQ(error, c.path + ": " + c.why);
    EXPECT_TRUE(text.empty());
  }
  std::string text, error;
  EXPECT_TRUE(core::read_regular_file(big, 101, text, error)) << "exactly the cap is fine";
}

TEST_F(Files, OutputsAreRegularFilesOnly) {
  const std::string p = path("log");
  std::string error;
  int fd = core::open_output(p, core::OutputMode::append, error);
  ASSERT_GE(fd, 0) << error;
  EXPECT_TRUE(core::write_all(fd, "one\n", p, error)) << error;
  EXPECT_TRUE(core::close_output(fd, p, error)) << error;
  fd = core::open_output(p, core::OutputMode::append, error);
  ASSERT_GE(fd, 0) << error;
  EXPECT_TRUE(core::write_all(fd, "two\n", p, error)) << error;
  EXPECT_TRUE(core::close_output(fd, p, error)) << error;
  EXPECT_EQ(slurp(p), "one\ntwo\n");
  fd = core::open_output(p, core::OutputMode::truncate, error);
  ASSERT_GE(fd, 0) << error;
  EXPECT_TRUE(core::close_output(fd, p, error)) << error;
  EXPECT_EQ(slurp(p), "");

  const std::string target = path("target");
  write(target, "keep");
  fs::create_symlink(target, path("link"));
  const std::string p_fifo = fifo("fifo");
  const Refusal cases[] = {
      {path("link"), "a symbolic link, not a regular file"},
      {p_fifo, "a FIFO, not a regular file"},
      {"/dev/null", "a character device, not a regular file"},
      {dir_.string(), "a directory, not a regular file"},
  };
  for (const auto& c : cases)
    for (const auto mode : {core::OutputMode::append, core::OutputMode::truncate}) {
      const double t = seconds([&] {
        EXPECT_EQ(core::open_output(c.path, mode, error), -1) << c.path;
      });
      EXPECT_LT(t, 1.0) << c.path;
      EXPECT_EQ(error, c.path + ": " + c.why);
    }
  EXPECT_EQ(slurp(target), "keep") << "the link's target is untouched";
}

TEST_F(Files, WriteToAFullDeviceIsAnError) {
  const int fd = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(fd, 0);
  std::string error;
  EXPECT_FALSE(core::write_all(fd, "lost", "/dev/full", error));
  EXPECT_EQ(error, "/dev/full: cannot write (No space left on device)");
  ::close(fd);
}

TEST_F(Files, ReplaceWritesWholeFilesAndRefusesSpecialTargets) {
  const std::string p = path("report.json");
  std::string error;
  ASSERT_TRUE(core::replace_file(p, "{}\n", error)) << error;
  EXPECT_EQ(slurp(p), "{}\n");
  ASSERT_TRUE(core::replace_file(p, "{\"a\": 1}\n", error)) << error;
  EXPECT_EQ(slurp(p), "{\"a\": 1}\n");

  const std::string target = path("target");
  write(target, "keep");
  fs::create_symlink(target, path("link"));
  fs::create_symlink("/dev/null", path("null_link"));
  const std::string p_fifo = fifo("fifo");
  const Refusal cases[] = {
      {path("link"), "a symbolic link, not a regular file; not replaced"},
      {path("null_link"), "a symbolic link, not a regular file; not replaced"},
      {p_fifo, "a FIFO, not a regular file; not replaced"},
      {"/dev/null", "a character device, not a regular file; not replaced"},
      {"/dev/full", "a character device, not a regular file; not replaced"},
      {dir_.string(), "a directory, not a regular file; not replaced"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(core::replace_file(c.path, "x", error)) << c.path;
    EXPECT_EQ(error, c.path + ": " + c.why);
  }
  EXPECT_TRUE(fs::is_symlink(path("link")));
  EXPECT_TRUE(fs::is_fifo(p_fifo));
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_FALSE(core::replace_file(path("nodir/r.json"), "x", error));
  EXPECT_NE(error.find("cannot create a temporary file next to it"), std::string::npos) << error;
  // Nothing but the files made above is left behind (no temporary files).
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 5);
}

// A write that fails half way (here the file size limit, as a full disk would) leaves the old
// file in place and says so.
TEST_F(Files, ReplaceThatCannotWriteKeepsTheOldFile) {
  const std::string p = path("report.json");
  write(p, "old");
  std::string error;
  bool ok = true;
  with_file_size_limit(4096, [&] { ok = core::replace_file(p, std::string(10000, 'x'), error); });
  EXPECT_FALSE(ok);
  EXPECT_EQ(error.rfind(p + ": cannot write (", 0), 0u) << error;
  EXPECT_EQ(slurp(p), "old");
}

// The log file: a FIFO is refused at once (logging goes to stderr), and a file that stops
// taking lines is reported once on stderr, the rest going there.
TEST_F(Files, LogFileRefusesFifoAndSaysOnceWhenLinesAreLost) {
  const std::string base = path("log");
  fifo("log.r0");
  ::testing::internal::CaptureStderr();
  const double t = seconds([&] { core::log_configure(core::LogLevel::warn, 0, base); });
  core::log_warn("after");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_LT(t, 1.0);
  EXPECT_NE(err.find("cannot use COMMSCHED_LOG_FILE: " + base + ".r0: a FIFO"), std::string::npos)
      << err;
  EXPECT_NE(err.find("warning: after"), std::string::npos) << err;

  // A regular file that fills up (the file size limit standing in for a full disk; it limits
  // the captured stderr too, so few long lines).
  fs::remove(base + ".r0");
  core::log_configure(core::LogLevel::warn, 0, base);
  std::string lost;
  with_file_size_limit(1024, [&] {
    ::testing::internal::CaptureStderr();
    for (int i = 0; i < 8; ++i)
      core::log_warn("line " + std::to_string(i) + std::string(168, '.'));
    lost = ::testing::internal::GetCapturedStderr();
  });
  std::size_t said = 0;
  for (std::size_t at = 0; (at = lost.find("cannot write COMMSCHED_LOG_FILE", at)) !=
                           std::string::npos;
       ++at)
    ++said;
  EXPECT_EQ(said, 1u) << lost;
  EXPECT_NE(lost.find("File too large"), std::string::npos) << lost;
  EXPECT_NE(lost.find("warning: line 7"), std::string::npos) << "later lines go to stderr";
  const std::string kept = slurp(base + ".r0");
  EXPECT_LE(kept.size(), 1024u);
  EXPECT_NE(kept.find("warning: line 0"), std::string::npos) << kept;
}

// ---- numbers read from files and variables ---------------------------------------------------

// The whole text or nothing: no space, sign or junk around the number, nothing out of range.
TEST(ParseWhole, TakesTheWholeTextOrNothing) {
  EXPECT_EQ(core::parse_whole<int>("42"), 42);
  EXPECT_EQ(core::parse_whole<int>("-7"), -7);
  EXPECT_EQ(core::parse_whole<std::uint64_t>("ff", 16), 255u);
  EXPECT_EQ(core::parse_whole<double>("0.25"), 0.25);
  for (const char* bad : {"", " 1", "1 ", "+1", "1x", "x1", "0x10", "1.5"})
    EXPECT_FALSE(core::parse_whole<int>(bad).has_value()) << '"' << bad << '"';
  EXPECT_FALSE(core::parse_whole<unsigned>("-1").has_value());
  EXPECT_FALSE(core::parse_whole<int>("99999999999").has_value());  // out of range
  EXPECT_FALSE(core::parse_whole<double>("1e").has_value());
  EXPECT_FALSE(core::parse_whole<double>("").has_value());
}

// ---- /proc/net/netstat ---------------------------------------------------------------------

// The counter is found by name in the TcpExt block, wherever it stands, and only there.
TEST(Netstat, ParsesTcpTimeouts) {
  const std::string text =
      "TcpExt: SyncookiesSent SyncookiesRecv TCPTimeouts TCPLossProbes\n"
      "TcpExt: 0 0 417 9\n"
      "IpExt: InNoRoutes TCPTimeouts\n"
      "IpExt: 0 5\n";
  EXPECT_EQ(core::parse_tcp_timeouts(text), 417);
  EXPECT_EQ(core::parse_tcp_timeouts("IpExt: TCPTimeouts\nIpExt: 5\n"), -1);
  EXPECT_EQ(core::parse_tcp_timeouts("TcpExt: A TCPTimeouts\nTcpExt: 1 12"), 12);  // no newline
}

// Missing, short, negative or non-numeric values, or a header without values, give -1.
TEST(Netstat, MalformedGivesUnknown) {
  EXPECT_EQ(core::parse_tcp_timeouts(""), -1);
  EXPECT_EQ(core::parse_tcp_timeouts("TcpExt: A TCPTimeouts\n"), -1);
  EXPECT_EQ(core::parse_tcp_timeouts("TcpExt: A TCPTimeouts\nTcpExt: 1\n"), -1);
  EXPECT_EQ(core::parse_tcp_timeouts("TcpExt: A TCPTimeouts\nTcpExt: 1 -3\n"), -1);
  EXPECT_EQ(core::parse_tcp_timeouts("TcpExt: A TCPTimeouts\nTcpExt: 1 7x\n"), -1);
  EXPECT_EQ(core::parse_tcp_timeouts("TcpExt: A TCPTimeouts\nIpExt: 1 7\n"), -1);
}

// This machine's own file, where there is one: a count, never an error.
TEST(Netstat, ReadsThisMachine) {
  const long long now = core::tcp_timeouts("/proc/net/netstat");
  if (!fs::exists("/proc/net/netstat")) GTEST_SKIP() << "no /proc/net/netstat";
  EXPECT_GE(now, 0);
}

// Any other file with the same lines reads alike; a missing one, or a directory, is unknown.
TEST_F(Files, NetstatReadsAnyPathOrGivesUnknown) {
  write(path("netstat"), "TcpExt: SyncookiesSent TCPTimeouts\nTcpExt: 0 41\n");
  EXPECT_EQ(core::tcp_timeouts(path("netstat")), 41);
  EXPECT_EQ(core::tcp_timeouts(path("absent")), -1);
  EXPECT_EQ(core::tcp_timeouts(dir_.string()), -1);
}

}  // namespace
