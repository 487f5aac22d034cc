#!/usr/bin/env bash
# MPI_Ialltoallv: MPI's own against the library's engine (COMMSCHED_NONBLOCKING eager, shift,
# shift with a window of 4), A/B interleaved, on the emulated cluster. Run it inside
# netns_cluster.sh, which sets CS_MPIRUN:
#
#   bash apps/bench/netns_cluster.sh --queue 65536 --rto-min 5ms --build build -- \
#     bash apps/bench/nonblocking_ab.sh --build build [--rounds 3] [--iterations 12]
#
# Each round runs every (pattern, computation, mode) once: 16 ranks of irregular_exchange
# --call ialltoallv, the computation (--compute-us) between each call's start and its wait.
# Prints one line per run (the median time per call from start to wait, over ranks' longest),
# then per (pattern, computation, mode) the median over rounds and its ratio to MPI's own
# (above 1: the engine is faster).
set -u
build=build rounds=3 iterations=12
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    *) echo "nonblocking_ab: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "${CS_MPIRUN:-}" ]] || { echo "nonblocking_ab: run inside netns_cluster.sh" >&2; exit 2; }
build=$(cd "$build" && pwd)
exe="$build/apps/irregular_exchange"
lib=$(ls "$build"/wrappers/libcommsched.so 2>/dev/null) || { echo "nonblocking_ab: no library in $build" >&2; exit 2; }
patterns=("hotspot --unit 4096" "uniform --unit 4096 --degree 15")
computes=(0 50000)
modes=(mpi eager shift shift4)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

for ((round = 1; round <= rounds; ++round)); do
  for pattern in "${patterns[@]}"; do
    for compute in "${computes[@]}"; do
      for mode in "${modes[@]}"; do
        case $mode in
          mpi) env=() ;;
          eager) env=(-x LD_PRELOAD="$lib" -x COMMSCHED_NONBLOCKING=eager) ;;
          shift) env=(-x LD_PRELOAD="$lib" -x COMMSCHED_NONBLOCKING=shift) ;;
          shift4) env=(-x LD_PRELOAD="$lib" -x COMMSCHED_NONBLOCKING=shift
                       -x COMMSCHED_NONBLOCKING_WINDOW=4) ;;
        esac
        # shellcheck disable=SC2086  # the pattern's options split on purpose
        out=$($CS_MPIRUN -np 16 "${env[@]}" "$exe" --call ialltoallv --pattern $pattern \
              --iterations "$iterations" --warmup 2 --compute-us "$compute" 2>&1)
        t=$(grep -o 'time_per_iteration_s=[0-9.e+-]*' <<<"$out" | cut -d= -f2)
        errors=$(grep -o '^errors=[0-9]*' <<<"$out" | cut -d= -f2)
        [[ -n "$t" && "$errors" == 0 ]] || { echo "nonblocking_ab: FAILED: $mode $pattern"; echo "$out" | tail -5; exit 1; }
        echo "round=$round pattern=${pattern%% *} compute_us=$compute mode=$mode s_per_call=$t"
        echo "${pattern%% *} $compute $mode $t" >>"$results"
      done
    done
  done
done

echo "# median over $rounds rounds; ratio: MPI's own time / this mode's"
sort -k1,1 -k2,2n -k3,3 -k4,4g "$results" | awk '
  { key = $1 " " $2 " " $3; v[key, ++n[key]] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END {
    for (i = 1; i <= k; ++i) {
      key = order[i]; c = n[key]
      med[key] = c % 2 ? v[key, (c + 1) / 2] : (v[key, c / 2] + v[key, c / 2 + 1]) / 2
    }
    for (i = 1; i <= k; ++i) {
      key = order[i]; split(key, f, " ")
      base = med[f[1] " " f[2] " mpi"]
      printf "pattern=%s compute_us=%s mode=%s median_s=%.4f ratio=%.2f\n", f[1], f[2], f[3], med[key], base / med[key]
    }
  }'
