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

# An environment-modules / Lmod module file, share/commsched/modulefiles/<name>/<version>
# (commsched for Open MPI, commsched-mpich for MPICH, so both flavours load side by side):
#   module use PREFIX/share/commsched/modulefiles && module load commsched
# It names the prefix it was installed to, which `cmake --install --prefix` may change after
# configuring: so it is configured by the install step itself, where CMAKE_INSTALL_PREFIX is
# the real one.
set(_commsched_module_dir ${CMAKE_INSTALL_DATADIR}/commsched/modulefiles/${_commsched_pc})
install(CODE "
  get_filename_component(_commsched_root \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(COMMSCHED_LIB_NAME \"${COMMSCHED_LIB_NAME}\")
  set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CMAKE_INSTALL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(_commsched_mpi_name \"${_commsched_mpi_name}\")
  set(_module \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${_commsched_module_dir}/${PROJECT_VERSION}\")
  message(STATUS \"Installing: \${_module}\")
  configure_file(\"${CMAKE_CURRENT_LIST_DIR}/commsched.module.in\" \"\${_module}\" @ONLY)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_module}\")
")
