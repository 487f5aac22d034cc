#!/usr/bin/env bash
# An emulated cluster on one machine: one network namespace per node, each joined by a veth pair
# to a Linux bridge (the switch), every host link shaped in both directions with tbf; optionally
# two bridges joined by one shaped link (two clusters, paper 003) and shallow switch-port queues
# with a small TCP rto_min (incast). Runs a command with the cluster up, then removes everything
# it created, on every exit path. Real Open MPI over TCP, launched inside the first namespace
# with an rsh agent that enters the node's namespace (and its own UTS namespace, so each node has
# its own hostname).
#
#   apps/bench/netns_cluster.sh [options] [-- COMMAND ARGS...]
#     --nodes N            namespaces, one per node (default 8)
#     --ranks-per-node R   MPI slots per node (default 2)
#     --rate RATE          host link rate, both directions, tc syntax (default 100mbit)
#     --mtu BYTES          MTU of every link (default 9000)
#     --two-clusters       nodes [0, N/2) on one bridge, the rest on a second; the bridges are
#                          joined by one link shaped at --inter-rate
#     --inter-rate RATE    rate of the inter-cluster link (default 100mbit)
#     --queue BYTES        switch-port queue (bridge -> host tbf limit); default 4000000 (deep);
#                          e.g. 65536 for shallow queues
#     --rto-min TIME       TCP rto_min on every node's route (e.g. 5ms; default: kernel's 200ms)
#     --timeout SECONDS    limit for COMMAND (default 900)
#     --build DIR          build tree (default build-bench next to the repository, else build)
#
# COMMAND runs in the root namespace with these variables set:
#   CS_MPIRUN   a launcher: "$CS_MPIRUN -np N [mpirun options] program args" runs Open MPI
#               across the nodes (program paths must be absolute)
#   CS_NODES, CS_RANKS_PER_NODE, CS_RATE, CS_INTER_RATE, CS_TWO_CLUSTERS (0/1), CS_QUEUE,
#   CS_RTO_MIN, CS_MTU, CS_BURST (tbf bucket, bytes), CS_BUILD
# Without COMMAND: one irregular_exchange run across all slots (a check that the cluster works).
#
# When namespaces cannot be made here (not root, no `ip netns`, no tbf qdisc, no Open MPI), prints
# one line starting with "SKIPPED:" and exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
nodes=8 rpn=2 rate=100mbit mtu=9000 two=0 inter_rate=100mbit queue=4000000 rto_min="" limit=900
build=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --ranks-per-node) rpn=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --mtu) mtu=$2; shift 2 ;;
    --two-clusters) two=1; shift ;;
    --inter-rate) inter_rate=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    --rto-min) rto_min=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "netns_cluster: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ]; then
  build="$here/../build-bench"
  [ -d "$build" ] || build="$here/build"
fi
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")

