# cmake/LarmorInstall.cmake: `cmake --install` of larmor. Included by the
# top-level CMakeLists.txt once its targets exist.
#
#   bin/larmor                        the program
#   lib/liblarmor_{core,kernels}.a    the libraries, exported as larmor::larmor
#   include/larmor/...                the public headers (below)
#   lib/cmake/larmor/                 larmorConfig.cmake for find_package(larmor)
#   include/, lib/ (Kokkos)           with LARMOR_INSTALL_KOKKOS: the Kokkos and
#                                     Kokkos Kernels install larmor was built with
#
# The package names no path of the build machine: larmorConfig.cmake finds
# Kokkos again in its own prefix (where LARMOR_INSTALL_KOKKOS put it), through
# CMAKE_PREFIX_PATH, or at Kokkos_ROOT; the other dependencies are system
# packages named by their plain paths. LARMOR_INSTALL_KOKKOS is on by default
# when Kokkos and Kokkos Kernels share a prefix of their own (the layout that
# scripts/setup builds), off for a Kokkos of the system or of a module.
#
# Public headers are those of src/ outside an `impl/` folder (template
# implementations, device-side helpers and the deck reader's TOML tables,
# which only the library's own sources include: no installed header needs
# toml++), installed with every project header they include (from kernels/
# too, e.g. the launch options) and nothing else.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LARMOR_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/larmor")
set(LARMOR_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/larmor")
set(LARMOR_LIBRARY_PRIVATE_HEADER_PATTERN "/impl/[a-z_]+\.hpp$")
# ... and what the executables alone link (src/cli; the bench's timed
# launches) is not the library's at all.
set(LARMOR_PRIVATE_HEADER_PATTERN
    "(cli/[a-z_]+\\.hpp|simulate/kernel_timing\\.hpp|${LARMOR_LIBRARY_PRIVATE_HEADER_PATTERN})")

add_library(larmor::larmor ALIAS larmor_library)
set_target_properties(larmor_library PROPERTIES EXPORT_NAME larmor)
set_target_properties(larmor_core PROPERTIES EXPORT_NAME core)
set_target_properties(larmor_other_backends PROPERTIES EXPORT_NAME other_backends)
set_target_properties(larmor_kernels PROPERTIES EXPORT_NAME kernels)

# The third-party usage larmor_core carries (cmake/LarmorDependencies.cmake)
# travels with it as larmor::detail_* targets; they name plain paths and only
# the Kokkos and MPI targets larmorConfig.cmake finds again.
set(_larmor_dependency_targets)
foreach(_dep IN ITEMS hdf5 tomlplusplus ismrmrd nifti lapack kokkoskernels)
  set(_real _larmordep_larmor_${_dep})
  set_target_properties(${_real} PROPERTIES EXPORT_NAME detail_${_dep})
  list(APPEND _larmor_dependency_targets ${_real})
endforeach()

get_filename_component(_larmor_kokkos_prefix "${Kokkos_DIR}/../../.." ABSOLUTE)
get_filename_component(_larmor_kernels_prefix "${KokkosKernels_DIR}/../../.." ABSOLUTE)
get_filename_component(_larmor_kokkos_prefix_name "${_larmor_kokkos_prefix}" NAME)
set(_larmor_bundle_default OFF)
if(_larmor_kokkos_prefix STREQUAL _larmor_kernels_prefix AND
   _larmor_kokkos_prefix_name MATCHES "^kokkos-")
  set(_larmor_bundle_default ON)
endif()
option(LARMOR_INSTALL_KOKKOS "Install the Kokkos and Kokkos Kernels larmor was built with"
       ${_larmor_bundle_default})
if(LARMOR_INSTALL_KOKKOS)
  foreach(_prefix IN LISTS _larmor_kokkos_prefix _larmor_kernels_prefix)
    install(DIRECTORY "${_prefix}/" DESTINATION . USE_SOURCE_PERMISSIONS)
  endforeach()
endif()

install(TARGETS larmor RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS larmor_library larmor_core larmor_other_backends larmor_kernels ${_larmor_dependency_targets}
        EXPORT larmorTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${LARMOR_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT larmorTargets NAMESPACE larmor:: DESTINATION ${LARMOR_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/larmorConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/larmorConfig.cmake
                              INSTALL_DESTINATION ${LARMOR_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/larmorConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/larmorConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/larmorConfigVersion.cmake
        DESTINATION ${LARMOR_INSTALL_CMAKEDIR})

# The headers are collected when installing, so that the set follows the
# includes as they are then.
install(CODE "
  set(LARMOR_HEADER_ROOTS \"${PROJECT_SOURCE_DIR}/src;${PROJECT_SOURCE_DIR}/kernels;${PROJECT_BINARY_DIR}/generated\")
  set(LARMOR_PRIVATE_HEADER_PATTERN \"${LARMOR_PRIVATE_HEADER_PATTERN}\")
  set(LARMOR_HEADER_DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${LARMOR_INSTALL_INCLUDEDIR}\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/LarmorInstallHeaders.cmake\")
")
