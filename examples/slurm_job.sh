#!/bin/bash
# A Slurm job running an unmodified MPI program with commsched. Submit: sbatch slurm_job.sh
# Edit PREFIX (where commsched was installed) and the program line.
#SBATCH --job-name=app-commsched
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=16
#SBATCH --time=00:30:00
set -euo pipefail
PREFIX=${COMMSCHED_PREFIX:-/opt/commsched}
out="commsched-$SLURM_JOB_ID"
mkdir -p "$out"

# commsched-run runs once per rank, after the launcher: it picks libcommsched.so (Open MPI) or
# libcommsched_mpich.so (MPICH) by what ./app links, sets LD_PRELOAD and the COMMSCHED_*
# variables, and execs ./app. The same line works with mpirun instead of srun.
srun "$PREFIX/bin/commsched-run" --strategy auto --report "$out/report.json" \
     --trace "$out/trace" -- ./app input.dat

# Without commsched-run: preload by hand (Open MPI build shown).
#   srun --export=ALL,LD_PRELOAD=$PREFIX/lib/libcommsched.so,COMMSCHED_REPORT=$out/report.json ./app input.dat

# Afterwards: what was learned and chosen, per pattern; what-if per strategy from the traces.
#   python3 -m json.tool "$out/report.json"
#   "$PREFIX/bin/commsched-analyze" "$out/trace"
