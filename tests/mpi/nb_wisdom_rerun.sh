#!/usr/bin/env bash
# COMMSCHED_NONBLOCKING=auto with COMMSCHED_WISDOM: a rerun of the same job takes the verdict
# from the file instead of running the trial; a job whose exchange differs does not.
#   nb_wisdom_rerun.sh LIB LAUNCH...     (LAUNCH: mpiexec ... nb_auto_check)
# Run 1 (MPI's own made slower: the trial picks the engine) writes the file; run 2, the same job,
# must say "from COMMSCHED_WISDOM: no trial" for communicator #1 with the same verdict; run 3
# (--neighbor: another call on communicator #1, the engine made slower) must run its own trial
# and reach MPI's own, and the file must then hold both verdicts. Every run's bytes are checked
# against MPI's own by nb_auto_check itself.
set -u
[[ $# -gt 1 ]] || { echo "nb_wisdom_rerun: usage: nb_wisdom_rerun.sh LIB LAUNCH..." >&2; exit 2; }
lib="$1"
shift
# A sanitizer build (COMMSCHED_SANITIZE) sets SANITIZER_RUNTIME: that runtime must come first.
[[ -n "${SANITIZER_RUNTIME:-}" ]] && lib="$SANITIZER_RUNTIME:$lib"
work=$(mktemp -d) || exit 2
trap 'rm -rf -- "$work"' EXIT
export TMPDIR="$work"  # Open MPI's session directory, apart from other tests (ctest -j)
fail() { echo "nb_wisdom_rerun: FAIL: $*"; cat "$work/err"; exit 1; }
run() {  # run ARGS...: one job; its stderr in $work/err
  LD_PRELOAD="$lib" COMMSCHED_NONBLOCKING=auto COMMSCHED_WISDOM="$work/wisdom" \
    timeout 120 "$@" >"$work/out" 2>"$work/err" || fail "exited non-zero: $*"
  grep -Eq "nb_auto_check: [0-9]+ exchanges, 0 mismatches" "$work/out" || fail "bytes differ"
}
verdict='non-blocking auto, communicator #1: ([a-z]+) from call [0-9]+'

run "$@" --slow-native-us 3000
first=$(grep -Eo "$verdict \(time per call" "$work/err" | awk '{print $5}')
[[ "$first" == eager || "$first" == shift ]] || fail "run 1: no trial verdict for the engine"

run "$@" --slow-native-us 3000
grep -Eq "communicator #1: $first from call [0-2] \(from COMMSCHED_WISDOM: no trial\)" \
  "$work/err" || fail "run 2: verdict $first not taken from the file before the trial"

run "$@" --neighbor --slow-engine-us 3000
grep -q "communicator #1: .*COMMSCHED_WISDOM" "$work/err" &&
  fail "run 3: another exchange's verdict reused"
grep -Eq "communicator #1: native from call [0-9]+ \(time per call" "$work/err" ||
  fail "run 3: its own trial did not keep MPI's own"
entries=$(grep -c " nb_" "$work/wisdom")
[[ "$entries" -ge 2 ]] ||
  { cat "$work/wisdom"; fail "the file holds $entries engine verdict(s), not both"; }
echo "nb_wisdom_rerun: $first kept from the file, another exchange tried anew, ok"
