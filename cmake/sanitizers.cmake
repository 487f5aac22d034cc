# COMMSCHED_SANITIZE=address,undefined (issue 9): builds the library, the unit tests, the MPI test
# programs and the apps with those sanitizers. Included from the top-level CMakeLists.txt before
# any target, so every target gets the flags.
#
# The preloaded library needs the sanitizer runtime loaded before anything else in programs that
# were not built with it (mpirun, the shell, a user's binary): run_preloaded.sh prepends
# $SANITIZER_RUNTIME to LD_PRELOAD, and commsched_sanitize_tests() gives every MPI test that
# variable plus the options below. UBSan findings abort the test (halt_on_error), ASan's too.
# LeakSanitizer stays on for our code; tests/reliability/lsan.supp silences only what Open MPI,
# its plugins and the launcher leave allocated at exit (see the comments in that file).
set(COMMSCHED_SANITIZE "" CACHE STRING
    "Comma-separated sanitizers for every target: address, undefined (empty: none)")

set(COMMSCHED_SANITIZER_RUNTIME "")
set(COMMSCHED_SANITIZER_ENV "")
if(COMMSCHED_SANITIZE)
  string(REPLACE "," ";" _commsched_san "${COMMSCHED_SANITIZE}")
  foreach(_s IN LISTS _commsched_san)
    if(NOT _s MATCHES "^(address|undefined)$")
      message(FATAL_ERROR "COMMSCHED_SANITIZE: unknown sanitizer '${_s}' (address, undefined)")
    endif()
  endforeach()
  string(REPLACE ";" "," _commsched_flag "${_commsched_san}")
  add_compile_options(-fsanitize=${_commsched_flag} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${_commsched_flag})
  # A shared library built with -fsanitize=address leaves the runtime's symbols undefined for
  # the executable to provide; -z defs would reject that, so nothing here asks for it.

  set(_commsched_opts "")
  if("address" IN_LIST _commsched_san)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE _asan OUTPUT_STRIP_TRAILING_WHITESPACE)
    file(REAL_PATH "${_asan}" COMMSCHED_SANITIZER_RUNTIME)
    if(NOT EXISTS "${COMMSCHED_SANITIZER_RUNTIME}")
      message(FATAL_ERROR "COMMSCHED_SANITIZE=address: no libasan.so next to ${CMAKE_CXX_COMPILER}")
    endif()
    # fast_unwind_on_malloc=0: Open MPI's components are dlclose()d before LeakSanitizer runs,
    # so only full stacks reach the libopen-*/libmpi frames lsan.supp names (~20 % slower).
    list(APPEND COMMSCHED_SANITIZER_ENV
         "ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0"
         "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/reliability/lsan.supp:print_suppressions=0"
         "SANITIZER_RUNTIME=${COMMSCHED_SANITIZER_RUNTIME}")
  endif()
  if("undefined" IN_LIST _commsched_san)
    list(APPEND COMMSCHED_SANITIZER_ENV "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
  endif()
  message(STATUS "commsched: sanitizers ${_commsched_flag}"
                 " (runtime preloaded for MPI tests: ${COMMSCHED_SANITIZER_RUNTIME})")
endif()

# Gives every test registered so far in the calling directory the sanitizer environment. Call it
# deferred (cmake_language(DEFER CALL commsched_sanitize_tests)) so later registrations count.
function(commsched_sanitize_tests)
  if(NOT COMMSCHED_SANITIZER_ENV)
    return()
  endif()
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_t IN LISTS _tests)
    set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT ${COMMSCHED_SANITIZER_ENV})
  endforeach()
endfunction()
