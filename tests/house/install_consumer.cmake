# cmake -DBUILD_DIR=<larmor build> -DCONSUMER_DIR=<tests/consumer> -DWORK_DIR=<scratch>
#       -DCXX=<compiler> -DKOKKOS_DIR=<Kokkos_DIR of the build> -P install_consumer.cmake
# Installs the build into a scratch prefix, moves the prefix elsewhere (a
# relocatable package names no path of the machine that built it), builds
# the consumer project against it with find_package(larmor) alone (no
# larmor source or build folder on its paths, no Kokkos_ROOT) and runs it.
foreach(var BUILD_DIR CONSUMER_DIR WORK_DIR CXX KOKKOS_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "install_consumer.cmake needs -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
get_filename_component(kokkos_prefix "${KOKKOS_DIR}/../../.." ABSOLUTE)
set(prefix "${WORK_DIR}/prefix")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/installed")
file(RENAME "${WORK_DIR}/installed" "${prefix}")
if(NOT EXISTS "${prefix}/bin/larmor" OR NOT EXISTS "${prefix}/lib/cmake/larmor/larmorConfig.cmake")
  message(FATAL_ERROR "the install tree lacks bin/larmor or lib/cmake/larmor/larmorConfig.cmake")
endif()
# The lab's executable and the executables' own support stay out.
file(GLOB_RECURSE lab_files "${prefix}/bin/larmor-bench*" "${prefix}/include/larmor/cli/*")
if(lab_files)
  message(FATAL_ERROR "the install tree holds what is not the product's: ${lab_files}")
endif()
# The installed package files and headers must not point back into the build
# folder or larmor's own sources (a dependency's prefix may lie anywhere, the
# source tree too).
file(GLOB_RECURSE config_files "${prefix}/lib/cmake/larmor/*.cmake" "${prefix}/include/larmor/*.hpp")
get_filename_component(source_dir "${CONSUMER_DIR}/../.." ABSOLUTE)
foreach(f IN LISTS config_files)
  file(READ "${f}" text)
  foreach(tree "${BUILD_DIR}/" "${source_dir}/" "\"${source_dir}\"" "${WORK_DIR}/installed"
          "${kokkos_prefix}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} names ${tree}: the install tree is not self-contained")
    endif()
  endforeach()
endforeach()

set(env ${CMAKE_COMMAND} -E env --unset=Kokkos_ROOT --unset=KokkosKernels_ROOT)
run_step("configuring the consumer" ${env} ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build"
         -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX}")
# The Kokkos the consumer was built with: the prefix's own when the install
# carries one, else the build's.
file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" used_kokkos REGEX "^Kokkos_DIR:")
if(EXISTS "${prefix}/lib/cmake/Kokkos" AND NOT used_kokkos MATCHES "${prefix}/")
  message(FATAL_ERROR "the consumer found Kokkos outside the moved prefix: ${used_kokkos}")
endif()
run_step("building the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("running the consumer" ${env} OMP_NUM_THREADS=2 OMP_PROC_BIND=false
         "${WORK_DIR}/build/cpmg_decay")
message(STATUS "${step_output}")
