#!/usr/bin/env bash
# Installs one or more commsched build trees into one temporary prefix (an Open MPI and an MPICH
# tree side by side) and checks what a user of that prefix gets, for each flavour installed:
#   1. the layout: library under lib/, tools under bin/, machine presets under share/commsched/,
#      the CMake package and the pkg-config file;
#   2. find_package(commsched): examples/link_cmake builds against the prefix, links the library
#      ahead of libmpi, and its run is intercepted (the report lists the pattern, optimised);
#   3. pkg-config: examples/link_pkgconfig, the same;
#   4. bin/commsched-run: --dry-run names the right library for an unlinked MPI program, a real
#      run through it is intercepted, and a non-MPI program or a script is refused (exit 2);
#   5. the module file share/commsched/modulefiles/<pkg-config name>/<version>: it names this
#      prefix, and where environment modules are installed (Debian environment-modules),
#      `module load` sets COMMSCHED_ROOT, PATH and COMMSCHED_PRELOAD, with which a run
#      preloaded by hand is intercepted.
#
#   install_test.sh --source SRC --build BUILD [--build BUILD2] [--keep]
# Each build tree's flavour and launcher come from its CMakeCache.txt. Used by CTest (label
# `install`, one tree) and tests/run_tests.sh (both trees side by side).
set -u

die() { echo "install_test: $*" >&2; exit 2; }
src="" keep=0
builds=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --source) src="${2-}"; shift 2 ;;
    --build) builds+=("${2-}"); shift 2 ;;
    --keep) keep=1; shift ;;
    *) die "unknown option '$1'" ;;
  esac
