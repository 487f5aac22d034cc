#!/usr/bin/env bash
# expect_refusal.sh COMMSCHED_RUN PROGRAM PATTERN: commsched-run must refuse PROGRAM (exit 2,
# nothing run) with an error containing PATTERN.
out="$("$1" --dry-run -- "$2" 2>&1)"; rc=$?
echo "$out"
[[ $rc -eq 2 && "$out" == *"$3"* ]] && echo "expect_refusal: ok"
