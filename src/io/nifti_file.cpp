#include "io/nifti_file.hpp"

#include "io/temporary_files.hpp"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

#if LARMOR_HAVE_NIFTI
#include <nifti2_io.h>
#endif

namespace larmor::io {

bool nifti_available() { return LARMOR_HAVE_NIFTI != 0; }

bool is_nifti_path(const std::string& path) {
  auto ends = [&](const std::string& tail) {
    return path.size() >= tail.size() &&
           path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".nii") || ends(".nii.gz");
}

#if LARMOR_HAVE_NIFTI
namespace {
struct ImageFree {
  void operator()(nifti_image* p) const { nifti_image_free(p); }
};
using Image = std::unique_ptr<nifti_image, ImageFree>;

// nifti2 prints its own errors on stderr; larmor's message names the file
// and the reason instead (a missing file: said as such).
Image read_image(const std::string& path, bool with_data) {
  nifti_set_debug_level(0);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::runtime_error(path + ": no such file");
  return Image(nifti_image_read(path.c_str(), with_data ? 1 : 0));
}

// Writes `nim` (whose data we own) to `path` through a temporary file beside
// it, then a rename.
void write_atomically(const std::string& path, nifti_image* nim) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string temp = (target.parent_path() / ("." + target.filename().string() + ".tmp-" +
                                                    std::to_string(getpid()) + ".nii"))
                               .string();
  const bool compressed = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  const std::string temp_name = compressed ? temp + ".gz" : temp;
  remove_stale_temporaries(path);
  register_temporary(temp_name);
  struct Release {
    const std::string& name;
    ~Release() { release_temporary(name); }
  } release{temp_name};
  if (nifti_set_filenames(nim, temp_name.c_str(), 0, 1) != 0) {
    nim->data = nullptr;
    throw std::runtime_error(path + ": nifti2 refused the file name");
  }
  nifti_image_write(nim);
  nim->data = nullptr;  // ours, not nifti2's to free
  std::error_code error;
  if (!fs::exists(temp_name) || (fs::rename(temp_name, target, error), error)) {
    fs::remove(temp_name, error);
    throw std::runtime_error(path + ": writing the NIfTI file failed");
  }
}

// A stored value as double (scaling not applied).
double stored_value(const nifti_image* nim, std::int64_t i, const std::string& path) {
  switch (nim->datatype) {
    case NIFTI_TYPE_FLOAT32:
      return static_cast<const float*>(nim->data)[i];
    case NIFTI_TYPE_FLOAT64:
      return static_cast<const double*>(nim->data)[i];
    case NIFTI_TYPE_UINT8:
      return static_cast<const std::uint8_t*>(nim->data)[i];
    case NIFTI_TYPE_INT16:
      return static_cast<const std::int16_t*>(nim->data)[i];
    case NIFTI_TYPE_INT32:
      return static_cast<const std::int32_t*>(nim->data)[i];
    case NIFTI_TYPE_UINT16:
      return static_cast<const std::uint16_t*>(nim->data)[i];
    default:
      throw std::runtime_error(path + ": NIfTI datatype " + std::to_string(nim->datatype) +
                               " is not supported (float, double, uint8, int16, uint16, int32" +
                               std::string(", complex64, complex128 for signals)"));
  }
}
}  // namespace

void write_nifti_volume(const std::string& path, const std::array<std::int64_t, 3>& shape,
                        const std::vector<float>& data) {
  if (std::int64_t(data.size()) != shape[0] * shape[1] * shape[2]) {
    throw std::invalid_argument(path + ": the data do not match the volume's shape");
  }
  const int64_t dims[8] = {3, shape[2], shape[1], shape[0], 1, 1, 1, 1};
  Image nim(nifti_make_new_nim(dims, NIFTI_TYPE_FLOAT32, 0));
  if (!nim) throw std::runtime_error(path + ": nifti2 could not make an image");
  nim->data = const_cast<float*>(data.data());
  write_atomically(path, nim.get());
}

void write_nifti_series(const std::string& path, const NiftiSeries& series) {
  const auto& shape = series.shape;
  if (std::int64_t(series.values.size()) != 2 * series.samples * shape[0] * shape[1] * shape[2]) {
    throw std::invalid_argument(path + ": the values do not match the series' shape");
  }
  const int64_t dims[8] = {4, shape[2], shape[1], shape[0], series.samples, 1, 1, 1};
  Image nim(nifti_make_new_nim(dims, NIFTI_TYPE_COMPLEX64, 0));
  if (!nim) throw std::runtime_error(path + ": nifti2 could not make an image");
  nim->data = const_cast<float*>(series.values.data());
  write_atomically(path, nim.get());
}

