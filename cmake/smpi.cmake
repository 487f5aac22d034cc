# SimGrid SMPI build of the library (COMMSCHED_SMPI=ON, a separate build tree, e.g.
#   cmake -S . -B build-smpi -DCMAKE_BUILD_TYPE=Release -DCOMMSCHED_SMPI=ON
#   cmake --build build-smpi --target irregular_exchange_smpi).
# SMPI runs every rank as a thread of one process, so a preloaded library would be shared by all
# ranks. Instead the library's sources (every module target under src/ plus the C wrappers) are
# compiled again with smpicxx into a static archive that is linked, whole, into
# irregular_exchange built with smpicxx: SMPI's default privatisation (dlopen) then gives every
# rank its own copy of the library's globals. The wrappers define strong MPI_* symbols; SMPI
# declares its own MPI_* weak and exports PMPI_*, so the wrappers intercept as under a real MPI.
# The smpicxx compiler is swapped in per target through a compiler/linker launcher, so the rest
# of this tree builds as usual. Output: <build>/smpi/irregular_exchange; run it with smpirun, or
# through apps/bench/bench.py smpi. With METIS also <build>/smpi/halo_exchange and cg_solver
# (targets halo_exchange_smpi, cg_solver_smpi; bench.py smpi --set bursts).
option(COMMSCHED_SMPI "Also build the library and the bundled MPI programs for SimGrid SMPI (smpicxx)" OFF)

if(COMMSCHED_SMPI)
  find_program(COMMSCHED_SMPICXX smpicxx)
  find_program(COMMSCHED_SMPIRUN smpirun)
  set(_smpi_ok FALSE)
  if(COMMSCHED_SMPICXX AND COMMSCHED_SMPIRUN)
    execute_process(COMMAND ${COMMSCHED_SMPICXX} --version OUTPUT_VARIABLE _smpi_version
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _smpi_rc)
    if(_smpi_rc EQUAL 0 AND _smpi_version MATCHES "SimGrid version ([0-9]+)\\.([0-9]+)")
      set(COMMSCHED_SIMGRID_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
      if(COMMSCHED_SIMGRID_VERSION VERSION_GREATER_EQUAL 3.30)
        set(_smpi_ok TRUE)
      endif()
    endif()
  endif()
  if(NOT _smpi_ok)
    message(WARNING "commsched: COMMSCHED_SMPI=ON but no usable SimGrid (smpicxx/smpirun >= 3.30; "
                    "found '${_smpi_version}'). SMPI targets skipped; on Debian: "
                    "apt-get install libsimgrid-dev")
  else()
    message(STATUS "commsched: SMPI targets with SimGrid ${COMMSCHED_SIMGRID_VERSION} (${COMMSCHED_SMPICXX})")
    # Created once every module target exists (the end of the top-level CMakeLists.txt).
    function(_commsched_smpi_targets)
      set(_launcher ${PROJECT_SOURCE_DIR}/cmake/smpi_launcher.sh ${COMMSCHED_SMPICXX})
      set(_sources)
      # Every module of src/ that exists as a target; new modules only need adding here.
      foreach(_t commsched_core commsched_settings commsched_plan commsched_cost commsched_learn
                 commsched_trace commsched_exec commsched_burst commsched_intercept)
        if(NOT TARGET ${_t})
          continue()
        endif()
        get_target_property(_dir ${_t} SOURCE_DIR)
        get_target_property(_src ${_t} SOURCES)
        foreach(_s IN LISTS _src)
          if(_s MATCHES "\\.(cpp|cc|cxx)$")
            cmake_path(ABSOLUTE_PATH _s BASE_DIRECTORY ${_dir} OUTPUT_VARIABLE _abs)
            list(APPEND _sources ${_abs})
          endif()
        endforeach()
      endforeach()
      add_library(commsched_smpi STATIC ${_sources} ${PROJECT_SOURCE_DIR}/wrappers/c_wrappers.cpp)
      target_include_directories(commsched_smpi PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
      target_link_libraries(commsched_smpi PRIVATE Boost::headers nlohmann_json::nlohmann_json)
      # SMPI_NO_OVERRIDE_MALLOC: keep smpi_helpers.h's malloc/free macros out of the library.
      # COMMSCHED_VERSION: src/learn sets it on wisdom.cpp for its own target only.
      target_compile_definitions(commsched_smpi PRIVATE SMPI_NO_OVERRIDE_MALLOC COMMSCHED_SMPI=1
                                 COMMSCHED_VERSION="${PROJECT_VERSION}")
      set_target_properties(commsched_smpi PROPERTIES CXX_COMPILER_LAUNCHER "${_launcher}"
                            CXX_VISIBILITY_PRESET default VISIBILITY_INLINES_HIDDEN OFF)

      # One simulated program: its sources and the library, linked with smpicxx.
      function(_commsched_smpi_program _name)
        add_executable(${_name}_smpi ${ARGN})
        # Whole archive: SMPI declares MPI_* weak, and weak references never pull archive members.
        target_link_libraries(${_name}_smpi PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,commsched_smpi>")
        # SMPI loads the program with dlopen and looks up main: keep symbols visible.
        set_target_properties(${_name}_smpi PROPERTIES
                              CXX_COMPILER_LAUNCHER "${_launcher}" CXX_LINKER_LAUNCHER "${_launcher}"
                              CXX_VISIBILITY_PRESET default VISIBILITY_INLINES_HIDDEN OFF
                              OUTPUT_NAME ${_name}
                              RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/smpi)
      endfunction()
      _commsched_smpi_program(irregular_exchange ${PROJECT_SOURCE_DIR}/apps/irregular_exchange.cpp)

      # halo_exchange and cg_solver (issue 6's bursts), when apps/CMakeLists.txt found METIS: the
      # mesh pieces compiled into each program with smpicxx, METIS linked as it is (only rank 0
      # partitions, so the ranks sharing one copy of the shared library is harmless).
      if(TARGET mesh_apps)
        set(_mesh ${PROJECT_SOURCE_DIR}/apps/mesh)
        foreach(_app halo_exchange cg_solver)
          _commsched_smpi_program(${_app} ${PROJECT_SOURCE_DIR}/apps/${_app}.cpp
                                  ${_mesh}/mesh.cpp ${_mesh}/halo.cpp ${_mesh}/program.cpp)
          target_include_directories(${_app}_smpi PRIVATE ${PROJECT_SOURCE_DIR}/apps
                                     ${COMMSCHED_METIS_INCLUDE_DIR})
          target_link_libraries(${_app}_smpi PRIVATE ${COMMSCHED_METIS_LIBRARY})
        endforeach()
      endif()
    endfunction()
    cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _commsched_smpi_targets)
  endif()
endif()
