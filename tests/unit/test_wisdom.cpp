// Wisdom across runs: round trips through text and through files; corrupt, truncated, oversized
// and foreign files ignored with one message; a FIFO and a symlink refused; concurrent savers
// never leave a file that fails to parse; a verdict matches only its own key.
#include "learn/wisdom.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace commsched::learn {
namespace {

namespace fs = std::filesystem;

WisdomKey key(std::uint64_t pattern, std::int32_t comm_size = 64) {
  return WisdomKey{pattern, comm_size, 0x1a1a1a1a00000000ull, 0xfeedfacecafebeefull};
}

Verdict verdict(std::string strategy, double native_s = 2.5e-3, double chosen_s = 1.25e-3) {
  return Verdict{std::move(strategy), native_s, chosen_s, 24};
}

Wisdom sample() {
  Wisdom w;
  EXPECT_TRUE(w.put(key(3), verdict("rs_nh")));
  EXPECT_TRUE(w.put(key(1), verdict("native", 1e-6, 1e-6)));
  EXPECT_TRUE(w.put(key(2, 1024), verdict("two_stage", 0.1, 1.0 / 3.0)));
  EXPECT_TRUE(w.put(WisdomKey{~0ull, std::numeric_limits<std::int32_t>::max(), 0, ~0ull},
                    Verdict{"color", 0, 7e300, ~0ull}));
  return w;
}

/// A fresh directory per test, removed afterwards.
class WisdomFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "commsched_wisdom_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void write(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  /// load() must refuse `text` with one message and leave nothing behind.
  void expect_ignored(const std::string& text, const std::string& why) {
    const std::string p = path("wisdom");
    write(p, text);
    Wisdom w = sample();
    std::string error;
    EXPECT_FALSE(Wisdom::load(p, w, error)) << why;
    EXPECT_TRUE(w.empty()) << why;
    EXPECT_NE(error.find("wisdom file " + p + ": "), std::string::npos) << why << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << why << ": " << error;
  }
  fs::path dir_;
};

// ---- the text format --------------------------------------------------------------------

TEST(Wisdom, SerializeParseRoundTrip) {
  const Wisdom w = sample();
  const std::string text = w.serialize();
  std::string error = "stale";
  const Wisdom back = Wisdom::parse(text, error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(back.entries(), w.entries());
  EXPECT_EQ(back.serialize(), text);
  EXPECT_EQ(text.rfind("commsched-wisdom 1 " + std::string(Wisdom::library_version()) + "\n", 0),
            0u)
      << text;
}

TEST(Wisdom, OutputIsSortedAndDeterministic) {
  // The same entries put in another order give the same bytes.
  Wisdom a = sample(), b;
  const auto& entries = a.entries();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) b.put(it->first, it->second);
  EXPECT_EQ(a.serialize(), b.serialize());
  const std::string text = a.serialize();
  EXPECT_LT(text.find("0000000000000001 64 "), text.find("0000000000000003 64 ")) << text;
}

TEST(Wisdom, EmptyWisdomRoundTrips) {
  std::string error;
  const Wisdom back = Wisdom::parse(Wisdom{}.serialize(), error);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(back.empty());
}

TEST(Wisdom, LookupMissesWhenAnyKeyPartDiffers) {
  Wisdom w;
  const WisdomKey k{0x1234, 64, 0xaaaa, 0xbbbb};
  ASSERT_TRUE(w.put(k, verdict("color")));
  ASSERT_NE(w.find(k), nullptr);
  EXPECT_EQ(w.find(k)->strategy, "color");
  EXPECT_EQ(w.find(WisdomKey{0x1235, 64, 0xaaaa, 0xbbbb}), nullptr);  // another pattern
  EXPECT_EQ(w.find(WisdomKey{0x1234, 32, 0xaaaa, 0xbbbb}), nullptr);  // comm size
  EXPECT_EQ(w.find(WisdomKey{0x1234, 64, 0xaaab, 0xbbbb}), nullptr);  // node layout
  EXPECT_EQ(w.find(WisdomKey{0x1234, 64, 0xaaaa, 0xbbbc}), nullptr);  // machine
}

