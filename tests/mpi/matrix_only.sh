#!/usr/bin/env bash
# irregular_exchange --matrix-only N writes the matrix a real N-rank run exchanges: compare the
# two for several patterns.
# usage: matrix_only.sh OUT_PREFIX PROGRAM NP MPIEXEC NP_FLAG [PREFLAGS...]
set -euo pipefail
out=$1 prog=$2 np=$3 mpiexec=$4 npflag=$5
shift 5
for p in uniform skewed hotspot transport fft3d fan; do
  "$mpiexec" "$npflag" "$np" "$@" "$prog" --pattern "$p" --iterations 1 --unit 64 \
    --matrix-out "$out.run.$p" > /dev/null
  "$mpiexec" "$npflag" 1 "$@" "$prog" --pattern "$p" --unit 64 --matrix-only "$np" \
    --matrix-out "$out.only.$p"
  cmp "$out.run.$p" "$out.only.$p"
done
echo matrices-equal
