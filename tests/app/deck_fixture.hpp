// The fixture of the deck tests: a folder of the test's own (CTest runs the
// tests of a fixture in parallel), decks written into it, and the error a
// deck is refused with.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/deck.hpp"

namespace larmor::app {

class DeckFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("larmor-") + test->test_suite_name() + "-" + test->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text, const std::string& name = "deck.toml") {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // The error of reading `text` as a deck (the folder's path cut away when
  // `relative`); fails the test if it is accepted.
  std::string error_of(const std::string& text, bool relative = false) {
    const std::string path = write(text);
    try {
      read_deck(path);
    } catch (const DeckError& e) {
      std::string what = e.what();
      const std::string folder = dir_.string() + "/";
      for (auto at = what.find(folder); relative && at != std::string::npos;
           at = what.find(folder)) {
        what.erase(at, folder.size());
      }
      return what;
    }
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  std::filesystem::path dir_;
};

inline constexpr const char* kTissue = "\n[tissue]\nt1_ms = 1000.0\nt2_ms = 100.0\n";

}  // namespace larmor::app
