// Writes the fault cases' damaged fit inputs into a folder: measured-signal
// files of a 2 x 2 x 1 volume with one NaN sample (bad_nan.h5), one all-zero
// voxel (bad_zero.h5), a voxel listed twice (bad_duplicate.h5), an intact one
// (good.h5), one of no voxel (empty.h5), the volume as a NIfTI series
// (series.nii) with a mask that selects nothing (empty_mask.nii), and a PERK
// model with one NaN weight (bad_model.h5).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "io/nifti_file.hpp"
#include "parallel/communicator.hpp"
#include "tissue/tissue.hpp"

namespace {

using larmor::io::H5Writer;

void write_data(const std::string& path, const larmor::parallel::Communicator& world,
                std::vector<float> signals, std::vector<std::int64_t> index) {
  H5Writer out(path, world);
  out.write_whole("/signals", {std::uint64_t(index.size()), 32, 2}, signals);
  out.write_whole("/voxel_index", {std::uint64_t(index.size())}, index);
  out.write_whole("/volume_shape", {3}, std::vector<std::int64_t>{2, 2, 1});
  out.write_whole("/b1", {2, 2, 1}, std::vector<float>(4, 1.0f));
  out.commit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  larmor::parallel::MpiSession mpi(&argc, &argv);
  larmor::parallel::Communicator world;
  const std::string dir = argv[1];
  // A decaying echo train in every voxel.
  std::vector<float> signals;
  for (int v = 0; v < 4; ++v) {
    for (int s = 0; s < 32; ++s) {
      signals.push_back(float(std::exp(-(s + 1) * 10.0 / (50.0 + 20.0 * v))));
      signals.push_back(0.0f);
    }
  }
  const std::vector<std::int64_t> index = {0, 1, 2, 3};
  write_data(dir + "/good.h5", world, signals, index);
  std::vector<float> nan = signals;
  nan[2 * 32 * 2 + 7] = NAN;  // voxel 2, sample 3, imaginary part
  write_data(dir + "/bad_nan.h5", world, nan, index);
  std::vector<float> zero = signals;
  for (int k = 0; k < 64; ++k) zero[std::size_t(1 * 64 + k)] = 0.0f;  // voxel 1
  write_data(dir + "/bad_zero.h5", world, zero, index);
  write_data(dir + "/bad_duplicate.h5", world, signals, {0, 1, 3, 3});
  write_data(dir + "/empty.h5", world, {}, {});
  // The volume as a NIfTI series and a mask that selects nothing.
  if (world.is_root() && larmor::io::nifti_available()) {
    larmor::io::NiftiSeries series;
    series.shape = {2, 2, 1};
    series.samples = 32;
    series.values.assign(std::size_t(2 * 4 * 32), 0.0f);
    for (int v = 0; v < 4; ++v) {
      for (int s = 0; s < 32; ++s)
        series.values[std::size_t(2 * (s * 4 + v))] = signals[std::size_t((v * 32 + s) * 2)];
    }
    larmor::io::write_nifti_series(dir + "/series.nii", series);
    larmor::io::write_nifti_volume(dir + "/empty_mask.nii", {2, 2, 1}, std::vector<float>(4, 0.0f));
  }

  // A model file as save_perk_model lays it out (which refuses to write a
  // non-finite model), with one NaN weight.
  if (world.is_root()) {
    H5Writer out(dir + "/bad_model.h5", larmor::parallel::Communicator(MPI_COMM_SELF));
    out.write_whole("/perk/frequencies", {2, 33}, std::vector<float>(2 * 33, 0.1f));
    out.write_whole("/perk/phases", {2}, std::vector<float>{0.0f, 1.0f});
    out.write_whole("/perk/weights", {1, 2}, std::vector<float>{0.5f, NAN});
    out.write_whole("/perk/offsets", {1}, std::vector<float>{0.05f});
    out.write_whole("/perk/known", {1},
                    std::vector<std::int64_t>{std::int64_t(larmor::tissue::Property::b1)});
    out.write_whole("/perk/outputs", {1},
                    std::vector<std::int64_t>{std::int64_t(larmor::tissue::Property::t2)});
    out.set_attribute("/perk", "signals", std::int64_t{32});
    for (const char* name : {"lambda", "rho", "noise_sigma", "holdout_cost"}) {
      out.set_attribute("/perk", name, 1.0);
    }
    out.set_attribute("/perk", "sequence", std::string("mese"));
    out.commit();
  }
  return 0;
}
