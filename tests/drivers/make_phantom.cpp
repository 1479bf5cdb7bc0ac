// Writes a small phantom volume for the driver tests: an ellipsoidal mask and
// smooth T1, T2 and B1 maps over a 5 x 7 x 6 volume.
#include <cmath>
#include <cstdio>
#include <vector>

#include "io/hdf5_file.hpp"
#include "parallel/communicator.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.h5\n", argv[0]);
    return 2;
  }
  larmor::parallel::MpiSession mpi(&argc, &argv);
  larmor::parallel::Communicator world;
  const int nz = 5, ny = 7, nx = 6;
  std::vector<std::uint8_t> mask;
  std::vector<float> t1, t2, b1;
  for (int z = 0; z < nz; ++z) {
    for (int y = 0; y < ny; ++y) {
      for (int x = 0; x < nx; ++x) {
        const double u = (z - 2.0) / 2.5, v = (y - 3.0) / 3.5, w = (x - 2.5) / 3.0;
        mask.push_back(u * u + v * v + w * w <= 1.0 ? 1 : 0);
        t1.push_back(float(600.0 + 100.0 * x + 20.0 * y));
        t2.push_back(float(40.0 + 10.0 * y + 3.0 * z));
        b1.push_back(float(0.8 + 0.05 * z));
      }
    }
  }
  larmor::io::H5Writer out(argv[1], world);
  const std::vector<std::uint64_t> dims = {nz, ny, nx};
  out.write_whole("/mask", dims, mask);
  out.write_whole("/t1_ms", dims, t1);
  out.write_whole("/t2_ms", dims, t2);
  out.write_whole("/b1", dims, b1);
  out.commit();
  return 0;
}
