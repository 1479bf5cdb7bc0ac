#include "io/text_file.hpp"

#include "io/temporary_files.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace larmor::io {

void write_text_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  remove_stale_temporaries(path);
  register_temporary(temp);
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) {
    release_temporary(temp);
    throw std::runtime_error(path + ": cannot write (" + std::strerror(errno) + ")");
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() &&
                       std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    release_temporary(temp);
    throw std::runtime_error(path + ": writing failed (" + why + ")");
  }
  release_temporary(temp);
}

}  // namespace larmor::io
