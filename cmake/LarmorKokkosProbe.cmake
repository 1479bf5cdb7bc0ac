# cmake/LarmorKokkosProbe.cmake: refuse a Kokkos whose Views crash when
# compiled by this compiler, at configure time rather than in every test.
#
# larmor_check_kokkos_views(): called after find_package(Kokkos). Builds
# cmake/kokkos_view_probe.cpp against Kokkos::kokkos with this build's
# compiler, flags and C++ standard, and runs it on the host: a managed View
# assigned to a View of const elements. g++ 12 miscompiles that in the
# mdspan-based View of Kokkos 4.5 to the 4.7 development branch (kokkos issue
# 8187), and the whole program then crashes with nothing to say why.
#
# The probe needs a host-only Kokkos (Serial, OpenMP, Threads, HPX): with a
# device backend Kokkos::initialize wants the device, and a CUDA build is
# often configured on a machine without a GPU (CI does), so it is skipped
# there, as when cross-compiling. A passing result is remembered per Kokkos,
# compiler and flags, so only a fresh configure pays for it (one compile).
#
# LARMOR_KOKKOS_VIEW_PROBE=OFF skips it (for a configure machine that cannot
# run what it builds).

include_guard(GLOBAL)

option(LARMOR_KOKKOS_VIEW_PROBE "Check at configure time that Kokkos Views work with this compiler" ON)

