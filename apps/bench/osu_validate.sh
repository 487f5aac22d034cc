#!/usr/bin/env bash
# OSU Micro-Benchmarks' own validation (-c) of the all-to-all family, natively and with the
# library preloaded: default settings, then COMMSCHED_NONBLOCKING=eager and =shift (the engine
# for the non-blocking, neighbourhood and persistent forms). OSU is not bundled: build its
# release (7.x, which has -c) against the same MPI, then point --osu at its c/mpi/collective.
#
#   apps/bench/osu_validate.sh --osu DIR --lib build/wrappers/libcommsched.so \
#       [--np 4] [--mpich] [--sizes 1:4096] [--iterations 50]
#
# MPICH busy-polls: with more ranks than cores keep --np 2 there (the neighbourhood benchmarks,
# which need 4 ranks, are then skipped).
#
# Prints one line per benchmark and setting: OSU's Pass/Fail count over the sizes and the
# library's summary of engine calls. Exits 1 if any run fails, times out or reports a failure.
set -u
osu="" lib="" np=4 mpich=0 sizes="1:4096" iterations=50
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu="$2"; shift 2 ;;
    --lib) lib="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --mpich) mpich=1; shift ;;
    --sizes) sizes="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    *) echo "osu_validate: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$osu" ] || [ -z "$lib" ] || [ ! -d "$osu" ] || [ ! -f "$lib" ]; then
  echo "osu_validate: need --osu DIR (OSU's c/mpi/collective) and --lib LIBRARY" >&2
  exit 2
fi
lib=$(readlink -f "$lib")

if [ "$mpich" = 1 ]; then
  launch=(mpiexec.mpich -n "$np")
  env_flag() { printf -- '-genv\n%s\n%s\n' "$1" "$2"; }
else
  launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np")
  env_flag() { printf -- '-x\n%s=%s\n' "$1" "$2"; }
fi

programs=(blocking/osu_alltoall blocking/osu_alltoallv blocking/osu_alltoallw
          non_blocking/osu_ialltoall non_blocking/osu_ialltoallv
          neighborhood/osu_neighbor_alltoall neighborhood/osu_neighbor_alltoallv
          neighborhood/osu_ineighbor_alltoall neighborhood/osu_ineighbor_alltoallv
          persistent/osu_alltoall_persistent persistent/osu_alltoallv_persistent)
failed=0
for p in "${programs[@]}"; do
  [ -x "$osu/$p" ] || continue  # not built for this MPI (the persistent ones need MPI-4)
  if [ "$np" -lt 4 ] && [[ "$p" == neighborhood/* ]]; then
    echo "$p: skipped (OSU's neighbourhood graph needs 4 ranks or more)"
    continue
  fi
  for setting in native default eager shift; do
    extra=()
    if [ "$setting" != native ]; then
      mapfile -t extra < <(env_flag LD_PRELOAD "$lib")
      if [ "$setting" != default ]; then
        mapfile -t more < <(env_flag COMMSCHED_NONBLOCKING "$setting")
        extra+=("${more[@]}")
      fi
    fi
    out=$(timeout 300 "${launch[@]}" "${extra[@]}" "$osu/$p" -c -m "$sizes" -i "$iterations" 2>&1)
    rc=$?
    pass=$(grep -c "Pass" <<<"$out")
    fail=$(grep -ci "fail" <<<"$out")
    engine=$(grep -o "[0-9]* call(s) run by the engine.*passed to MPI" <<<"$out" | head -1)
    printf '%-40s %-8s rc=%-3s pass=%-3s fail=%-3s %s\n' "$p" "$setting" "$rc" "$pass" "$fail" "$engine"
    if [ "$rc" != 0 ] || [ "$fail" != 0 ] || [ "$pass" = 0 ]; then failed=1; fi
  done
done
exit "$failed"
