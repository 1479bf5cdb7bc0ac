// larmor_other_backends' one unit when Kokkos enables only one backend (a
// static library needs a source); it defines nothing.
