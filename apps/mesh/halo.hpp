#pragma once
/// The MPI side of the mesh programs: their start (options, mesh, METIS cut) and end, the ghost
/// exchange of a subdomain (one MPI_Irecv and one MPI_Isend per neighbouring part, then
/// MPI_Waitall: the same peers, sizes and tag every time), the per-iteration timing of that
/// exchange, and the gather of the solution in global order.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/mesh.hpp"
#include "mesh/program.hpp"

namespace commsched::mesh {

class HaloExchange {
 public:
  /// `components` doubles per vertex; every message of this exchange carries `tag`.
  HaloExchange(const Subdomain& sub, int components, int tag, MPI_Comm comm);
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  /// Fills the ghost entries of `values` (sub.size() * components, vertex-major) from their
  /// owners: receives first, then the packed sends, then one MPI_Waitall over all of them.
  void run(std::vector<double>& values);

  struct Totals {
    long long messages = 0, bytes = 0;  ///< per run, summed over the ranks
    int max_peers = 0;                  ///< the most neighbouring parts of one rank
    long long max_rank_bytes = 0;       ///< the most bytes one rank sends per exchange
  };
  /// Collective; meaningful on rank 0.
  Totals totals() const;

 private:
  const Subdomain& sub_;
  int components_, tag_;
  MPI_Comm comm_;
  std::vector<double> send_buf_;
  std::vector<MPI_Request> requests_;
};

/// What every mesh program starts from: the same mesh on every rank and its METIS cut.
struct Setup {
  int rank = 0, size = 1;
  Mesh mesh;
  Graph graph;
  std::vector<int> part;  ///< the rank owning each vertex
};

/// Collective. Reads the command line into `o` (holding the program's defaults; rank 0 prints
/// `usage` and the common options for --help or an error), builds the mesh on every rank (a few
/// thousand vertices: cheap) and broadcasts rank 0's METIS cut, from which each rank derives its
/// ghost lists as an inspector would. Returns -1 to go on, else the exit status.
int set_up(int argc, char** argv, Options& o, bool with_components, const char* program,
           const char* usage, Setup& s);

/// Rank 0's closing lines: "<program>: check=<verdict>" unless `verdict` is empty (not checked),
/// then the timing lines. Returns the exit status: 1 if the verdict does not start with "ok".
int finish(const char* program, const std::string& verdict, const std::vector<double>& times);

/// Times one phase per iteration on every rank; summarised at the end as the slowest rank's
/// time per iteration (MPI_Wtime) or, with `monotonic`, the makespan on CLOCK_MONOTONIC (latest
/// end minus earliest start over all ranks: one clock for every process of a host).
class PhaseTimer {
 public:
  explicit PhaseTimer(bool monotonic) : monotonic_(monotonic) {}
  /// Runs `phase` between a barrier (so the interval is the phase alone) and the clock reads.
  template <class Phase>
  void measure(MPI_Comm comm, Phase&& phase) {
    MPI_Barrier(comm);
    starts_.push_back(now());
    phase();
    ends_.push_back(now());
  }
  /// Collective. Per-iteration times on rank 0 (empty elsewhere, and when nothing was measured).
  std::vector<double> per_iteration(MPI_Comm comm) const;

 private:
  double now() const;
  bool monotonic_;
  std::vector<double> starts_, ends_;
};

/// Collective. Rank 0 gets every rank's owned values (`components` per vertex, in Subdomain's
/// order) placed by global vertex id; other ranks get an empty vector. `part`: Setup::part.
std::vector<double> gather_global(const std::vector<double>& values, int owned, int components,
                                  const std::vector<int>& part, MPI_Comm comm);

}  // namespace commsched::mesh
