// halo_exchange: an unmodified MPI program (C API only) repeating the edge sweep of paper 000's
// Figure 1 on an unstructured 2-D mesh: for every edge (n1, n2) a flux is computed from the flow
// variables x(n1), x(n2) and accumulated, y(n1) += flux, y(n2) -= flux; then x += dt * y. The mesh
// (apps/mesh) is partitioned by METIS, as paper 000 §2 partitions its airfoil mesh. Every
// iteration posts one MPI_Irecv per neighbouring part for its ghost values, one MPI_Isend per
// neighbouring part of the boundary values that part needs, one MPI_Waitall, then sweeps: the
// same peers, sizes and tag every iteration, the pattern commsched learns. It never links
// libcommsched; the tests and benchmarks preload it.
//
// Owner computes: a rank sweeps every edge with an owned end, in the global edge order, and
// updates only its owned vertices (a cut edge is swept on both sides, so one exchange per
// iteration suffices). Each vertex then sums the same fluxes in the same order as the serial
// sweep, so the result is bitwise the serial one for any rank count, and --check compares exactly.
//
// The flux stands in for an Euler flux, per component: f(x1, x2) = w (g(x2) - g(x1)) with
// g(u) = u + u^3 / 3 and w = mesh::edge_weight, a nonlinear diffusion. It conserves the sum of
// each component and, with dt at 0.8 of the explicit limit, keeps every value within the
// initial range [1, 2].
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "mesh/halo.hpp"
#include "mesh/mesh.hpp"
#include "mesh/program.hpp"
#include "program_util.hpp"

namespace {

using namespace commsched::mesh;

constexpr int kTag = 1;  // every message of the exchange carries the same tag, as codes do
constexpr double kCfl = 0.8;
constexpr double kMaxSlope = 5;  // g'(u) = 1 + u^2 <= 5 on [1, 2], where the values stay

const char* const kUsage =
    "usage: halo_exchange [--iterations N] [--vertices V] [--components C] [--seed S]\n"
    "                     [--check] [--time] [--clock wtime|monotonic] [--help]\n"
    "Edge sweep of paper 000 Fig. 1 on a METIS-partitioned unstructured mesh; every iteration\n"
    "exchanges ghost values with MPI_Irecv/MPI_Isend/MPI_Waitall (defaults: 200 iterations,\n"
    "3000 vertices, 4 components).\n"
    "  --components C  flow variables per vertex, each swept alike (default 4, as 2-D Euler)\n";

struct Edge {
  int a, b;       ///< local indices of the global edge's lower and higher vertex
  double weight;  ///< mesh::edge_weight
};

/// One rank's share of the sweep (the serial reference: the one part of a one-part partition).
struct Sweep {
  std::vector<Edge> edges;  ///< every edge with an owned end, in the global edge order
  int owned = 0, components = 1;
  double dt = 0;
};

double flux_potential(double u) { return u + u * u * u / 3; }

/// The stable step of the whole mesh, so every rank and the serial reference use the same one.
double stable_dt(const Mesh& mesh) {
  std::vector<double> rate(static_cast<std::size_t>(mesh.vertices()), 0.0);
  for (const auto& e : mesh.edges) {
    const double w = edge_weight(mesh, e[0], e[1]);
    rate[e[0]] += w;
    rate[e[1]] += w;
  }
  double max_rate = 0;
  for (double r : rate) max_rate = std::max(max_rate, r);
  return kCfl / (kMaxSlope * max_rate);
}

Sweep make_sweep(const Mesh& mesh, const Subdomain& sub, int components, double dt) {
  Sweep s;
  s.owned = sub.owned();
  s.components = components;
  s.dt = dt;
  auto owned = [&](int local) { return local >= 0 && local < sub.owned(); };
  for (const auto& e : mesh.edges) {
    const int a = sub.local(e[0]), b = sub.local(e[1]);
    if (owned(a) || owned(b)) s.edges.push_back({a, b, edge_weight(mesh, e[0], e[1])});
  }
  return s;
}

/// Owned values from the initial condition (one Gaussian blob per component left of the hole,
/// on a uniform state 1); ghosts NaN until the first exchange, so a missed ghost shows.
std::vector<double> initial_values(const Mesh& mesh, const Subdomain& sub, int components) {
  const std::size_t c = static_cast<std::size_t>(components);
  std::vector<double> x(static_cast<std::size_t>(sub.size()) * c,
                        std::numeric_limits<double>::quiet_NaN());
  for (int i = 0; i < sub.owned(); ++i) {
    const int v = sub.global(i);
    for (std::size_t k = 0; k < c; ++k) {
      const double cy = 0.2 + 0.6 * (static_cast<double>(k) + 0.5) / static_cast<double>(c);
      const double dx = mesh.px[v] - 0.2, dy = mesh.py[v] - cy;
      x[i * c + k] = 1.0 + std::exp(-(dx * dx + dy * dy) / 0.01);
    }
  }
  return x;
}

/// Figure 1's loop, then the explicit update of the owned values.
void step(const Sweep& s, std::vector<double>& x, std::vector<double>& y) {
  const std::size_t c = static_cast<std::size_t>(s.components);
  y.assign(static_cast<std::size_t>(s.owned) * c, 0.0);
  for (const Edge& e : s.edges) {
    const std::size_t a = static_cast<std::size_t>(e.a) * c, b = static_cast<std::size_t>(e.b) * c;
    for (std::size_t k = 0; k < c; ++k) {
      const double flux = e.weight * (flux_potential(x[b + k]) - flux_potential(x[a + k]));
      if (e.a < s.owned) y[a + k] += flux;
      if (e.b < s.owned) y[b + k] -= flux;
    }
  }
  for (std::size_t i = 0; i < y.size(); ++i) x[i] += s.dt * y[i];
}

/// The serial computation on rank 0; "ok" when `parallel` (global order) is bitwise equal.
std::string check_serial(const Mesh& mesh, const Graph& graph, const Options& o, double dt,
                         const std::vector<double>& parallel) {
  const Subdomain whole = Subdomain::whole(graph);
  const Sweep sweep = make_sweep(mesh, whole, o.components, dt);
  std::vector<double> x = initial_values(mesh, whole, o.components), y;
  for (int it = 0; it < o.iterations; ++it) step(sweep, x, y);
  std::size_t differ = 0, first = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &parallel[i], sizeof(double)) != 0 && differ++ == 0) first = i;
  if (differ == 0) return "ok (bitwise equal to the serial sweep)";
  const std::size_t c = static_cast<std::size_t>(o.components);
  char text[200];
  std::snprintf(text, sizeof text,
                "FAILED (%zu of %zu values differ; first: vertex %zu component %zu: %.17g, "
                "serial %.17g)",
                differ, x.size(), first / c, first % c, parallel[first], x[first]);
  return text;
}

