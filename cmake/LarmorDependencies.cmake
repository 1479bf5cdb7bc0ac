# cmake/LarmorDependencies.cmake: find larmor's third-party dependencies.
#
# Included by the top-level CMakeLists.txt after project(larmor LANGUAGES CXX).
# Kokkos/Kokkos Kernels come from Kokkos_ROOT/KokkosKernels_ROOT (environment
# or cache), e.g. after: eval "$(scripts/setup --variant openmp --env)".
#
# Targets (always defined unless marked "if found"):
#   Kokkos::kokkos, Kokkos::kokkoskernels   (from the packages themselves)
#   larmor::kokkos          INTERFACE -> Kokkos::kokkos
#   larmor::kokkoskernels   INTERFACE -> Kokkos::kokkoskernels
#   MPI::MPI_C              (FindMPI)
#   larmor::hdf5            HDF5 C includes/libs, LARMOR_HDF5_PARALLEL=1|0
#   larmor::tomlplusplus    toml++ (library, or header-only TOML_HEADER_ONLY=1)
#   larmor::cli11           CLI11
#   GTest::gtest, GTest::gtest_main, GTest::gmock (FindGTest / GTestConfig)
#   larmor::benchmark       Google Benchmark (if found)
#   larmor::ismrmrd         ISMRMRD, or empty; LARMOR_HAVE_ISMRMRD=1|0
#   larmor::nifti           nifti2, or empty;  LARMOR_HAVE_NIFTI=1|0
#   larmor::lapack          LAPACK (+LAPACKE), or empty; LARMOR_HAVE_LAPACK=1|0,
#                           LARMOR_HAVE_LAPACKE=1|0
#
# Variables:
#   LARMOR_KOKKOS_VERSION, LARMOR_KOKKOS_BACKENDS (Kokkos_DEVICES, e.g.
#   "OPENMP;SERIAL"), LARMOR_KOKKOS_HAS_CUDA, LARMOR_KOKKOS_HAS_OPENMP,
#   LARMOR_KOKKOSKERNELS_VERSION, LARMOR_HDF5_PARALLEL,
#   LARMOR_HAVE_BENCHMARK, LARMOR_HAVE_ISMRMRD, LARMOR_HAVE_NIFTI,
#   LARMOR_HAVE_LAPACK, LARMOR_HAVE_LAPACKE (all ON/OFF).
#
# If LARMOR_BACKEND (cuda|openmp|serial) is set, the Kokkos found must
# provide that backend. A host-only Kokkos must pass the View probe of
# cmake/LarmorKokkosProbe.cmake (LARMOR_KOKKOS_VIEW_PROBE).

include_guard(GLOBAL)

# <Pkg>_ROOT (CMake variable or environment) is honoured by find_package.
cmake_policy(SET CMP0074 NEW)

function(_larmor_dep_report name text)
  message(STATUS "[larmor] ${name}: ${text}")
endfunction()

# An INTERFACE target under a larmor:: alias.
function(_larmor_interface_target alias)
  string(REPLACE "::" "_" _real "${alias}")
  set(_real "_larmordep_${_real}")
  if(NOT TARGET ${_real})
    add_library(${_real} INTERFACE)
  endif()
  if(NOT TARGET ${alias})
    add_library(${alias} ALIAS ${_real})
  endif()
  set(_larmor_real_target ${_real} PARENT_SCOPE)
endfunction()