TEST(Wisdom, PutReplacesAndMergeTakesTheNewer) {
  Wisdom old_run, new_run;
  old_run.put(key(1), verdict("color"));
  old_run.put(key(2), verdict("rs_nh"));
  new_run.put(key(2), verdict("native"));
  new_run.put(key(3), verdict("lex"));
  old_run.merge(new_run);
  ASSERT_EQ(old_run.size(), 3u);
  EXPECT_EQ(old_run.find(key(1))->strategy, "color");
  EXPECT_EQ(old_run.find(key(2))->strategy, "native");
  EXPECT_EQ(old_run.find(key(3))->strategy, "lex");
}

TEST(Wisdom, PutRefusesWhatCannotBeWrittenBack) {
  Wisdom w;
  EXPECT_FALSE(w.put(key(1), verdict("")));
  EXPECT_FALSE(w.put(key(1), verdict("rs nh")));
  EXPECT_FALSE(w.put(key(1), verdict("rs_nh\nend 0 0")));
  EXPECT_FALSE(w.put(key(1), verdict(std::string(Wisdom::kMaxStrategy + 1, 'a'))));
  EXPECT_FALSE(w.put(key(1), verdict("color", -1.0)));
  EXPECT_FALSE(w.put(key(1), verdict("color", 1.0, std::numeric_limits<double>::quiet_NaN())));
  EXPECT_FALSE(w.put(key(1), verdict("color", std::numeric_limits<double>::infinity())));
  EXPECT_FALSE(w.put(key(1, 0), verdict("color")));
  EXPECT_TRUE(w.empty());
}

TEST(Wisdom, TableIsCappedAtMaxEntries) {
  Wisdom w;
  for (std::uint64_t i = 0; i < Wisdom::kMaxEntries; ++i) ASSERT_TRUE(w.put(key(i), verdict("lex")));
  EXPECT_FALSE(w.put(key(Wisdom::kMaxEntries), verdict("lex")));
  EXPECT_TRUE(w.put(key(0), verdict("color")));  // replacing is still allowed
  std::string error;
  EXPECT_EQ(Wisdom::parse(w.serialize(), error).size(), Wisdom::kMaxEntries);
  EXPECT_EQ(error, "");
}

/// parse() gives an empty Wisdom and a message naming `line`.
void expect_rejected(const std::string& text, const std::string& line, const std::string& why) {
  std::string error;
  EXPECT_TRUE(Wisdom::parse(text, error).empty()) << why;
  EXPECT_NE(error.find(line), std::string::npos) << why << ": " << error;
}

TEST(Wisdom, CorruptTextIsRejectedNamingTheLine) {
  const std::string good = sample().serialize();
  // Every single flipped bit of the entries or the trailer is caught (checksum or syntax).
  for (std::size_t i = good.find('\n') + 1; i + 1 < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      std::string error;
      EXPECT_TRUE(Wisdom::parse(bad, error).empty()) << "byte " << i << " bit " << bit;
      EXPECT_FALSE(error.empty()) << "byte " << i << " bit " << bit;
    }
  }
  // Truncated anywhere.
  for (std::size_t n = 0; n < good.size(); ++n) {
    std::string error;
    EXPECT_TRUE(Wisdom::parse(good.substr(0, n), error).empty()) << n;
    EXPECT_FALSE(error.empty()) << n;
  }
  expect_rejected(good.substr(0, good.size() - 1), "line 6:", "no final newline");
  expect_rejected(good.substr(0, good.rfind("end ")), "line 5:", "end line cut off");
  expect_rejected(good + "x\n", "line 7:", "junk after the end line");
  expect_rejected("garbage\n", "line 1:", "garbage");
  expect_rejected(std::string(5000, 'x') + "\n", "line 1:", "a long line");
  expect_rejected(good.substr(0, good.find('\n') + 1) + std::string(2000, '0') + "\n", "line 2:",
                  "a long entry");
  expect_rejected("", "line 1:", "empty");
}

