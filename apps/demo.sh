#!/usr/bin/env bash
# The demo: installs, builds, then runs the bundled irregular_exchange natively and with
# libcommsched.so preloaded, and shows the learned pattern, the strategy chosen and that the
# checksums of all received bytes are identical. The preloaded run also writes a trace, which
# commsched-analyze turns into a what-if table and pictures (BUILD/demo-*.svg). The job runs
# long enough for auto's trial to decide, and the demo ends with the whole job's MPI_Alltoallv
# time, native against preloaded, learning and trial included.
#   apps/demo.sh [--ranks N] [--pattern P] [--strategy S] [--iterations N]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=8 pattern=random strategy=auto iterations=3000 build="$here/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --pattern) pattern=$2; shift 2 ;;
    --strategy) strategy=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n 2,6p "$0"; exit 0 ;;
    *) echo "demo: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
"$here/apps/install_deps.sh"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target commsched irregular_exchange commsched-analyze >/dev/null
lib="$build/wrappers/libcommsched.so"
app="$build/apps/irregular_exchange"
mpirun=(mpirun.openmpi -np "$ranks")
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
# Oversubscribed ranks yield the core when idle, else 2 cores make timings noise.
mpirun+=(--oversubscribe --mca mpi_yield_when_idle 1)
args=(--pattern "$pattern" --unit 1024 --iterations "$iterations")

echo "== native: ${mpirun[*]} $app ${args[*]}"
native=$(timeout 300 "${mpirun[@]}" "$app" "${args[@]}")
echo "$native"
echo
echo "== preloaded: COMMSCHED_STRATEGY=$strategy LD_PRELOAD=$lib"
report=$(mktemp)
trace="$build/demo-trace"
rm -rf "$trace"
preloaded=$(COMMSCHED_STRATEGY=$strategy COMMSCHED_REPORT=$report COMMSCHED_LOG_LEVEL=info \
  COMMSCHED_TRACE=$trace timeout 300 "${mpirun[@]}" -x LD_PRELOAD="$lib" -x COMMSCHED_STRATEGY \
  -x COMMSCHED_REPORT -x COMMSCHED_LOG_LEVEL -x COMMSCHED_TRACE "$app" "${args[@]}" 2>&1)
echo "$preloaded"
echo
a=$(grep '^checksum=' <<<"$native")
b=$(grep '^checksum=' <<<"$preloaded")
chosen=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(", ".join(sorted({p["strategy"] + ((" (" + p["note"] + ")") if p["note"] else "") for p in r["patterns"]})) or "none (no pattern learned)")' "$report")
rm -f "$report"
echo "== strategy chosen: $chosen"
tn=$(sed -n 's/^alltoallv_total_s=//p' <<<"$native")
tp=$(sed -n 's/^alltoallv_total_s=//p' <<<"$preloaded")
python3 -c 'import sys; n, p = float(sys.argv[1]), float(sys.argv[2]); print("== whole job, every MPI_Alltoallv (learning and trial included): native %.3f s, preloaded %.3f s, ratio native/preloaded %.2f (above 1: faster with commsched; one run each on a shared machine, so a few %% either way is noise)" % (n, p, n / p))' "$tn" "$tp"
echo
echo "== commsched-analyze $trace --machine default --svg $build/demo"
"$build/apps/commsched-analyze" "$trace" --machine default --svg "$build/demo"
echo
if [ -n "$a" ] && [ "$a" = "$b" ]; then
  echo "== result identical: native $a, preloaded $b"
else
  echo "== RESULT DIFFERS: native '$a', preloaded '$b'" >&2
  exit 1
fi
