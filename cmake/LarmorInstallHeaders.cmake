# Run by `cmake --install` (cmake/LarmorInstall.cmake): installs the public
# headers of src/ and every project header they include, found by following
# their #include "..." lines through LARMOR_HEADER_ROOTS. A private header
# (LARMOR_PRIVATE_HEADER_PATTERN) reached from a public one is an error: the
# installed headers would not compile.

set(_queue)
list(GET LARMOR_HEADER_ROOTS 0 _src_root)
file(GLOB_RECURSE _public RELATIVE "${_src_root}" "${_src_root}/*.hpp")
foreach(_h IN LISTS _public)
  if(NOT _h MATCHES "${LARMOR_PRIVATE_HEADER_PATTERN}")
    list(APPEND _queue "${_h}")
  endif()
endforeach()

set(_seen)
while(_queue)
  list(POP_FRONT _queue _name)
  list(FIND _seen "${_name}" _at)
  if(NOT _at EQUAL -1)
    continue()
  endif()
  list(APPEND _seen "${_name}")
  set(_path)
  foreach(_root IN LISTS LARMOR_HEADER_ROOTS)
    if(EXISTS "${_root}/${_name}")
      set(_path "${_root}/${_name}")
      break()
    endif()
  endforeach()
  if(NOT _path)
    continue()  # a system or third-party header
  endif()
  get_filename_component(_dir "${_name}" DIRECTORY)
  file(INSTALL "${_path}" DESTINATION "${LARMOR_HEADER_DESTINATION}/${_dir}")
  file(STRINGS "${_path}" _includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(_line IN LISTS _includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" _inc "${_line}")
    if(_inc MATCHES "${LARMOR_PRIVATE_HEADER_PATTERN}")
      message(FATAL_ERROR "the public header ${_name} includes the private header ${_inc}")
    endif()
    list(APPEND _queue "${_inc}")
  endforeach()
endwhile()
