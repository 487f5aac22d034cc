#!/usr/bin/env bash
# Runs a real application natively or through commsched-run, and checks it by its own output:
#
#   app_test.sh --app lammps|hpcc|qe|fft2d --workdir DIR --numbers FILE [--native | --run CMDRUN
#               --strategy S --expect-strategy S|any|none --report FILE] -- LAUNCH...
#
# LAUNCH is the launcher with its flags (mpiexec -n 4 ...). --native runs the application as it
# is and writes the numbers its correctness output gives (LAMMPS thermo energies and neighbour
# statistics, HPCC's residuals and error counts, fft2d's checksum) to FILE; otherwise the run goes
# through commsched-run (CMDRUN) with the strategy and report given, its numbers must equal FILE's
# line for line, and the report's pattern list is printed and checked against --expect-strategy.
#
# lammps: the bundled peptide example (PPPM) copied and changed to use `kspace_modify collective
#   yes` (the FFT remaps then call MPI_Alltoallv, one communicator per remap) and 50 steps.
# hpcc:   tests/apps/hpccinf.txt (N = 400); its own checks must pass (HPL residual, PTRANS,
#   RandomAccess errors, FFT error). HPCC calls MPI_Alltoall, never MPI_Alltoallv: the report must
#   exist and list no pattern.
# qe:     Quantum ESPRESSO's pw.x on apps/bench/qe_si8.in at ecutwfc 20 (an SCF run whose FFT
#   transposes are Fortran MPI_ALLTOALL): its energies per iteration and converged must match.
# fft2d:  tests/apps/fft2d_transpose.f90, Fortran MPI_ALLTOALLV; prints "fft2d ok" when it matches
#   its serial reference.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
die() { echo "app_test: $*" >&2; exit 2; }

app="" workdir="" numbers="" native=0 cmdrun="" strategy="" expect="" report="" prog=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --app) app="$2"; shift 2 ;;
    --workdir) workdir="$2"; shift 2 ;;
    --numbers) numbers="$2"; shift 2 ;;
    --native) native=1; shift ;;
    --run) cmdrun="$2"; shift 2 ;;
    --strategy) strategy="$2"; shift 2 ;;
    --expect-strategy) expect="$2"; shift 2 ;;
    --report) report="$2"; shift 2 ;;
    --program) prog="$2"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
  esac
done
[[ -n "$app" && -n "$workdir" && -n "$numbers" && $# -gt 0 ]] || die "missing arguments"
[[ $native -eq 1 || ( -n "$cmdrun" && -n "$strategy" && -n "$report" ) ]] \
  || die "a preloaded run needs --run, --strategy and --report"
launch=("$@")

rm -rf -- "$workdir"
mkdir -p -- "$workdir" && cd -- "$workdir" || die "cannot use $workdir"
export TMPDIR="$workdir"   # Open MPI's session directory: one per test (ctest -j)
unset LD_PRELOAD
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^COMMSCHED_' || true)

# The application's command line and how its numbers are read.
case "$app" in
  lammps)
    src=/usr/share/doc/lammps-examples/examples/peptide
    [[ -f "$src/in.peptide" ]] || die "LAMMPS examples not installed ($src)"
    cp "$src"/in.peptide "$src"/data.peptide* . || die "cannot copy $src"
    [[ -f data.peptide.gz && ! -f data.peptide ]] && gunzip data.peptide.gz
    sed -i -e 's/^kspace_style.*/&\nkspace_modify\tcollective yes/' -e 's/^run\s.*/run\t\t50/' \
        -e 's/^thermo\s.*/thermo\t\t10\nthermo_modify\tformat float %.15g/' in.peptide
    grep -q '^kspace_modify.*collective yes' in.peptide || die "could not edit in.peptide"
    cmd=(lmp -in in.peptide -log none)
    # Thermo blocks (without their CPU times) and the neighbour statistics.
    extract() { sed -E -n -e 's/^-+ Step +([0-9]+) .*/Step \1/p' \
                  -e '/^(TotEng|PotEng|E_dihed|E_coul) /p' \
                  -e '/^(Total # of neighbors|Ave neighs\/atom|Neighbor list builds|Dangerous builds)/p' \
                  stdout.txt; }
    selfcheck() { grep -q '^Total wall time' stdout.txt && [[ $(extract | grep -c '^Step') -ge 6 ]]; }
    ;;
  hpcc)
    cp "$here/hpccinf.txt" . || die "no hpccinf.txt"
    cmd=(hpcc)
    extract() { { grep -E '^\|\|Ax-b\|\|_oo|Found [0-9]+ errors|PASSED|FAILED' hpccoutf.txt \
                    | grep -vE '^(WALL|CPU) ' | sed -E 's/[0-9.]+ s$//'
                  grep -E '^(PTRANS_residual|MPIRandomAccess(_LCG)?_Errors|MPIFFT_maxErr|FFT_N|MPIFFT_N|HPL_N)=' \
                    hpccoutf.txt; } ; }
    selfcheck() { grep -q 'End of Summary section' hpccoutf.txt && ! grep -q FAILED hpccoutf.txt &&
                  grep -q '^PTRANS_residual=0$' hpccoutf.txt &&
                  grep -q '^MPIRandomAccess_Errors=0$' hpccoutf.txt &&
                  grep -Eq '^\|\|Ax-b\|\|_oo.* PASSED' hpccoutf.txt; }
    ;;
  qe)
    # Quantum ESPRESSO's pw.x (Fortran, mpif.h): the benchmark's 8-atom silicon cell at a
    # lower cutoff. Its 3-D FFTs' transposes are MPI_Alltoall; a few MPI_Alltoallv come too.
    [[ -f "$here/../../apps/bench/qe_si8.in" ]] || die "no apps/bench/qe_si8.in"
    sed 's/ecutwfc = 60.0/ecutwfc = 20.0/' "$here/../../apps/bench/qe_si8.in" >si8.in
    grep -q 'ecutwfc = 20.0' si8.in || die "could not edit qe_si8.in"
    cmd=(pw.x -in si8.in)
    extract() { grep -E '^(!? +total energy| +estimated scf accuracy| +highest occupied|'\
' +convergence has been achieved| +Dense +grid)' stdout.txt; }
    selfcheck() { grep -q 'JOB DONE' stdout.txt &&
                  grep -q 'convergence has been achieved' stdout.txt; }
    ;;
  fft2d)
    [[ -x "$prog" ]] || die "--program must name the built fft2d_transpose"
    cmd=("$prog" 3 4 50 36)
    extract() { grep -E '^fft2d' stdout.txt; }
    selfcheck() { grep -q '^fft2d ok$' stdout.txt; }
    ;;
  *) die "unknown app '$app'" ;;