# Imported CUDA targets may name include directories that do not exist:
# CMake >= 4's FindCUDAToolkit copies the folders nvcc reports (with nvcc 13
# also ".../include/cccl") into every CUDA:: target without checking them, a
# Kokkos/Kokkos Kernels config may carry such targets, and a missing folder on
# an imported target is a hard error. Drop such entries (defensive: the
# patched Kokkos 3.4 from scripts/setup exports existing folders only).
function(_larmor_prune_missing_include_dirs)
  foreach(_tgt IN LISTS ARGN)
    if(NOT TARGET ${_tgt})
      continue()
    endif()
    get_target_property(_imported ${_tgt} IMPORTED)
    get_target_property(_aliased ${_tgt} ALIASED_TARGET)
    if(NOT _imported OR _aliased)
      continue()
    endif()
    foreach(_prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
      get_target_property(_dirs ${_tgt} ${_prop})
      if(NOT _dirs)
        continue()
      endif()
      set(_keep)
      set(_dropped)
      foreach(_d IN LISTS _dirs)
        if(_d MATCHES "\\$<" OR IS_DIRECTORY "${_d}")
          list(APPEND _keep "${_d}")
        else()
          list(APPEND _dropped "${_d}")
        endif()
      endforeach()
      if(_dropped)
        set_property(TARGET ${_tgt} PROPERTY ${_prop} "${_keep}")
        message(STATUS "[larmor] ${_tgt}: dropped non-existent include directories ${_dropped}")
      endif()
    endforeach()
  endforeach()
endfunction()

# ---------------------------------------------------------------- Kokkos ---
find_package(Kokkos REQUIRED)
set(LARMOR_KOKKOS_VERSION "${Kokkos_VERSION}")
set(LARMOR_KOKKOS_BACKENDS "${Kokkos_DEVICES}")
set(LARMOR_KOKKOS_HAS_CUDA OFF)
set(LARMOR_KOKKOS_HAS_OPENMP OFF)
if("CUDA" IN_LIST Kokkos_DEVICES)
  set(LARMOR_KOKKOS_HAS_CUDA ON)
endif()
if("OPENMP" IN_LIST Kokkos_DEVICES)
  set(LARMOR_KOKKOS_HAS_OPENMP ON)
endif()
_larmor_prune_missing_include_dirs(CUDA::cudart CUDA::cuda_driver CUDA::toolkit)
string(REPLACE ";" ", " _larmor_backends "${Kokkos_DEVICES}")
if(Kokkos_ARCH)
  string(REPLACE ";" ", " _larmor_arch "${Kokkos_ARCH}")
  _larmor_dep_report("Kokkos" "${Kokkos_VERSION}, backends: ${_larmor_backends}, arch: ${_larmor_arch} (${Kokkos_DIR})")
else()
  _larmor_dep_report("Kokkos" "${Kokkos_VERSION}, backends: ${_larmor_backends} (${Kokkos_DIR})")
endif()

if(DEFINED LARMOR_BACKEND AND NOT LARMOR_BACKEND STREQUAL "")
  string(TOUPPER "${LARMOR_BACKEND}" _larmor_backend_uc)
  if(NOT _larmor_backend_uc IN_LIST Kokkos_DEVICES)
    message(FATAL_ERROR
      "[larmor] LARMOR_BACKEND=${LARMOR_BACKEND}, but the Kokkos in ${Kokkos_DIR} "
      "provides only: ${_larmor_backends}. Point Kokkos_ROOT at a matching install, e.g. "
      "eval \"$(scripts/setup --variant ${LARMOR_BACKEND} --env)\", and reconfigure in a fresh build folder.")
  endif()
endif()

# A Kokkos whose Views crash under this compiler is refused here, with the
# reason, rather than in every test (cmake/LarmorKokkosProbe.cmake).
include(LarmorKokkosProbe)
larmor_check_kokkos_views()

_larmor_interface_target(larmor::kokkos)
target_link_libraries(${_larmor_real_target} INTERFACE Kokkos::kokkos)

find_package(KokkosKernels REQUIRED)
set(LARMOR_KOKKOSKERNELS_VERSION "${KokkosKernels_VERSION}")
_larmor_prune_missing_include_dirs(CUDA::cudart CUDA::cuda_driver CUDA::toolkit CUDA::cublas CUDA::cublasLt)
_larmor_dep_report("KokkosKernels" "${KokkosKernels_VERSION} (${KokkosKernels_DIR})")
_larmor_interface_target(larmor::kokkoskernels)
target_link_libraries(${_larmor_real_target} INTERFACE Kokkos::kokkoskernels)

# ------------------------------------------------------------------- MPI ---
# FindMPI only searches the languages that are enabled.
if(NOT CMAKE_C_COMPILER_LOADED)
  enable_language(C)
endif()
find_package(MPI REQUIRED COMPONENTS C)
set(_larmor_mpi_lib "${MPI_C_LIBRARY_VERSION_STRING}")
if(_larmor_mpi_lib)
  string(REGEX REPLACE "[\r\n].*" "" _larmor_mpi_lib "${_larmor_mpi_lib}")
  string(REGEX REPLACE ",.*" "" _larmor_mpi_lib "${_larmor_mpi_lib}")
else()
  list(GET MPI_C_LIBRARIES 0 _larmor_mpi_lib)
endif()
_larmor_dep_report("MPI" "MPI ${MPI_C_VERSION} (${_larmor_mpi_lib})")

# ------------------------------------------------------------------ HDF5 ---
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
_larmor_interface_target(larmor::hdf5)
if(HDF5_C_INCLUDE_DIRS)
  target_include_directories(${_larmor_real_target} SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS})
