#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace larmor::drivers {

namespace {

// 1234567 -> "1.23 M"
std::string human(double value) {
  const char* suffix[] = {"", " k", " M", " G", " T"};
  int i = 0;
  while (value >= 1000.0 && i < 4) {
    value /= 1000.0;
    ++i;
  }
  char text[32];
  std::snprintf(text, sizeof text, value < 10.0 && i > 0 ? "%.2f%s" : "%.0f%s", value, suffix[i]);
  return text;
}

std::string clock_time(double seconds) {
  const long s = long(seconds + 0.5);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  }
  return text;
}

// A phase line's size threshold: writes this large take about a second or
// more on a parallel file system's single stream.
constexpr double announced_bytes = 64.0 * (1 << 20);

// 537 M -> "537 MB", 12 -> "12 B"
std::string byte_text(double bytes) { return human(bytes) + (bytes < 1000.0 ? " B" : "B"); }

bool progress_off() {
  const char* setting = std::getenv("LARMOR_PROGRESS");
  return setting && std::string_view(setting) == "off";
}

}  // namespace

PhaseLine::PhaseLine(std::string command, std::string what, double bytes, bool talk)
    : command_(std::move(command)),
      what_(std::move(what)),
      bytes_(bytes),
      talk_(talk && !progress_off()),
      start_(Clock::now()) {
  if (talk_ && bytes_ >= announced_bytes) {
    std::fprintf(stderr, "%s: %s (%s)\n", command_.c_str(), what_.c_str(),
                 byte_text(bytes_).c_str());
    std::fflush(stderr);
  }
}

double PhaseLine::finish() {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (finished_) return elapsed;
  finished_ = true;
  if (talk_ && elapsed >= 1.0) {
    std::fprintf(stderr, "%s: %s: %s in %.1f s (%s/s)\n", command_.c_str(), what_.c_str(),
                 byte_text(bytes_).c_str(), elapsed, byte_text(bytes_ / elapsed).c_str());
  }
  return elapsed;
}

ProgressBar::ProgressBar(std::string command, std::string phase, std::string unit, bool talk)
    : command_(std::move(command)), phase_(std::move(phase)), unit_(std::move(unit)) {
  start_ = last_draw_ = Clock::now();
  // Every rank reads the setting, so that all refuse a bad one together.
  const char* setting = std::getenv("LARMOR_PROGRESS");
  const std::string_view s = setting ? setting : "";
  if (s.empty() || s == "auto") {
    mode_ = isatty(fileno(stderr)) ? Mode::bar : Mode::line;
  } else if (s == "bar") {
    mode_ = Mode::bar;
    show_after_s_ = 0.0;
  } else if (s == "line") {
    mode_ = Mode::line;
  } else if (s == "off") {
    mode_ = Mode::off;
  } else {
    throw std::invalid_argument("LARMOR_PROGRESS must be auto, bar, line or off, not '" +
                                std::string(s) + "'");
  }
  if (!talk) mode_ = Mode::off;
}

ProgressBar::~ProgressBar() {
  // Unwinding from an error: leave the terminal on a fresh line, print no summary.
  if (!finished_ && drawn_) std::fprintf(stderr, "\n");
}

void ProgressBar::update(std::int64_t done, std::int64_t total) {
  if (finished_) return;
  // Nothing done yet: the phase starts now (its bar may be made earlier).
  if (done == 0 && done_ == 0 && !drawn_) start_ = last_draw_ = Clock::now();
  done_ = done;
  total_ = total;
  if (total > 0 && done >= total) return finish();
  if (mode_ != Mode::bar) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < show_after_s_ || (drawn_ && now - last_draw_ < std::chrono::milliseconds(125))) {
    return;
  }
  last_draw_ = now;
  draw(false);
}

void ProgressBar::draw(bool final_draw) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double share = total_ > 0 ? double(done_) / double(total_) : 0.0;
  constexpr int width = 30;
  const int filled = int(share * width + 1e-9);
  std::string bar(std::size_t(filled), '=');
  if (filled < width) bar += '>' + std::string(std::size_t(width - filled - 1), ' ');
  const double rate = elapsed > 0.0 ? double(done_) / elapsed : 0.0;
  std::string tail = human(rate) + " " + unit_ + "/s";
  if (final_draw) {
    tail += ", " + clock_time(elapsed);
  } else if (rate > 0.0) {
    tail += ", " + clock_time(double(total_ - done_) / rate) + " left";
  }
  std::fprintf(stderr, "\r%s: %s [%s] %3.0f%% %s\033[K", command_.c_str(), phase_.c_str(),
               bar.c_str(), 100.0 * share, tail.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (mode_ == Mode::bar && (drawn_ || elapsed >= show_after_s_)) {
    draw(true);
    std::fprintf(stderr, "\n");
  } else if (mode_ == Mode::line && elapsed >= show_after_s_) {
    std::fprintf(stderr, "%s: %s: %lld %s in %.1f s (%s %s/s)\n", command_.c_str(), phase_.c_str(),
                 static_cast<long long>(done_), unit_.c_str(), elapsed,
                 human(elapsed > 0.0 ? double(done_) / elapsed : 0.0).c_str(), unit_.c_str());
  }
}

}  // namespace larmor::drivers
