#pragma once
/// Whole-string numbers: one parser for the settings, the wisdom file, /proc/net/netstat and
/// the analyzer's matrix text, so that each accepts a number only where nothing precedes or
/// follows it.
#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace commsched::core {

/// All of `text` as a T: an integer in `base` (no '+'; '-' only where T is signed) or, for a
/// floating-point T, a decimal number as std::from_chars reads it (nan and inf included: the
/// caller says whether they are valid). nullopt on empty text, anything before or after the
/// number, or a value T cannot hold.
template <typename T>
std::optional<T> parse_whole(std::string_view text, int base = 10) {
  if (text.empty()) return std::nullopt;
  T value{};
  const char* const end = text.data() + text.size();
  std::from_chars_result read{};
  if constexpr (std::is_floating_point_v<T>) {
    read = std::from_chars(text.data(), end, value);
  } else {
    read = std::from_chars(text.data(), end, value, base);
  }
  if (read.ec != std::errc{} || read.ptr != end) return std::nullopt;
  return value;
}

}  // namespace commsched::core
