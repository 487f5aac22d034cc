#include "mesh/mesh.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace commsched::mesh {

namespace {

// The grid is graded towards the centre, where the hole is, as airfoil meshes are refined near
// the body: x = u + g sin(2 pi u) / (2 pi) halves the spacing at u = 1/2 for g = 0.5.
constexpr double kGrading = 0.5;
constexpr double kHoleRadius = 0.08;
// Interior points move up to this fraction of a cell in u and v: small enough that no triangle
// turns over, large enough that no two edges have the same length.
constexpr double kJitter = 0.2;
// The share of grid points outside the hole (about 0.92 with the constants above), used to size
// the grid for a requested vertex count.
constexpr double kKeptShare = 0.92;

double graded(double u) {
  return u + kGrading * std::sin(2 * std::numbers::pi * u) / (2 * std::numbers::pi);
}

}  // namespace

Mesh make_mesh(int target_vertices, std::uint64_t seed) {
  // std::mt19937_64's sequence is fixed by the standard (its distributions are not: none used).
  std::mt19937_64 rng(seed);
  auto unit = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };

  const int m = std::max(4, static_cast<int>(std::lround(
                                std::sqrt(std::max(16, target_vertices) / kKeptShare))));
  const double cell = 1.0 / (m - 1);
  auto at = [m](int i, int j) { return static_cast<std::size_t>(j) * m + i; };
  const std::size_t grid_points = static_cast<std::size_t>(m) * m;
  std::vector<double> gx(grid_points), gy(grid_points);
  std::vector<char> outside(grid_points);
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < m; ++i) {
      const double du = (2 * unit() - 1) * kJitter * cell;  // drawn for every point: the
      const double dv = (2 * unit() - 1) * kJitter * cell;  // sequence does not depend on m's edge
      const double u = i * cell + (i > 0 && i < m - 1 ? du : 0.0);
      const double v = j * cell + (j > 0 && j < m - 1 ? dv : 0.0);
      const std::size_t k = at(i, j);
      gx[k] = graded(u);
      gy[k] = graded(v);
      const double rx = gx[k] - 0.5, ry = gy[k] - 0.5;
      outside[k] = rx * rx + ry * ry >= kHoleRadius * kHoleRadius;
    }
  }

  // Two triangles per cell, split along a random diagonal; a triangle touching the hole is dropped.
  std::vector<std::array<std::size_t, 3>> triangles;
  for (int j = 0; j + 1 < m; ++j) {
    for (int i = 0; i + 1 < m; ++i) {
      const std::size_t a = at(i, j), b = at(i + 1, j), c = at(i + 1, j + 1), d = at(i, j + 1);
      const bool along_ac = (rng() & 1) != 0;
      const std::array<std::size_t, 3> halves[2] = {
          along_ac ? std::array{a, b, c} : std::array{a, b, d},
          along_ac ? std::array{a, c, d} : std::array{b, c, d}};
      for (const auto& t : halves)
        if (outside[t[0]] && outside[t[1]] && outside[t[2]]) triangles.push_back(t);
    }
  }

  // Number the points that some triangle uses, in a random order.
  std::vector<int> id(grid_points, -1);
  std::vector<std::size_t> used;
  for (const auto& t : triangles)
    for (std::size_t k : t)
      if (id[k] < 0) {
        id[k] = 0;
        used.push_back(k);
      }
  std::sort(used.begin(), used.end());
  for (std::size_t r = used.size(); r > 1; --r) std::swap(used[r - 1], used[rng() % r]);
  Mesh mesh;
  for (std::size_t k : used) {
    id[k] = mesh.vertices();
    mesh.px.push_back(gx[k]);
    mesh.py.push_back(gy[k]);
  }
  for (const auto& t : triangles) {
    for (int s = 0; s < 3; ++s) {
      const int p = id[t[s]], q = id[t[(s + 1) % 3]];
      mesh.edges.push_back({std::min(p, q), std::max(p, q)});
    }
  }
  std::sort(mesh.edges.begin(), mesh.edges.end());
  mesh.edges.erase(std::unique(mesh.edges.begin(), mesh.edges.end()), mesh.edges.end());
  return mesh;
}

