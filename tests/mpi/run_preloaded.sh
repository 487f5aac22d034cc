#!/usr/bin/env bash
# Runs an MPI launch command with libcommsched preloaded, as a user would, then checks what the
# library reported. Used by tests/mpi/CMakeLists.txt; usable by hand:
#
#   run_preloaded.sh --lib build/wrappers/libcommsched.so --report /tmp/r.json \
#       --set COMMSCHED_STRATEGY=rs_nh --expect-strategy rs_nh \
#       -- mpirun -np 4 ./alltoallv_check
#
# Options (all before "--"):
#   --lib PATH               library to preload (required)
#   --report FILE            sets COMMSCHED_REPORT=FILE (the file is removed before the run)
#   --set VAR=VALUE          sets one COMMSCHED_* variable (repeatable). Every other COMMSCHED_*
#                            variable inherited from the caller is removed, so runs are hermetic.
#   --expect-strategy X      X = a strategy id: some pattern ran optimised with strategy X;
#                            any: some pattern ran optimised; none: no pattern ran optimised
#   --expect-optimised yes|no
#   --require-report         the report must exist and parse (implied by the two above)
#   --expect-warning REGEX   exactly one stderr line matches both /warning/i and REGEX
#   --expect-output REGEX    some stdout line matches REGEX
#   --expect-stderr REGEX    exactly one stderr line matches REGEX (notices, info messages);
#                            may be given more than once, each must hold
#   --expect-patterns N      at least N patterns ran optimised
#   --expect-reason REGEX    the report's native_reason (why every call ran natively) matches
#   --expect-bursts N        at least N Isend/Irecv burst patterns ran substituted (report
#                            "bursts": entries with "substituted" > 0; at level collective,
#                            with "collective" > 0)
#   --schema FILE            the report must validate against the JSON Schema FILE
#                            (validate_report.py; exit 77, a skip, without python3-jsonschema)
#
# LD_PRELOAD is exported to the launcher, which passes its environment on to the ranks it starts
# on this machine (Open MPI's mpirun and MPICH's Hydra both do for local launches); the launcher
# itself never calls MPI_Init, so the library stays inert in it. The command runs under
# `timeout` so a deadlocked schedule fails the test instead of hanging it: 100 s, or
# RUN_PRELOADED_TIMEOUT seconds for a test that runs longer by design.
set -u

die() { echo "run_preloaded: $*" >&2; exit 2; }

lib="" report="" expect_strategy="" expect_optimised="" expect_warning="" expect_output=""
expect_stderr=() expect_patterns=0 expect_bursts=0 expect_reason="" schema=""
require_report=0
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lib) lib="${2-}"; shift 2 ;;
    --report) report="${2-}"; shift 2 ;;
    --set) [[ "${2-}" == COMMSCHED_*=* ]] || die "--set needs COMMSCHED_VAR=VALUE, not '${2-}'"
           sets+=("$2"); shift 2 ;;
    --expect-strategy) expect_strategy="${2-}"; require_report=1; shift 2 ;;
    --expect-optimised) expect_optimised="${2-}"; require_report=1; shift 2 ;;
    --require-report) require_report=1; shift ;;
    --expect-warning) expect_warning="${2-}"; shift 2 ;;
    --expect-output) expect_output="${2-}"; shift 2 ;;
    --expect-stderr) expect_stderr+=("${2-}"); shift 2 ;;
    --expect-patterns) expect_patterns="${2-}"; require_report=1; shift 2 ;;
    --expect-bursts) expect_bursts="${2-}"; require_report=1; shift 2 ;;
    --expect-reason) expect_reason="${2-}"; require_report=1; shift 2 ;;
    --schema) schema="${2-}"; require_report=1; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
  esac
