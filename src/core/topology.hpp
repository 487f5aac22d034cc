#pragma once
/// Where ranks live: node and cluster of every rank of one communicator. Detected by the MPI
/// side (MPI_Comm_split_type) or given by a machine file; planners and the cost model read it.
#include <algorithm>
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

}  // namespace commsched::core
