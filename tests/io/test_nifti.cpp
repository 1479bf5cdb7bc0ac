// NIfTI volumes: a volume written reads back value for value (C order, x
// fastest), a volume of another shape is refused naming the file, and no
// temporary file is left behind. Signal series: complex64 written and read
// back, with the element order checked through nifti2's own reader (x
// fastest, the sample slowest); a real-typed 4-D file reads as magnitudes.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/nifti_file.hpp"

#if LARMOR_HAVE_NIFTI
#include <nifti2_io.h>
#endif

namespace larmor::io {
namespace {

TEST(Nifti, RoundTripAndShapeCheck) {
  if (!nifti_available()) GTEST_SKIP() << "built without nifti2";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "larmor_nifti_test";
  fs::remove_all(dir);
  const std::array<std::int64_t, 3> shape = {3, 4, 5};
  std::vector<float> v(60);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * float(i) - 7.0f;
  const std::string path = (dir / "map.nii").string();
  write_nifti_volume(path, shape, v);
  EXPECT_EQ(read_nifti_volume(path, shape), v);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir))
    files += e.path().filename() == "map.nii" ? 1 : 100;
  EXPECT_EQ(files, 1);
  try {
    read_nifti_volume(path, {5, 4, 3});
    FAIL() << "a wrong shape was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("map.nii: a 5x4x3 NIfTI volume"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(is_nifti_path("a/b.nii.gz"));
  EXPECT_FALSE(is_nifti_path("a/b.h5"));
  fs::remove_all(dir);
}

#if LARMOR_HAVE_NIFTI
// A distinct value for every (sample, z, y, x, part).
float code(std::int64_t s, std::int64_t z, std::int64_t y, std::int64_t x, int part) {
  return float(1000 * s + 100 * z + 10 * y + x) + (part ? 0.25f : 0.0f);
}

TEST(Nifti, SignalSeries) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "larmor_nifti_series_test";
  fs::remove_all(dir);
  NiftiSeries series;
  series.shape = {2, 3, 4};  // nz, ny, nx
  series.samples = 5;
  for (std::int64_t s = 0; s < 5; ++s)
    for (std::int64_t z = 0; z < 2; ++z)
      for (std::int64_t y = 0; y < 3; ++y)
        for (std::int64_t x = 0; x < 4; ++x)
          for (int part = 0; part < 2; ++part) series.values.push_back(code(s, z, y, x, part));
  const std::string path = (dir / "signals.nii").string();
  write_nifti_series(path, series);
  const NiftiSeries back = read_nifti_series(path);
  EXPECT_EQ(back.shape, series.shape);
  EXPECT_EQ(back.samples, 5);
  EXPECT_EQ(back.values, series.values);

  // NIfTI's own view of the file: dims (nx, ny, nz, nt), x fastest.
  nifti_image* nim = nifti_image_read(path.c_str(), 1);
  ASSERT_NE(nim, nullptr);
  EXPECT_EQ(nim->ndim, 4);
  EXPECT_EQ(nim->nx, 4);
  EXPECT_EQ(nim->ny, 3);
  EXPECT_EQ(nim->nz, 2);
  EXPECT_EQ(nim->nt, 5);
  EXPECT_EQ(nim->datatype, NIFTI_TYPE_COMPLEX64);
  const float* c = static_cast<const float*>(nim->data);
  EXPECT_EQ(c[2 * (3 + 4 * (2 + 3 * (1 + 2 * 4)))], code(4, 1, 2, 3, 0));
  EXPECT_EQ(c[2 * (1 + 4 * (0 + 3 * (1 + 2 * 2))) + 1], code(2, 1, 0, 1, 1));

  // The same dimensions stored as int16 with a scale: magnitudes, imaginary 0.
  nifti_image_free(nim);
  const int64_t dims[8] = {4, 4, 3, 2, 5, 1, 1, 1};
  nim = nifti_make_new_nim(dims, NIFTI_TYPE_INT16, 1);
  auto* raw = static_cast<std::int16_t*>(nim->data);
  for (std::int64_t i = 0; i < 120; ++i) raw[i] = std::int16_t(i - 60);
  nim->scl_slope = 0.5f;
  nim->scl_inter = 2.0f;
  const std::string ipath = (dir / "magnitudes.nii").string();
  ASSERT_EQ(nifti_set_filenames(nim, ipath.c_str(), 0, 1), 0);
  nifti_image_write(nim);
  nifti_image_free(nim);
  const NiftiSeries mags = read_nifti_series(ipath);
  ASSERT_EQ(mags.values.size(), 240u);
  EXPECT_EQ(mags.values[2 * 7], 0.5f * (7 - 60) + 2.0f);
  EXPECT_EQ(mags.values[2 * 7 + 1], 0.0f);
  EXPECT_EQ(mags.values[2 * 119], 0.5f * (119 - 60) + 2.0f);
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace larmor::io
