#include "core/netstat.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/files.hpp"
#include "core/parse.hpp"

namespace commsched::core {
namespace {

// The line that starts at `pos` (without its newline), and `pos` moved past it.
std::string_view next_line(std::string_view text, std::size_t& pos) {
  const std::size_t end = std::min(text.find('\n', pos), text.size());
  const std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  return line;
}

// The next field separated by blanks from `pos` in `line`; empty at the end.
std::string_view next_field(std::string_view line, std::size_t& pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const std::size_t start = pos;
  while (pos < line.size() && line[pos] != ' ') ++pos;
  return line.substr(start, pos - start);
}

}  // namespace

long long parse_tcp_timeouts(std::string_view netstat) {
  constexpr std::string_view kPrefix = "TcpExt:";
  std::size_t pos = 0;
  while (pos < netstat.size()) {
    const std::string_view names = next_line(netstat, pos);
    if (names.substr(0, kPrefix.size()) != kPrefix) continue;
    const std::string_view values = next_line(netstat, pos);
    if (values.substr(0, kPrefix.size()) != kPrefix) return -1;
    std::size_t n = kPrefix.size(), v = kPrefix.size();
    for (;;) {
      const std::string_view name = next_field(names, n);
      const std::string_view value = next_field(values, v);
      if (name.empty() || value.empty()) return -1;
      if (name != "TCPTimeouts") continue;
      const auto count = parse_whole<long long>(value);
      return count && *count >= 0 ? *count : -1;
    }
  }
  return -1;
}

long long tcp_timeouts(const std::string& path) {
  std::string text, error;
  if (!read_regular_file(path, std::size_t{64} << 10, text, error)) return -1;
  return parse_tcp_timeouts(text);
}

}  // namespace commsched::core
