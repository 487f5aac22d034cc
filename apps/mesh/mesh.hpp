#pragma once
/// The unstructured 2-D mesh behind the bundled programs halo_exchange and cg_solver: made
/// deterministically from a seed, partitioned by METIS, and cut into one rank's subdomain (owned
/// vertices plus the ghosts its edges reach). No MPI here, so the serial reference of each
/// program runs the very same code on a one-part partition.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace commsched::mesh {

struct Mesh {
  std::vector<double> px, py;             ///< vertex coordinates in the unit square
  std::vector<std::array<int, 2>> edges;  ///< (a, b), a < b, sorted: the global edge order
  int vertices() const { return static_cast<int>(px.size()); }
};

/// About `target_vertices` vertices (at least 16): a graded, jittered grid around a circular
/// hole (the "airfoil"), every cell cut by a randomly chosen diagonal, vertices numbered in a
/// random order as a mesh generator's output would be. Same seed, same mesh, on every machine.
Mesh make_mesh(int target_vertices, std::uint64_t seed);

/// Compressed adjacency: the neighbours of v are neighbours[offsets[v] .. offsets[v+1]), sorted.
struct Graph {
  std::vector<int> offsets, neighbours;
  int vertices() const { return static_cast<int>(offsets.size()) - 1; }
};

Graph adjacency(const Mesh& mesh);

/// The coupling of vertices a and b: h / |p_a - p_b| with h = 1 / sqrt(vertices), the nominal
/// spacing, so about 1, larger where the mesh is refined. Symmetric in a and b.
double edge_weight(const Mesh& mesh, int a, int b);

/// METIS_PartGraphKway into `parts` parts (fixed METIS seed): part[v] in [0, parts). On failure
/// returns an empty vector and sets `error`.
std::vector<int> partition(const Graph& graph, int parts, std::string& error);

/// One part of a partitioned graph in local numbering: the owned vertices first (ascending
/// global id), then the ghosts (neighbours owned elsewhere) grouped by owner rank, ascending
/// within a group, so each peer's ghosts are one contiguous block a receive can fill directly.
class Subdomain {
 public:
  struct Peer {
    int rank = 0;
    std::vector<int> send;  ///< local indices of owned vertices this peer needs, ascending global
    int recv_begin = 0;     ///< first local index of this peer's ghost block
    int recv_count = 0;
  };

  Subdomain(const Graph& graph, const std::vector<int>& part, int parts, int rank);
  /// The whole graph as one part, local numbering = global: the serial references use it.
  static Subdomain whole(const Graph& graph) {
    return Subdomain(graph, std::vector<int>(static_cast<std::size_t>(graph.vertices()), 0), 1, 0);
  }

  int owned() const { return owned_; }
  int size() const { return static_cast<int>(global_.size()); }  ///< owned + ghosts
  int global(int local) const { return global_[local]; }
  int local(int global) const { return local_[global]; }  ///< -1: neither owned nor a ghost
  const std::vector<Peer>& peers() const { return peers_; }

 private:
  int owned_ = 0;
  std::vector<int> global_, local_;
  std::vector<Peer> peers_;
};

}  // namespace commsched::mesh