int run(int argc, char** argv) {
  Options o;
  o.iterations = 200;
  o.components = 4;
  Setup setup;
  if (int rc = set_up(argc, argv, o, true, "halo_exchange", kUsage, setup); rc >= 0) return rc;
  const Mesh& mesh = setup.mesh;
  const Graph& graph = setup.graph;

  const Subdomain sub(graph, setup.part, setup.size, setup.rank);
  const double dt = stable_dt(mesh);
  const Sweep sweep = make_sweep(mesh, sub, o.components, dt);
  std::vector<double> x = initial_values(mesh, sub, o.components), y;
  HaloExchange halo(sub, o.components, kTag, MPI_COMM_WORLD);
  PhaseTimer timer(o.monotonic);
  for (int it = 0; it < o.iterations; ++it) {
    if (o.time) timer.measure(MPI_COMM_WORLD, [&] { halo.run(x); });
    else halo.run(x);
    step(sweep, x, y);
  }

  const std::vector<double> times = timer.per_iteration(MPI_COMM_WORLD);  // empty untimed
  const HaloExchange::Totals traffic = halo.totals();
  const std::vector<double> solution =
      gather_global(x, sub.owned(), o.components, setup.part, MPI_COMM_WORLD);
  if (setup.rank != 0) return 0;

  std::printf("halo_exchange: ranks=%d vertices=%d edges=%d components=%d iterations=%d %s\n",
              setup.size, mesh.vertices(), static_cast<int>(mesh.edges.size()), o.components,
              o.iterations, checksum(solution).c_str());
  std::printf("halo_exchange: messages_per_iteration=%lld bytes_per_iteration=%lld max_peers=%d "
              "max_rank_bytes=%lld\n",
              traffic.messages, traffic.bytes, traffic.max_peers, traffic.max_rank_bytes);
  return finish("halo_exchange", o.check ? check_serial(mesh, graph, o, dt, solution) : "", times);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