function(larmor_check_kokkos_views)
  set(_compiler "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  set(_gcc12 FALSE)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    set(_gcc12 TRUE)
  endif()
  set(_patch "${PROJECT_SOURCE_DIR}/scripts/patches/kokkos-gcc12/0001-gcc12-view-tracker-default-constructor.patch")

  if(NOT LARMOR_KOKKOS_VIEW_PROBE)
    message(STATUS "[larmor] Kokkos View probe: skipped (LARMOR_KOKKOS_VIEW_PROBE=OFF)")
    return()
  endif()
  if(CMAKE_CROSSCOMPILING)
    message(STATUS "[larmor] Kokkos View probe: skipped (cross-compiling)")
    return()
  endif()
  set(_device_backends ${Kokkos_DEVICES})
  list(REMOVE_ITEM _device_backends SERIAL OPENMP THREADS HPX)
  if(_device_backends)
    string(REPLACE ";" ", " _devs "${_device_backends}")
    if(_gcc12 AND Kokkos_VERSION VERSION_GREATER_EQUAL 4.5)
      message(WARNING
        "[larmor] Kokkos ${Kokkos_VERSION} with ${_devs} and host compiler ${_compiler}: the "
        "configure-time View check cannot run here (it would need the device). g++ 12 is known to "
        "miscompile this Kokkos' Views into a crash at run time (kokkos issue 8187); if larmor "
        "crashes in every test, build Kokkos and larmor with another host compiler (g++ 13 or "
        "later).")
    else()
      message(STATUS "[larmor] Kokkos View probe: skipped (device backend ${_devs}; it would need the device)")
    endif()
    return()
  endif()

  set(_key "${Kokkos_DIR}|${Kokkos_VERSION}|${CMAKE_CXX_COMPILER}|${_compiler}|${CMAKE_CXX_FLAGS}|${CMAKE_BUILD_TYPE}|${CMAKE_CXX_STANDARD}")
  if(LARMOR_KOKKOS_VIEW_PROBE_PASSED STREQUAL _key)
    message(STATUS "[larmor] Kokkos View probe: passed (earlier configure)")
    return()
  endif()

  # Compiled as larmor is (build type flags included); run with few threads,
  # unbound, and without Kokkos Tools or leak checks that could fail it for
  # other reasons.
  if(CMAKE_BUILD_TYPE)
    set(CMAKE_TRY_COMPILE_CONFIGURATION "${CMAKE_BUILD_TYPE}")
  endif()
  set(_probe_flags)
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(APPEND _probe_flags "-DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}")
  endif()
  set(_saved_env)
  foreach(_var OMP_NUM_THREADS OMP_PROC_BIND KOKKOS_TOOLS_LIBS ASAN_OPTIONS)
    if(DEFINED ENV{${_var}})
      list(APPEND _saved_env "${_var}")
      set(_saved_${_var} "$ENV{${_var}}")
    endif()
  endforeach()
  set(ENV{OMP_NUM_THREADS} 2)
  set(ENV{OMP_PROC_BIND} false)
  unset(ENV{KOKKOS_TOOLS_LIBS})
  set(ENV{ASAN_OPTIONS} "detect_leaks=0")
  try_run(_run_result _compile_ok
    "${CMAKE_BINARY_DIR}/CMakeFiles/larmor_kokkos_view_probe"
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/kokkos_view_probe.cpp"
    CMAKE_FLAGS ${_probe_flags}
    LINK_LIBRARIES Kokkos::kokkos
    CXX_STANDARD ${CMAKE_CXX_STANDARD}
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    COMPILE_OUTPUT_VARIABLE _compile_output
    RUN_OUTPUT_VARIABLE _run_output)
  foreach(_var OMP_NUM_THREADS OMP_PROC_BIND KOKKOS_TOOLS_LIBS ASAN_OPTIONS)
    if(_var IN_LIST _saved_env)
      set(ENV{${_var}} "${_saved_${_var}}")
    else()
      unset(ENV{${_var}})
    endif()
  endforeach()

  if(NOT _compile_ok)
    string(LENGTH "${_compile_output}" _len)
    if(_len GREATER 3000)
      math(EXPR _from "${_len} - 3000")
      string(SUBSTRING "${_compile_output}" ${_from} 3000 _compile_output)
    endif()
    message(WARNING
      "[larmor] the Kokkos View probe (cmake/kokkos_view_probe.cpp) did not compile against the "
      "Kokkos in ${Kokkos_DIR}; the check is skipped and larmor's own build will say more. "
      "Compiler output (end):\n${_compile_output}")
    return()
  endif()

  if(_run_result STREQUAL "0")
    set(LARMOR_KOKKOS_VIEW_PROBE_PASSED "${_key}" CACHE INTERNAL "Kokkos, compiler and flags the View probe passed with")
    message(STATUS "[larmor] Kokkos View probe: passed")
    return()
  endif()

  if(_run_result STREQUAL "2")
    string(CONCAT _what "ran, but a View of const elements assigned from a View read wrong values, a wrong "
              "reference count or a wrong label")
  else()
    string(CONCAT _what "crashed (result: ${_run_result}) when a View was assigned to a View of const elements")
  endif()
  if(_gcc12)
    string(CONCAT _cause "This is the g++ 12 defect of kokkos issue 8187 (a View's allocation tracker left "
               "uninitialised). Ways out:\n"
               "  - a Kokkos with the upstream work-around: 4.7.00 or later for g++ 12.2 to 12.4 "
               "(kokkos pull request 8223; g++ 12.5 needs kokkos pull request 9262);\n"
               "  - Kokkos and larmor built by another compiler (g++ 13 or later, or clang);\n"
               "  - this Kokkos' source patched with ${_patch} and reinstalled "
               "(lab/compat-check --kokkos-patch does so for a test build);\n"
               "  - or no Kokkos_ROOT: scripts/setup then builds its Kokkos 3.4.01, which is not affected.")
  else()
    string(CONCAT _cause "The known cause (g++ 12, kokkos issue 8187) does not apply to ${_compiler}: check "
               "this Kokkos install (was it built by the same compiler?), or unset Kokkos_ROOT so "
               "that scripts/setup builds its Kokkos 3.4.01.")
  endif()
  message(FATAL_ERROR
    "[larmor] Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}) compiled by ${_compiler}: the "
    "configure-time View probe (cmake/kokkos_view_probe.cpp) ${_what}, so larmor built on it "
    "would crash at run time. ${_cause}\nProbe output:\n${_run_output}")
endfunction()
