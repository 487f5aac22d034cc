#!/usr/bin/env bash
# Runs one launch of a bundled program (natively, or through run_preloaded.sh) and compares the
# program's own result lines with the native run's:
#
#   compare_native.sh --lines REGEX --record FILE  -- COMMAND...   # native: writes them to FILE
#   compare_native.sh --lines REGEX --compare FILE -- COMMAND...   # must print exactly FILE's
#
# COMMAND must exit 0 and print at least one stdout line matching REGEX (an extended regular
# expression); those lines, in order, are the result. Each run gets its own TMPDIR (Open MPI's
# session directory: ctest -j) and a time limit. Prints "compare_native: ok" on success.
set -u
die() { echo "compare_native: $*" >&2; exit 2; }

lines="" record="" compare=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lines) lines="${2-}"; shift 2 ;;
    --record) record="${2-}"; shift 2 ;;
    --compare) compare="${2-}"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
  esac
done
[[ $# -gt 0 ]] || die "no command after --"
[[ -n "$lines" ]] || die "--lines is required"
[[ -n "$record" || -n "$compare" ]] || die "--record or --compare is required"
[[ -z "$record" || -z "$compare" ]] || die "--record and --compare exclude each other"

[[ -z "$record" ]] || rm -f -- "$record"  # a failed native run leaves no stale reference
tmp="$(mktemp -d)" || die "mktemp failed"
trap 'rm -rf -- "$tmp"' EXIT
export TMPDIR="$tmp"
echo "compare_native: $*"
timeout --kill-after=5 115 "$@" >"$tmp/stdout"
rc=$?
cat "$tmp/stdout"
# The lines are compared even when the command failed, so its log shows every problem at once.
fail=0
if [[ $rc -ne 0 ]]; then
  echo "compare_native: FAIL: command exited with $rc" >&2; fail=1
fi
grep -E -- "$lines" "$tmp/stdout" >"$tmp/result"
if [[ ! -s "$tmp/result" ]]; then
  echo "compare_native: FAIL: no stdout line matches /$lines/" >&2; fail=1
elif [[ -n "$record" ]]; then
  if [[ $fail -eq 0 ]]; then
    cp -- "$tmp/result" "$record" || die "cannot write $record"
    echo "compare_native: recorded $(wc -l <"$record") result lines in $record"
  fi
elif [[ ! -f "$compare" ]]; then
  echo "compare_native: FAIL: no native result $compare (its test did not run or failed)" >&2
  fail=1
elif ! diff -- "$compare" "$tmp/result" >"$tmp/diff"; then
  echo "compare_native: FAIL: result differs from the native run (< native, > this run):" >&2
  cat "$tmp/diff" >&2
  fail=1
else
  echo "compare_native: $(wc -l <"$compare") result lines identical to the native run"
fi
[[ $fail -eq 0 ]] || exit 1
echo "compare_native: ok"
