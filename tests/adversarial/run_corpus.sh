#!/usr/bin/env bash
# The adversarial corpus (issue 25): runs adversary (and adversary_f) natively once per group of
# cases and with the library preloaded once per settings variant, each launch under `timeout`, and
# compares what rank 0 prints ("digest CASE rR HASH notes", one line per rank): same data, same
# return codes and error classes, same exit status (an abort natively must abort preloaded), no
# hang. Hostile-file rows run `basic,burst_waitall` with one hostile COMMSCHED_* file or output
# and check, besides the data, the warnings (one naming the file), the time (at most 1 s more than
# the same run with sane settings, plus HOSTILE_SLACK for the noise of a loaded machine) and that
# links and device nodes given as outputs are still what they were.
#
#   run_corpus.sh --lib LIB --adversary BIN [--fortran BIN] [--flavor openmpi|mpich] [--jobs J]
#                 [--only REGEX] [--timeout S] -- MPIEXEC NP_FLAG [PREFLAGS...]
#
# A case counts once per variant it runs under. Prints one line per failure, then
# "corpus: N cases, P passed, F failed, K known" and exits 1 if any failed.
set -u

lib="" adversary="" fortran="" flavor=openmpi jobs=2 only="" limit=20
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lib) lib="$2"; shift 2 ;;
    --adversary) adversary="$2"; shift 2 ;;
    --fortran) fortran="$2"; shift 2 ;;
    --flavor) flavor="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "run_corpus: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -f "$lib" && -x "$adversary" && $# -ge 2 ]] || { echo "run_corpus: usage: see header" >&2; exit 2; }
mpiexec=$1 np_flag=$2
shift 2
preflags=("$@")
slack=${HOSTILE_SLACK:-1.5}

# Cases that fail through a library issue reported to the lead ("group/variant/case" or
# "hostile/row": why). They run and print "known" instead of failing; delete an entry once its
# fix lands. Empty on purpose: issue 25 wants every failure seen.
declare -A KNOWN=()

work=$(mktemp -d) || exit 2
if [[ -n "${CORPUS_KEEP:-}" ]]; then  # CORPUS_KEEP=1: keep every launch's output for a look
  echo "run_corpus: outputs kept in $work"
else
  trap 'rm -rf -- "$work"' EXIT
fi
start=$SECONDS

# --- Variants: settings the preloaded runs use ---------------------------------------------------
declare -A VARIANT=(
  [auto]=""                                                       # defaults: auto, bursts local
  [color_coll]="COMMSCHED_STRATEGY=color COMMSCHED_BURSTS=collective"
  [two_stage1]="COMMSCHED_STRATEGY=two_stage COMMSCHED_LEARN_CALLS=1"
  [rsnh_off]="COMMSCHED_STRATEGY=rs_nh COMMSCHED_BURSTS=off"
)
strategies=$(sed -n 's/.*Valid: \([a-z0-9_, ]*\)\..*/\1/p' "$(dirname "$0")/../../README.md" |
             head -1 | tr -d ' ' | tr ',' ' ')
[[ -n "$strategies" ]] || strategies="native auto color rs_nh"
for s in $strategies; do VARIANT[s_$s]="COMMSCHED_STRATEGY=$s COMMSCHED_BURSTS=collective"; done
all_strategies=$(for s in $strategies; do printf 's_%s ' "$s"; done)

# --- Groups: cases run in one launch, natively and under each variant ----------------------------
# group NAME NP PROGRAM(c|f) "VARIANTS" CASES [EXTRA ARGS]
# Cases that may hang, crash or abort run in groups of their own, so one cannot hide another.
g_names=() g_np=() g_prog=() g_variants=() g_cases=() g_extra=()
group() { g_names+=("$1"); g_np+=("$2"); g_prog+=("$3"); g_variants+=("$4"); g_cases+=("$5"); g_extra+=("${6-}"); }