TEST(Wisdom, TooManyEntriesAreCorrupt) {
  std::string text = Wisdom{}.serialize();
  text = text.substr(0, text.find('\n') + 1);
  for (std::size_t i = 0; i <= Wisdom::kMaxEntries; ++i)
    text += "0000000000000001 64 0000000000000000 0000000000000000 lex 1 1 1\n";
  text += "end 4097 0000000000000000\n";
  expect_rejected(text, "line 4099: more than 4096 entries", "4097 entries");
}

/// `good` with its header's version replaced (the checksum is left to match the old text, as
/// the header is judged first).
std::string with_version(const std::string& good, const std::string& version) {
  const std::string header = "commsched-wisdom 1 " + std::string(Wisdom::library_version());
  return "commsched-wisdom 1 " + version + good.substr(header.size());
}

TEST(Wisdom, ForeignVersionIsRejectedNamingBothVersions) {
  const std::string good = sample().serialize();
  std::string error;
  EXPECT_TRUE(Wisdom::parse(with_version(good, "0.0.9"), error).empty());
  EXPECT_EQ(error, "written by commsched 0.0.9, this is " + std::string(Wisdom::library_version()));
  EXPECT_TRUE(Wisdom::parse(with_version(good, "\x1b[2J"), error).empty());
  EXPECT_EQ(error.rfind("written by commsched ?[2J, this is ", 0), 0u) << error;
  std::string format = good;
  format[std::string("commsched-wisdom ").size()] = '2';
  EXPECT_TRUE(Wisdom::parse(format, error).empty());
  EXPECT_NE(error.find("format 2"), std::string::npos) << error;
}

TEST(Wisdom, LayoutHashIgnoresNodeNumbering) {
  const int a[] = {7, 7, 3, 3}, b[] = {0, 0, 1, 1}, c[] = {0, 1, 0, 1}, d[] = {0, 0, 1};
  EXPECT_EQ(layout_hash(a), layout_hash(b));
  EXPECT_NE(layout_hash(b), layout_hash(c));
  EXPECT_NE(layout_hash(b), layout_hash(d));
  EXPECT_EQ(text_hash("abc"), text_hash("abc"));
  EXPECT_NE(text_hash("abc"), text_hash("abd"));
}

// ---- files ------------------------------------------------------------------------------

TEST_F(WisdomFiles, SaveLoadRoundTrip) {
  const std::string p = path("wisdom");
  const Wisdom w = sample();
  std::string error;
  ASSERT_TRUE(Wisdom::save(p, w, error)) << error;
  EXPECT_EQ(error, "");
  Wisdom back;
  ASSERT_TRUE(Wisdom::load(p, back, error)) << error;
  EXPECT_EQ(error, "");
  EXPECT_EQ(back.entries(), w.entries());
  EXPECT_EQ(read(p), w.serialize());
  // Nothing but the file is left in the directory.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(WisdomFiles, SaveMergesWithWhatIsThereAndWins) {
  const std::string p = path("wisdom");
  Wisdom first, second;
  first.put(key(1), verdict("color"));
  first.put(key(2), verdict("rs_nh"));
  second.put(key(2), verdict("native"));
  std::string error;
  ASSERT_TRUE(Wisdom::save(p, first, error)) << error;
  ASSERT_TRUE(Wisdom::save(p, second, error)) << error;
  Wisdom back;
  ASSERT_TRUE(Wisdom::load(p, back, error)) << error;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.find(key(1))->strategy, "color");
  EXPECT_EQ(back.find(key(2))->strategy, "native");
}

TEST_F(WisdomFiles, MissingFileIsEmptyWisdomWithoutMessage) {
  Wisdom w = sample();
  std::string error = "stale";
  EXPECT_TRUE(Wisdom::load(path("absent"), w, error));
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(error, "");
}

TEST_F(WisdomFiles, CorruptFilesAreIgnoredWithOneMessage) {
  const std::string good = sample().serialize();
  std::string flipped = good;
  flipped[good.find('\n') + 3] ^= 0x01;
  expect_ignored(flipped, "flipped byte");
  expect_ignored(good.substr(0, good.size() / 2), "truncated");
  expect_ignored("\x7f" "ELF\x02\x01\x01 not wisdom at all\n", "garbage");
  expect_ignored(std::string(2u << 20, '\n'), "2 MiB file");
  expect_ignored(with_version(good, "9.9.9"), "foreign");
}