skip() { echo "SKIPPED: emulated cluster: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
command -v tc >/dev/null || skip "no 'tc' command (iproute2)"
command -v unshare >/dev/null || skip "no 'unshare' command (util-linux)"
mpirun=$(command -v mpirun.openmpi || command -v mpirun || true)
[ -n "$mpirun" ] || skip "no Open MPI mpirun"
[ "$nodes" -ge 2 ] || { echo "netns_cluster: --nodes must be >= 2" >&2; exit 2; }
[ "$two" -eq 0 ] || [ "$nodes" -ge 4 ] || { echo "netns_cluster: --two-clusters needs >= 4 nodes" >&2; exit 2; }

# Unique names per invocation (interface names: at most 15 characters), so concurrent runs on
# the same machine never collide.
p="cs$(printf '%x' $$)"
work=$(mktemp -d "/tmp/${p}.XXXXXX")
created_ns=() created_links=()
cleanup() {
  local rc=$?
  # A second signal (a repeated Ctrl-C, a kill while tearing down) must not stop the teardown
  # halfway and leave namespaces and links behind: ignored from here on.
  trap - EXIT
  trap '' INT TERM HUP
  set +e
  for ns in "${created_ns[@]}"; do  # processes left in our namespaces are ours
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  done
  for l in "${created_links[@]}"; do ip link del "$l" 2>/dev/null; done
  for ns in "${created_ns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Can we make a namespace and a tbf qdisc at all? (Containers often cannot.)
ip netns add "${p}probe" 2>/dev/null || skip "cannot create network namespaces (ip netns add failed)"
created_ns+=("${p}probe")
ip -n "${p}probe" link add "${p}pa" type veth peer name "${p}pb" 2>/dev/null ||
  skip "cannot create veth pairs"
tc -n "${p}probe" qdisc add dev "${p}pa" root tbf rate "$rate" burst 64kb limit 100000 2>/dev/null ||
  skip "no tbf qdisc in this kernel (sch_tbf)"
ip netns del "${p}probe"
created_ns=()

# tbf: a bucket of two MTU-sized packets (at least 16 KiB); limit = queue bytes in front of the
# link. In any interval T a port passes at most burst + rate*T bytes: bench.py's lower bound.
burst=$((mtu * 2 > 16384 ? mtu * 2 : 16384))
shape() {  # shape NETNS_OR_EMPTY DEV RATE LIMIT
  local ns=$1 dev=$2 r=$3 lim=$4
  if [ -n "$ns" ]; then
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$r" burst "$burst" limit "$lim"
  else
    tc qdisc add dev "$dev" root tbf rate "$r" burst "$burst" limit "$lim"
  fi
}

bridges=("${p}b0")
[ "$two" -eq 1 ] && bridges+=("${p}b1")
for b in "${bridges[@]}"; do
  ip link add "$b" type bridge
  created_links+=("$b")
  ip link set "$b" mtu "$mtu"
  ip link set "$b" up
done
if [ "$two" -eq 1 ]; then  # the inter-cluster link, shaped in both directions
  ip link add "${p}x0" mtu "$mtu" type veth peer name "${p}x1" mtu "$mtu"
  created_links+=("${p}x0")
  ip link set "${p}x0" master "${p}b0"
  ip link set "${p}x1" master "${p}b1"
  shape "" "${p}x0" "$inter_rate" 4000000
  shape "" "${p}x1" "$inter_rate" 4000000
  ip link set "${p}x0" up
  ip link set "${p}x1" up
fi

hostfile="$work/hostfile"
: >"$hostfile"
for ((i = 0; i < nodes; i++)); do
  ns="${p}n$i" hv="${p}h$i" addr="10.77.$((i / 200)).$((i % 200 + 1))"
  ip netns add "$ns"
  created_ns+=("$ns")
  ip link add "$hv" mtu "$mtu" type veth peer name "${p}t$i" mtu "$mtu"
  created_links+=("$hv")
  ip link set "${p}t$i" netns "$ns"
  ip -n "$ns" link set "${p}t$i" name eth0
  b="${p}b0"
  [ "$two" -eq 1 ] && [ "$i" -ge $((nodes / 2)) ] && b="${p}b1"
  ip link set "$hv" master "$b"
  shape "" "$hv" "$rate" "$queue"        # switch port -> host: the switch-port queue
  shape "$ns" eth0 "$rate" 4000000       # host -> switch: a deep host queue
  ip link set "$hv" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$addr/16" dev eth0
  ip -n "$ns" link set eth0 up
  if [ -n "$rto_min" ]; then
    ip -n "$ns" route replace 10.77.0.0/16 dev eth0 proto kernel scope link src "$addr" \
      rto_min "$rto_min"
  fi
  echo "n$i slots=$rpn" >>"$hostfile"
done

# The rsh agent: "agent HOST COMMAND..." runs COMMAND in HOST's namespace under HOST's name.
cat >"$work/agent.sh" <<EOF
#!/bin/sh
host=\$1; shift
exec ip netns exec "${p}\$host" unshare --uts sh -c 'hostname "\$0"; exec sh -c "\$*"' "\$host" "\$@"
EOF
cat >"$work/mpirun.sh" <<EOF
#!/bin/sh
exec ip netns exec "${p}n0" unshare --uts sh -c 'hostname n0; exec "\$0" "\$@"' "$mpirun" \\
  --allow-run-as-root --oversubscribe --hostfile "$hostfile" \\
  --mca plm_rsh_agent "$work/agent.sh" --mca btl tcp,self \\
  --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 "\$@"
EOF
chmod +x "$work/agent.sh" "$work/mpirun.sh"

# Wait for every bridge port to forward (no STP on a new bridge, but links come up async).
for ((i = 1; i < nodes; i++)); do
  ip netns exec "${p}n0" ping -c 1 -W 2 "10.77.$((i / 200)).$((i % 200 + 1))" >/dev/null 2>&1 || true
done

export CS_MPIRUN="$work/mpirun.sh" CS_NODES=$nodes CS_RANKS_PER_NODE=$rpn CS_RATE=$rate \
  CS_INTER_RATE=$inter_rate CS_TWO_CLUSTERS=$two CS_QUEUE=$queue CS_RTO_MIN=$rto_min CS_MTU=$mtu \
  CS_BURST=$burst CS_BUILD=$build
echo "[netns_cluster] $nodes nodes x $rpn ranks, $rate links, MTU $mtu, queue $queue B" \
  "$([ "$two" -eq 1 ] && echo "two clusters joined at $inter_rate")" \
  "$([ -n "$rto_min" ] && echo "rto_min $rto_min")" >&2
if [ $# -gt 0 ]; then
  timeout --kill-after=10 "$limit" "$@"
else
  app="$build/apps/irregular_exchange"
  [ -x "$app" ] || { echo "netns_cluster: build first ($app missing)" >&2; exit 2; }
  timeout --kill-after=10 "$limit" "$CS_MPIRUN" -np $((nodes * rpn)) "$app" --pattern uniform \
    --unit 4096 --iterations 20 --warmup 3 --clock monotonic
fi
