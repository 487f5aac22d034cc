# How other projects find an installed commsched (issue 8): a CMake package (find_package) and
# pkg-config files, for users who link the library instead of preloading it. Each flavour's tree
# installs its own targets file, so an Open MPI and an MPICH build installed into one prefix give
#   commsched::commsched        libcommsched.so        (Open MPI)   pkg-config commsched
#   commsched::commsched_mpich  libcommsched_mpich.so  (MPICH)      pkg-config commsched-mpich
# The library has no headers: linking it ahead of libmpi is enough, its MPI_* symbols come first.
include(CMakePackageConfigHelpers)
set(COMMSCHED_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/commsched)

if(COMMSCHED_MPI_FLAVOR STREQUAL "mpich")
  set(_commsched_pc commsched-mpich)
  set(_commsched_mpi_name "MPICH")
else()
  set(_commsched_pc commsched)
  set(_commsched_mpi_name "Open MPI")
endif()

install(EXPORT commsched_${COMMSCHED_MPI_FLAVOR}_targets NAMESPACE commsched::
        FILE commsched-${COMMSCHED_MPI_FLAVOR}-targets.cmake DESTINATION ${COMMSCHED_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/commschedConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/commschedConfig.cmake
                              INSTALL_DESTINATION ${COMMSCHED_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/commschedConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/commschedConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/commschedConfigVersion.cmake
        DESTINATION ${COMMSCHED_CMAKE_DIR})

# pkg-config: libdir relative to the .pc file, so `cmake --install --prefix` anywhere works.
file(RELATIVE_PATH _commsched_pc_up /_/${CMAKE_INSTALL_LIBDIR}/pkgconfig /_)
configure_file(${CMAKE_CURRENT_LIST_DIR}/commsched.pc.in
               ${CMAKE_CURRENT_BINARY_DIR}/${_commsched_pc}.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${_commsched_pc}.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
