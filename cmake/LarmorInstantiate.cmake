# One mechanism for every per-backend translation unit, in the manner of
# Kokkos Kernels' ETI generator and Cabana's per-backend tests: a header
# defines an instantiation macro (or a category of tests) once; these
# functions write one small translation unit per enabled Kokkos backend, so
# that each backend's code is compiled by its own compiler and a build
# compiles the units in parallel.
#
# Backends are listed device first: Make starts objects in the order given,
# and a long device unit started last would leave the other cores idle.
set(LARMOR_INSTANCE_BACKENDS Cuda OpenMP Serial)

# A device build's host backend (Serial beside CUDA) runs none of larmor's
# commands, tests or bindings: its kernels, compiled through nvcc_wrapper,
# would take a sixth of the build. A program that calls the library on the
# host space of a CUDA build turns them on.
option(LARMOR_DEVICE_BUILD_HOST_KERNELS
       "In a device (CUDA) build, instantiate the kernels for the host backend too" OFF)
set(LARMOR_INSTANCE_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/instance.cpp.in)
set(LARMOR_BACKEND_TEST_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/backend_test.cpp.in)

# larmor_instantiate(<target> HEADER <header> MACROS <macro>...
#                    [OTHER_BACKENDS <other target>])
# Adds to <target> one unit per backend and macro that includes <header>
# and expands <macro>(Kokkos::<Backend>), for each enabled backend.
# Macros are listed slowest first, for the reason above. With OTHER_BACKENDS
# only the default backend's units (the first enabled, as Kokkos chooses its
# default execution space) go to <target> and the rest to <other target>, so
# that an executable running on the default backend compiles no other.
function(larmor_instantiate target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "HEADER;OTHER_BACKENDS" "MACROS")
  if(NOT arg_HEADER OR NOT arg_MACROS)
    message(FATAL_ERROR "larmor_instantiate(${target}): HEADER and MACROS are required")
  endif()
  set(header ${arg_HEADER})
  set(into ${target})
  foreach(backend IN LISTS LARMOR_INSTANCE_BACKENDS)
    string(TOUPPER ${backend} BACKEND)
    # A disabled backend's unit would compile to nothing, but only after
    # parsing every header (seconds each through nvcc_wrapper).
    if(NOT BACKEND IN_LIST Kokkos_DEVICES)
      continue()
    endif()
    if(LARMOR_KOKKOS_HAS_CUDA AND NOT BACKEND STREQUAL "CUDA" AND NOT LARMOR_DEVICE_BUILD_HOST_KERNELS)
      continue()
    endif()
    foreach(macro IN LISTS arg_MACROS)
      # LARMOR_EPG_INSTANTIATE_FORWARD on Cuda: epg_forward_cuda.cpp
      string(REGEX REPLACE "^LARMOR_|_INSTANTIATE" "" entry ${macro})
      string(TOLOWER "${entry}_${backend}" stem)
      set(unit ${CMAKE_CURRENT_BINARY_DIR}/instances/${target}/${stem}.cpp)
      configure_file(${LARMOR_INSTANCE_TEMPLATE} ${unit} @ONLY)
      target_sources(${into} PRIVATE ${unit})
    endforeach()
    if(arg_OTHER_BACKENDS)
      set(into ${arg_OTHER_BACKENDS})
    endif()
  endforeach()
endfunction()

# larmor_backend_tests(<prefix> HEADERS <category header>...)
# One test executable <prefix>_<backend> per enabled backend, made of one
# unit Test<Backend>_<Category>.cpp per category header (tst<Category>.hpp):
# the unit defines TEST_EXECSPACE and TEST_CATEGORY and includes the header,
# which includes what it uses. Extra arguments after LINK go to
# target_link_libraries; the caller registers the tests (DISCOVER <function>
# names a function taking the target).
function(larmor_backend_tests prefix)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "DISCOVER" "HEADERS;LINK")
  foreach(backend IN LISTS LARMOR_INSTANCE_BACKENDS)
    string(TOUPPER ${backend} BACKEND)
    string(TOLOWER ${backend} category_prefix)
    if(NOT BACKEND IN_LIST Kokkos_DEVICES)
      continue()
    endif()
    # A device build's Serial host space runs the same host code the host
    # presets test (their `serial.*` tests); compiling it again through
    # nvcc_wrapper only adds build time.
    if(BACKEND STREQUAL "SERIAL" AND LARMOR_KOKKOS_HAS_CUDA)
      continue()
    endif()
    set(units)
    foreach(header IN LISTS arg_HEADERS)
      get_filename_component(name ${header} NAME_WE)
      string(REGEX REPLACE "^tst" "" category ${name})
      set(unit ${CMAKE_CURRENT_BINARY_DIR}/Test${backend}_${category}.cpp)
      configure_file(${LARMOR_BACKEND_TEST_TEMPLATE} ${unit} @ONLY)
      list(APPEND units ${unit})
    endforeach()
    set(target ${prefix}_${category_prefix})
    add_executable(${target} ${units})
    target_link_libraries(${target} PRIVATE ${arg_LINK})
    if(arg_DISCOVER)
      cmake_language(CALL ${arg_DISCOVER} ${target})
    endif()
  endforeach()
endfunction()
