#!/usr/bin/env bash
# Hostile settings (issue 9, part 5): every COMMSCHED_* variable given bad values (empty, huge,
# negative, junk, non-UTF-8 bytes, paths that do not exist, cannot be written, are directories,
# or are links to /dev/zero; issue 25: FIFOs, devices, oversized or deeply nested machine files,
# links and devices as outputs). Each row launches alltoallv_check with the library preloaded and
# checks:
#   warn  exactly one warning line on stderr, and it names the variable (no other warnings);
#   none  no warning at all: the value is legitimately accepted (the table says why);
# and in both cases that the job's results are unchanged (alltoallv_check passes, exit 0).
#
#   hostile_settings.sh --lib LIB --runner run_preloaded.sh [--jobs J] [--only VAR] -- LAUNCH...
# LAUNCH is the mpiexec command line of alltoallv_check. Prints one line per row, then
# "hostile_settings: N rows, P passed, F failed, K known issues, S skipped (waiting for wiring)".
#
# Rows for variables listed in WAITING are skipped: the library reads those settings but does not
# act on them yet (COMMSCHED_MACHINE and COMMSCHED_TRACE are wired by the lead). Remove a name
# from WAITING once its wiring lands; HOSTILE_ALL=1 runs every row regardless.
set -u
WAITING=()
# Variables whose rows fail through a known library issue reported to the lead (name: why). They run and
# print "known" instead of failing the test; delete the entry once the fix lands.
declare -A KNOWN=()

lib="" runner="" jobs=2 only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lib) lib="$2"; shift 2 ;;
    --runner) runner="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "hostile_settings: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$lib" && -n "$runner" && $# -gt 0 ]] || { echo "hostile_settings: usage: see header" >&2; exit 2; }
launch=("$@")

work=$(mktemp -d) || exit 2
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf -- "$work"' EXIT
# Fixtures for the path rows.
mkdir -p "$work/dir" "$work/tracedir"
ln -s /dev/zero "$work/zero_link"
echo "not a directory" >"$work/plain_file"
printf '[machine\nalpha = \n' >"$work/broken.toml"
nonutf8=$'\xff\xfe\xc3\x28'
# Hostile files (issue 25): FIFOs, devices, oversized and deeply nested machine files. A file
# named by a setting must be refused at once with one warning, never waited on or read forever.
mkfifo "$work/fifo"
yes '# padding to 2 MiB, over the 1 MiB cap on machine files' | head -c $((2 << 20)) >"$work/big.toml"
printf 'x = %s%s\n' "$(printf '[%.0s' {1..10000})" "$(printf ']%.0s' {1..10000})" >"$work/deep.toml"
printf '[link.cluster]\nalpha = 1e-6\nbeta = 1e308\n' >"$work/huge_beta.toml"
mkdir -p "$work/trace_part_fifo" "$work/trace_final_fifo" "$work/report_dir"
mkfifo "$work/trace_part_fifo/rank0.cstrace.part" "$work/trace_final_fifo/rank0.cstrace"
mkfifo "$work/report_dir/r.json.tmp"   # the name the report's temporary file once had
echo "keep" >"$work/log_target"
for r in 0 1 2 3 4 5 6 7; do  # the log file is PATH.rN, one per rank
  mkfifo "$work/fifo_log.r$r"
  ln -s "$work/log_target" "$work/link_log.r$r"
  ln -s /dev/full "$work/full_log.r$r"
done
huge_digits=$(printf '9%.0s' {1..400})
long_value=$(printf 'x%.0s' {1..5000})

