#!/usr/bin/env bash
# Smoke run of one benchmark tier (CTest label `bench`): a few seconds of apps/bench/bench.py
# --set smoke, then checks every JSON line (all bytes verified, a time, a native baseline, a
# lower bound) and that report.py renders them. Where the tier cannot run here (not root, no
# SimGrid, SMPI not built), bench.py prints one "SKIPPED: ..." line and CTest marks the test
# skipped.
#   tests/bench/smoke.sh netns|smpi BUILD_DIR
set -euo pipefail
tier=$1 build=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
out="$build/bench/$tier-smoke.jsonl"
mkdir -p "$build/bench"
rm -f "$out"
extra=()
[ "$tier" = netns ] && extra=(--nodes 4 --ranks-per-node 2 --repetitions 20 --warmup 4)
log=$(timeout --kill-after=10 110 python3 "$here/apps/bench/bench.py" "$tier" --set smoke \
  --build "$build" --out "$out" --timeout 60 "${extra[@]}" 2>&1) || {
  echo "$log"; echo "smoke: bench.py failed"; exit 1; }
echo "$log"
if grep -q '^SKIPPED:' <<<"$log"; then exit 0; fi
python3 - "$out" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(recs) >= 3, f"expected >= 3 points, got {len(recs)}"
strategies = {r["strategy"] for r in recs}
assert "native" in strategies, strategies
for r in recs:
    assert r["errors"] == 0, r
    assert r["time_s"] > 0 and r["lower_bound_s"] and r["lower_bound_s"] > 0, r
    assert r["native_s"] and r["native_s"] > 0, r
    assert r["time_s"] >= 0.5 * r["lower_bound_s"], f"time below the lower bound: {r}"
print(f"smoke: {len(recs)} points, strategies {sorted(strategies)}, all bytes verified")
PY
python3 "$here/apps/bench/report.py" "$out" --md "$build/bench/$tier-smoke.md" \
  --svg-dir "$build/bench/plots"
grep -q '^| ' "$build/bench/$tier-smoke.md"
echo "smoke: report $build/bench/$tier-smoke.md"