held="basic,zero_counts,in_place,dt_vector,dt_indexed,dt_struct,dt_resized,dt_neg_lb,dt_mixed"
held+=",comm_split,comm_dup,comm_cart,comm_graph,comm_dist_graph,comm_create_group,inter_even"
held+=",inter_merge,errh_return_valid,errh_fatal_valid,errh_custom"
held+=",alltoall_basic,alltoall_in_place,alltoall_dt,alltoall_comms,alltoallw_comms"
held+=",neighbor_topologies"
bursts="burst_waitall,burst_wildcard,burst_waitany,burst_testsome,burst_testall,burst_cancel"
bursts+=",burst_request_free,burst_subcomm,burst_persistent,burst_large,burst_issend"
bursts+=",burst_then_blocking"
dtfree="dt_free_after_isend,dt_free_after_isend_reuse,dt_free_after_irecv,dt_keep_until_wait"
dtfree+=",dt_free_after_alltoallv,dt_reuse_handle_alltoallv,dt_reuse_handle_mixed"
v3="auto color_coll two_stage1"

if [[ $flavor == mpich ]]; then  # MPICH busy-polls: 2 ranks, the two main variants
  v2="auto color_coll"
  group held 2 c "$v2" "$held"
  group bursts 2 c "$v2" "$bursts"
  group dtfree 2 c "$v2 rsnh_off" "$dtfree"
  group comm_cycles 2 c "$v2" "comm_free_reuse,comm_free_burst_reuse"
  group comm_disconnect 2 c "$v2" "comm_disconnect_reuse"
  for e in err_dtnull_alltoallv err_negcount_alltoallv err_alltoall err_alltoallw \
           err_neighbor_no_topology err_dtnull_isend err_dtnull_isend_world err_isend_badrank \
           err_isend_negcount err_isend_badtag; do
    group "$e" 2 c "$v2" "$e"
  done
  group fatal 2 c "auto" "err_fatal_negcount"
  group threads 2 c "auto" "threads_two_comms" "--thread multiple"
  group strategies 2 c "s_color s_rs_nh s_two_stage s_lp_xor" "strategy_irregular,burst_waitall,alltoall_basic,alltoallw_comms,neighbor_topologies"
  [[ -n "$fortran" ]] && group f_world 2 f "$v2" "f_world"
