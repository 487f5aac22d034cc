// cg_solver: an unmodified MPI program (C API only) running a fixed number of conjugate-gradient
// iterations on A x = b, A the graph Laplacian (weights mesh::edge_weight) of an unstructured 2-D
// mesh (apps/mesh) plus a diagonal shift, so symmetric positive definite, its rows distributed by
// a METIS partition.
// Every sparse matrix-vector product first fills the ghost entries of the direction vector: one
// MPI_Irecv and one MPI_Isend per neighbouring part (the irregular halo of the partition, the
// same peers, sizes and tag every iteration), then one MPI_Waitall; the two dot products of an
// iteration are MPI_Allreduce sums. Paper 002 schedules this CG pattern on the CM-5. It never
// links libcommsched; the tests and benchmarks preload it.
//
// A fixed iteration count keeps the output deterministic for a given rank count. The rows sum
// their entries in the serial order, but the dot products sum per rank first, so results depend
// on the rank count in the last bits, and CG amplifies that while it converges (up to 4e-10
// relative at 100 iterations on 2-8 ranks; 2e-15 once converged). --check solves serially on
// rank 0 and allows a relative 1e-6: a wrong or stale ghost value moves the result far more.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "mesh/halo.hpp"
#include "mesh/mesh.hpp"
#include "mesh/program.hpp"
#include "program_util.hpp"

