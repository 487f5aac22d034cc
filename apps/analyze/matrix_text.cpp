#include "analyze/matrix_text.hpp"

#include <istream>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

#include "core/files.hpp"
#include "core/parse.hpp"

namespace commsched::analyze {
namespace {

constexpr std::uint64_t kMaxRanks = 1u << 24;

// Splits a line (comment removed) into whitespace-separated words.
std::vector<std::string_view> words(std::string_view line) {
  if (auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
  std::vector<std::string_view> w;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) w.push_back(line.substr(start, i - start));
  }
  return w;
}

bool to_u64(std::string_view s, std::uint64_t& v) {
  const auto value = core::parse_whole<std::uint64_t>(s);
  if (value) v = *value;
  return value.has_value();
}

}  // namespace

bool parse_matrix_text(std::istream& in, std::string_view name, core::CommMatrix& out,
                       std::string& error) {
  std::string line;
  std::size_t line_no = 0;
  std::uint64_t n = 0;
  bool have_n = false;
  std::vector<std::vector<core::Entry>> rows;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> seen;  // pair -> line
  auto fail = [&](const std::string& what) {
    error = std::string(name) + ":" + std::to_string(line_no) + ": " + what;
    return false;
  };
  while (std::getline(in, line)) {
    ++line_no;
    const auto w = words(line);
    if (w.empty()) continue;
    if (!have_n) {
      if (w.size() != 2 || w[0] != "n" || !to_u64(w[1], n) || n == 0 || n > kMaxRanks)
        return fail("expected 'n N' (the number of ranks, 1 to " + std::to_string(kMaxRanks) +
                    ") before any message line");
      have_n = true;
      rows.resize(static_cast<std::size_t>(n));
      continue;
    }
    std::uint64_t src = 0, dst = 0, bytes = 0;
    if (w.size() != 3 || !to_u64(w[0], src) || !to_u64(w[1], dst) || !to_u64(w[2], bytes))
      return fail("expected 'src dst bytes' (three non-negative integers)");
    if (src >= n || dst >= n)
      return fail("rank " + std::to_string(src >= n ? src : dst) + " outside 0.." +
                  std::to_string(n - 1));
    const auto [it, fresh] = seen.emplace(std::pair(src, dst), line_no);
    if (!fresh)
      return fail("message " + std::to_string(src) + " -> " + std::to_string(dst) +
                  " appears twice (first on line " + std::to_string(it->second) + ")");
    if (bytes != 0)
      rows[static_cast<std::size_t>(src)].push_back({static_cast<Rank>(dst), bytes});
  }
  if (!have_n) {
    error = std::string(name) + ": empty: expected 'n N' and message lines";
    return false;
  }
  core::CommMatrix m(static_cast<Rank>(n));
  for (std::size_t i = 0; i < rows.size(); ++i) m.set_row(static_cast<Rank>(i), std::move(rows[i]));
  out = std::move(m);
  return true;
}

bool read_matrix_text(const std::string& path, core::CommMatrix& out, std::string& error) {
  std::string text;
  if (!core::read_regular_file(path, core::kMaxDataFileBytes, text, error)) return false;
  std::istringstream in(std::move(text));
  return parse_matrix_text(in, path, out, error);
}

void write_matrix_text(std::ostream& out, const core::CommMatrix& m) {
  out << "# commsched communication matrix: src dst bytes\n";
  out << "n " << m.size() << "\n";
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i)) out << i << ' ' << e.peer << ' ' << e.bytes << '\n';
}

}  // namespace commsched::analyze
