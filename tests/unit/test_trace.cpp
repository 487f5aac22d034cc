// Trace writer and reader: round trip, loop compression, the size limit, partial files, and
// every kind of bad file giving a clear error (never a crash). Golden files: tests/data/traces.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "trace/encoding.hpp"
#include "trace/reader.hpp"
#include "trace/writer.hpp"

namespace fs = std::filesystem;
using namespace commsched;
using trace::CallInfo;
using trace::CallKind;
using trace::PatternInfo;

namespace {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("commsched_trace_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }
  fs::path path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::uint8_t> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A 4-rank matrix and the PatternInfo of rank `r` for it.
core::CommMatrix small_matrix() {
  const std::vector<Bytes> dense = {0, 100, 0, 7,  //
                                    5, 0, 300, 0,  //
                                    0, 0, 0, 1000,  //
                                    64, 64, 64, 64};
  return core::CommMatrix::from_dense(4, dense);
}

PatternInfo info_for(const core::CommMatrix& m, Rank r, const trace::CommId& comm) {
  PatternInfo p;
  p.comm = comm;
  p.comm_size = m.size();
  p.comm_rank = r;
  p.pattern = 0;
  p.nonzeros = m.nonzeros();
  p.total_bytes = m.total_bytes();
  p.matrix_hash = m.hash();
  p.strategy = "rs_nh";
  p.phases = 5;
  p.row = m.row(r);
  return p;
}

CallInfo call(double t, double d, std::int32_t pattern, bool optimised,
              std::string_view strategy = "native") {
  CallInfo c;
  c.comm = {0, 1};
  c.start_s = t;
  c.duration_s = d;
  c.pattern = pattern;
  c.optimised = optimised;
  c.strategy = strategy;
  c.phases = optimised ? 5 : 0;
  return c;
}

std::uint64_t total_calls(const trace::Trace& t) {
  std::uint64_t n = 0;
  for (const auto& l : t.loops) n += l.calls();
  return n;
}

}  // namespace

TEST(Trace, RoundTrip) {
  TempDir dir;
  const core::CommMatrix m = small_matrix();
  trace::Writer w;
  std::string err;
  ASSERT_TRUE(w.open(dir.str(), 3, 4, 1 << 20, err)) << err;
  w.set_meta("commsched_version", "0.1.0");
  for (int i = 0; i < 3; ++i) w.record_call(call(i, 0.5, -1, false));
  const std::int32_t h = w.add_pattern(info_for(m, 3, {0, 1}));
  EXPECT_EQ(h, 0);
  EXPECT_EQ(w.add_pattern(info_for(m, 3, {0, 1})), 0) << "the same pattern is stored once";
  for (int i = 0; i < 10; ++i) w.record_call(call(3 + i, 0.1 + 0.01 * i, h, true, "rs_nh"));
  w.record_call(call(20, 2.0, h, false));
  ASSERT_TRUE(w.close(21.0)) << w.last_error();
  EXPECT_FALSE(fs::exists(dir.path() / trace::partial_file_name(3)));
  ASSERT_TRUE(fs::exists(dir.path() / trace::file_name(3)));

  trace::Trace t;
  ASSERT_TRUE(trace::read_file((dir.path() / trace::file_name(3)).string(), t, err)) << err;
  EXPECT_TRUE(t.complete);
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.world_rank, 3);
  EXPECT_EQ(t.world_size, 4);
  ASSERT_EQ(t.meta.size(), 1u);
  EXPECT_EQ(t.meta[0].second, "0.1.0");
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms[0], (trace::CommId{0, 1}));
  ASSERT_EQ(t.patterns.size(), 1u);
  const trace::PatternRow& p = t.patterns[0];
  EXPECT_EQ(p.comm_size, 4);
  EXPECT_EQ(p.comm_rank, 3);
  EXPECT_EQ(p.nonzeros, m.nonzeros());
  EXPECT_EQ(p.total_bytes, m.total_bytes());
  EXPECT_EQ(p.matrix_hash, m.hash());
  EXPECT_EQ(t.strategies[p.strategy], "rs_nh");
  EXPECT_EQ(p.phases, 5u);
  EXPECT_EQ(std::vector<core::Entry>(m.row(3).begin(), m.row(3).end()), p.row);
  EXPECT_EQ(total_calls(t), 14u);
  EXPECT_EQ(t.calls_recorded, 14u);
  EXPECT_EQ(t.calls_dropped, 0u);
  EXPECT_DOUBLE_EQ(t.t_close, 21.0);
  // 3 learning calls, 10 optimised (one loop), 1 native: durations survive as min/max/sum.
  double optimised_sum = 0, optimised_min = 1e9, optimised_max = 0;
  std::uint64_t optimised_calls = 0;
  for (const auto& l : t.loops)
    for (const auto& c : l.body)
      if (c.optimised) {
        optimised_calls += l.iterations;
        optimised_sum += c.sum_s;
        optimised_min = std::min(optimised_min, c.min_s);
        optimised_max = std::max(optimised_max, c.max_s);
        EXPECT_EQ(c.pattern, 0);
        EXPECT_EQ(t.strategies[c.strategy], "rs_nh");
      }
  EXPECT_EQ(optimised_calls, 10u);
  EXPECT_NEAR(optimised_sum, 1.45, 1e-12);
  EXPECT_DOUBLE_EQ(optimised_min, 0.1);
  EXPECT_DOUBLE_EQ(optimised_max, 0.19);
}

