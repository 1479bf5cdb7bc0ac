// NIfTI volumes: a volume written reads back value for value (C order, x
// fastest), a volume of another shape is refused naming the file, and no
// temporary file is left behind.
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/nifti_file.hpp"

namespace larmor::formats {
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

}  // namespace
}  // namespace larmor::formats
