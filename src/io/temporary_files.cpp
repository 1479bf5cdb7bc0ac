#include "io/temporary_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace larmor::io {
namespace {

namespace fs = std::filesystem;

// A fixed table the signal handler can read without allocating: a slot is
// free when its first byte is 0. Writers hold a handful of files at once.
constexpr int kSlots = 32;
constexpr std::size_t kPathBytes = 4096;
char slots[kSlots][kPathBytes];
std::atomic<bool> slot_used[kSlots];
std::mutex table_lock;  // registration only; the handler reads without it

extern "C" void remove_and_reraise(int sig) {
  for (int i = 0; i < kSlots; ++i) {
    if (slot_used[i].load(std::memory_order_acquire)) ::unlink(slots[i]);
  }
  // End as the signal would have: the default action, raised again.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void remove_temporaries_on_interrupt() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      // A signal the process was started ignoring (nohup's SIGHUP, SIGINT
      // for a background job of a shell without job control) stays ignored.
      struct sigaction inherited {};
      if (::sigaction(sig, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) continue;
      struct sigaction action {};
      action.sa_handler = remove_and_reraise;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &action, nullptr);
    }
    // Past a file-size limit a write fails (EFBIG) and the run ends with
    // its message, as on a full disk, instead of being killed mid-write.
    ::signal(SIGXFSZ, SIG_IGN);
  });
}

void register_temporary(const std::string& path) {
  if (path.size() + 1 > kPathBytes) return;  // too long to clean up on a signal
  std::lock_guard<std::mutex> guard(table_lock);
  for (int i = 0; i < kSlots; ++i) {
    if (!slot_used[i].load(std::memory_order_relaxed)) {
      std::memcpy(slots[i], path.c_str(), path.size() + 1);
      slot_used[i].store(true, std::memory_order_release);
      return;
    }
  }
}

void release_temporary(const std::string& path) {
  std::lock_guard<std::mutex> guard(table_lock);
  for (int i = 0; i < kSlots; ++i) {
    if (slot_used[i].load(std::memory_order_relaxed) && path == slots[i]) {
      slot_used[i].store(false, std::memory_order_release);
    }
  }
}

std::vector<std::string> remove_stale_temporaries(const std::string& final_path) {
  std::vector<std::string> removed;
  const fs::path target(final_path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = target.filename().string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    std::string file = entry.path().filename().string();
    // "<name>.tmp-<pid>" and NIfTI's ".<name>.tmp-<pid>.nii[.gz]".
    std::string prefix = name + ".tmp-";
    if (file.rfind("." + prefix, 0) == 0) prefix = "." + prefix;
    if (file.rfind(prefix, 0) != 0) continue;
    std::string rest = file.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits == 0 || digits > 9) continue;
    const std::string tail = rest.substr(digits);
    if (!tail.empty() && tail != ".nii" && tail != ".nii.gz") continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, digits)));
    // A process that still exists may be writing it (another run here).
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    if (fs::remove(entry.path(), ec)) removed.push_back(entry.path().string());
  }
  return removed;
}

void (*before_output_rename)() = nullptr;

std::string make_output_folder(const std::string& output) {
  const fs::path folder = fs::path(output).parent_path();
  std::error_code ec;
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (!ec) return "";
  return output + ": cannot create the folder '" + folder.string() + "': " + ec.message();
}

void check_output_path(const std::string& output, const std::string& what) {
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument(what + (output.empty() ? "" : " " + output) + " " + why);
  };
  if (output.empty()) refuse("is empty: name the file to write");
  if (output.back() == '/') refuse("ends in '/': name a file, not a folder");
  std::error_code ec;
  const fs::file_status status = fs::status(output, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) refuse("is a folder: name a file in it");
    if (!fs::is_regular_file(status)) {
      refuse(std::string("is a ") +
             (fs::is_fifo(status)             ? "FIFO"
              : fs::is_socket(status)         ? "socket"
              : fs::is_character_file(status) ? "character device"
              : fs::is_block_file(status)     ? "block device"
                                              : "special file") +
             ", which larmor never replaces (its results are written to a regular file and "
             "renamed into place)");
    }
  }
  // The folder it goes to (or the nearest that exists, which the run makes
  // the rest in) must take a new file.
  fs::path folder = fs::path(output).parent_path();
  if (folder.empty()) folder = ".";
  while (!fs::exists(folder, ec) && folder.has_parent_path() && folder != folder.parent_path()) {
    folder = folder.parent_path();
  }
  if (fs::exists(folder, ec) && !fs::is_directory(folder, ec)) {
    refuse("goes under " + folder.string() + ", which is not a folder");
  }
  if (fs::exists(folder, ec) && ::access(folder.c_str(), W_OK | X_OK) != 0) {
    refuse("goes to " + folder.string() + ", where this user cannot write (" +
           std::strerror(errno) + ")");
  }
}

void refuse_output_over_inputs(const std::string& output, const std::vector<std::string>& inputs,
                               const std::string& what) {
  check_output_path(output, what);
  std::error_code ec;
  if (!fs::exists(output, ec)) return;
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    if (fs::equivalent(output, input, ec) && !ec) {
      throw std::invalid_argument(what + " " + output + " is the run's input " + input +
                                  ": larmor never writes over an input; choose another output");
    }
  }
}

}  // namespace larmor::io
