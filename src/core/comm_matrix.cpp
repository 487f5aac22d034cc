#include "core/comm_matrix.hpp"

#include <algorithm>

namespace commsched::core {

CommMatrix::CommMatrix(Rank n) : rows_(static_cast<std::size_t>(n < 0 ? 0 : n)) {}

CommMatrix CommMatrix::from_dense(Rank n, std::span<const Bytes> dense) {
  CommMatrix m(n);
  for (Rank i = 0; i < n; ++i) {
    std::vector<Entry> row;
    for (Rank j = 0; j < n; ++j) {
      const Bytes b = dense[static_cast<std::size_t>(i) * static_cast<std::size_t>(n) +
                            static_cast<std::size_t>(j)];
      if (b != 0) row.push_back({j, b});
    }
    m.set_row(i, std::move(row));
  }
  return m;
}

bool CommMatrix::set_row(Rank src, std::vector<Entry> row) {
  if (src < 0 || src >= size()) return false;
  std::erase_if(row, [](const Entry& e) { return e.bytes == 0; });
  std::sort(row.begin(), row.end(), [](const Entry& a, const Entry& b) { return a.peer < b.peer; });
  for (std::size_t k = 0; k < row.size(); ++k) {
    if (row[k].peer < 0 || row[k].peer >= size()) return false;
    if (k > 0 && row[k].peer == row[k - 1].peer) return false;
  }
  auto& old = rows_[static_cast<std::size_t>(src)];
  nonzeros_ -= old.size();
  for (const Entry& e : old) total_bytes_ -= e.bytes;
  old = std::move(row);
  nonzeros_ += old.size();
  for (const Entry& e : old) total_bytes_ += e.bytes;
  columns_valid_ = false;
  return true;
}

void CommMatrix::build_columns() const {
  columns_.assign(rows_.size(), {});
  for (std::size_t i = 0; i < rows_.size(); ++i)
    for (const Entry& e : rows_[i])
      columns_[static_cast<std::size_t>(e.peer)].push_back({static_cast<Rank>(i), e.bytes});
  columns_valid_ = true;
}

std::span<const Entry> CommMatrix::column(Rank dst) const {
  if (!columns_valid_) build_columns();
  return columns_[static_cast<std::size_t>(dst)];
}

Bytes CommMatrix::at(Rank src, Rank dst) const {
  const auto r = row(src);
  const auto it = std::lower_bound(r.begin(), r.end(), dst,
                                   [](const Entry& e, Rank d) { return e.peer < d; });
  return (it != r.end() && it->peer == dst) ? it->bytes : 0;
}

std::size_t CommMatrix::max_degree() const {
  std::size_t d = 0;
  for (Rank i = 0; i < size(); ++i) d = std::max({d, row(i).size(), column(i).size()});
  return d;
}

Bytes CommMatrix::max_line_bytes() const {
  Bytes best = 0;
  for (Rank i = 0; i < size(); ++i) {
    Bytes out = 0, in = 0;
    for (const Entry& e : row(i)) out += e.bytes;
    for (const Entry& e : column(i)) in += e.bytes;
    best = std::max({best, out, in});
  }
  return best;
}

std::uint64_t CommMatrix::hash() const {
  // FNV-1a over (n, src, dst, bytes); the same matrix hashes the same everywhere.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<std::uint64_t>(size()));
  for (Rank i = 0; i < size(); ++i)
    for (const Entry& e : row(i)) {
      mix(static_cast<std::uint64_t>(i));
      mix(static_cast<std::uint64_t>(e.peer));
      mix(e.bytes);
    }
  return h;
}

}  // namespace commsched::core
