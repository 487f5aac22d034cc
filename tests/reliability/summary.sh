#!/usr/bin/env bash
# Prints the reliability summary of the last ctest run in BUILD (issue 9): one line per part
# with its counts, read from the tests' output in Testing/Temporary/LastTest.log.
#   summary.sh BUILD [TITLE]
set -u
log="$1/Testing/Temporary/LastTest.log"
title="${2:-reliability}"
[[ -f "$log" ]] || { echo "[$title] no ctest log in $1"; exit 0; }
echo "[$title] summary (from $log):"
grep -a -E '^differential: [0-9]+ cases' "$log" | sed "s/^/[$title]   /"
awk -v t="$title" '/^alltoallv_fuzz: [0-9]+ cases, [0-9]+ mismatches/ {
    runs++; cases += $2; bad += $4; calls += substr($6, 2) }
  END { if (runs) printf "[%s]   alltoallv_fuzz: %d cases in %d launches, %d mismatches, %d calls compared\n", t, cases, runs, bad, calls }' "$log"
grep -a -E '^long_run: [0-9]+ iterations' "$log" | sed "s/^/[$title]   /"
grep -a -E '^hostile_settings: [0-9]+ rows' "$log" | sed "s/^/[$title]   /"
grep -a -E '^threads: level=' "$log" | sed "s/^/[$title]   /"
grep -a -E '^fault\[[a-z]+\]: ' "$log" | sed "s/^/[$title]   /"
grep -a -E '^corpus: [0-9]+ cases' "$log" | sed "s/^/[$title]   /"
exit 0