else()
  target_include_directories(${_larmor_real_target} SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
endif()
if(HDF5_C_LIBRARIES)
  target_link_libraries(${_larmor_real_target} INTERFACE ${HDF5_C_LIBRARIES})
else()
  target_link_libraries(${_larmor_real_target} INTERFACE ${HDF5_LIBRARIES})
endif()
set(_larmor_hdf5_defs)
foreach(_def IN LISTS HDF5_C_DEFINITIONS HDF5_DEFINITIONS)
  string(REGEX REPLACE "^-D" "" _def "${_def}")
  if(_def)
    list(APPEND _larmor_hdf5_defs "${_def}")
  endif()
endforeach()
if(_larmor_hdf5_defs)
  list(REMOVE_DUPLICATES _larmor_hdf5_defs)
  target_compile_definitions(${_larmor_real_target} INTERFACE ${_larmor_hdf5_defs})
endif()
if(HDF5_IS_PARALLEL)
  set(LARMOR_HDF5_PARALLEL ON)
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HDF5_PARALLEL=1)
  # parallel HDF5's headers include mpi.h
  target_link_libraries(${_larmor_real_target} INTERFACE MPI::MPI_C)
  _larmor_dep_report("HDF5" "${HDF5_VERSION}, parallel")
else()
  set(LARMOR_HDF5_PARALLEL OFF)
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HDF5_PARALLEL=0)
  _larmor_dep_report("HDF5" "${HDF5_VERSION}, serial (parallel HDF5 not found: writes go through one rank)")
endif()

# ----------------------------------------------------------------- toml++ ---
_larmor_interface_target(larmor::tomlplusplus)
find_package(PkgConfig QUIET)
set(_larmor_toml_done FALSE)
if(PkgConfig_FOUND)
  pkg_check_modules(LARMOR_TOMLPP QUIET tomlplusplus)
  if(LARMOR_TOMLPP_FOUND)
    # Paths and flags rather than an imported PkgConfig:: target: the installed
    # larmor::larmor must name only targets its users have (larmorConfig.cmake).
    foreach(_dir IN LISTS LARMOR_TOMLPP_INCLUDE_DIRS)  # for the build only, as below
      target_include_directories(${_larmor_real_target} SYSTEM INTERFACE "$<BUILD_INTERFACE:${_dir}>")
    endforeach()
    target_link_libraries(${_larmor_real_target} INTERFACE ${LARMOR_TOMLPP_LINK_LIBRARIES})
    target_compile_options(${_larmor_real_target} INTERFACE ${LARMOR_TOMLPP_CFLAGS_OTHER})
    _larmor_dep_report("toml++" "${LARMOR_TOMLPP_VERSION} (pkg-config)")
    set(_larmor_toml_done TRUE)
  endif()
endif()
if(NOT _larmor_toml_done)
  find_path(LARMOR_TOMLPP_INCLUDE_DIR toml++/toml.h
    HINTS ${TOMLPLUSPLUS_ROOT} ENV TOMLPLUSPLUS_ROOT PATH_SUFFIXES include)
  find_library(LARMOR_TOMLPP_LIBRARY tomlplusplus
    HINTS ${TOMLPLUSPLUS_ROOT} ENV TOMLPLUSPLUS_ROOT PATH_SUFFIXES lib lib64)
  if(NOT LARMOR_TOMLPP_INCLUDE_DIR)
    message(FATAL_ERROR "[larmor] toml++ not found: install libtomlplusplus-dev, or set TOMLPLUSPLUS_ROOT "
                        "(or CMAKE_PREFIX_PATH) to a folder holding include/toml++/toml.h")
  endif()
  # No installed header includes toml++ (cmake/LarmorInstall.cmake): its
  # headers serve the build only, wherever they are (.deps/h200 is in the tree).
  target_include_directories(${_larmor_real_target} SYSTEM INTERFACE
                             "$<BUILD_INTERFACE:${LARMOR_TOMLPP_INCLUDE_DIR}>")
  if(LARMOR_TOMLPP_LIBRARY)
    target_link_libraries(${_larmor_real_target} INTERFACE "${LARMOR_TOMLPP_LIBRARY}")
    target_compile_definitions(${_larmor_real_target} INTERFACE TOML_HEADER_ONLY=0 TOML_SHARED_LIB=1)
    _larmor_dep_report("toml++" "library ${LARMOR_TOMLPP_LIBRARY}")
  else()
    target_compile_definitions(${_larmor_real_target} INTERFACE TOML_HEADER_ONLY=1)
    _larmor_dep_report("toml++" "header-only (${LARMOR_TOMLPP_INCLUDE_DIR})")
  endif()
