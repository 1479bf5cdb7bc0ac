// NIfTI volumes (nifti2's C API), for maps in and out of larmor fit. Volumes
// are C-ordered [nz][ny][nx] (x fastest), which is NIfTI's own data order with
// dims (nx, ny, nz). Writing is atomic (a temporary file beside the target,
// then a rename). Without nifti2 in the build, both throw naming the file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace larmor::io {

bool nifti_available();

// True for names ending in .nii or .nii.gz.
bool is_nifti_path(const std::string& path);

void write_nifti_volume(const std::string& path, const std::array<std::int64_t, 3>& shape,
                        const std::vector<float>& data);

// A 3-D volume's shape [nz][ny][nx] (read from the header). Throws
// std::runtime_error naming the file when it cannot be read or has more than
// three dimensions.
std::array<std::int64_t, 3> nifti_volume_shape(const std::string& path);

// Converted to float (any stored type; scl_slope/scl_inter applied). Throws
// std::runtime_error naming the file when it cannot be read or its first
// three dimensions are not `shape` (reversed: NIfTI lists x first).
std::vector<float> read_nifti_volume(const std::string& path,
                                     const std::array<std::int64_t, 3>& shape);

// A 4-D series: one volume per sample (NIfTI dims (nx, ny, nz, samples)).
// `values` holds [samples][nz][ny][nx][2] (real, imaginary): complex64 and
// complex128 files keep their phase, real types read as magnitudes
// (imaginary 0). Reading refuses, naming the file, anything with more than
// four dimensions or an unsupported type.
struct NiftiSeries {
  std::array<std::int64_t, 3> shape{};  // [nz][ny][nx]
  std::int64_t samples = 0;
  std::vector<float> values;
};
NiftiSeries read_nifti_series(const std::string& path);
// Written as complex64, atomically.
void write_nifti_series(const std::string& path, const NiftiSeries& series);

}  // namespace larmor::io
