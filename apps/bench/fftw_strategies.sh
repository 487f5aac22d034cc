#!/usr/bin/env bash
# FFTW's 3-D transform (apps/bench/fftw3d_mpi.c, 100 forward and backward transforms of 64^3
# points) on the emulated cluster, once per setting: native, then preloaded with the
# COMMSCHED_* variables each setting names. Prints each run's whole wall time, FFTW's own
# transform time and, for preloaded runs, what the report says per pattern (strategy, calls,
# optimised calls, seconds per optimised and per native call). Runs inside netns_cluster.sh:
#
#   flock /tmp/netns.lock apps/bench/netns_cluster.sh --queue 65536 --rto-min 5ms -- \
#     apps/bench/fftw_strategies.sh native auto:- lp_shift:COMMSCHED_STRATEGY=lp_shift native
#
# A setting is NAME (native) or NAME:VAR=VALUE[,VAR=VALUE...] ("-": no variable, the defaults).
# FFTW measures its plan once (untimed, up to 5 tries until its transposes are MPI_Alltoall)
# and every run plans from that wisdom, as `bench.py apps` does. The build is $CS_BUILD.
set -euo pipefail
[ -n "${CS_MPIRUN:-}" ] || { echo "fftw_strategies.sh runs inside netns_cluster.sh" >&2; exit 2; }
build=$CS_BUILD
exe=$build/apps/bench/fftw3d_mpi
lib=$build/wrappers/libcommsched.so
[ -x "$exe" ] || { echo "no $exe (bench.py apps --apps fftw builds it)" >&2; exit 2; }
n=$((CS_NODES * CS_RANKS_PER_NODE))
work=$(mktemp -d /tmp/cs-fftw-strategies-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
for _ in 1 2 3 4 5; do
  rm -f "$work/fftw.wisdom"
  $CS_MPIRUN -np "$n" --wdir "$work" "$exe" 64 1 "$work/fftw.wisdom" > "$work/wisdom.out" 2>&1
  grep -q transposes=alltoall "$work/wisdom.out" && break
done
status=0
for setting in "$@"; do
  name=${setting%%:*}
  extra=()
  if [ "$name" != native ]; then
    vars=${setting#*:}
    [ "$vars" = "$setting" ] && vars=-
    extra=(-x "LD_PRELOAD=$lib" -x "COMMSCHED_REPORT=$work/report.json")
    if [ "$vars" != - ]; then
      IFS=, read -r -a kv <<< "$vars"
      for v in "${kv[@]}"; do extra+=(-x "$v"); done
    fi
  fi
  rm -f "$work/report.json"
  t0=$(date +%s.%N)
  if ! $CS_MPIRUN -np "$n" --wdir "$work" "${extra[@]}" "$exe" 64 100 "$work/fftw.wisdom" \
      > "$work/out.txt" 2>&1; then
    echo "$name: FAILED (exit status $?)"; status=1; continue
  fi
  t1=$(date +%s.%N)
  own=$(grep -o 'transforms_s=[0-9.]*\|transposes=[a-z]*\|fftw3d residual=.*' "$work/out.txt" |
        tr '\n' ' ')
  printf '%s: wall %.2f s  %s\n' "$name" "$(echo "$t1 - $t0" | bc)" "$own"
  if [ "$name" != native ] && [ -f "$work/report.json" ]; then
    /usr/bin/python3 - "$work/report.json" <<'EOF'
import json, sys
for p in json.load(open(sys.argv[1]))["patterns"]:
    opt = p["calls_optimised"]
    per_opt = p["time_optimised_s"] / opt if opt else float("nan")
    print(f"    comm {p['comm']}: {p['strategy']}, {p['calls']} calls, {opt} optimised, "
          f"{per_opt * 1e3:.1f} ms per optimised call, {p['native_per_call_s'] * 1e3:.1f} ms "
          f"per native call")
EOF
  fi
done
exit $status