endif()

# ------------------------------------------------------------------ CLI11 ---
_larmor_interface_target(larmor::cli11)
find_package(CLI11 CONFIG QUIET)
if(TARGET CLI11::CLI11)
  target_link_libraries(${_larmor_real_target} INTERFACE CLI11::CLI11)
  _larmor_dep_report("CLI11" "${CLI11_VERSION} (${CLI11_DIR})")
else()
  find_path(LARMOR_CLI11_INCLUDE_DIR CLI/CLI.hpp HINTS ${CLI11_ROOT} ENV CLI11_ROOT PATH_SUFFIXES include)
  if(NOT LARMOR_CLI11_INCLUDE_DIR)
    message(FATAL_ERROR "[larmor] CLI11 not found: install libcli11-dev, or set CLI11_ROOT")
  endif()
  target_include_directories(${_larmor_real_target} SYSTEM INTERFACE "${LARMOR_CLI11_INCLUDE_DIR}")
  _larmor_dep_report("CLI11" "header-only (${LARMOR_CLI11_INCLUDE_DIR})")
endif()

# ------------------------------------------------------------------ GTest ---
find_package(GTest REQUIRED)
if(NOT TARGET GTest::gtest AND TARGET GTest::GTest)
  add_library(GTest::gtest ALIAS GTest::GTest)
endif()
if(NOT TARGET GTest::gtest_main AND TARGET GTest::Main)
  add_library(GTest::gtest_main ALIAS GTest::Main)
endif()
if(GTest_VERSION)
  _larmor_dep_report("GoogleTest" "${GTest_VERSION}")
else()
  _larmor_dep_report("GoogleTest" "found")
endif()

# -------------------------------------------------------------- Benchmark ---
set(LARMOR_HAVE_BENCHMARK OFF)
find_package(benchmark CONFIG QUIET)
if(TARGET benchmark::benchmark)
  set(LARMOR_HAVE_BENCHMARK ON)
  _larmor_interface_target(larmor::benchmark)
  target_link_libraries(${_larmor_real_target} INTERFACE benchmark::benchmark)
  _larmor_dep_report("Google Benchmark" "${benchmark_VERSION}")
else()
  _larmor_dep_report("Google Benchmark" "not found, benchmarks disabled")
endif()

# ---------------------------------------------------------------- ISMRMRD ---
set(LARMOR_HAVE_ISMRMRD OFF)
_larmor_interface_target(larmor::ismrmrd)
find_package(ISMRMRD CONFIG QUIET)
if(TARGET ISMRMRD::ISMRMRD)
  set(LARMOR_HAVE_ISMRMRD ON)
  # Debian's ISMRMRD target carries the *serial* HDF5 headers and library.
  # Mixed with parallel HDF5 the include order decides which H5pubconf.h
  # wins and the link order which flavour our H5* calls bind to. libismrmrd.so
  # keeps its own HDF5 at run time (Debian versions the HDF5 symbols per
  # flavour); at build time we give it larmor::hdf5 instead.
  # The library and its usage are copied as paths, not as the imported target,
  # so that the installed larmor::larmor names no ISMRMRD:: target.
  get_target_property(_larmor_ismrmrd_library ISMRMRD::ISMRMRD LOCATION)
  get_target_property(_larmor_ismrmrd_includes ISMRMRD::ISMRMRD INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(_larmor_ismrmrd_links ISMRMRD::ISMRMRD INTERFACE_LINK_LIBRARIES)
  foreach(_list _larmor_ismrmrd_includes _larmor_ismrmrd_links)
    if(${_list})
      list(FILTER ${_list} EXCLUDE REGEX "(/hdf5/|libhdf5)")
    else()
      set(${_list})
    endif()
  endforeach()
  target_include_directories(${_larmor_real_target} SYSTEM INTERFACE ${_larmor_ismrmrd_includes})
  target_link_libraries(${_larmor_real_target} INTERFACE "${_larmor_ismrmrd_library}"
                                                         ${_larmor_ismrmrd_links} larmor::hdf5)
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HAVE_ISMRMRD=1)
  _larmor_dep_report("ISMRMRD" "${ISMRMRD_VERSION} (${ISMRMRD_DIR})")
else()
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HAVE_ISMRMRD=0)
  _larmor_dep_report("ISMRMRD" "not found, MRD (ISMRMRD) output disabled")
endif()

