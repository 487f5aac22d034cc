#!/usr/bin/env bash
# Fault injection check (issue 9, part 2): runs one run_preloaded.sh command whose settings
# include COMMSCHED_FAULT=<site>:<probability>[:seed], then checks what the issue requires:
#   - the job finishes and its data is exactly right (run_preloaded.sh's own checks: exit status,
#     the program's "0 mismatches" line, which compares every call with PMPI_Alltoallv);
#   - faults were injected (the report's "faults_injected" > 0) and fell back to native
#     ("fallbacks", reported);
#   - one warning per site: at least one warning line naming the site, and no rank prints it
#     twice (a rank can only know its own faults, so each may warn once).
#
#   fault_check.sh SITE REPORT -- run_preloaded.sh ARGS...
# Prints "fault[SITE]: F faults injected, B fallbacks, W warning line(s), mismatches 0, ok".
set -u
site="$1" report="$2"
shift 2
[[ "${1-}" == "--" ]] && shift
out=$(mktemp) || exit 2
trap 'rm -f -- "$out"' EXIT
"$@" >"$out" 2>&1
rc=$?
cat "$out"
fail=0
[[ $rc -eq 0 ]] || { echo "fault_check: FAIL: run failed (rc $rc)"; fail=1; }

warn_lines=$(grep -a '^\[commsched' "$out" | grep -ai 'warning' | grep -aF -- "'$site'")
warnings=$(printf '%s' "$warn_lines" | grep -c . || true)
worst_rank=$(printf '%s\n' "$warn_lines" | grep -o '^\[commsched r[0-9]*\]' | sort | uniq -c |
             awk 'BEGIN{m=0} {if ($1>m) m=$1} END{print m}')
[[ $warnings -ge 1 ]] || { echo "fault_check: FAIL: no warning names site '$site'"; fail=1; }
[[ ${worst_rank:-0} -le 1 ]] || { echo "fault_check: FAIL: a rank warned $worst_rank times for '$site'"; fail=1; }

read -r injected fallbacks < <("${PYTHON:-python3}" - "$report" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    print(r.get("faults_injected", -1), r.get("fallbacks", -1))
except Exception:
    print(-1, -1)
EOF
)
[[ $injected -gt 0 ]] || { echo "fault_check: FAIL: report shows $injected faults injected"; fail=1; }
mismatches=$(grep -aoE '[0-9]+ mismatches' "$out" | head -1 | cut -d' ' -f1)
echo "fault[$site]: $injected faults injected, $fallbacks fallbacks, $warnings warning line(s)," \
  "mismatches ${mismatches:-?}, $([[ $fail -eq 0 ]] && echo ok || echo FAILED)"
exit $fail
