#!/usr/bin/env bash
# Installs the Debian 12 packages commsched needs to build, demo and test (both MPI flavours).
# Skips apt-get entirely when everything is already there, so it also works without root then.
set -euo pipefail
packages=(cmake g++ make libgtest-dev libboost-dev openmpi-bin libopenmpi-dev mpich libmpich-dev
          gfortran python3 libtoml11-dev
          clang  # clang: libFuzzer for the trace reader fuzz test
          libsimgrid-dev  # SimGrid SMPI: the simulated benchmark tier (apps/bench, issue 4)
          libmetis-dev    # METIS: partitions the meshes of halo_exchange and cg_solver (issue 6)
          libotf2-trace-dev otf2-tools  # commsched-analyze --otf2 and its read-back test
          environment-modules  # `module load commsched` in the install test
          nlohmann-json3-dev  # header-only JSON: the report and the Chrome trace (required)
          python3-jsonschema  # checks the report against docs/report.schema.json (tests)
          python3-matplotlib) # apps/bench/report.py's figures
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[install] all packages present"
  exit 0
fi
echo "[install] installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
