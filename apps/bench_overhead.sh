#!/usr/bin/env bash
# Overhead of the preloaded library: irregular_exchange on shared memory, no preload against
# LD_PRELOAD with a given strategy (default native: interception cost only), runs alternated so
# both see the same machine state. Prints the median time per iteration of each and the ratio.
#   apps/bench_overhead.sh [--build DIR] [--ranks 8] [--unit 1024] [--iterations 2000]
#                          [--repeats 7] [--pattern uniform] [--strategy native]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" ranks=8 unit=1024 iterations=2000 repeats=7 pattern=uniform strategy=native
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --pattern) pattern=$2; shift 2 ;;
    --strategy) strategy=$2; shift 2 ;;
    *) echo "bench_overhead: unknown option $1" >&2; exit 2 ;;
  esac
done
lib="$build/wrappers/libcommsched.so"
app="$build/apps/irregular_exchange"
[ -x "$app" ] && [ -f "$lib" ] || { echo "bench_overhead: build first (cmake --build $build)" >&2; exit 2; }
mpirun=(mpirun.openmpi -np "$ranks" --oversubscribe --mca mpi_yield_when_idle 1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
args=(--pattern "$pattern" --unit "$unit" --iterations "$iterations" --warmup 50)
run() { "$@" "$app" "${args[@]}" 2>/dev/null | sed -n 's/^time_per_iteration_s=//p'; }
native=() preload=()
for ((r = 0; r < repeats; r++)); do
  native+=("$(run timeout 600 "${mpirun[@]}")")
  preload+=("$(COMMSCHED_STRATEGY=$strategy COMMSCHED_LOG_LEVEL=quiet run timeout 600 "${mpirun[@]}" \
    -x LD_PRELOAD="$lib" -x COMMSCHED_STRATEGY -x COMMSCHED_LOG_LEVEL)")
done
python3 - "$strategy" "${native[*]}" "${preload[*]}" <<'PY'
import statistics, sys
strategy, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"no preload        : median {ma*1e6:9.2f} us/iteration  (runs: {' '.join(f'{x*1e6:.1f}' for x in a)})")
print(f"preload {strategy:<10}: median {mb*1e6:9.2f} us/iteration  (runs: {' '.join(f'{x*1e6:.1f}' for x in b)})")
print(f"ratio preload/native: {mb/ma:.3f}")
PY
