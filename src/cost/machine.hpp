#pragma once
/// The machine model: α and β per link class, a shared NIC per node, how inter-cluster links are
/// shared (paper 003 §2.2), and the cluster layout; read from TOML machine files.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/topology.hpp"
#include "core/types.hpp"

namespace commsched::cost {

/// What a machine file may say (README "Machine files"): physical ranges, wide enough for any
/// real machine and narrow enough that no predicted time overflows.
inline constexpr double kMaxAlphaS = 1.0;           ///< alpha and overhead: at most 1 s
inline constexpr double kMaxBetaSPerByte = 1e-3;    ///< every beta: at most 1 ms/byte (1 kB/s)
inline constexpr double kMaxFactor = 1e3;           ///< size factors and rendezvous wait
inline constexpr std::int64_t kMaxMessageBytes = std::int64_t{1} << 40;  ///< min_bytes keys

/// How two ranks are connected, cheapest first.
enum class LinkClass : std::uint8_t { self = 0, node = 1, cluster = 2, inter = 3 };
inline constexpr std::array<std::string_view, 4> kLinkClassNames{"self", "node", "cluster",
                                                                  "inter"};

/// Linear cost of one message on a link: alpha_s + bytes * beta_s_per_byte seconds.
/// `overhead_s` is the part of alpha_s that the sender's processor spends posting the message
/// (LogP's o; a rank posts one message after the other); the rest is latency, which overlaps
/// with the rank's other messages. Negative (the default): all of alpha_s holds both ends'
/// ports, and nothing is charged to the processor.
struct Link {
  double alpha_s = 0.0;
  double beta_s_per_byte = 0.0;
  double overhead_s = -1.0;
  /// Seconds of alpha_s a message costs its rank serially: the overhead (the processor), or
  /// without one all of alpha_s (both ports).
  double port_s() const { return overhead_s < 0.0 ? alpha_s : overhead_s; }
  /// This link with its latency (α − overhead; the overhead is CPU work, not network) scaled
  /// by alpha_factor and its β by beta_factor.
  Link scaled(double alpha_factor, double beta_factor) const {
    Link l = *this;
    const double cpu = overhead_s < 0.0 ? 0.0 : overhead_s;
    l.alpha_s = cpu + (alpha_s - cpu) * alpha_factor;
    l.beta_s_per_byte *= beta_factor;
    return l;
  }
  friend bool operator==(const Link&, const Link&) = default;
};

/// One row of a machine's message-size table ([[size_factor]] in a machine file): a network
/// message (any class but self) of at least `min_bytes` bytes, up to the next row's, costs
/// its link scaled by the row (Link::scaled: o + alpha_factor·(α − o) + bytes·beta_factor·β,
/// o the overhead, 0 if unset). MPI libraries change protocol with the size (eager,
/// rendezvous), and SimGrid SMPI scales a message's latency and bandwidth by piecewise factors
/// of its size (smpi/lat-factor, smpi/bw-factor: beta_factor = 1 / bw-factor), so one α + β·m
/// line cannot fit small and large messages at once.
struct SizeFactor {
  Bytes min_bytes = 0;
  double alpha_factor = 1.0;
  double beta_factor = 1.0;
  friend bool operator==(const SizeFactor&, const SizeFactor&) = default;
};

/// One [[cluster]] entry of a machine file: the nodes whose host name matches one of `hosts`
/// (shell patterns with * and ?), or whose node index lies in [first_node, last_node].
struct ClusterSpec {
  std::string name;
  std::vector<std::string> hosts;
  int first_node = -1;
  int last_node = -1;
  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;
};

struct Machine {
  std::string name;         ///< preset name or file stem
  std::string description;  ///< one line
  std::array<Link, 4> link{};  ///< indexed by LinkClass
  /// Ranks of one node share a NIC: the node's off-node traffic (each direction) is at most
  /// 1 / node_beta bytes per second. 0: no per-node limit.
  double node_beta_s_per_byte = 0.0;
  /// m messages crossing one inter-cluster link direction at once each run S(m) = 1 +
  /// sharing·(m − 1) times slower (003 §2.2; 1: the link's bandwidth is divided among them,
  /// 0: every pair has its own channel).
  double inter_sharing = 1.0;
  /// Memory copy cost (s/byte) of packing forwarded pieces on an intermediate rank.
  double copy_beta_s_per_byte = 0.0;
  /// Rendezvous protocol ([rendezvous] in a machine file): a network message (any class but
  /// self) of at least `rendezvous_bytes` bytes (0: none) is sent only after the receiver's
  /// acknowledgement, which leaves through the receiver's queue behind whatever the receiver is
  /// sending itself. It arrives later than an eager message by rendezvous_wait times the
  /// transfer time (bytes · β) of the receiver's sends of that phase still to leave, at most its
  /// own; the ports are free meanwhile, so a rank with other messages posted keeps sending,
  /// while a phase of one message each waits.
  Bytes rendezvous_bytes = 0;
  double rendezvous_wait = 0.0;
  /// The MPI library's own MPI_Alltoallv posts a send and a receive to every peer, zero bytes
  /// included, in rank order (SimGrid SMPI's does; Open MPI 4.1's basic_linear skips zero
  /// counts): each send costs its rank the link's overhead before the next one is posted.
  bool native_all_peers = false;
  /// The order in which the MPI library's own MPI_Alltoallv posts its sends ([native] order):
  /// false ("ring", the default), rank r + 1 first around the ring (MPICH's scattered
  /// algorithm); true ("rank"), rank 0 first (Open MPI 4.1's basic_linear), so every rank
  /// reaches the low ranks first. all_peers implies rank order.
  bool native_rank_order = false;
  /// Cluster layout: explicit entries, or `cluster_split` equal blocks of nodes, or neither
  /// (one cluster).
  std::vector<ClusterSpec> clusters;
  int cluster_split = 0;
  /// Message-size rows, min_bytes strictly increasing; below the first row (or with none) the
  /// links' α and β apply as given.
  std::vector<SizeFactor> size_factors;

