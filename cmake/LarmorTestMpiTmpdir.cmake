# Open MPI keeps a process's run-time files in a tree under one directory per
# node and user (/tmp unless told), and a process that finishes removes the
# parts it thinks are its own. Open MPI 4 gives every isolated singleton the
# same job folder, and even separate jobs share the top one, so tests CTest
# runs at once can delete the folder another test's process is creating ("A
# call to mkdir was unable to create the desired directory"). Each test named
# here therefore gets its own base directory (orte_tmpdir_base). Tests
# GoogleTest lists when CTest runs cannot be named at configure time; their
# main (tests/mpi_test_main.cpp) makes its own.

# Gives every test of the calling directory its own Open MPI base directory,
# once the directory has declared them all. Other MPIs ignore the variable.
function(larmor_give_tests_own_mpi_tmpdir)
  cmake_language(DEFER CALL _larmor_set_mpi_tmpdir_bases)
endfunction()

function(_larmor_set_mpi_tmpdir_bases)
  get_property(names DIRECTORY PROPERTY TESTS)
  foreach(name IN LISTS names)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
                 "OMPI_MCA_orte_tmpdir_base=${PROJECT_BINARY_DIR}/mpi-tmp/${name}")
  endforeach()
endfunction()
