# cmake -DBENCHMARKS_DIR=<benchmarks/> -P benchmarks_public_api.cmake: fails
# when a benchmark source includes a kernel header (epg/, perk/, match/, common/),
# the PERK model's or the dictionary's device header or one of the simulator's
# private headers.
# The benchmarks time the product through its public API; a private include
# would let them time something other than what users run.
if(NOT IS_DIRECTORY "${BENCHMARKS_DIR}")
  message(FATAL_ERROR "no benchmarks folder at '${BENCHMARKS_DIR}'")
endif()
file(GLOB_RECURSE sources "${BENCHMARKS_DIR}/*.cpp" "${BENCHMARKS_DIR}/*.hpp"
     "${BENCHMARKS_DIR}/*.h" "${BENCHMARKS_DIR}/*.cc")
if(NOT sources)
  message(FATAL_ERROR "no sources under '${BENCHMARKS_DIR}'")
endif()
set(private_header
    "^[ \t]*#[ \t]*include[ \t]*[<\"](epg/|perk/|match/|common/|estimators/dictionary/device_atoms\\.hpp|simulate/device_tissue\\.hpp|simulate/memory_budget\\.hpp|simulate/slice_positions\\.hpp|estimators/perk/perk_device\\.hpp)")
set(found "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines)
  foreach(line IN LISTS lines)
    if(line MATCHES "${private_header}")
      file(RELATIVE_PATH name "${BENCHMARKS_DIR}" "${source}")
      string(APPEND found "\n  ${name}: ${line}")
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "benchmarks/ includes headers outside the public API:${found}")
endif()
list(LENGTH sources count)
message(STATUS "benchmarks/: ${count} files on the public API")
