#!/usr/bin/env bash
# A rerun with COMMSCHED_WISDOM skips auto's trial and keeps its verdict: the first run's trial
# decides and writes the file; the second run's report must show every pattern taken from the
# file (no time in trial, no candidate call), with the same strategy, and the same results.
#   wisdom_rerun.sh --lib LIB -- LAUNCH...     (LAUNCH: mpiexec ... irregular_exchange ...)
set -u
lib=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lib) lib="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "wisdom_rerun: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$lib" && $# -gt 0 ]] || { echo "wisdom_rerun: usage: see header" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf -- "$work"' EXIT
export TMPDIR="$work"  # Open MPI's session directory, apart from other tests (ctest -j)
# One candidate, one pair per checkpoint and no budget (COMMSCHED_TRIAL_BUDGET=1): the first run
# learns and decides within the job whatever its calls cost on the machine running the test.
export COMMSCHED_CANDIDATES=ac COMMSCHED_TRIAL_CALLS=1 COMMSCHED_TRIAL_BUDGET=1
for n in 1 2; do
  if ! LD_PRELOAD="$lib" COMMSCHED_WISDOM="$work/wisdom" COMMSCHED_REPORT="$work/r$n.json" \
       timeout 120 "$@" >"$work/out$n" 2>"$work/err$n"; then
    echo "wisdom_rerun: FAIL: run $n exited non-zero"; cat "$work/err$n"; exit 1
  fi
done
python3 - "$work" <<'PY'
import json, sys, re
w = sys.argv[1]
r1, r2 = (json.load(open(f"{w}/r{n}.json")) for n in (1, 2))
out = [open(f"{w}/out{n}").read() for n in (1, 2)]
ck = [re.search(r"^checksum=.*$", o, re.M).group(0) for o in out]
fail = []
if ck[0] != ck[1]: fail.append(f"results differ: {ck}")
p1 = {(p["comm"], p["pattern"]): p for p in r1["patterns"]}
decided = {k: p for k, p in p1.items() if p["strategy"] != "undecided" and p["trial_s"] > 0}
if not decided: fail.append("the first run's trial decided nothing (make the job longer)")
for p in r2["patterns"]:
    first = p1.get((p["comm"], p["pattern"]))
    if not first or (p["comm"], p["pattern"]) not in decided: continue
    if not p["from_wisdom"]: fail.append(f"pattern {p['pattern']}: not taken from the wisdom file")
    if p["trial_s"] != 0: fail.append(f"pattern {p['pattern']}: {p['trial_s']} s in trial")
    if p["strategy"] != first["strategy"]:
        fail.append(f"pattern {p['pattern']}: {p['strategy']} after {first['strategy']}")
for f in fail: print("wisdom_rerun: FAIL:", f)
print(f"wisdom_rerun: {len(decided)} verdict(s) kept, {'ok' if not fail else 'failed'}")
sys.exit(1 if fail else 0)
PY