else
  group held4 4 c "$v3 rsnh_off" "$held"
  group held6 6 c "auto color_coll" "$held"
  group bursts4 4 c "$v3 rsnh_off" "$bursts"
  group bursts5 5 c "auto color_coll" "$bursts"
  # A freed datatype can corrupt the heap: alone, so a crash is pinned on the case that caused it.
  for c in ${dtfree//,/ }; do group "dtfree4.$c" 4 c "$v3 rsnh_off" "$c"; done
  group dtfree6 6 c "auto color_coll" "$dtfree"
  group inter4 4 c "$v3" "inter_small_local,inter_small_remote"
  group inter5 5 c "auto color_coll" "inter_small_local,inter_small_remote"
  group comm_cycles 5 c "$v3" "comm_free_reuse,comm_free_burst_reuse"
  group comm_disconnect 5 c "$v3" "comm_disconnect_reuse"
  for e in err_dtnull_alltoallv err_negcount_alltoallv err_alltoall err_alltoallw \
           err_neighbor_no_topology err_comm_null err_dtnull_isend err_dtnull_isend_world \
           err_isend_badrank err_isend_negcount err_isend_badtag; do
    group "$e" 4 c "$v3" "$e"
  done
  group fatal 4 c "auto color_coll" "err_fatal_negcount"
  group threads 4 c "auto color_coll" "threads_two_comms" "--thread multiple"
  group strategies 4 c "$all_strategies" "strategy_irregular,burst_waitall,alltoall_basic,alltoallw_comms,neighbor_topologies"
  if [[ -n "$fortran" ]]; then
    for c in f_world f_inter_small_local f_inter_small_remote; do
      group "$c.4" 4 f "$v3" "$c"
      group "$c.5" 5 f "auto" "$c"
    done
  fi
fi

# --- Hostile files and outputs --------------------------------------------------------------------
# hostile NAME "VAR=VALUE ..." EXPECT [RANK0 "VAR=VALUE ..."] [POST check]
# EXPECT: warn1 (exactly one warning line, naming FILE), perrank (at least one, at most one per
# rank, naming FILE), oneperrank (at most one per rank: where only ranks other than 0 see the bad
# file, a library that warns from rank 0 alone cannot name it), le1 (at most one warning), any. RANK0 settings replace the others on
# world rank 0 only (a per-rank wrapper: files a job sees on some nodes only). POST: kind:path,
# the path must still be a symlink, char device or fifo afterwards.
h_names=() h_env=() h_expect=() h_file=() h_rank0=() h_post=()
hostile() { h_names+=("$1"); h_env+=("$2"); h_expect+=("$3"); h_file+=("$4"); h_rank0+=("${5-}"); h_post+=("${6-}"); }

f=$work/files
mkdir -p "$f/tracefifo" "$f/tracefull" "$f/dir"
mkfifo "$f/machine.fifo" "$f/report.fifo"
for r in 0 1 2 3 4 5; do
  mkfifo "$f/log.fifo.r$r" "$f/tracefifo/rank$r.cstrace"
done
# One device node per row, so a row that replaces its node cannot spoil another row.
have_mknod=1
for node in null.report null.log full.report full.log full.trace; do
  [[ $node == null.* ]] && minor=3 || minor=7
  mknod "$f/$node" c 1 $minor 2>/dev/null || have_mknod=0
done
for r in 0 1 2 3 4 5; do
  ln -s "$f/full.log" "$f/logfull.r$r"
  ln -s "$f/full.trace" "$f/tracefull/rank$r.cstrace"
  ln -s "$f/null.log" "$f/lognull.r$r"
done
ln -s "$f/target.json" "$f/report.link"
ln -s "$f/nowhere/r.json" "$f/report.dangling"
ln -s "$f/loop.b" "$f/loop.a"
ln -s "$f/loop.a" "$f/loop.b"
good_machine() {  # $1 = beta of [link.cluster], $2 = alpha
  printf 'name = "corpus"\ndescription = "adversarial corpus"\n[link.cluster]\nalpha = %s\nbeta = %s\n' \
    "${2:-2e-6}" "$1"
}
good_machine 1e-10 >"$f/good.toml"
good_machine 1e308 >"$f/beta_huge.toml"
good_machine 1e-10 inf >"$f/alpha_inf.toml"
good_machine nan >"$f/beta_nan.toml"
good_machine 1e-10 -1 >"$f/alpha_neg.toml"
good_machine 4.9e-324 >"$f/beta_denormal.toml"
: >"$f/empty.toml"
head -c 4096 /dev/urandom >"$f/binary.toml"
head -c 15000000 /dev/urandom | base64 -w 76 >"$f/big.toml"  # about 20 MB
{ printf 'x = '; printf '[%.0s' $(seq 10000); printf ']%.0s' $(seq 10000); echo; } >"$f/nested.toml"
{ printf 'x = '; printf '{a=%.0s' $(seq 5000); printf '1'; printf '}%.0s' $(seq 5000); echo; } \
  >"$f/nested_tables.toml"
{ printf 'k%.0s' $(seq 1000000); printf ' = 1\n'; } >"$f/long_key.toml"
printf '[link.cluster]\nalpha = 1e-6\n' >"$f/malformed.toml"

M=COMMSCHED_MACHINE
hostile machine_fifo "$M=$f/machine.fifo" warn1 "$f/machine.fifo"
hostile machine_fifo_disabled "$M=$f/machine.fifo COMMSCHED_ENABLE=0" le1 "$f/machine.fifo"
hostile machine_dev_zero "$M=/dev/zero" warn1 /dev/zero
hostile machine_dev_urandom "$M=/dev/urandom" warn1 /dev/urandom
hostile machine_20mb "$M=$f/big.toml" warn1 "$f/big.toml"
hostile machine_nested_10000 "$M=$f/nested.toml" warn1 "$f/nested.toml"
hostile machine_nested_tables "$M=$f/nested_tables.toml" warn1 "$f/nested_tables.toml"
hostile machine_long_key "$M=$f/long_key.toml" warn1 "$f/long_key.toml"
hostile machine_beta_1e308 "$M=$f/beta_huge.toml" le1 "$f/beta_huge.toml"
hostile machine_beta_denormal "$M=$f/beta_denormal.toml" le1 "$f/beta_denormal.toml"
hostile machine_alpha_inf "$M=$f/alpha_inf.toml" le1 "$f/alpha_inf.toml"
hostile machine_beta_nan "$M=$f/beta_nan.toml" le1 "$f/beta_nan.toml"
hostile machine_alpha_negative "$M=$f/alpha_neg.toml" le1 "$f/alpha_neg.toml"
hostile machine_empty "$M=$f/empty.toml" warn1 "$f/empty.toml"
hostile machine_binary "$M=$f/binary.toml" warn1 "$f/binary.toml"
hostile machine_symlink_loop "$M=$f/loop.a" warn1 "$f/loop.a"
hostile machine_rank0_only "$M=$f/absent.toml" oneperrank "$f/absent.toml" "$M=$f/good.toml"
hostile machine_all_but_rank0 "$M=$f/good.toml" perrank "$f/absent.toml" "$M=$f/absent.toml"
hostile machine_rank0_fifo "$M=$f/good.toml" perrank "$f/machine.fifo" "$M=$f/machine.fifo"
hostile machine_rank0_malformed "$M=$f/good.toml" perrank "$f/malformed.toml" "$M=$f/malformed.toml"
hostile machine_ranks_differ "$M=lemieux" any "" "$M=cm5"
hostile strategy_ranks_differ "COMMSCHED_STRATEGY=rs_nh" any "" "COMMSCHED_STRATEGY=color"
hostile bursts_ranks_differ "COMMSCHED_BURSTS=local" any "" "COMMSCHED_BURSTS=collective"
hostile learn_calls_ranks_differ "COMMSCHED_LEARN_CALLS=4" any "" "COMMSCHED_LEARN_CALLS=1"
hostile log_fifo "COMMSCHED_LOG_FILE=$f/log.fifo COMMSCHED_LOG_LEVEL=info" perrank "$f/log.fifo"
hostile log_fifo_disabled "COMMSCHED_LOG_FILE=$f/log.fifo COMMSCHED_ENABLE=0" any "$f/log.fifo"
hostile trace_fifo "COMMSCHED_TRACE=$f/tracefifo" perrank "$f/tracefifo"
hostile trace_dir_is_fifo "COMMSCHED_TRACE=$f/machine.fifo" perrank "$f/machine.fifo"
hostile report_fifo "COMMSCHED_REPORT=$f/report.fifo" warn1 "$f/report.fifo" "" "fifo:$f/report.fifo"
hostile report_symlink "COMMSCHED_REPORT=$f/report.link" any "" "" "symlink:$f/report.link"
hostile report_dangling_symlink "COMMSCHED_REPORT=$f/report.dangling" any "" "" \
  "symlink:$f/report.dangling"
if [[ $have_mknod == 1 ]]; then  # private device nodes: a bug must not replace the real /dev ones
  hostile report_dev_null "COMMSCHED_REPORT=$f/null.report" any "" "" "chardev:$f/null.report"
  hostile report_dev_full "COMMSCHED_REPORT=$f/full.report" warn1 "$f/full.report" "" \
    "chardev:$f/full.report"
  hostile log_dev_full "COMMSCHED_LOG_FILE=$f/logfull COMMSCHED_LOG_LEVEL=info" perrank \
    "$f/logfull" "" "chardev:$f/full.log"
  hostile log_dev_null "COMMSCHED_LOG_FILE=$f/lognull COMMSCHED_LOG_LEVEL=info" le1 "" "" \
    "symlink:$f/lognull.r0"
  hostile trace_dev_full "COMMSCHED_TRACE=$f/tracefull" perrank "$f/tracefull" "" \
    "chardev:$f/full.trace"
fi
if [[ $flavor == mpich ]]; then  # a subset at 2 ranks
  keep="machine_fifo machine_dev_zero machine_nested_10000 machine_beta_1e308 machine_rank0_only"
  keep+=" report_symlink report_dev_null log_fifo"
  for k in "${!h_names[@]}"; do
    [[ " $keep " == *" ${h_names[$k]} "* ]] || unset "h_names[$k]"
  done
fi
hostile_np=4
[[ $flavor == mpich ]] && hostile_np=2

# The per-rank wrapper: ADV_RANK0_ENV ("VAR=VALUE ...") replaces settings on world rank 0.
cat >"$work/per_rank.sh" <<'EOF'
#!/usr/bin/env bash
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
if [[ "$r" == 0 && -n "${ADV_RANK0_ENV:-}" ]]; then
  for kv in $ADV_RANK0_ENV; do export "${kv%%=*}=${kv#*=}"; done
fi
unset ADV_RANK0_ENV
exec "$@"
EOF
chmod +x "$work/per_rank.sh"

# --- Launching -------------------------------------------------------------------------------------
# launch ID NP PROG "CASES" "EXTRA" "SETTINGS" PRELOAD(0|1) [RANK0 SETTINGS]
# Writes $work/ID.out, .err, .rc, .time. Hermetic: inherited COMMSCHED_* settings are dropped.
launch() {
  local id=$1 np=$2 prog=$3 cases=$4 extra=$5 settings=$6 preload=$7 rank0=${8-}
  local envs=() kv
  for kv in $settings; do envs+=("$kv"); done
  [[ $preload == 1 ]] && envs+=("LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}")
  local tmp="$work/tmp.$id"
  mkdir -p "$tmp"
  local cmd=()
  if [[ $prog == f ]]; then cmd=("$fortran" "$cases"); else cmd=("$adversary" --case "$cases" $extra); fi
  local t0 t1 rc
  t0=$(date +%s.%N)
  env $(compgen -e | grep '^COMMSCHED_' | sed 's/^/-u /') TMPDIR="$tmp" ADV_RANK0_ENV="$rank0" \
    "${envs[@]}" timeout --kill-after=5 "$limit" \
    "$mpiexec" "$np_flag" "$np" "${preflags[@]}" "$work/per_rank.sh" "${cmd[@]}" \
    >"$work/$id.out" 2>"$work/$id.err" </dev/null
  rc=$?
  t1=$(date +%s.%N)
  echo "$rc" >"$work/$id.rc"
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", b - a}' >"$work/$id.time"
  rm -rf -- "$tmp"
}

# Runs "launch ..." lines from stdin, $jobs at a time.
run_all() {
  local running=0 line
  while IFS= read -r line; do
    eval "launch $line" &
    running=$((running + 1))
    if [[ $running -ge $jobs ]]; then wait -n; running=$((running - 1)); fi
  done
  wait
}

selected() { [[ -z "$only" ]] || [[ "$1" =~ $only ]]; }
q() { printf '%q' "$1"; }

{
  for k in "${!g_names[@]}"; do
    g=${g_names[$k]}
    selected "$g" || continue
    echo "$(q "g.$g.native") ${g_np[$k]} ${g_prog[$k]} $(q "${g_cases[$k]}") $(q "${g_extra[$k]}") '' 0"
    for v in ${g_variants[$k]}; do
      echo "$(q "g.$g.$v") ${g_np[$k]} ${g_prog[$k]} $(q "${g_cases[$k]}") $(q "${g_extra[$k]}") $(q "${VARIANT[$v]}") 1"
    done
  done
  if selected hostile; then
    echo "h.native $hostile_np c basic,burst_waitall '' '' 0"
    echo "h.reference $hostile_np c basic,burst_waitall '' '' 1"
  fi
} | run_all
if selected hostile; then  # after the reference, so its time is measured on a quieter machine
  for k in "${!h_names[@]}"; do
    echo "$(q "h.${h_names[$k]}") $hostile_np c basic,burst_waitall '' $(q "${h_env[$k]}") 1 $(q "${h_rank0[$k]}")"
  done | run_all
fi

# --- Verdicts ----------------------------------------------------------------------------------------
total=0 passed=0 failed=0 known=0
failures=()
verdict() {  # NAME OK(0|1) WHY
  total=$((total + 1))
  if [[ $2 == 1 ]]; then
    passed=$((passed + 1))
  elif [[ -n "${KNOWN[$1]:-}" ]]; then
    known=$((known + 1)); echo "corpus: known $1: $3 (${KNOWN[$1]})"
  else
    failed=$((failed + 1)); failures+=("$1: $3")
  fi
}
digests() { grep -a "^digest $2 " "$work/$1.out" 2>/dev/null | sort; }
status_word() {  # ID -> ok | exit N | hang
  local rc; rc=$(cat "$work/$1.rc")
  if [[ $rc == 124 || $rc == 137 ]]; then echo hang; elif [[ $rc == 0 ]]; then echo ok; else echo "exit $rc"; fi
}
first_difference() {  # NATIVE_ID ID CASE -> the first rank whose line differs, both sides
  local line rank
  line=$(diff <(digests "$1" "$3") <(digests "$2" "$3") | grep -a '^[<>]' | head -1)
  [[ -n "$line" ]] || return 0
  rank=$(awk '{print $4}' <<<"$line")  # after diff's marker
  printf 'native: %s | preloaded: %s' \
    "$(digests "$1" "$3" | awk -v r="$rank" '$3 == r' | cut -d' ' -f3- | cut -c1-110)" \
    "$(digests "$2" "$3" | awk -v r="$rank" '$3 == r' | cut -d' ' -f4- | cut -c1-110)"
}

for k in "${!g_names[@]}"; do
  g=${g_names[$k]}
  selected "$g" || continue
  nat_status=$(status_word "g.$g.native")
  IFS=, read -r -a cs <<<"${g_cases[$k]}"
  for v in ${g_variants[$k]}; do
    id="g.$g.$v"
    st=$(status_word "$id")
    for c in "${cs[@]}"; do
      name="$g/$v/$c"
      if [[ $nat_status == hang ]]; then
        verdict "$name" 0 "the native run hung (corpus bug)"
      elif [[ $st == hang ]]; then
        verdict "$name" 0 "hang (no exit within ${limit} s); $(digests "$id" "$c" | wc -l) digest lines"
      elif [[ ($nat_status == ok && $st != ok) || ($nat_status != ok && $st == ok) ]]; then
        verdict "$name" 0 "native $nat_status, preloaded $st; $(first_difference "g.$g.native" "$id" "$c")"
      elif [[ "$(digests "g.$g.native" "$c")" != "$(digests "$id" "$c")" ]]; then
        verdict "$name" 0 "digest differs: $(first_difference "g.$g.native" "$id" "$c")"
      else
        verdict "$name" 1 ""
      fi
    done
  done
done

if selected hostile; then
  ref_time=$(cat "$work/h.reference.time")
  for k in "${!h_names[@]}"; do
    n=${h_names[$k]} id="h.${h_names[$k]}" file=${h_file[$k]} why=()
    st=$(status_word "$id")
    [[ $st == ok ]] || why+=("preloaded $st")
    for c in basic burst_waitall; do
      [[ "$(digests h.native "$c")" == "$(digests "$id" "$c")" ]] || why+=("digest of $c differs")
    done
    warn_lines=$(grep -a '^\[commsched' "$work/$id.err" | grep -ai 'warning')
    nw=$(printf '%s' "$warn_lines" | grep -c .)
    named=0
    [[ -n "$file" ]] && named=$(printf '%s' "$warn_lines" | grep -aFc -- "$file")
    worst=$(printf '%s\n' "$warn_lines" | grep -ao '^\[commsched r[0-9]*\]' | sort | uniq -c |
            awk 'BEGIN{m=0} {if ($1>m) m=$1} END{print m}')
    case ${h_expect[$k]} in
      warn1) [[ $nw -eq 1 && $named -eq 1 ]] || why+=("expected 1 warning naming the file, got $nw ($named naming it)") ;;
      perrank) [[ $named -ge 1 && $worst -le 1 ]] || why+=("expected a warning naming the file, at most one per rank; got $nw ($named naming it, $worst on one rank)") ;;
      oneperrank) [[ $worst -le 1 ]] || why+=("expected at most one warning per rank, got $worst on one rank") ;;
      le1) [[ $nw -le 1 ]] || why+=("expected at most 1 warning, got $nw") ;;
    esac
    if [[ $st != hang ]]; then
      extra=$(awk -v t="$(cat "$work/$id.time")" -v r="$ref_time" 'BEGIN{printf "%.1f", t - r}')
      if awk -v e="$extra" -v s="$slack" 'BEGIN{exit !(e > 1 + s)}'; then
        why+=("took $extra s more than with sane settings")
      fi
    fi
    post=${h_post[$k]}
    if [[ -n "$post" ]]; then
      kind=${post%%:*} path=${post#*:}
      case $kind in
        symlink) [[ -L "$path" ]] || why+=("$path is no longer a symlink") ;;
        chardev) [[ -c "$path" ]] || why+=("$path is no longer a character device") ;;
        fifo) [[ -p "$path" ]] || why+=("$path is no longer a fifo") ;;
      esac
    fi
    if [[ ${#why[@]} -eq 0 ]]; then
      verdict "hostile/$n" 1 ""
    else
      w=$(printf '%s; ' "${why[@]}")
      verdict "hostile/$n" 0 "${w%; }"
    fi
  done
fi

for line in "${failures[@]+"${failures[@]}"}"; do echo "corpus: FAIL $line"; done
if [[ -n "${CORPUS_VERBOSE:-}" ]]; then
  for e in "$work"/*.err; do
    [[ -s "$e" ]] && { echo "--- $(basename "$e")"; tail -5 "$e"; }
  done
fi
echo "corpus: $total cases, $passed passed, $failed failed, $known known ($flavor, $((SECONDS - start)) s)"
[[ $failed -eq 0 ]]
