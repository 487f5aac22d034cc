#pragma once
/// CommMatrix: the sparse n x n matrix of bytes one Alltoallv moves (COM of paper 000 §2).
#include <span>
#include <vector>

#include "core/types.hpp"

namespace commsched::core {

/// One non-zero entry of a row: `bytes` bytes go to (or come from) `peer`.
struct Entry {
  Rank peer;
  Bytes bytes;
  friend bool operator==(const Entry&, const Entry&) = default;
};

/// Rows are kept sorted by destination and hold only non-zero entries, so memory and
/// every scan are proportional to the non-zeros, never to n^2.
class CommMatrix {
 public:
  CommMatrix() = default;
  explicit CommMatrix(Rank n);

  /// Builds from a dense row-major n*n array (tests, tools); zeros are dropped.
  static CommMatrix from_dense(Rank n, std::span<const Bytes> dense);

  /// Replaces row `src`; entries may come in any order, zero entries are dropped,
  /// duplicate destinations are an error (returns false, row left unchanged).
  bool set_row(Rank src, std::vector<Entry> row);

  Rank size() const { return static_cast<Rank>(rows_.size()); }
  std::span<const Entry> row(Rank src) const { return rows_[static_cast<std::size_t>(src)]; }
  /// Incoming entries of `dst` (peer = source), sorted by source. Built on first use.
  std::span<const Entry> column(Rank dst) const;
  Bytes at(Rank src, Rank dst) const;

  std::size_t nonzeros() const { return nonzeros_; }
  Bytes total_bytes() const { return total_bytes_; }
  /// Most messages any rank sends or receives (Δ of the colouring bound); self messages count.
  std::size_t max_degree() const;
  /// Largest row or column byte sum.
  Bytes max_line_bytes() const;
  /// A hash of the whole matrix, equal on every rank that holds the same matrix.
  std::uint64_t hash() const;

  friend bool operator==(const CommMatrix& a, const CommMatrix& b) { return a.rows_ == b.rows_; }

 private:
  void build_columns() const;

  std::vector<std::vector<Entry>> rows_;
  mutable std::vector<std::vector<Entry>> columns_;
  mutable bool columns_valid_ = false;
  std::size_t nonzeros_ = 0;
  Bytes total_bytes_ = 0;
};

}  // namespace commsched::core
