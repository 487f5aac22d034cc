#pragma once
/// Where ranks live: node and cluster of every rank of one communicator. Detected by the MPI
/// side (each rank's processor name) or given by a machine file; planners and the cost model
/// read it.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/types.hpp"

namespace commsched::core {

struct Topology {
  std::vector<int> node_of;     ///< node index of each rank, 0..nodes()-1; empty: one rank a node
  std::vector<int> cluster_of;  ///< cluster index of each rank, 0..clusters()-1; empty: one cluster

  int node(Rank r) const { return node_of.empty() ? r : node_of[static_cast<std::size_t>(r)]; }
  int cluster(Rank r) const {
    return cluster_of.empty() ? 0 : cluster_of[static_cast<std::size_t>(r)];
  }
  int nodes(Rank n) const {
    return node_of.empty() ? n : 1 + *std::max_element(node_of.begin(), node_of.end());
  }
  int clusters() const {
    return cluster_of.empty() ? 1 : 1 + *std::max_element(cluster_of.begin(), cluster_of.end());
  }
};

/// Node of every rank from a key per rank (its host name hashed): ranks with equal keys share
/// a node, numbered in the order of their lowest rank.
inline std::vector<int> node_of_keys(const std::vector<std::uint64_t>& keys) {
  std::vector<int> node_of(keys.size(), 0);
  std::unordered_map<std::uint64_t, int> node;
  for (std::size_t r = 0; r < keys.size(); ++r)
    node_of[r] = node.try_emplace(keys[r], static_cast<int>(node.size())).first->second;
  return node_of;
}

/// `nodes` blocks of consecutive ranks, as even as they divide (COMMSCHED_FAKE_NODES).
inline std::vector<int> blocked_node_of(int size, int nodes) {
  std::vector<int> node_of(static_cast<std::size_t>(std::max(size, 0)), 0);
  for (int r = 0; r < size; ++r)
    node_of[static_cast<std::size_t>(r)] =
        static_cast<int>(static_cast<long long>(r) * std::min(nodes, size) / size);
  return node_of;
}

/// The node layout of ranks with these host keys: `fake` blocks when it is positive
/// (COMMSCHED_FAKE_NODES), else node_of_keys.
inline std::vector<int> node_layout(const std::vector<std::uint64_t>& keys, int fake) {
  return fake > 0 ? blocked_node_of(static_cast<int>(keys.size()), fake) : node_of_keys(keys);
}

}  // namespace commsched::core