done
[[ $# -gt 0 ]] || die "no command after --"
[[ -n "$lib" ]] || die "--lib is required"
[[ -f "$lib" ]] || die "library '$lib' not found"
[[ -z "$expect_optimised" || "$expect_optimised" == yes || "$expect_optimised" == no ]] \
  || die "--expect-optimised takes yes or no"
if [[ $require_report -eq 1 && -z "$report" ]]; then die "report expectations need --report"; fi

# Hermetic environment: drop inherited COMMSCHED_* settings, then apply ours.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^COMMSCHED_' || true)
for kv in "${sets[@]+"${sets[@]}"}"; do export "${kv%%=*}=${kv#*=}"; done
if [[ -n "$report" ]]; then
  export COMMSCHED_REPORT="$report"
  rm -f -- "$report" 2>/dev/null
fi

tmp="$(mktemp -d)" || die "mktemp failed"
trap 'rm -rf -- "$tmp"' EXIT

echo "run_preloaded: LD_PRELOAD=$lib $(compgen -e | grep '^COMMSCHED_' | while read -r v; do printf '%s=%s ' "$v" "${!v}"; done)"
echo "run_preloaded: $*"
# Launchers started at the same moment (ctest -j) race creating Open MPI's session directory
# under $TMPDIR ("mkdir ... File exists", orte_init fails): give each run its own.
export TMPDIR="$tmp"
# A sanitizer build (COMMSCHED_SANITIZE) sets SANITIZER_RUNTIME: that runtime must come first.
preload="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
[[ -n "${SANITIZER_RUNTIME:-}" ]] && preload="$SANITIZER_RUNTIME:$preload"
run_once() {
  timeout --kill-after=10 "${RUN_PRELOADED_TIMEOUT:-100}" env LD_PRELOAD="$preload" "$@" \
    >"$tmp/stdout" 2>"$tmp/stderr"
}
run_once "$@"
rc=$?
# LeakSanitizer's own thread can crash while it stops the process at exit ("Tracer caught
# signal 11", then "LeakSanitizer has encountered a fatal error"), now and then, with Open MPI's
# threads about: the sanitizer failed, not the program, and it found no leak. Run once more
# then; a leak or memory error it reported still fails. Where the tracer crashes again (a
# loaded machine can make it crash run after run), the last run checks without the leak
# check: the program's results, AddressSanitizer and UBSan still count.
lsan_crashed() {
  [[ $rc -ne 0 ]] && grep -q 'LeakSanitizer has encountered a fatal error' "$tmp/stderr" &&
    ! grep -Eq 'ERROR: (LeakSanitizer: detected|AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error:' "$tmp/stderr"
}
for attempt in 1 2; do
  lsan_crashed || break
  echo "run_preloaded: LeakSanitizer itself failed at exit; running once more" >&2
  sed 's/^/run_preloaded: failed run: /' "$tmp/stderr" | tail -n 5 >&2
  if [[ $attempt -eq 2 ]]; then
    echo "run_preloaded: LeakSanitizer failed twice: this run without the leak check" >&2
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  fi
  run_once "$@"
  rc=$?
done
cat "$tmp/stdout"
cat "$tmp/stderr" >&2

# 77: the program found what it tests missing (an MPI without MPI_THREAD_MULTIPLE) and said so.
if [[ $rc -eq 77 ]]; then
  echo "run_preloaded: skipped: the command exited with 77" >&2
  exit 77
fi

fail=0
if [[ $rc -eq 124 || $rc -eq 137 ]]; then
  echo "run_preloaded: FAIL: timed out (deadlock?)" >&2; fail=1
elif [[ $rc -ne 0 ]]; then
  echo "run_preloaded: FAIL: command exited with $rc" >&2; fail=1
fi

if [[ -n "$expect_output" ]] && ! grep -Eq -- "$expect_output" "$tmp/stdout"; then
  echo "run_preloaded: FAIL: no stdout line matches /$expect_output/" >&2; fail=1
fi

if [[ -n "$expect_warning" ]]; then
  n=$(grep -i 'warning' "$tmp/stderr" | grep -Ec -- "$expect_warning")
  if [[ "$n" -ne 1 ]]; then
    echo "run_preloaded: FAIL: expected exactly 1 warning line matching /$expect_warning/, got $n" >&2
    fail=1
  fi
fi

for regex in "${expect_stderr[@]}"; do
  n=$(grep -Ec -- "$regex" "$tmp/stderr")
  if [[ "$n" -ne 1 ]]; then
    echo "run_preloaded: FAIL: expected exactly 1 stderr line matching /$regex/, got $n" >&2
    fail=1
  fi
done

if [[ -n "$report" && ( $require_report -eq 1 || -e "$report" ) ]]; then
  "${PYTHON:-python3}" - "$report" "$expect_strategy" "$expect_optimised" "$require_report" \
    "$expect_patterns" "$expect_bursts" "$expect_reason" <<'EOF' || fail=1
import json, re, sys
path, strategy, optimised, required, min_patterns, min_bursts, reason = sys.argv[1:8]
try:
    with open(path) as f:
        report = json.load(f)
except FileNotFoundError:
    print(f"run_preloaded: FAIL: no report at {path}", file=sys.stderr)
    sys.exit(1)
except ValueError as e:
    print(f"run_preloaded: FAIL: report {path} is not valid JSON: {e}", file=sys.stderr)
    sys.exit(1)
patterns = report.get("patterns", [])
summary = ", ".join(
    f"{p.get('strategy')}(n={p.get('comm_size')} calls={p.get('calls')} "
    f"optimised={p.get('calls_optimised')})" for p in patterns) or "no patterns"
print(f"run_preloaded: report: strategy_setting={report.get('strategy_setting')} "
      f"patterns: {summary}")
done = [p for p in patterns if (p.get("calls_optimised") or 0) > 0]
problems = []
if strategy == "none" and done:
    problems.append("expected no optimised pattern")
elif strategy == "any" and not done:
    problems.append("expected some optimised pattern")
elif strategy not in ("", "none", "any") and not any(p.get("strategy") == strategy for p in done):
    problems.append(f"expected a pattern optimised with strategy '{strategy}'")
if optimised == "yes" and not done:
    problems.append("expected some optimised pattern")
if optimised == "no" and done:
    problems.append("expected no optimised pattern")
if len(done) < int(min_patterns):
    problems.append(f"expected at least {min_patterns} optimised patterns, got {len(done)}")
bursts = report.get("bursts", [])
# At level collective a pattern counts when some of its bursts ran as collective exchanges.
substituted = [b for b in bursts if (b.get("collective" if b.get("level") == "collective"
                                           else "substituted") or 0) > 0]
if bursts:
    print("run_preloaded: report: bursts: " + ", ".join(
        f"{b.get('level')}(posts={b.get('posts')} seen={b.get('seen')} "
        f"substituted={b.get('substituted')} collective={b.get('collective')})" for b in bursts))
if len(substituted) < int(min_bursts):
    problems.append(f"expected at least {min_bursts} substituted burst patterns, "
                    f"got {len(substituted)}")
if reason and not re.search(reason, report.get("native_reason", "")):
    problems.append(f"native_reason {report.get('native_reason')!r} does not match /{reason}/")
for p in problems:
    print(f"run_preloaded: FAIL: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
fi

if [[ $fail -ne 0 ]]; then exit 1; fi
if [[ -n "$schema" ]]; then
  "${PYTHON:-python3}" "$(dirname "$0")/validate_report.py" "$schema" "$report"
  rc=$?
  [[ $rc -eq 77 ]] && exit 77
  [[ $rc -eq 0 ]] || exit 1
fi
echo "run_preloaded: ok"
exit 0
