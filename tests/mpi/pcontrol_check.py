"""Checks a report after MPI_Pcontrol pauses (tests/mpi/pcontrol.cpp, pcontrol_fortran.F90).

  pcontrol_check.py REPORT --paused N --max-optimised M [--patterns P] [--max-bursts-seen B]

paused_calls must be N (summed over ranks); some pattern ran optimised, and none more than M
times (the calls made outside the pause); with --patterns, exactly P patterns were learned (a
pattern seen only while paused is never learned); with --max-bursts-seen, some Isend/Irecv burst
was substituted and the bursts seen (summed over ranks) are at most B: a paused rank's bursts
are neither learned nor held.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("report")
ap.add_argument("--paused", type=int, required=True)
ap.add_argument("--max-optimised", type=int, required=True)
ap.add_argument("--patterns", type=int)
ap.add_argument("--max-bursts-seen", type=int)
a = ap.parse_args()
r = json.load(open(a.report))
pats = r.get("patterns", [])
errors = []
if r.get("paused_calls") != a.paused:
    errors.append(f"paused_calls {r.get('paused_calls')}, expected {a.paused}")
optimised = [p["calls_optimised"] for p in pats]
if not any(optimised):
    errors.append("no pattern ran optimised outside the pause")
if any(o > a.max_optimised for o in optimised):
    errors.append(f"a pattern ran optimised {max(optimised)} times, more than the "
                  f"{a.max_optimised} calls outside the pause")
if a.patterns is not None and len(pats) != a.patterns:
    errors.append(f"{len(pats)} patterns learned, expected {a.patterns}")
if a.max_bursts_seen is not None:
    bursts = r.get("bursts", [])
    seen = sum(b["seen"] for b in bursts)
    print(f"pcontrol_check: bursts seen={seen} substituted={sum(b['substituted'] for b in bursts)}")
    if not any(b["substituted"] for b in bursts):
        errors.append("no burst substituted outside the pause")
    if seen > a.max_bursts_seen:
        errors.append(f"{seen} bursts seen, more than the {a.max_bursts_seen} made unpaused")
print(f"pcontrol_check: paused_calls={r.get('paused_calls')} patterns={len(pats)} "
      f"optimised={optimised}")
for e in errors:
    print("pcontrol_check: FAIL " + e)
sys.exit(1 if errors else 0)
