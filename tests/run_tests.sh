#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as errors, runs every unit
# and MPI test for Open MPI, then builds the MPICH flavour and runs its (2-rank) MPI tests.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/apps/install_deps.sh"
jobs=$(nproc)
build="${COMMSCHED_BUILD:-$here/build-test}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMSCHED_WERROR=ON
cmake --build "$build" -j"$jobs"
(cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 300)
if [ "${COMMSCHED_SKIP_MPICH:-0}" != 1 ]; then
  cmake -S "$here" -B "$build-mpich" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMSCHED_WERROR=ON \
    -DCOMMSCHED_MPI_FLAVOR=mpich
  cmake --build "$build-mpich" -j"$jobs"
  (cd "$build-mpich" && ctest --output-on-failure -L mpi --timeout 300)
fi