esac

if [[ $native -eq 1 ]]; then
  run=("${launch[@]}" "${cmd[@]}")
else
  rm -f -- "$report"
  run=("${launch[@]}" "$cmdrun" --strategy "$strategy" --report "$report" -- "${cmd[@]}")
fi
echo "app_test: $app: ${run[*]}"
start=$SECONDS
timeout --kill-after=10 240 "${run[@]}" >stdout.txt 2>stderr.txt
rc=$?
echo "app_test: $app: exit $rc after $((SECONDS - start)) s"
grep -E '^\[commsched' stderr.txt | head -40
fail=0
if [[ $rc -ne 0 ]]; then
  echo "app_test: FAIL: exit status $rc" >&2; tail -30 stdout.txt stderr.txt >&2; fail=1
elif ! selfcheck; then
  echo "app_test: FAIL: $app's own checks did not pass" >&2; tail -30 stdout.txt >&2; fail=1
fi

if [[ $native -eq 1 ]]; then
  extract >"$numbers"
  echo "app_test: $app: $(wc -l <"$numbers") reference lines in $numbers"
else
  if [[ ! -f "$numbers" ]]; then
    echo "app_test: FAIL: no native reference $numbers" >&2; fail=1
  elif ! extract | diff "$numbers" - >diff.txt; then
    echo "app_test: FAIL: output differs from the native run:" >&2; cat diff.txt >&2; fail=1
  else
    echo "app_test: $app: $(wc -l <"$numbers") output lines identical to the native run"
  fi
  "${PYTHON:-python3}" - "$report" "$expect" <<'EOF' || fail=1
import json, sys
path, expect = sys.argv[1:3]
try:
    r = json.load(open(path))
except (OSError, ValueError) as e:
    print(f"app_test: FAIL: report {path}: {e}", file=sys.stderr); sys.exit(1)
ps = r.get("patterns", [])
print(f"app_test: report: strategy_setting={r.get('strategy_setting')} "
      f"unlearned_calls={r.get('unlearned_calls')} patterns={len(ps)}")
for p in ps:
    print(f"app_test:   comm {p['comm']} pattern {p['pattern']}: {p['comm_size']} ranks, "
          f"{p['nonzeros']} non-zeros, {p['bytes']} bytes, {p['strategy']}, "
          f"{p['calls']} calls, {p['calls_optimised']} optimised")
done = [p for p in ps if p.get("calls_optimised", 0) > 0]
ok = {"none": not done, "any": bool(done), "report": True}.get(
    expect, any(p["strategy"] == expect for p in done))
if expect == "none" and ps:
    ok = False
if not ok:
    print(f"app_test: FAIL: report does not match --expect-strategy {expect}", file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
fi
[[ $fail -eq 0 ]] && echo "app_test: ok"
exit $fail