  /// The cost of one message of `bytes` bytes on class c: the link with the size row applied
  /// to its latency (α − overhead) and β; self links as given.
  Link link_for(LinkClass c, Bytes bytes) const {
    if (c == LinkClass::self) return at(c);
    const SizeFactor* row = nullptr;
    for (const SizeFactor& f : size_factors) {
      if (f.min_bytes > bytes) break;
      row = &f;
    }
    return row ? at(c).scaled(row->alpha_factor, row->beta_factor) : at(c);
  }

  const Link& at(LinkClass c) const { return link[static_cast<std::size_t>(c)]; }
  Link& at(LinkClass c) { return link[static_cast<std::size_t>(c)]; }
  friend bool operator==(const Machine&, const Machine&) = default;
};

/// The link class between ranks a and b.
inline LinkClass link_class(const core::Topology& topo, Rank a, Rank b) {
  if (a == b) return LinkClass::self;
  if (topo.node(a) == topo.node(b)) return LinkClass::node;
  if (topo.cluster(a) == topo.cluster(b)) return LinkClass::cluster;
  return LinkClass::inter;
}

/// The built-in machine (config/machines/default.toml holds the same values).
Machine default_machine();

/// Names of the presets compiled in from config/machines/*.toml, "default" first.
std::span<const std::string_view> preset_names();
/// The TOML text of a compiled-in preset; empty when there is none of that name.
std::string_view preset_text(std::string_view name);

/// Loads a preset by name, or a file when `name_or_path` contains '/' or ends in ".toml".
/// Empty: the built-in default. On failure returns false and `error` names the file, the line
/// and the key ("config/machines/x.toml:12: key 'alpha' in [link.node] must be ...");
/// `machine` is then left unchanged.
bool load_machine(std::string_view name_or_path, Machine& machine, std::string& error);

/// Parses TOML text; `file` only names the source in error messages.
bool parse_machine(std::string_view text, std::string_view file, Machine& machine,
                   std::string& error);

/// A machine file that parse_machine reads back to an equal Machine.
std::string to_toml(const Machine& machine);

/// Cluster index of every node, from the machine's layout and each node's host name. Nodes that
/// no [[cluster]] entry matches form one extra cluster after the named ones; clusters nobody
/// lives in are dropped and the rest renumbered in order, so indices are 0..k-1.
std::vector<int> cluster_of_nodes(const Machine& machine, std::span<const std::string> hosts);

/// Topology from each rank's node index and the machine's cluster layout.
core::Topology make_topology(const Machine& machine, std::vector<int> node_of,
                             std::span<const std::string> node_hosts);

}  // namespace commsched::cost