TEST_F(WisdomFiles, CorruptOrForeignFileIsReplacedBySave) {
  const std::string p = path("wisdom");
  write(p, with_version(sample().serialize(), "0.0.1"));
  Wisdom w;
  w.put(key(9), verdict("lex"));
  std::string error;
  ASSERT_TRUE(Wisdom::save(p, w, error)) << error;
  Wisdom back;
  ASSERT_TRUE(Wisdom::load(p, back, error)) << error;
  EXPECT_EQ(back.entries(), w.entries());
}

TEST_F(WisdomFiles, FifoIsRefusedWithoutBlocking) {
  const std::string p = path("fifo");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  Wisdom w;
  std::string error;
  EXPECT_FALSE(Wisdom::load(p, w, error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_FALSE(Wisdom::save(p, sample(), error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  struct stat st {};
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(WisdomFiles, SymlinkIsNotReplaced) {
  const std::string target = path("target"), link = path("link");
  write(target, "the user's own file\n");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  std::string error;
  EXPECT_FALSE(Wisdom::save(link, sample(), error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "the user's own file\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(WisdomFiles, DirectoryIsRefused) {
  Wisdom w;
  std::string error;
  EXPECT_FALSE(Wisdom::load(dir_.string(), w, error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(Wisdom::save(dir_.string(), sample(), error));
  EXPECT_FALSE(error.empty());
}

TEST_F(WisdomFiles, SaveCreatesTheParentOnlyWhenAsked) {
  const std::string p = path("cache/commsched/wisdom");
  std::string error;
  EXPECT_FALSE(Wisdom::save(p, sample(), error));
  EXPECT_FALSE(error.empty());
  ASSERT_TRUE(Wisdom::save(p, sample(), error, /*make_parent=*/true)) << error;
  EXPECT_EQ(fs::status(path("cache/commsched")).permissions() & fs::perms::all,
            fs::perms::owner_all);
  Wisdom back;
  ASSERT_TRUE(Wisdom::load(p, back, error)) << error;
  EXPECT_EQ(back.size(), sample().size());
}

TEST_F(WisdomFiles, ConcurrentSaversNeverLeaveABrokenFile) {
  // Two processes save 50 times each, every time one more key of their own; this process
  // reads meanwhile. Every read must parse; some verdicts of the writer that renamed first
  // may be lost (documented), never the file.
  const std::string p = path("wisdom");
  constexpr int kSaves = 50;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = ::fork();
    ASSERT_GE(children[c], 0);
    if (children[c] == 0) {
      Wisdom mine;
      std::string error;
      bool ok = true;
      for (int i = 0; i < kSaves; ++i) {
        ok &= mine.put(key(static_cast<std::uint64_t>(c * 1000 + i)), verdict("color"));
        ok &= Wisdom::save(p, mine, error);
      }
      ::_exit(ok ? 0 : 1);
    }
  }
  int reads = 0, bad_reads = 0;
  bool reaped[2] = {false, false};
  while (!reaped[0] || !reaped[1]) {
    Wisdom w;
    std::string error;
    if (!Wisdom::load(p, w, error)) ++bad_reads;
    ++reads;
    for (int c = 0; c < 2; ++c) {
      int status = 0;
      if (!reaped[c] && ::waitpid(children[c], &status, WNOHANG) == children[c]) {
        reaped[c] = true;
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "saver " << c;
      }
    }
  }
  EXPECT_EQ(bad_reads, 0) << "of " << reads;
  Wisdom final_file;
  std::string error;
  ASSERT_TRUE(Wisdom::load(p, final_file, error)) << error;
  // The writer that renamed last wrote all of its own keys.
  int complete = 0;
  for (int c = 0; c < 2; ++c) {
    int found = 0;
    for (int i = 0; i < kSaves; ++i)
      found += final_file.find(key(static_cast<std::uint64_t>(c * 1000 + i))) != nullptr;
    complete += found == kSaves;
  }
  EXPECT_GE(complete, 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace commsched::learn