done
[[ -n "$src" && ${#builds[@]} -gt 0 ]] || die "usage: install_test.sh --source SRC --build BUILD..."

tmp="$(mktemp -d)" || die "mktemp failed"
if [[ $keep -eq 0 ]]; then trap 'rm -rf -- "$tmp"' EXIT; else echo "install_test: keeping $tmp"; fi
prefix="$tmp/prefix"
export TMPDIR="$tmp"   # Open MPI's session directory: one per test run (see run_preloaded.sh)
# Hermetic: the runs below must be intercepted by linking, not by an inherited preload.
unset LD_PRELOAD
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^COMMSCHED_' || true)

fail=0
check() {  # check DESCRIPTION COMMAND...: runs it, prints ok/FAIL
  if "${@:2}" >"$tmp/check.out" 2>&1; then
    echo "install_test: ok   $1"
  else
    echo "install_test: FAIL $1" >&2
    sed 's/^/    /' "$tmp/check.out" >&2
    fail=1
  fi
}
cache() { sed -n "s/^$1:[A-Z]*=//p" "$2/CMakeCache.txt" | head -1; }
# Environment modules' shell setup (Debian environment-modules; MODULES_INIT names another).
modules_init="${MODULES_INIT:-/usr/share/modules/init/bash}"

# Every run is checked against its own report: a pattern of the program, optimised by `color`.
report_check() {  # report_check REPORT
  "${PYTHON:-python3}" - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ps = r.get("patterns", [])
print("report: " + (", ".join(f"{p['strategy']}(n={p['comm_size']} calls={p['calls']} "
                               f"optimised={p['calls_optimised']})" for p in ps) or "no patterns"))
sys.exit(0 if any(p["strategy"] == "color" and p["calls_optimised"] > 0 for p in ps) else 1)
EOF
}
run_app() {  # run_app LAUNCH_PREFIX... -- PROGRAM: runs with a report, checks output and report
  local report="$tmp/report.json"
  rm -f "$report"
  COMMSCHED_STRATEGY=color COMMSCHED_REPORT="$report" timeout 120 "$@" || return 1
  report_check "$report"
}

echo "install_test: installing ${builds[*]} into $prefix"
for b in "${builds[@]}"; do
  [[ -f "$b/CMakeCache.txt" ]] || die "'$b' is not a configured build tree"
  cmake --install "$b" --prefix "$prefix" >"$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log" >&2; die "cmake --install $b failed"; }
done
libdir="$(cache CMAKE_INSTALL_LIBDIR "${builds[0]}")"
bindir="$(cache CMAKE_INSTALL_BINDIR "${builds[0]}")"
datadir="$(cache CMAKE_INSTALL_DATADIR "${builds[0]}")"
libdir="${libdir:-lib}" bindir="${bindir:-bin}" datadir="${datadir:-share}"
(cd "$prefix" && find . -type f -o -type l | sort | sed 's/^\.\//    /')

check "tools under $bindir/" test -x "$prefix/$bindir/commsched-info" -a \
  -x "$prefix/$bindir/commsched-analyze" -a -x "$prefix/$bindir/commsched-run"
check "machine presets under $datadir/commsched/machines" test -f "$prefix/$datadir/commsched/machines/default.toml"
check "CMake package" test -f "$prefix/$libdir/cmake/commsched/commschedConfig.cmake"
check "commsched-info runs from the prefix" "$prefix/$bindir/commsched-info" --strategies
refuses() {  # refuses PATTERN COMMAND...: exit status 2 and an error matching PATTERN
  local out rc
  out="$("${@:2}" 2>&1)"; rc=$?
  echo "$out"
  [[ $rc -eq 2 && "$out" == *"$1"* ]]
}
check "commsched-run refuses a non-MPI program" \
  refuses "not an MPI program" "$prefix/$bindir/commsched-run" --dry-run -- /bin/true
printf '#!/bin/sh\necho hi\n' >"$tmp/script.sh"; chmod +x "$tmp/script.sh"
check "commsched-run refuses a script without --mpi" \
  refuses "not a dynamically linked program" "$prefix/$bindir/commsched-run" -- "$tmp/script.sh"
check "commsched-run runs nothing on an unknown option" \
  refuses "unknown option" "$prefix/$bindir/commsched-run" --bogus -- "$tmp/script.sh"

for b in "${builds[@]}"; do
  flavour="$(cache COMMSCHED_MPI_FLAVOR "$b")"
  mpiexec="$(cache MPIEXEC_EXECUTABLE "$b")"
  npflag="$(cache MPIEXEC_NUMPROC_FLAG "$b")"
  IFS=';' read -r -a preflags <<<"$(cache MPIEXEC_PREFLAGS "$b")"
  mpicc="$(cache MPI_C_COMPILER "$b")"
  if [[ "$flavour" == mpich ]]; then np=2 lib=libcommsched_mpich.so pc=commsched-mpich
  else np=4 lib=libcommsched.so pc=commsched; fi
  launch=("$mpiexec" "$npflag" "$np" "${preflags[@]+"${preflags[@]}"}")
  echo "install_test: --- $flavour ($mpicc, ${launch[*]})"
  check "$flavour: $libdir/$lib" test -f "$prefix/$libdir/$lib"
  check "$flavour: $libdir/pkgconfig/$pc.pc" test -f "$prefix/$libdir/pkgconfig/$pc.pc"

  # find_package(commsched)
  ex="$tmp/link_cmake_$flavour"
  check "$flavour: find_package example configures and builds" bash -c \
    "cmake -S '$src/examples/link_cmake' -B '$ex' -DCMAKE_PREFIX_PATH='$prefix' \
       -DCOMMSCHED_FLAVOR=$flavour -DMPI_C_COMPILER='$mpicc' && cmake --build '$ex'"
  check "$flavour: find_package example links commsched before MPI" bash -c \
    "readelf -d '$ex/exchange' | grep NEEDED | grep -nE 'libcommsched|libmpi' | head -1 | grep -q libcommsched"
  check "$flavour: find_package example intercepted (linked, not preloaded)" \
    run_app "${launch[@]}" "$ex/exchange"
  cat "$tmp/check.out"

  # pkg-config
  check "$flavour: pkg-config example builds" env PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" \
    make -C "$src/examples/link_pkgconfig" MPICC="$mpicc" PACKAGE="$pc" OUT="$tmp/exchange_pc_$flavour"
  check "$flavour: pkg-config example intercepted" run_app "${launch[@]}" "$tmp/exchange_pc_$flavour"
  cat "$tmp/check.out"

  # commsched-run on a program that does not link commsched
  check "$flavour: plain build of the example" "$mpicc" -O2 -o "$tmp/exchange_plain_$flavour" \
    "$src/examples/exchange.c"
  check "$flavour: commsched-run --dry-run picks $lib" bash -c \
    "'$prefix/$bindir/commsched-run' --dry-run --strategy color -- '$tmp/exchange_plain_$flavour' \
       | tee /dev/stderr | grep -q 'LD_PRELOAD=$(readlink -f "$prefix/$libdir")/$lib'"
  cat "$tmp/check.out"
  check "$flavour: mpiexec ... commsched-run -- app is intercepted" \
    run_app "${launch[@]}" "$prefix/$bindir/commsched-run" -- "$tmp/exchange_plain_$flavour"
  cat "$tmp/check.out"

  # The module file, read as text, then loaded where environment modules are installed.
  version="$(cache CMAKE_PROJECT_VERSION "$b")"
  modfile="$prefix/$datadir/commsched/modulefiles/$pc/$version"
  check "$flavour: module file names the prefix and $lib" bash -c \
    "grep -qx 'set root \"$prefix\"' '$modfile' &&
     grep -q 'setenv COMMSCHED_PRELOAD \"\$root/$libdir/$lib\"' '$modfile'"
  if [[ -f "$modules_init" ]]; then
    loaded() (  # in a subshell: the environment `module load $pc` gives, then a run with it
      source "$modules_init" && module use "$prefix/$datadir/commsched/modulefiles" &&
        module load "$pc/$version" || return 1
      echo "COMMSCHED_ROOT=$COMMSCHED_ROOT COMMSCHED_PRELOAD=$COMMSCHED_PRELOAD"
      [[ "$COMMSCHED_ROOT" == "$prefix" && "$COMMSCHED_PRELOAD" == "$prefix/$libdir/$lib" &&
         -f "$COMMSCHED_PRELOAD" && "$(command -v commsched-info)" == "$prefix/$bindir/commsched-info" ]] ||
        return 1
      run_app env LD_PRELOAD="$COMMSCHED_PRELOAD" "${launch[@]}" "$tmp/exchange_plain_$flavour"
    )
    check "$flavour: module load $pc, then LD_PRELOAD=\$COMMSCHED_PRELOAD is intercepted" loaded
    cat "$tmp/check.out"
  else
    echo "install_test: skip $flavour: module load (environment modules not installed)"
  fi
done

if [[ $fail -ne 0 ]]; then echo "install_test: FAILED" >&2; exit 1; fi
echo "install_test: all ok"
