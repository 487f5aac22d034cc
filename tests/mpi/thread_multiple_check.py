"""Checks a report of tests/mpi/thread_multiple.cpp: the job ran at MPI_THREAD_MULTIPLE with the
library active (no reason for every call to run natively), and

  thread_multiple_check.py REPORT [--optimised P] [--learned P] [--comms C] [--bursts-native]

--optimised P: at least P patterns ran optimised; --learned P: at least P patterns were learned
(auto may keep native); --comms C: they span at least C communicators (the main thread's and
each thread's own); --bursts-native: the report says why Isend/Irecv bursts ran natively, and
no burst was watched or substituted.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("report")
ap.add_argument("--optimised", type=int, default=0)
ap.add_argument("--learned", type=int, default=0)
ap.add_argument("--comms", type=int, default=0)
ap.add_argument("--bursts-native", action="store_true")
a = ap.parse_args()
r = json.load(open(a.report))
pats = [p for p in r.get("patterns", []) if p.get("pattern", 0) >= 0]
optimised = [p for p in pats if p.get("calls_optimised", 0) > 0]
counted = optimised if a.optimised else pats
comms = {p["comm"] for p in counted}
errors = []
if r.get("thread_level") != "multiple":
    errors.append(f"thread_level {r.get('thread_level')!r}, expected 'multiple'")
if r.get("native_reason"):
    errors.append(f"every call ran natively: {r['native_reason']}")
if len(optimised) < a.optimised:
    errors.append(f"{len(optimised)} patterns ran optimised, expected at least {a.optimised}")
if len(pats) < a.learned:
    errors.append(f"{len(pats)} patterns learned, expected at least {a.learned}")
if len(comms) < a.comms:
    errors.append(f"patterns on {len(comms)} communicators, expected at least {a.comms}")
if a.bursts_native:
    if "MPI_THREAD_MULTIPLE" not in r.get("burst_native_reason", ""):
        errors.append(f"burst_native_reason {r.get('burst_native_reason')!r} does not name "
                      "MPI_THREAD_MULTIPLE")
    if r.get("burst_level") != "off":
        errors.append(f"burst_level {r.get('burst_level')!r}, expected 'off'")
    watched = [b for b in r.get("bursts", []) if b.get("seen") or b.get("substituted")]
    if watched:
        errors.append(f"{len(watched)} burst patterns watched or substituted")
print(f"thread_multiple_check: thread_level={r.get('thread_level')} patterns={len(pats)} "
      f"optimised={len(optimised)} comms={len(comms)} "
      f"burst_native_reason={r.get('burst_native_reason')!r}")
for e in errors:
    print("thread_multiple_check: FAIL " + e)
sys.exit(1 if errors else 0)
