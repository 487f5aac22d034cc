#include "mesh/program.hpp"

#include <climits>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

#include "program_util.hpp"

namespace commsched::mesh {

const char* const kCommonUsage =
    "  --iterations N  iterations (each: one exchange and the computation)\n"
    "  --vertices V    about V mesh vertices (the count is printed)\n"
    "  --seed S        mesh seed (default 1)\n"
    "  --check         rank 0 also runs the serial computation and compares; exit status 1 if\n"
    "                  the results differ\n"
    "  --time          time the exchange of every iteration (a barrier before each); prints\n"
    "                  time_per_iteration_s (median) and time_stats_s=min,p10,p25,median,p75,\n"
    "                  p90,max\n"
    "  --clock C       wtime (default): per iteration, the slowest rank's MPI_Wtime interval;\n"
    "                  monotonic: per iteration, the makespan on CLOCK_MONOTONIC (latest end\n"
    "                  minus earliest start over all ranks)\n";

using app_util::parse_int;

std::string parse_options(int argc, char** argv, Options& o, bool with_components) {
  for (int a = 1; a < argc; ++a) {
    const std::string_view flag = argv[a];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--check") {
      o.check = true;
    } else if (flag == "--time") {
      o.time = true;
    } else if (a + 1 >= argc) {
      return "unknown option or missing value: " + std::string(flag);
    } else {
      const char* value = argv[++a];
      std::optional<std::int64_t> v;
      if (flag == "--iterations") {
        if (!(v = parse_int(value, 1, 1000000))) return "--iterations needs an integer in 1..1e6";
        o.iterations = static_cast<int>(*v);
      } else if (flag == "--vertices") {
        if (!(v = parse_int(value, 16, 10000000)))
          return "--vertices needs an integer in 16..1e7";
        o.vertices = static_cast<int>(*v);
      } else if (flag == "--seed") {
        if (!(v = parse_int(value, 0, LLONG_MAX))) return "--seed needs an integer >= 0";
        o.seed = static_cast<std::uint64_t>(*v);
      } else if (flag == "--components" && with_components) {
        if (!(v = parse_int(value, 1, 64))) return "--components needs an integer in 1..64";
        o.components = static_cast<int>(*v);
      } else if (flag == "--clock") {
        if (std::strcmp(value, "monotonic") == 0) o.monotonic = true;
        else if (std::strcmp(value, "wtime") == 0) o.monotonic = false;
        else return "--clock needs wtime or monotonic";
      } else {
        return "unknown option " + std::string(flag);
      }
    }
  }
  return {};
}

std::string checksum(const std::vector<double>& values) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  double sum = 0;
  for (double x : values) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    for (int b = 0; b < 8; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
    sum += x;
  }
  char text[80];
  std::snprintf(text, sizeof text, "checksum=%016llx sum=%.17g",
                static_cast<unsigned long long>(h), sum);
  return text;
}

}  // namespace commsched::mesh
