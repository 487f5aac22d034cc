# Smoke runs of the two benchmark tiers (issue 4), label `bench`; included from
# tests/mpi/CMakeLists.txt. Each takes seconds; each skips (CTest "Skipped") where its tier cannot
# run: the emulated cluster needs root and tbf, the SMPI tier a tree configured with
# -DCOMMSCHED_SMPI=ON and SimGrid. RUN_SERIAL: the emulated cluster times real TCP transfers.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
foreach(_tier netns smpi)
  add_test(NAME bench.${_tier}.smoke
           COMMAND ${COMMSCHED_BASH} ${PROJECT_SOURCE_DIR}/tests/bench/smoke.sh ${_tier}
                   ${CMAKE_BINARY_DIR})
  set_tests_properties(bench.${_tier}.smoke PROPERTIES LABELS bench TIMEOUT 150 RUN_SERIAL TRUE
                       SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endforeach()
# The harness itself, no benchmark run: a stand-in smpirun makes points abort and go wrong, and
# bench.py must exit 1 and show them FAILED.
add_test(NAME bench.harness_failures
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/bench/bench_failures.py)
set_tests_properties(bench.harness_failures PROPERTIES LABELS unit TIMEOUT 120)
# The application tier's smoke point: one small unmodified program (the Fortran FFT, else the
# FFTW driver) at 2 ranks in shared memory, one native and one preloaded run; it fails unless
# the preloaded run's own output equals the native run's and the library wrote its report.
# Skipped where no application is available (no MPI Fortran and no FFTW MPI headers).
add_test(NAME bench.apps.smoke
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/apps/bench/bench.py apps --smoke
                 --app-ranks 2 --timeout 50 --build ${CMAKE_BINARY_DIR}
                 --out ${CMAKE_BINARY_DIR}/bench/apps-smoke.jsonl)
set_tests_properties(bench.apps.smoke PROPERTIES LABELS bench TIMEOUT 60
                     SKIP_REGULAR_EXPRESSION "SKIPPED: apps: no application")
# The application tier's harness, no MPI: a stand-in mpirun makes the preloaded run print other
# numbers, write no report or crash, and bench.py apps must exit 1 and show it FAILED.
add_test(NAME bench.apps_failures
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/bench/apps_failures.py)
set_tests_properties(bench.apps_failures PROPERTIES LABELS unit TIMEOUT 120
                     PASS_REGULAR_EXPRESSION "apps_failures: ok")
# The whole-job tier's smoke point (Open MPI builds: the tier launches with mpirun.openmpi): a
# 20-call job and the 100-calls-per-size sweep at 2 ranks in shared memory, one A/B pair. It
# fails when a run fails, a program finds wrong bytes, or the two runs' checksums differ; its
# ratios are printed, not checked (a timed test on a shared machine would flake).
if(COMMSCHED_MPI_FLAVOR STREQUAL "openmpi")
  add_test(NAME bench.e2e.smoke
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/apps/bench/bench.py e2e
                   --machines shm --e2e-ranks 2 --pairs 1 --workloads short20_1k,sweep_100
                   --timeout 60 --build ${CMAKE_BINARY_DIR}
                   --out ${CMAKE_BINARY_DIR}/bench/e2e-smoke.jsonl)
  set_tests_properties(bench.e2e.smoke PROPERTIES LABELS bench TIMEOUT 120)
endif()
