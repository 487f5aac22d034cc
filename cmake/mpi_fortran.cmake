# commsched_find_mpi_fortran(): enables Fortran and finds MPI's Fortran bindings where
# COMMSCHED_FORTRAN_TESTS is on and a compiler exists. A macro, because FindMPI's results are
# scoped to the directory that calls it: every test directory with Fortran programs calls it.
macro(commsched_find_mpi_fortran)
  if(COMMSCHED_FORTRAN_TESTS)
    include(CheckLanguage)
    check_language(Fortran)
    if(CMAKE_Fortran_COMPILER)
      enable_language(Fortran)
      find_package(MPI COMPONENTS Fortran)
    endif()
  endif()
endmacro()