namespace {

using namespace commsched::mesh;

constexpr int kTag = 2;         // every message of the exchange carries the same tag
constexpr double kShift = 0.1;  // A = L + kShift I: condition number a few hundred
constexpr double kCheckTolerance = 1e-6;

const char* const kUsage =
    "usage: cg_solver [--iterations N] [--vertices V] [--seed S] [--check] [--time]\n"
    "                 [--clock wtime|monotonic] [--help]\n"
    "Conjugate gradient on a METIS-partitioned mesh Laplacian; every matrix-vector product\n"
    "exchanges ghost entries with MPI_Irecv/MPI_Isend/MPI_Waitall (defaults: 100 iterations,\n"
    "3000 vertices).\n";

/// Owned rows of A in local numbering; columns are local indices (owned or ghost).
struct Rows {
  int owned = 0, columns = 0;
  std::vector<int> offsets, cols;
  std::vector<double> vals, diag;
};

Rows make_rows(const Mesh& mesh, const Graph& graph, const Subdomain& sub) {
  Rows rows;
  rows.owned = sub.owned();
  rows.columns = sub.size();
  rows.offsets.push_back(0);
  for (int i = 0; i < sub.owned(); ++i) {
    const int v = sub.global(i);
    double diag = kShift;
    for (int k = graph.offsets[v]; k < graph.offsets[v + 1]; ++k) {  // ascending global id
      const int w = graph.neighbours[k];
      const double weight = edge_weight(mesh, v, w);
      rows.cols.push_back(sub.local(w));
      rows.vals.push_back(-weight);
      diag += weight;
    }
    rows.diag.push_back(diag);
    rows.offsets.push_back(static_cast<int>(rows.cols.size()));
  }
  return rows;
}

void multiply(const Rows& a, const std::vector<double>& p, std::vector<double>& q) {
  q.resize(static_cast<std::size_t>(a.owned));
  for (int i = 0; i < a.owned; ++i) {
    double s = a.diag[i] * p[i];
    for (int k = a.offsets[i]; k < a.offsets[i + 1]; ++k) s += a.vals[k] * p[a.cols[k]];
    q[i] = s;
  }
}

double local_dot(const std::vector<double>& u, const std::vector<double>& v, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += u[i] * v[i];
  return s;
}

std::vector<double> right_hand_side(const Mesh& mesh, const Subdomain& sub) {
  std::vector<double> b;
  for (int i = 0; i < sub.owned(); ++i) {
    const int v = sub.global(i);
    b.push_back(0.5 + mesh.px[v] - 2 * mesh.py[v] * mesh.py[v]);
  }
  return b;
}

struct Solution {
  std::vector<double> x;  ///< owned entries, then room for the ghosts
  double residual = 0;    ///< ||b - A x|| / ||b||, computed afresh (not the recurrence)
};

/// `iterations` CG steps from x = 0. `exchange(v)` fills v's ghost entries; `sum(s)` adds a
/// rank's partial sum over all ranks. The serial reference passes no-ops for both.
template <class Exchange, class Sum>
Solution solve(const Rows& a, const std::vector<double>& b, int iterations, Exchange&& exchange,
               Sum&& sum) {
  const int n = a.owned;
  const std::size_t columns = static_cast<std::size_t>(a.columns);
  Solution out;
  out.x.assign(columns, 0.0);
  std::vector<double> r = b, q;
  std::vector<double> p(columns, std::numeric_limits<double>::quiet_NaN());  // ghosts: exchange
  std::copy(r.begin(), r.end(), p.begin());
  const double bb = sum(local_dot(b, b, n));
  double rr = bb;
  for (int it = 0; it < iterations; ++it) {
    exchange(p);
    multiply(a, p, q);
    const double alpha = rr / sum(local_dot(p, q, n));
    for (int i = 0; i < n; ++i) {
      out.x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_next = sum(local_dot(r, r, n));
    if (rr_next == 0) break;  // exact: every rank holds the same sum, so all stop together
    const double beta = rr_next / rr;
    rr = rr_next;
    for (int i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
  }
  exchange(out.x);
  multiply(a, out.x, q);
  for (int i = 0; i < n; ++i) r[i] = b[i] - q[i];
  out.residual = std::sqrt(sum(local_dot(r, r, n)) / bb);
  return out;
}

/// The serial solve on rank 0; "ok ..." when `parallel` (global order) is within tolerance.
std::string check_serial(const Mesh& mesh, const Graph& graph, int iterations,
                         const std::vector<double>& parallel) {
  const Subdomain whole = Subdomain::whole(graph);
  const Solution serial = solve(
      make_rows(mesh, graph, whole), right_hand_side(mesh, whole), iterations,
      [](std::vector<double>&) {}, [](double s) { return s; });
  double diff = 0, scale = 0;
  bool finite = true;  // a NaN (an unfilled ghost) would slip through std::max
  for (std::size_t i = 0; i < parallel.size(); ++i) {
    finite = finite && std::isfinite(parallel[i]);
    diff = std::max(diff, std::abs(parallel[i] - serial.x[i]));
    scale = std::max(scale, std::abs(serial.x[i]));
  }
  const double relative = finite ? diff / scale : std::numeric_limits<double>::quiet_NaN();
  char text[120];
  std::snprintf(text, sizeof text, "%s (max relative difference %.3g from the serial solve)",
                relative <= kCheckTolerance ? "ok" : "FAILED", relative);
  return text;
}

int run(int argc, char** argv) {
  Options o;
  o.iterations = 100;
  Setup setup;
  if (int rc = set_up(argc, argv, o, false, "cg_solver", kUsage, setup); rc >= 0) return rc;
  const Mesh& mesh = setup.mesh;
  const Graph& graph = setup.graph;

  const Subdomain sub(graph, setup.part, setup.size, setup.rank);
  const Rows rows = make_rows(mesh, graph, sub);
  HaloExchange halo(sub, 1, kTag, MPI_COMM_WORLD);
  PhaseTimer timer(o.monotonic);
  int exchanges = 0;
  auto exchange = [&](std::vector<double>& v) {
    // The last exchange (of x, for the residual) is not an iteration's: left untimed.
    if (o.time && exchanges++ < o.iterations) timer.measure(MPI_COMM_WORLD, [&] { halo.run(v); });
    else halo.run(v);
  };
  auto sum = [](double s) {
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return s;
  };
  const Solution result = solve(rows, right_hand_side(mesh, sub), o.iterations, exchange, sum);

  const std::vector<double> times = timer.per_iteration(MPI_COMM_WORLD);  // empty untimed
  const HaloExchange::Totals traffic = halo.totals();
  const std::vector<double> x = gather_global(result.x, sub.owned(), 1, setup.part, MPI_COMM_WORLD);
  if (setup.rank != 0) return 0;

  std::printf("cg_solver: ranks=%d unknowns=%d nonzeros=%d iterations=%d residual=%.17g %s\n",
              setup.size, mesh.vertices(),
              mesh.vertices() + static_cast<int>(graph.neighbours.size()), o.iterations,
              result.residual, checksum(x).c_str());
  std::printf("cg_solver: messages_per_iteration=%lld bytes_per_iteration=%lld max_peers=%d "
              "max_rank_bytes=%lld\n",
              traffic.messages, traffic.bytes, traffic.max_peers, traffic.max_rank_bytes);
  return finish("cg_solver", o.check ? check_serial(mesh, graph, o.iterations, x) : "", times);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
