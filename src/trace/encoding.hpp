#pragma once
/// Byte-level helpers of the trace format (internal to src/trace and its tests): little-endian
/// fixed-width integers, LEB128 varints, zigzag, CRC-32. The decoder never reads past its end
/// and reports failure instead, so any byte string is safe to decode.
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commsched::trace::detail {

/// CRC-32 (IEEE 802.3, reflected, as zlib's crc32), `seed` chains calls.
inline std::uint32_t crc32(std::span<const std::uint8_t> data, std::uint32_t seed = 0) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = ~seed;
  for (std::uint8_t b : data) c = table[(c ^ b) & 0xffu] ^ (c >> 8);
  return ~c;
}

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1u);
}

/// Appends encoded values to a byte vector.
class Encoder {
 public:
  explicit Encoder(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { fixed(v, 2); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void varint(std::uint64_t v) {
    while (v >= 0x80u) {
      out_.push_back(static_cast<std::uint8_t>(v | 0x80u));
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  void svarint(std::int64_t v) { varint(zigzag(v)); }
  void str(std::string_view s) {
    varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

 private:
  void fixed(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

/// Reads encoded values; after the first failure every read fails (`ok()` turns false) and
/// returns zero, so callers check once at the end of a record.
class Decoder {
 public:
  explicit Decoder(std::span<const std::uint8_t> in) : in_(in) {}
  bool ok() const { return ok_; }
  std::size_t pos() const { return pos_; }
  std::size_t left() const { return ok_ ? in_.size() - pos_ : 0; }
  bool done() const { return ok_ && pos_ == in_.size(); }

  std::uint8_t u8() { return static_cast<std::uint8_t>(fixed(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(fixed(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(fixed(4)); }
  std::uint64_t u64() { return fixed(8); }
  double f64() { return std::bit_cast<double>(u64()); }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok_ || pos_ >= in_.size()) return fail();
      const std::uint8_t b = in_[pos_++];
      // The tenth byte may carry only the top bit of a 64-bit value.
      if (shift == 63 && b > 1) return fail();
      v |= static_cast<std::uint64_t>(b & 0x7fu) << shift;
      if ((b & 0x80u) == 0) return v;
    }
    return fail();
  }
  std::int64_t svarint() { return unzigzag(varint()); }
  std::string str(std::size_t max_len) {
    const std::uint64_t n = varint();
    if (!ok_ || n > max_len || n > in_.size() - pos_) {
      fail();
      return {};
    }
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }

 private:
  std::uint64_t fail() {
    ok_ = false;
    return 0;
  }
  std::uint64_t fixed(int bytes) {
    if (!ok_ || in_.size() - pos_ < static_cast<std::size_t>(bytes)) return fail();
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(in_[pos_++]) << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace commsched::trace::detail
