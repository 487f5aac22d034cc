#pragma once
/// Predicted time of a Plan on a machine model, and the lower bound no schedule can beat.
///
/// Port model (one-port full duplex, 003 §2.2): each rank sends one message and receives one
/// message at a time; a self message occupies both of its rank's ports. Without an `overhead` a
/// message of link class c holds both ports for α_c + bytes·β_c·S seconds. With one (o_c, LogP's
/// overhead) the sender's processor first spends o_c posting it, one message after the other in
/// core::send_order (the executor's: the next rank first, around the ring); the posted message
/// then holds the ports for bytes·β_c·S and arrives α_c − o_c later (latency overlaps with the
/// next messages; the receiver is not charged, as in SimGrid's smpi/ois). S ≥ 1 is the slowdown
/// of the shared resources it crosses while moving data (S(m) = 1 + sharing·(m − 1) on an
/// inter-cluster link direction carrying m messages; a node's NIC divided among its off-node
/// messages when node_beta is set). Start-ups are never slowed (003 §2.2). A message the machine
/// sends by rendezvous arrives later by rendezvous_wait × its receiver's sends of the phase still
/// to leave (at most its own transfer time), its ports free meanwhile. Forwarded bytes add
/// their copy cost to the start-up (to the overhead where there is one). Phases are loosely
/// synchronous: a rank enters phase k + 1 when its own phase-k messages finished; a message
/// starts once both ends entered its phase (the receive is posted), it is posted, and both ports
/// are free; a sender takes its posted messages of a phase in that order, skipping to the next
/// one whose receiver is busy (greedy list scheduling, so `ac`, which posts everything at once,
/// is the asynchronous schedule of 003 Fig. 2). Barrier plans release all ranks together after
/// each phase, plus ⌈log2 n⌉ start-ups of the slowest class used.
#include <functional>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "core/topology.hpp"
#include "cost/machine.hpp"

namespace commsched::cost {

/// Seconds from the first rank starting to the last rank finishing `plan`.
double predict(const core::Plan& plan, const core::CommMatrix& m, const Machine& machine,
               const core::Topology& topo);

/// The native MPI_Alltoallv, modelled as the `ac` plan: one phase, everything posted at once,
/// each rank's sends in the machine's native order (around the ring, or from rank 0);
/// with the machine's `native_all_peers`, every rank posts to all n − 1 peers in rank order,
/// one overhead each (zero-byte messages included), and takes at least n − 1 overheads.
double predict_native(const core::CommMatrix& m, const Machine& machine,
                      const core::Topology& topo);

/// The library's agreement before every planned call (an allreduce of a few doubles, which MPI
/// libraries run by recursive doubling): ⌈log2 n⌉ rounds, round k pairing r with r XOR 2^k and
/// lasting the slowest such pair's start-up. A plan pays it on every call; a pattern running
/// native on one call in kNativeAgreeEvery.
double agreement_time(Rank n, const Machine& machine, const core::Topology& topo);

/// Bytes of each agreement message (4 doubles), for the machine's size table.
inline constexpr Bytes kAgreementBytes = 32;

/// A pattern the library runs natively agrees with the other ranks once in this many calls.
inline constexpr int kNativeAgreeEvery = 256;

/// The time per call of `plan` as the library runs it (null: native): a plan after the per-call
/// agreement, native agreeing once in kNativeAgreeEvery calls. What `auto` ranks by.
double predict_call(const core::Plan* plan, const core::CommMatrix& m, const Machine& machine,
                    const core::Topology& topo);
/// The same with the agreement's time given (agreement_time(m.size(), machine, topo)), for a
/// caller that predicts many plans of one matrix.
double predict_call(const core::Plan* plan, const core::CommMatrix& m, const Machine& machine,
                    const core::Topology& topo, double agreement_s);

/// A bound no plan's predicted time goes below: the busiest rank's bytes out or in over its
/// cheapest link (forwarding may use a cheaper first hop) plus one start-up, a node's off-node
/// bytes over its NIC, and a cluster's outgoing bytes over its shared inter-cluster links.
double lower_bound(const core::CommMatrix& m, const Machine& machine, const core::Topology& topo);

/// α + β·bytes of the link between src and dst: the expected-time matrix of 003 §4.1, ready for
/// plan::Options::pair_time. Holds copies of `machine` and `topo`.
std::function<double(Rank, Rank, Bytes)> pair_time(const Machine& machine,
                                                   const core::Topology& topo);

}  // namespace commsched::cost