NiftiSeries read_nifti_series(const std::string& path) {
  Image nim = read_image(path, true);
  if (!nim || nim->data == nullptr) throw std::runtime_error(path + ": not a readable NIfTI file");
  for (int k = 5; k <= nim->ndim && k <= 7; ++k) {
    if (nim->dim[k] > 1) {
      throw std::runtime_error(path + ": a " + std::to_string(nim->ndim) +
                               "-D NIfTI file; signals are 4-D (x, y, z, sample)");
    }
  }
  NiftiSeries out;
  out.shape = {nim->nz, nim->ny, nim->nx};
  out.samples = nim->ndim >= 4 ? nim->nt : 1;
  const std::int64_t n = nim->nvox;
  if (n != out.samples * nim->nx * nim->ny * nim->nz) {
    throw std::runtime_error(path + ": inconsistent NIfTI dimensions");
  }
  out.values.assign(static_cast<std::size_t>(2 * n), 0.0f);
  const double slope = nim->scl_slope != 0.0 ? nim->scl_slope : 1.0, inter = nim->scl_inter;
  if (nim->datatype == NIFTI_TYPE_COMPLEX64) {
    const float* c = static_cast<const float*>(nim->data);
    for (std::int64_t i = 0; i < 2 * n; ++i) out.values[std::size_t(i)] = c[i];
  } else if (nim->datatype == NIFTI_TYPE_COMPLEX128) {
    const double* c = static_cast<const double*>(nim->data);
    for (std::int64_t i = 0; i < 2 * n; ++i) out.values[std::size_t(i)] = float(c[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      out.values[std::size_t(2 * i)] = float(stored_value(nim.get(), i, path) * slope + inter);
    }
  }
  return out;
}

std::array<std::int64_t, 3> nifti_volume_shape(const std::string& path) {
  Image nim = read_image(path, false);
  if (!nim) throw std::runtime_error(path + ": not a readable NIfTI file");
  if (nim->nvox != nim->nx * nim->ny * nim->nz) {
    throw std::runtime_error(path + ": a " + std::to_string(nim->ndim) +
                             "-D NIfTI file where a map is a 3-D volume (x, y, z)");
  }
  return {nim->nz, nim->ny, nim->nx};
}

std::vector<float> read_nifti_volume(const std::string& path,
                                     const std::array<std::int64_t, 3>& shape) {
  Image nim = read_image(path, true);
  if (!nim || nim->data == nullptr) throw std::runtime_error(path + ": not a readable NIfTI file");
  if (nim->nx != shape[2] || nim->ny != shape[1] || nim->nz != shape[0] ||
      nim->nvox != shape[0] * shape[1] * shape[2]) {
    throw std::runtime_error(
        path + ": a " + std::to_string(nim->nx) + "x" + std::to_string(nim->ny) + "x" +
        std::to_string(nim->nz) + " NIfTI volume where the data's volume is " +
        std::to_string(shape[2]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[0]));
  }
  std::vector<float> out(static_cast<std::size_t>(nim->nvox));
  const double slope = nim->scl_slope != 0.0 ? nim->scl_slope : 1.0, inter = nim->scl_inter;
  for (std::int64_t i = 0; i < nim->nvox; ++i) {
    const double v = stored_value(nim.get(), i, path);
    out[std::size_t(i)] = float(v * slope + inter);
  }
  return out;
}
#else
void write_nifti_volume(const std::string& path, const std::array<std::int64_t, 3>&,
                        const std::vector<float>&) {
  throw std::runtime_error(path + ": this build of larmor has no nifti2 (Debian: libnifti2-dev)");
}
std::array<std::int64_t, 3> nifti_volume_shape(const std::string& path) {
  throw std::runtime_error(path + ": this build of larmor has no nifti2 (Debian: libnifti2-dev)");
}
std::vector<float> read_nifti_volume(const std::string& path, const std::array<std::int64_t, 3>&) {
  throw std::runtime_error(path + ": this build of larmor has no nifti2 (Debian: libnifti2-dev)");
}
NiftiSeries read_nifti_series(const std::string& path) {
  throw std::runtime_error(path + ": this build of larmor has no nifti2 (Debian: libnifti2-dev)");
}
void write_nifti_series(const std::string& path, const NiftiSeries&) {
  throw std::runtime_error(path + ": this build of larmor has no nifti2 (Debian: libnifti2-dev)");
}
#endif

}  // namespace larmor::io
