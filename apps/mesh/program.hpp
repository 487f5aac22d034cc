#pragma once
/// What halo_exchange and cg_solver share as programs: their command line and the checksum of a
/// solution. No MPI here.
#include <cstdint>
#include <string>
#include <vector>

namespace commsched::mesh {

struct Options {
  int iterations = 100;
  int vertices = 3000;
  std::uint64_t seed = 1;
  int components = 1;      ///< doubles per vertex (halo_exchange's --components)
  bool check = false;      ///< rank 0 also runs the serial computation and compares
  bool time = false;       ///< time the exchange of every iteration
  bool monotonic = false;  ///< --clock monotonic
  bool help = false;
};

/// The options both programs take, for their usage text.
extern const char* const kCommonUsage;

/// Empty on success, else the message for the user. --components is accepted only when
/// `with_components`; `o` holds the program's defaults on entry.
std::string parse_options(int argc, char** argv, Options& o, bool with_components);

/// FNV-1a over the bytes of every double (little-endian) and the plain sum, both in order:
/// "checksum=<16 hex digits> sum=<17 significant digits>".
std::string checksum(const std::vector<double>& values);

}  // namespace commsched::mesh
