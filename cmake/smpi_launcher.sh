#!/bin/sh
# CMake compiler/linker launcher for the SMPI targets (cmake/smpi.cmake): CMake calls
# "smpi_launcher.sh SMPICXX <configured compiler> ARGS..."; we drop the configured compiler and
# run SimGrid's smpicxx, which adds SMPI's headers, -fPIC, and at link time -shared -lsimgrid.
smpicxx=$1
shift 2
exec "$smpicxx" "$@"