# The table: row VAR VALUE EXPECT WHY. VAR without the COMMSCHED_ prefix; a VAR starting with '!'
# is an environment name given as it is (unknown or miscased names). row_also KEY=VALUE ... sets
# one more COMMSCHED_ variable for the row.
vars=() values=() expects=() whys=() extras=()
row() { vars+=("$1"); values+=("$2"); expects+=("$3"); whys+=("$4"); extras+=(""); }
row_also() { local extra=$1; shift; row "$@"; extras[${#extras[@]} - 1]=$extra; }

row ENABLE ""                warn "empty is not a boolean"
row ENABLE "maybe"           warn "not a boolean"
row ENABLE "2"               warn "not a boolean"
row ENABLE "yes "            warn "trailing space"
row ENABLE "$nonutf8"        warn "non-UTF-8 bytes"
row STRATEGY ""              warn "empty: runs native"
row STRATEGY "bogus"         warn "unknown strategy: runs native"
row STRATEGY "rs_nh,color"   warn "a list is not a strategy"
row STRATEGY "$long_value"   warn "5000 characters (the message shortens it)"
row STRATEGY "col${nonutf8}" warn "non-UTF-8 bytes"
row STRATEGY "COLOR"         none "ids are case-insensitive: runs color"
row LEARN_CALLS ""           warn "empty"
row LEARN_CALLS "0"          warn "below 1"
row LEARN_CALLS "-5"         warn "negative"
row LEARN_CALLS "1000001"    warn "above 1000000"
row LEARN_CALLS "$huge_digits" warn "400 digits"
row LEARN_CALLS "3.5"        warn "not whole"
row LEARN_CALLS " 3"         warn "leading space"
row LEARN_CALLS "1"          none "1 is the smallest legal value"
row NONBLOCKING ""           warn "empty"
row NONBLOCKING "on"         warn "not a mode"
row NONBLOCKING "$nonutf8"   warn "non-UTF-8 bytes"
row NONBLOCKING_WINDOW "0"   warn "below 1"
row NONBLOCKING_WINDOW "$huge_digits" warn "400 digits"
row LOG_LEVEL ""             warn "empty"
row LOG_LEVEL "loud"         warn "unknown level"
row LOG_LEVEL "$nonutf8"     warn "non-UTF-8 bytes"
row LOG_FILE "/nonexistent/dir/log" warn "directory does not exist: logs to stderr"
row LOG_FILE "/proc/self/commsched" warn "cannot be created: logs to stderr"
row LOG_FILE ""              none "empty means stderr, the default"
row REPORT "/nonexistent/dir/r.json" warn "directory does not exist: no JSON"
row REPORT "$work/dir"       warn "a directory given as the report file"
row REPORT "/proc/self/r.json" warn "cannot be written"
row REPORT "$work/zero_link" warn "a symbolic link: refused, neither followed nor replaced"
row REPORT "$work/fifo"      warn "a FIFO: refused at once, not replaced, nothing written"
row REPORT "/dev/null"       warn "a device: refused, not replaced (no report: leave REPORT unset)"
row REPORT "/dev/full"       warn "a device: refused, not replaced"
row REPORT "$work/report_dir/r.json" none "a FIFO at r.json.tmp is not used: the temporary is a new name"
row LOG_FILE "$work/fifo_log" warn "PATH.rN are FIFOs: refused at once, logs to stderr"
row LOG_FILE "$work/link_log" warn "PATH.rN are symbolic links: not followed, logs to stderr"
row LOG_FILE "$work/full_log" warn "PATH.rN are links to /dev/full: refused, logs to stderr"
row REPORT "$work/dir/${nonutf8}.json" none "a non-UTF-8 file name is a legal path"
row RSNH_LAMBDA "0"          warn "not in (0, 1]"
row RSNH_LAMBDA "1.5"        warn "above 1"
row RSNH_LAMBDA "-0.5"       warn "negative"
row RSNH_LAMBDA "nan"        warn "not a number"
row RSNH_LAMBDA "inf"        warn "infinite"
row RSNH_LAMBDA ""           warn "empty"
row RSNH_LAMBDA "1e-300"     none "tiny but inside (0, 1]: every message splits as far as it can"
row LP_BARRIER "2"           warn "not a boolean"
row LP_BARRIER ""            warn "empty"
row SEED "-1"                warn "negative"
row SEED "0x"                warn "hex prefix without digits"
row SEED "18446744073709551616" warn "2^64 overflows"
row SEED "0x1FFFFFFFFFFFFFFFF" warn "hex overflow"
row SEED "18446744073709551615" none "2^64-1 is the largest legal seed"
row TRIAL "perhaps"          warn "not a boolean"
row TRIAL_CALLS "0"          warn "below 1"
row TRIAL_CALLS "1001"       warn "above 1000"
row TRIAL_CALLS "-3"         warn "negative"
row TRIAL_SECONDS "-0.5"     warn "negative"
row TRIAL_SECONDS "inf"      warn "not finite"
row TRIAL_SECONDS "0"        none "0 runs exactly TRIAL_CALLS rounds"
row CANDIDATES "nonexistent" warn "unknown strategy"
row CANDIDATES "color,,rs_nh" warn "empty item"
row CANDIDATES ","           warn "only a separator"
row CANDIDATES "$nonutf8"    warn "non-UTF-8 bytes"
row MAX_STAGING "-1"         warn "negative"
row MAX_STAGING "12X"        warn "unknown suffix"
row MAX_STAGING "99999999999999999999G" warn "overflows 64 bits"
row MAX_STAGING "1T"         warn "T is not a suffix"
row MAX_STAGING ""           warn "empty"
row MAX_STAGING "0"          none "0 is legal: indirect plans needing staging are not chosen"
row TRACE_LIMIT "-5"         warn "negative"
row TRACE_LIMIT "lots"       warn "not a size"
row TRACE_SIGNAL "sometimes" warn "not a boolean"
row FAKE_NODES "-1"          warn "negative"
row FAKE_NODES "1000001"     warn "above 1000000"
row FAKE_NODES "two"         warn "not a number"
row FAULT "nowhere:0.5"      warn "unknown site"
row FAULT "plan:2"           warn "probability above 1"
row FAULT "plan"             warn "no probability"
row FAULT "plan:0.5:abc"     warn "bad seed"
row FAULT "plan:nan"         warn "not a number"
row FAULT "plan:0"           none "probability 0: no faults injected"
row '!COMMSCHED_STRATEGI' "color" warn "unknown name (did you mean COMMSCHED_STRATEGY?)"
row '!commsched_strategy' "color" warn "miscased name"
# Wired by the lead later (WAITING): the warning is expected once the setting is acted on.
row MACHINE "/nonexistent/machine.toml" warn "file does not exist: built-in model"
row MACHINE "$work/zero_link" warn "a link to /dev/zero: must not read forever"
row MACHINE "$work/dir"      warn "a directory given as the machine file"
row MACHINE "$work/broken.toml" warn "malformed TOML: one error naming file, line and key"
row MACHINE "bogus_preset"   warn "no such preset"
row MACHINE "$work/${nonutf8}.toml" warn "non-UTF-8 name, file does not exist"
row MACHINE "$work/fifo"     warn "a FIFO: refused at once, never waited on"
row MACHINE "/dev/zero"      warn "a device: refused before it is read"
row MACHINE "/dev/urandom"   warn "a device: refused before it is read"
row MACHINE "$work/big.toml" warn "2 MiB: over the 1 MiB cap on machine files"
row MACHINE "$work/deep.toml" warn "10 000 nested brackets: refused before the parser recurses"
row MACHINE "$work/huge_beta.toml" warn "beta = 1e308: outside the physical range (would not end)"
row_also ENABLE=0 MACHINE "$work/fifo" none "disabled: the machine file is not read at all"
row TRACE "/proc/self/trace" warn "cannot be created"
row TRACE "$work/zero_link"  warn "a link to /dev/zero is not a directory"
row TRACE "$work/plain_file" warn "a regular file given as the trace directory"
row TRACE "$work/tracedir/${nonutf8}" none "a non-UTF-8 directory name is legal (created)"
row TRACE "$work/trace_part_fifo" warn "rank0.cstrace.part is a FIFO: rank 0 writes no trace"
row TRACE "$work/trace_final_fifo" warn "rank0.cstrace is a FIFO: not replaced, rank 0 writes no trace"

check_ok='alltoallv_check: [0-9]+ passed, 0 failed'

run_row() {  # index -> writes $work/result.<index>: "pass|fail|skip <message>"
  local k=$1 var=${vars[$1]} value=${values[$1]} expect=${expects[$1]} extra=${extras[$1]}
  local name envs=() also=()
  [[ -n "$extra" ]] && also=(--set "COMMSCHED_$extra")
  if [[ "$var" == '!COMMSCHED_'* ]]; then  # run_preloaded.sh drops inherited COMMSCHED_*
    name=${var#!}
  elif [[ "$var" == '!'* ]]; then
    name=${var#!}
    envs=("$name=$value")
  else
    name="COMMSCHED_$var"
  fi
  local out="$work/out.$k"
  if [[ ${#envs[@]} -gt 0 ]]; then
    env "${envs[@]}" bash "$runner" --lib "$lib" --expect-output "$check_ok" -- "${launch[@]}" >"$out" 2>&1
  else
    bash "$runner" --lib "$lib" --set "$name=$value" "${also[@]+"${also[@]}"}" --expect-output "$check_ok" -- "${launch[@]}" >"$out" 2>&1
  fi
  local rc=$? verdict=pass why=""
  # Warning lines of the library (not run_preloaded's own lines).
  local warnings naming
  warnings=$(grep -a '^\[commsched' "$out" | grep -aic 'warning')
  naming=$(grep -a '^\[commsched' "$out" | grep -ai 'warning' | grep -aFc -- "$name")
  if [[ $rc -ne 0 ]]; then verdict=fail; why="job failed or results changed (rc $rc)"; fi
  if [[ "$expect" == warn && ( $warnings -ne 1 || $naming -ne 1 ) ]]; then
    verdict=fail; why="$why; expected 1 warning naming $name, got $warnings warning(s), $naming naming it"
  fi
  if [[ "$expect" == none && $warnings -ne 0 ]]; then
    verdict=fail; why="$why; expected no warning, got $warnings"
  fi
  if [[ $verdict == fail && -n "${KNOWN[$var]:-}" && $rc -eq 0 ]]; then
    verdict=known; why="$why (known: ${KNOWN[$var]})"
  fi
  if [[ $verdict == fail ]]; then
    { echo "--- output of row $k"; sed 's/^/    /' "$out" | tail -40; } >"$work/detail.$k"
  fi
  echo "$verdict $why" >"$work/result.$k"
}

printable() { LC_ALL=C sed 's/[^[:print:]]/?/g' <<<"$1" | cut -c1-48; }

selected=()
for k in "${!vars[@]}"; do
  [[ -z "$only" || "${vars[$k]}" == "$only" ]] && selected+=("$k")
done
running=0
for k in "${selected[@]}"; do
  var=${vars[$k]}
  if [[ "${HOSTILE_ALL:-0}" != 1 ]] && printf '%s\n' "${WAITING[@]}" | grep -qx -- "$var"; then
    echo "skip waiting for wiring" >"$work/result.$k"
    continue
  fi
  run_row "$k" &
  running=$((running + 1))
  if [[ $running -ge $jobs ]]; then wait -n; running=$((running - 1)); fi
done
wait

pass=0 fail=0 skip=0 known=0
for k in "${selected[@]}"; do
  read -r verdict why <"$work/result.$k"
  case $verdict in
    pass) pass=$((pass + 1)) ;;
    fail) fail=$((fail + 1)) ;;
    known) known=$((known + 1)) ;;
    *) skip=$((skip + 1)) ;;
  esac
  printf 'hostile_settings: %-4s %-30s %-50s %-5s %s%s\n' "$verdict" "${vars[$k]#!}" \
    "'$(printable "${values[$k]}")'" "${expects[$k]}" "${whys[$k]}" "${why:+ -- $why}"
  [[ -f "$work/detail.$k" ]] && cat "$work/detail.$k"
done
echo "hostile_settings: ${#selected[@]} rows, $pass passed, $fail failed, $known known issues," \
  "$skip skipped (waiting for wiring)"
[[ $fail -eq 0 ]]
