#!/usr/bin/env bash
# The demo: installs, builds, then runs the bundled irregular_exchange natively and with
# libcommsched.so preloaded, and shows the learned pattern, the strategy chosen and that the
# checksums of all received bytes are identical. A first preloaded run, shown with its log,
# also writes a trace, which commsched-analyze turns into a what-if table and pictures
# (BUILD/demo-*.svg). Then --pairs runs each way, A/B interleaved, as a user runs the job (no
# log, report or trace), give the whole job's MPI_Alltoallv time, native against preloaded,
# learning and trial included: each pair's ratio and their median. The job runs long enough
# for auto's trial to decide (4 ranks on 2 cores; with 8 ranks on 2 cores the program's own
# work between calls is noisier than the candidates' differences, and the trial keeps native
# undecided).
#   apps/demo.sh [--ranks N] [--pattern P] [--strategy S] [--iterations N] [--pairs N]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=4 pattern=random strategy=auto iterations=3000 pairs=5 build="$here/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --pattern) pattern=$2; shift 2 ;;
    --strategy) strategy=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "demo: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$pairs" in ''|*[!0-9]*|0) echo "demo: --pairs needs a positive integer" >&2; exit 2 ;; esac
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
report=$(mktemp)
trace="$build/demo-trace"
trap 'rm -f "$report"' EXIT

run_native() { timeout 300 "${mpirun[@]}" "$app" "${args[@]}"; }
# A user's job: nothing set but the strategy, and the COMMSCHED_* variables given as VAR=VALUE.
run_preloaded() {
  local vars=(COMMSCHED_STRATEGY="$strategy" "$@") fwd=(-x LD_PRELOAD="$lib") kv
  for kv in "${vars[@]}"; do fwd+=(-x "${kv%%=*}"); done
  env "${vars[@]}" timeout 300 "${mpirun[@]}" "${fwd[@]}" "$app" "${args[@]}" 2>&1
}
field() { sed -n "s/^$1=//p" <<<"$2"; }

# First a run that shows what the library does: it logs at info level and writes the report
# and the trace, which cost time of their own, so it is not one of the timed pairs.
rm -rf "$trace"
shown=$(run_preloaded COMMSCHED_REPORT="$report" COMMSCHED_LOG_LEVEL=info COMMSCHED_TRACE="$trace")
echo "== preloaded, with its log, report and trace: COMMSCHED_STRATEGY=$strategy LD_PRELOAD=$lib"
echo "$shown"
echo
sums=("preloaded (shown) $(field checksum "$shown")")

declare -a tn tp
for ((i = 0; i < pairs; i++)); do
  # Alternate which side goes first, so a drift of the machine favours neither.
  for side in $( ((i % 2 == 0)) && echo "native preloaded" || echo "preloaded native"); do
    if [ "$side" = native ]; then
      out=$(run_native)
      if [ "$i" -eq 0 ]; then echo "== native: ${mpirun[*]} $app ${args[*]}"; echo "$out"; echo; fi
      tn[i]=$(field alltoallv_total_s "$out")
    else
      out=$(run_preloaded)
      tp[i]=$(field alltoallv_total_s "$out")
    fi
    sums+=("$side $(field checksum "$out")")
  done
  echo "== pair $((i + 1)) of $pairs, as a user runs it: native ${tn[i]} s, preloaded ${tp[i]} s"
done
echo
chosen=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(", ".join(sorted({p["strategy"] + ((" (" + p["note"] + ")") if p["note"] else "") for p in r["patterns"]})) or "none (no pattern learned)")' "$report")
echo "== strategy chosen (the run shown): $chosen"
python3 - "${tn[*]}" "${tp[*]}" <<'PY'
import statistics, sys
n = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
r = sorted(a / b for a, b in zip(n, p))
span = "" if len(r) == 1 else " (pairs %s)" % ", ".join("%.2f" % x for x in r)
print("== whole job, every MPI_Alltoallv (learning and trial included), %d A/B pair%s: native "
      "%.3f s, preloaded %.3f s (medians); ratio native/preloaded %.2f, the median%s. Above 1: "
      "faster with commsched. Where ranks share cores, one run differs from the next by several "
      "%%." % (len(r), "s" if len(r) > 1 else "", statistics.median(n),
                                    statistics.median(p), statistics.median(r), span))
PY
echo
echo "== commsched-analyze $trace --machine default --svg $build/demo"
"$build/apps/commsched-analyze" "$trace" --machine default --svg "$build/demo"
echo
first=${sums[0]##* }
if [ -n "$first" ] && ! printf '%s\n' "${sums[@]}" | awk '{print $NF}' | grep -vqxF -- "$first"; then
  echo "== result identical: every run, native and preloaded, $first"
else
  echo "== RESULT DIFFERS:" >&2
  printf '   %s\n' "${sums[@]}" >&2
  exit 1
fi