Graph adjacency(const Mesh& mesh) {
  Graph g;
  g.offsets.assign(static_cast<std::size_t>(mesh.vertices()) + 1, 0);
  for (const auto& e : mesh.edges) {
    ++g.offsets[e[0] + 1];
    ++g.offsets[e[1] + 1];
  }
  for (int v = 0; v < mesh.vertices(); ++v) g.offsets[v + 1] += g.offsets[v];
  g.neighbours.resize(static_cast<std::size_t>(g.offsets.back()));
  std::vector<int> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (const auto& e : mesh.edges) {
    g.neighbours[fill[e[0]]++] = e[1];
    g.neighbours[fill[e[1]]++] = e[0];
  }
  for (int v = 0; v < mesh.vertices(); ++v)
    std::sort(g.neighbours.begin() + g.offsets[v], g.neighbours.begin() + g.offsets[v + 1]);
  return g;
}

double edge_weight(const Mesh& mesh, int a, int b) {
  const double h = 1.0 / std::sqrt(static_cast<double>(mesh.vertices()));
  return h / std::hypot(mesh.px[b] - mesh.px[a], mesh.py[b] - mesh.py[a]);
}

std::vector<int> partition(const Graph& graph, int parts, std::string& error) {
  const int n = graph.vertices();
  if (parts < 1 || n < parts) {
    error = "cannot cut " + std::to_string(n) + " vertices into " + std::to_string(parts) +
            " parts";
    return {};
  }
  if (parts == 1) return std::vector<int>(static_cast<std::size_t>(n), 0);
  // METIS takes non-const pointers; idx_t is its index type (32-bit in Debian's build).
  std::vector<idx_t> xadj(graph.offsets.begin(), graph.offsets.end());
  std::vector<idx_t> adjncy(graph.neighbours.begin(), graph.neighbours.end());
  std::vector<idx_t> part(static_cast<std::size_t>(n));
  idx_t nvtxs = n, ncon = 1, nparts = parts, edgecut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same cut on every run
  const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr,
                                     nullptr, &nparts, nullptr, nullptr, options, &edgecut,
                                     part.data());
  if (rc != METIS_OK) {
    error = "METIS_PartGraphKway failed (" + std::to_string(rc) + ")";
    return {};
  }
  return std::vector<int>(part.begin(), part.end());
}

Subdomain::Subdomain(const Graph& graph, const std::vector<int>& part, int parts, int rank)
    : local_(static_cast<std::size_t>(graph.vertices()), -1) {
  std::vector<std::vector<int>> ghosts(static_cast<std::size_t>(parts));
  std::vector<std::vector<int>> sends(static_cast<std::size_t>(parts));
  for (int v = 0; v < graph.vertices(); ++v) {
    if (part[v] != rank) continue;
    local_[v] = size();
    global_.push_back(v);
    for (int k = graph.offsets[v]; k < graph.offsets[v + 1]; ++k) {
      const int w = graph.neighbours[k];
      if (part[w] == rank) continue;
      ghosts[part[w]].push_back(w);
      sends[part[w]].push_back(v);  // v ascends, so duplicates are adjacent
    }
  }
  owned_ = size();
  for (int p = 0; p < parts; ++p) {
    auto& g = ghosts[p];
    if (g.empty()) continue;  // adjacency is symmetric: nothing to receive, nothing to send
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    Peer peer{p, {}, size(), static_cast<int>(g.size())};
    for (int w : g) {
      local_[w] = size();
      global_.push_back(w);
    }
    auto& s = sends[p];
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (int v : s) peer.send.push_back(local_[v]);
    peers_.push_back(std::move(peer));
  }
}

}  // namespace commsched::mesh
