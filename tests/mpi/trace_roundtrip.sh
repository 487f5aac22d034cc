#!/usr/bin/env bash
# MPI round trip of COMMSCHED_TRACE: runs irregular_exchange (neighbors pattern, whose matrix is
# known in closed form: rank i sends UNIT bytes to i+1, ..., i+DEGREE mod n) preloaded with a
# trace directory, then checks with commsched-analyze that
#   - every rank wrote a whole trace file (no .part left), small despite many iterations,
#   - the assembled pattern matrix equals the one the program generates,
#   - every rank's calls add up to the iterations the program ran;
#   - with --otf2: commsched-analyze --otf2 writes an archive that otf2-print reads, whose
#     regions, messages and bytes match the traces (otf2_check.py; give a direct strategy).
#     Exits 77 (skipped) after the other checks when otf2-print is missing (Debian otf2-tools).
#
#   trace_roundtrip.sh --lib LIB --analyze ANALYZER --np N --iterations K --strategy ID \
#       [--otf2] -- mpiexec -n N ... irregular_exchange
# (the program's own arguments are added here: --pattern neighbors --degree 2 --unit 256).
set -u
die() { echo "trace_roundtrip: $*" >&2; exit 2; }

lib="" analyze="" np="" iterations=1000 strategy=color otf2=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lib) lib="$2"; shift 2 ;;
    --analyze) analyze="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --strategy) strategy="$2"; shift 2 ;;
    --otf2) otf2=1; shift ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
  esac
done
[[ -f "$lib" && -x "$analyze" && -n "$np" && $# -gt 0 ]] || die "usage: see the header"
degree=2 unit=256

dir="$(mktemp -d)" || die "mktemp failed"
trap 'rm -rf -- "$dir"' EXIT
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^COMMSCHED_' || true)
export COMMSCHED_TRACE="$dir/trace" COMMSCHED_STRATEGY="$strategy"

timeout --kill-after=10 100 env LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" "$@" \
  --pattern neighbors --degree $degree --unit $unit --iterations "$iterations" \
  >"$dir/stdout" 2>"$dir/stderr"
rc=$?
cat "$dir/stdout"; cat "$dir/stderr" >&2
[[ $rc -eq 0 ]] || { echo "trace_roundtrip: FAIL: the job exited with $rc" >&2; exit 1; }
grep -q '^errors=0$' "$dir/stdout" || { echo "trace_roundtrip: FAIL: data errors" >&2; exit 1; }

fail=0
for ((r = 0; r < np; r++)); do
  f="$dir/trace/rank$r.cstrace"
  if [[ ! -f "$f" ]]; then echo "trace_roundtrip: FAIL: no $f" >&2; fail=1; continue; fi
  size=$(stat -c %s "$f")
  echo "trace_roundtrip: rank $r trace: $size bytes for $iterations iterations"
  if [[ $size -gt 204800 ]]; then echo "trace_roundtrip: FAIL: $f over 200 KiB" >&2; fail=1; fi
done
if compgen -G "$dir/trace/*.part" >/dev/null; then
  echo "trace_roundtrip: FAIL: partial files left" >&2; fail=1
fi
"$analyze" "$dir/trace" --csv "$dir/out" || { echo "trace_roundtrip: FAIL: analyzer" >&2; exit 1; }

"${PYTHON:-python3}" - "$dir/out" "$np" "$degree" "$unit" "$iterations" <<'EOF' || fail=1
import csv, sys
prefix, n, degree, unit, iterations = sys.argv[1], *map(int, sys.argv[2:])
with open(prefix + "-matrix.csv") as f:
    rows = list(csv.DictReader(f))
patterns = {r["pattern"] for r in rows}
expected = {(i, (i + k) % n): unit for i in range(n) for k in range(1, degree + 1)}
problems = []
if len(patterns) != 1:
    problems.append(f"expected one pattern, got {sorted(patterns)}")
got = {(int(r["src"]), int(r["dst"])): int(r["bytes"]) for r in rows}
if got != expected:
    problems.append(f"matrix differs: got {sorted(got.items())}, expected {sorted(expected.items())}")
with open(prefix + "-calls.csv") as f:
    calls = list(csv.DictReader(f))
per_rank = {}
for c in calls:
    if c["kind"] == "alltoallv":
        per_rank[int(c["rank"])] = per_rank.get(int(c["rank"]), 0) + int(c["calls"])
for r in range(n):
    if per_rank.get(r, 0) != iterations:
        problems.append(f"rank {r}: {per_rank.get(r, 0)} calls traced, expected {iterations}")
for p in problems:
    print("trace_roundtrip: FAIL:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
[[ $fail -eq 0 ]] || exit 1
echo "trace_roundtrip: ok"
[[ $otf2 -eq 1 ]] || exit 0
command -v otf2-print >/dev/null || { echo "trace_roundtrip: otf2-print not installed: OTF2 skipped"; exit 77; }
"$analyze" "$dir/trace" --otf2 "$dir/otf2" || { echo "trace_roundtrip: FAIL: --otf2" >&2; exit 1; }
otf2-print "$dir/otf2/traces.otf2" >"$dir/otf2.txt" ||
  { echo "trace_roundtrip: FAIL: otf2-print cannot read the archive" >&2; exit 1; }
"${PYTHON:-python3}" "$(dirname "$0")/otf2_check.py" "$dir/out-matrix.csv" "$dir/out-calls.csv" \
  "$dir/otf2.txt" "$np"