TEST(Trace, HundredThousandIdenticalCallsStaySmall) {
  TempDir dir;
  const core::CommMatrix m = small_matrix();
  trace::Writer w;
  std::string err;
  ASSERT_TRUE(w.open(dir.str(), 0, 4, 64 << 20, err)) << err;
  for (int i = 0; i < 3; ++i) w.record_call(call(i, 1e-3, -1, false));
  const std::int32_t h = w.add_pattern(info_for(m, 0, {0, 1}));
  for (int i = 0; i < 100000; ++i) w.record_call(call(3 + i * 1e-3, 1e-4 * (1 + i % 7), h, true));
  ASSERT_TRUE(w.close()) << w.last_error();
  const auto size = fs::file_size(dir.path() / trace::file_name(0));
  EXPECT_LT(size, 1024u) << "loop compression must fold identical calls";
  trace::Trace t;
  ASSERT_TRUE(trace::read_file((dir.path() / trace::file_name(0)).string(), t, err)) << err;
  EXPECT_EQ(total_calls(t), 100003u);
  EXPECT_LE(t.loops.size(), 3u);
}

TEST(Trace, AlternatingPatternsFoldIntoOneLoop) {
  TempDir dir;
  const core::CommMatrix m = small_matrix();
  trace::Writer w;
  std::string err;
  ASSERT_TRUE(w.open(dir.str(), 0, 4, 64 << 20, err)) << err;
  PatternInfo a = info_for(m, 0, {0, 1});
  PatternInfo b = info_for(m, 0, {0, 1});
  b.pattern = 1;
  b.matrix_hash ^= 1;
  const std::int32_t ha = w.add_pattern(a), hb = w.add_pattern(b);
  ASSERT_NE(ha, hb);
  // Three different calls per iteration (two patterns and a second communicator).
  for (int i = 0; i < 50000; ++i) {
    w.record_call(call(i, 1e-4, ha, true));
    w.record_call(call(i + 0.3, 2e-4, hb, true));
    CallInfo c = call(i + 0.6, 3e-4, -1, false);
    c.comm = {2, 7};
    w.record_call(c);
  }
  ASSERT_TRUE(w.close()) << w.last_error();
  EXPECT_LT(fs::file_size(dir.path() / trace::file_name(0)), 1024u);
  trace::Trace t;
  ASSERT_TRUE(trace::read_file((dir.path() / trace::file_name(0)).string(), t, err)) << err;
  ASSERT_EQ(t.loops.size(), 1u);
  EXPECT_EQ(t.loops[0].iterations, 50000u);
  EXPECT_EQ(t.loops[0].body.size(), 3u);
  EXPECT_NEAR(t.loops[0].body[1].sum_s, 50000 * 2e-4, 1e-9);
}

