#pragma once
/// The plain text matrix format of `commsched-analyze --matrix FILE`:
///
///   # comments run from '#' to the end of the line; blank lines are ignored
///   n 8              first line that is not a comment: the number of ranks
///   0 1 4096         then one line per message: source rank, destination rank, bytes
///   0 5 128
///   3 3 64           a rank may send to itself
///
/// Ranks are 0..n-1, bytes a non-negative integer (zero lines are ignored); a pair may appear
/// once. Errors name the file and the line.
#include <iosfwd>
#include <string>
#include <string_view>

#include "core/comm_matrix.hpp"

namespace commsched::analyze {

bool parse_matrix_text(std::istream& in, std::string_view name, core::CommMatrix& out,
                       std::string& error);
bool read_matrix_text(const std::string& path, core::CommMatrix& out, std::string& error);
/// Writes `m` in the format above (readable by parse_matrix_text).
void write_matrix_text(std::ostream& out, const core::CommMatrix& m);

}  // namespace commsched::analyze
