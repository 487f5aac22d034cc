#!/usr/bin/env bash
# Issue 6 benchmark: halo_exchange and cg_solver on the emulated cluster (apps/bench/
# netns_cluster.sh, one rank per node), natively and preloaded with COMMSCHED_BURSTS=off, =local
# and =collective (COMMSCHED_STRATEGY and COMMSCHED_TRIAL from the environment, default auto and
# 1), runs alternated; prints for each the median over runs of the program's own
# time_per_iteration_s (median over iterations of the exchange makespan on CLOCK_MONOTONIC),
# the ratio native/level, and the bandwidth lower bound (the most bytes one rank sends per
# exchange over its link; tbf burst ignored).
#
#   apps/bench/bench_bursts.sh [--build DIR] [--nodes N] [--repeats R] [--vertices V]
#                              [--iterations I] [-- netns_cluster.sh options...]
# Needs root and tbf like netns_cluster.sh; otherwise prints SKIPPED and exits 0.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/../../build" nodes=8 repeats=5 vertices=200000 iterations=60
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --vertices) vertices="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "bench_bursts: unknown option '$1'" >&2; exit 2 ;;
  esac
done
build="$(cd "$build" && pwd)"
for app in halo_exchange cg_solver; do
  [[ -x "$build/apps/$app" ]] || { echo "SKIPPED: $build/apps/$app not built (METIS missing?)"; exit 0; }
done
inner="$(mktemp)"
trap 'rm -f "$inner"' EXIT
cat >"$inner" <<'INNER'
set -u
build="$1" repeats="$2" vertices="$3" iterations="$4"
lib="$build/wrappers/libcommsched.so"
n=$((CS_NODES * CS_RANKS_PER_NODE))
rate_bits=$(echo "$CS_RATE" | sed 's/mbit$/000000/; s/gbit$/000000000/; s/kbit$/000/')
for app in halo_exchange cg_solver; do
  declare -A times=()
  lb=""
  for ((rep = 0; rep < repeats; rep++)); do
    for level in native off local collective; do
      env=()
      [[ $level != native ]] && env=(-x "LD_PRELOAD=$lib" -x "COMMSCHED_BURSTS=$level"
                                     -x "COMMSCHED_STRATEGY=${COMMSCHED_STRATEGY:-auto}"
                                     -x "COMMSCHED_TRIAL=${COMMSCHED_TRIAL:-1}")
      out=$($CS_MPIRUN -np "$n" "${env[@]}" "$build/apps/$app" --vertices "$vertices" \
              --iterations "$iterations" --time --clock monotonic 2>/dev/null) || {
        echo "bench_bursts: $app $level failed" >&2; continue; }
      t=$(grep -o 'time_per_iteration_s=[0-9.e+-]*' <<<"$out" | cut -d= -f2)
      times[$level]+="$t "
      if [[ -z "$lb" ]]; then
        b=$(grep -o 'max_rank_bytes=[0-9]*' <<<"$out" | cut -d= -f2)
        lb=$(python3 -c "print($b * 8 / $rate_bits)")
        echo "$app: $(grep -o 'messages_per_iteration.*' <<<"$out")"
      fi
    done
  done
  python3 - "$app" "$n" "$lb" "${times[native]}" "${times[off]}" "${times[local]}" \
    "${times[collective]}" <<'PY'
import statistics as st, sys
app, n, lb = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = dict(zip(["native", "off", "local", "collective"],
                [list(map(float, a.split())) for a in sys.argv[4:8]]))
nat = st.median(rows["native"])
print(f"| {app} | {n} | LB {lb*1e3:.3f} ms | " + " | ".join(
    f"{lvl} {st.median(v)*1e3:.3f} ms (x{nat/st.median(v):.2f} vs native, {st.median(v)/lb:.2f} LB)"
    for lvl, v in rows.items()) + " |")
PY
done
INNER
exec bash "$here/netns_cluster.sh" --nodes "$nodes" --ranks-per-node 1 --build "$build" "$@" -- \
  bash "$inner" "$build" "$repeats" "$vertices" "$iterations"