TEST(Trace, LimitTruncatesAndCountsDroppedCalls) {
  TempDir dir;
  trace::Writer w;
  std::string err;
  ASSERT_TRUE(w.open(dir.str(), 1, 2, 4096, err)) << err;
  // Phases cycle with period 17 > kMaxLoopBody: nothing folds, every call costs a record.
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    CallInfo c = call(i, 1e-3, -1, false);
    c.phases = static_cast<std::uint32_t>(i % 17);
    w.record_call(c);
  }
  ASSERT_TRUE(w.close()) << w.last_error();
  EXPECT_TRUE(w.truncated());
  const auto size = fs::file_size(dir.path() / trace::file_name(1));
  EXPECT_LE(size, 4096u);
  trace::Trace t;
  ASSERT_TRUE(trace::read_file((dir.path() / trace::file_name(1)).string(), t, err)) << err;
  EXPECT_TRUE(t.truncated);
  EXPECT_GT(t.calls_dropped, 0u);
  EXPECT_EQ(t.calls_recorded + t.calls_dropped, static_cast<std::uint64_t>(n));
  EXPECT_EQ(total_calls(t), t.calls_recorded);
}

TEST(Trace, UnwritableDirectoryIsOneClearError) {
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path file = dir.path() / "a_file";
  spit(file, {1, 2, 3});
  trace::Writer w;
  std::string err;
  EXPECT_FALSE(w.open((file / "sub").string(), 0, 1, 1 << 20, err));
  EXPECT_NE(err.find("cannot create the trace directory"), std::string::npos) << err;
  EXPECT_NE(err.find((file / "sub").string()), std::string::npos) << err;
  EXPECT_FALSE(w.is_open());
  // Everything after a failed open is a no-op.
  w.record_call(call(0, 1, -1, false));
  EXPECT_EQ(w.add_pattern(info_for(small_matrix(), 0, {0, 1})), -1);
  EXPECT_FALSE(w.close());
}

TEST(Trace, FlushLeavesAReadablePartialFile) {
  TempDir dir;
  const fs::path part = dir.path() / trace::partial_file_name(0);
  {
    trace::Writer w;
    std::string err;
    ASSERT_TRUE(w.open(dir.str(), 0, 1, 1 << 20, err)) << err;
    for (int i = 0; i < 100; ++i) w.record_call(call(i, 1e-3, -1, false));
    ASSERT_TRUE(w.flush());
    for (int i = 0; i < 100; ++i) w.record_call(call(i, 1e-3, -1, false));
    // Destroyed without close: as if the job crashed after the flush.
  }
  ASSERT_TRUE(fs::exists(part));
  EXPECT_FALSE(fs::exists(dir.path() / trace::file_name(0)));
  trace::Trace t;
  std::string err;
  EXPECT_FALSE(trace::read_file(part.string(), t, err));
  EXPECT_NE(err.find("partial"), std::string::npos) << err;
  trace::ReadOptions o;
  o.accept_partial = true;
  ASSERT_TRUE(trace::read_file(part.string(), t, err, o)) << err;
  EXPECT_FALSE(t.complete);
  EXPECT_EQ(total_calls(t), 100u);
  ASSERT_FALSE(t.warnings.empty());
}