# ------------------------------------------------------------------ NIfTI ---
# Debian's NIFTIConfig.cmake names a libznz that does not exist: look for the
# library and header directly.
set(LARMOR_HAVE_NIFTI OFF)
_larmor_interface_target(larmor::nifti)
find_library(LARMOR_NIFTI2_LIBRARY nifti2 HINTS ${NIFTI_ROOT} ENV NIFTI_ROOT PATH_SUFFIXES lib lib64)
find_path(LARMOR_NIFTI2_INCLUDE_DIR nifti2_io.h HINTS ${NIFTI_ROOT} ENV NIFTI_ROOT PATH_SUFFIXES nifti include/nifti include)
if(LARMOR_NIFTI2_LIBRARY AND LARMOR_NIFTI2_INCLUDE_DIR)
  set(LARMOR_HAVE_NIFTI ON)
  target_include_directories(${_larmor_real_target} SYSTEM INTERFACE "${LARMOR_NIFTI2_INCLUDE_DIR}")
  target_link_libraries(${_larmor_real_target} INTERFACE "${LARMOR_NIFTI2_LIBRARY}")
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HAVE_NIFTI=1)
  _larmor_dep_report("NIfTI" "nifti2 ${LARMOR_NIFTI2_LIBRARY}")
else()
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HAVE_NIFTI=0)
  _larmor_dep_report("NIfTI" "not found, NIfTI output disabled")
endif()

# ----------------------------------------------------------------- LAPACK ---
set(LARMOR_HAVE_LAPACK OFF)
set(LARMOR_HAVE_LAPACKE OFF)
_larmor_interface_target(larmor::lapack)
find_package(LAPACK QUIET)
if(LAPACK_FOUND)
  set(LARMOR_HAVE_LAPACK ON)
  # Paths, not LAPACK::LAPACK: the installed package names no FindLAPACK target.
  target_link_libraries(${_larmor_real_target} INTERFACE ${LAPACK_LIBRARIES})
  find_path(LARMOR_LAPACKE_INCLUDE_DIR lapacke.h PATH_SUFFIXES openblas)
  find_library(LARMOR_LAPACKE_LIBRARY lapacke)
  if(LARMOR_LAPACKE_INCLUDE_DIR AND LARMOR_LAPACKE_LIBRARY)
    set(LARMOR_HAVE_LAPACKE ON)
    target_include_directories(${_larmor_real_target} SYSTEM INTERFACE "${LARMOR_LAPACKE_INCLUDE_DIR}")
    target_link_libraries(${_larmor_real_target} INTERFACE "${LARMOR_LAPACKE_LIBRARY}")
  endif()
  target_compile_definitions(${_larmor_real_target} INTERFACE
    LARMOR_HAVE_LAPACK=1 LARMOR_HAVE_LAPACKE=$<BOOL:${LARMOR_HAVE_LAPACKE}>)
  list(GET LAPACK_LIBRARIES 0 _larmor_lapack_first)
  if(LARMOR_HAVE_LAPACKE)
    _larmor_dep_report("LAPACK" "${_larmor_lapack_first}, LAPACKE ${LARMOR_LAPACKE_LIBRARY}")
  else()
    _larmor_dep_report("LAPACK" "${_larmor_lapack_first}, LAPACKE not found")
  endif()
else()
  target_compile_definitions(${_larmor_real_target} INTERFACE LARMOR_HAVE_LAPACK=0 LARMOR_HAVE_LAPACKE=0)
  _larmor_dep_report("LAPACK" "not found, LAPACK-based paths disabled")
endif()

# ------------------------------------------------------------ CUDA helper ---
# larmor_host_only_sources(<target> <source>...): with the CUDA backend every
# .cpp goes through nvcc_wrapper (nvcc -x cu); some host libraries' headers
# (toml++ 3.3 in particular) do not compile under nvcc 13. Sources marked
# here are compiled by the host compiler instead (nvcc_wrapper --host-only).
# They must not include Kokkos headers (a CUDA-enabled Kokkos needs nvcc).
# Without the CUDA backend this does nothing.
set(LARMOR_CXX_IS_NVCC_WRAPPER OFF)
if(CMAKE_CXX_COMPILER MATCHES "nvcc_wrapper$" OR CMAKE_CXX_COMPILER_ID STREQUAL "NVIDIA")
  set(LARMOR_CXX_IS_NVCC_WRAPPER ON)
endif()
function(larmor_host_only_sources target)
  if(LARMOR_CXX_IS_NVCC_WRAPPER)
    set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS --host-only)
  endif()
endfunction()
