# cmake -DROOT=<source tree> -DFOLDERS=<folder;...> -DPRIVATE=<regex> -P public_headers_only.cmake:
# fails when a source under one of FOLDERS includes a header whose path (as
# written in the #include) matches PRIVATE: the install's private headers,
# which nothing outside the library may include, and for the benchmarks the
# kernel headers too (they time the product through its public API; a
# private include would let them time something other than what users run).
foreach(folder IN LISTS FOLDERS)
  if(NOT IS_DIRECTORY "${ROOT}/${folder}")
    message(FATAL_ERROR "no folder '${folder}' under '${ROOT}'")
  endif()
  file(GLOB_RECURSE found_here "${ROOT}/${folder}/*.cpp" "${ROOT}/${folder}/*.hpp"
       "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc")
  if(NOT found_here)
    message(FATAL_ERROR "no sources under '${folder}'")
  endif()
  list(APPEND sources ${found_here})
endforeach()
set(found "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
      if(CMAKE_MATCH_1 MATCHES "${PRIVATE}")
        file(RELATIVE_PATH name "${ROOT}" "${source}")
        string(APPEND found "\n  ${name}: ${line}")
      endif()
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "private headers included from ${FOLDERS}:${found}")
endif()
list(LENGTH sources count)
message(STATUS "${FOLDERS}: ${count} files on the public headers")