// Every kind of bad file: a clear sentence, never a crash.
class BadFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const core::CommMatrix m = small_matrix();
    trace::Writer w;
    std::string err;
    ASSERT_TRUE(w.open(dir_.str(), 1, 4, 1 << 20, err)) << err;
    w.set_meta("k", "v");
    const std::int32_t h = w.add_pattern(info_for(m, 1, {0, 1}));
    for (int i = 0; i < 5; ++i) w.record_call(call(i, 1e-3, h, true, "color"));
    w.record_call(call(9, 1e-3, -1, false));
    ASSERT_TRUE(w.close()) << w.last_error();
    good_ = slurp(dir_.path() / trace::file_name(1));
    ASSERT_GT(good_.size(), trace::kHeaderBytes);
  }
  std::string parse_error(const std::vector<std::uint8_t>& b, bool partial = false) {
    trace::Trace t;
    std::string err;
    trace::ReadOptions o;
    o.accept_partial = partial;
    if (trace::parse(b, t, err, o)) return {};
    EXPECT_FALSE(err.empty());
    return err;
  }
  TempDir dir_;
  std::vector<std::uint8_t> good_;
};

TEST_F(BadFiles, GoodFileParses) { EXPECT_EQ(parse_error(good_), ""); }

TEST_F(BadFiles, Missing) {
  trace::Trace t;
  std::string err;
  EXPECT_FALSE(trace::read_file((dir_.path() / "nope.cstrace").string(), t, err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  EXPECT_NE(err.find("nope.cstrace"), std::string::npos) << err;
}

TEST_F(BadFiles, Empty) { EXPECT_NE(parse_error({}).find("empty file"), std::string::npos); }

TEST_F(BadFiles, TruncatedAtEveryByte) {
  for (std::size_t len = 0; len < good_.size(); ++len) {
    std::vector<std::uint8_t> cut(good_.begin(), good_.begin() + static_cast<long>(len));
    const std::string err = parse_error(cut);
    ASSERT_FALSE(err.empty()) << "a file cut at byte " << len << " must not read as whole";
    if (len > 0) {
      EXPECT_NE(err.find("truncated"), std::string::npos) << len << ": " << err;
    }
    parse_error(cut, /*partial=*/true);  // may succeed with warnings; must not crash
  }
}

TEST_F(BadFiles, WrongMagic) {
  auto b = good_;
  b[1] = 'X';
  EXPECT_NE(parse_error(b).find("not a commsched trace"), std::string::npos);
  EXPECT_NE(parse_error({'h', 'e', 'l', 'l', 'o', '\n'}).find("not a commsched trace"),
            std::string::npos);
}

TEST_F(BadFiles, NewerVersion) {
  auto b = good_;
  b[8] = 2;  // major 2
  const std::string err = parse_error(b);
  EXPECT_NE(err.find("newer commsched"), std::string::npos) << err;
  EXPECT_NE(err.find("2.0"), std::string::npos) << err;
}

TEST_F(BadFiles, NewerMinorVersionRecordsAreSkipped) {
  // Rebuild the file as a format 1.1 writer might: minor 1 and an unknown record (tag 0x40)
  // after the header; the footer then counts one more record.
  using trace::detail::Decoder;
  using trace::detail::Encoder;
  std::vector<std::uint8_t> b(good_.begin(), good_.begin() + trace::kHeaderBytes);
  b[10] = 1;
  const std::uint32_t hcrc = trace::detail::crc32(std::span(b).first(36));
  b.resize(36);
  Encoder(b).u32(hcrc);
  auto put = [&b](std::uint8_t tag, const std::vector<std::uint8_t>& payload) {
    const std::size_t start = b.size();
    Encoder e(b);
    e.u8(tag);
    e.u32(static_cast<std::uint32_t>(payload.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    e.u32(trace::detail::crc32(std::span(b).subspan(start)));
  };
  put(0x40, {1, 2, 3});
  std::size_t pos = trace::kHeaderBytes;
  while (pos < good_.size()) {
    Decoder d{std::span<const std::uint8_t>(good_).subspan(pos, 5)};
    const std::uint8_t tag = d.u8();
    const std::uint32_t len = d.u32();
    std::vector<std::uint8_t> payload(good_.begin() + static_cast<long>(pos) + 5,
                                      good_.begin() + static_cast<long>(pos) + 5 + len);
    if (tag == static_cast<std::uint8_t>(trace::Tag::footer)) {
      Decoder f(payload);
      const std::uint64_t calls = f.varint(), dropped = f.varint();
      const std::uint8_t truncated = f.u8();
      const std::uint64_t records = f.varint();
      const double t_close = f.f64();
      payload.clear();
      Encoder e(payload);
      e.varint(calls);
      e.varint(dropped);
      e.u8(truncated);
      e.varint(records + 1);
      e.f64(t_close);
    }
    put(tag, payload);
    pos += trace::kRecordOverhead + len;
  }
  trace::Trace t;
  std::string err;
  ASSERT_TRUE(trace::parse(b, t, err)) << err;
  EXPECT_EQ(t.minor, 1);
  EXPECT_EQ(t.skipped_records, 1u);
  EXPECT_EQ(total_calls(t), 6u);
  ASSERT_FALSE(t.warnings.empty());
}

TEST_F(BadFiles, CorruptByteIsAChecksumError) {
  for (std::size_t at = trace::kHeaderBytes; at < good_.size(); at += 7) {
    auto b = good_;
    b[at] ^= 0x5a;
    const std::string err = parse_error(b);
    EXPECT_FALSE(err.empty()) << "a flipped byte at " << at << " went unnoticed";
  }
  auto b = good_;
  b[20] ^= 1;  // header
  EXPECT_NE(parse_error(b).find("corrupt header"), std::string::npos);
}

// Golden files, committed: a 2-rank trace written by this format's writer and a matrix file.
// Regenerate with COMMSCHED_REGENERATE_GOLDEN=1 (only when the format version changes).
TEST(TraceGolden, ReadsCommittedTrace) {
  const fs::path golden = fs::path(COMMSCHED_TEST_DATA_DIR) / "traces" / "golden";
  const core::CommMatrix m = core::CommMatrix::from_dense(
      3, std::vector<Bytes>{0, 4096, 128,  //
                            0, 0, 65536,   //
                            2048, 0, 0});
  if (std::getenv("COMMSCHED_REGENERATE_GOLDEN")) {
    for (Rank r = 0; r < 3; ++r) {
      trace::Writer w;
      std::string err;
      ASSERT_TRUE(w.open(golden.string(), r, 3, 1 << 20, err)) << err;
      w.set_meta("commsched_version", "0.1.0");
      w.set_meta("strategy_setting", "auto");
      for (int i = 0; i < 3; ++i) w.record_call(call(1.0 + i * 0.01, 0.002, -1, false));
      PatternInfo p = info_for(m, r, {0, 1});
      p.strategy = "color";
      p.phases = 2;
      const std::int32_t h = w.add_pattern(p);
      for (int i = 0; i < 97; ++i) {
        CallInfo c = call(1.03 + i * 0.01, 0.001 + 0.0001 * (i % 3), h, true, "color");
        c.phases = 2;
        w.record_call(c);
      }
      ASSERT_TRUE(w.close(2.0)) << w.last_error();
    }
  }
  for (Rank r = 0; r < 3; ++r) {
    trace::Trace t;
    std::string err;
    const fs::path f = golden / trace::file_name(r);
    ASSERT_TRUE(trace::read_file(f.string(), t, err)) << err;
    EXPECT_EQ(t.major, 1);
    EXPECT_EQ(t.world_rank, r);
    EXPECT_EQ(t.world_size, 3);
    ASSERT_EQ(t.patterns.size(), 1u);
    EXPECT_EQ(t.patterns[0].matrix_hash, m.hash());
    EXPECT_EQ(std::vector<core::Entry>(m.row(r).begin(), m.row(r).end()), t.patterns[0].row);
    EXPECT_EQ(total_calls(t), 100u);
    EXPECT_EQ(t.strategies[t.patterns[0].strategy], "color");
  }
}
