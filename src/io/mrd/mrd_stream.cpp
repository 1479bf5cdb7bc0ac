// The MRD v1 stream framing (mrd.hpp), on libismrmrd's acquisition header
// struct only: no library calls, so the fuzz target builds it alone.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>

#include <ismrmrd/ismrmrd.h>

#include "io/mrd/mrd.hpp"
#include "io/mrd/mrd_detail.hpp"

namespace larmor::io::mrd {

namespace detail {

Acquisition acquisition_of(const ISMRMRD::ISMRMRD_AcquisitionHeader& h) {
  Acquisition a;
  a.scan_counter = h.scan_counter;
  a.samples = h.number_of_samples;
  a.channels = h.active_channels;
  a.trajectory_dimensions = h.trajectory_dimensions;
  a.center_sample = h.center_sample;
  a.sample_time_us = h.sample_time_us;
  return a;
}

}  // namespace detail

namespace {

static_assert(sizeof(ISMRMRD::ISMRMRD_AcquisitionHeader) == 340,
              "the MRD v1 acquisition header is 340 packed bytes");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "MRD streams are little-endian");

constexpr std::uint64_t max_message_bytes = std::uint64_t(1) << 30;

// Reads exactly `bytes` or refuses, naming where the stream ended.
class Reader {
 public:
  Reader(std::istream& in, const std::string& name) : in_(in), name_(name) {}
  std::uint64_t offset() const { return offset_; }
  bool at_end() { return in_.peek() == std::char_traits<char>::eof(); }
  // (`needed`, `done`: where `out` is one piece of a larger read, its size
  // and the bytes already read, for the message.)
  void read(void* out, std::uint64_t bytes, const std::string& what, std::uint64_t needed = 0,
            std::uint64_t done = 0) {
    in_.read(static_cast<char*>(out), std::streamsize(bytes));
    const auto got = std::uint64_t(in_.gcount());
    offset_ += got;
    if (got != bytes) {
      fail("truncated: " + what + " needs " + std::to_string(needed > 0 ? needed : bytes) +
           " bytes, " + std::to_string(done + got) + " left");
    }
  }
  // Reads `count` elements into `out`, growing it as the data arrives (1 MiB
  // at a time), so that a truncated message claiming up to a gigabyte
  // allocates only what the stream holds.
  template <class Container>
  void read_growing(Container& out, std::uint64_t count, const std::string& what) {
    using T = typename Container::value_type;
    constexpr std::uint64_t chunk = (std::uint64_t(1) << 20) / sizeof(T);
    out.clear();
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t n = std::min(chunk, count - done);
      out.resize(std::size_t(done + n));
      read(out.data() + done, n * sizeof(T), what, count * sizeof(T), done * sizeof(T));
      done += n;
    }
  }
  template <class T>
  T value(const std::string& what) {
    T v;
    read(&v, sizeof v, what);
    return v;
  }
  std::string text(const std::string& what) {
    const auto length = value<std::uint32_t>(what + " length");
    if (length > max_message_bytes)
      fail(what + " claims " + std::to_string(length) + " bytes (over 1 GiB)");
    std::string s;
    read_growing(s, length, what);
    return s;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw MrdError(name_ + ": byte " + std::to_string(offset_) + ": " + what);
  }

 private:
  std::istream& in_;
  std::string name_;
  std::uint64_t offset_ = 0;
};

}  // namespace

Measurement read_stream(std::istream& in, const std::string& name) {
  Measurement m;
  Reader r(in, name);
  while (!r.at_end()) {
    const std::uint64_t start = r.offset();
    const auto id = r.value<std::uint16_t>("message id");
    switch (id) {
      case message::config_file: {
        char file[1024];
        r.read(file, sizeof file, "CONFIG_FILE name");
        m.texts.push_back("config file: " + std::string(file, strnlen(file, sizeof file)));
        break;
      }
      case message::config_text:
        m.texts.push_back("config: " + r.text("CONFIG_TEXT"));
        break;
      case message::header:
        if (!m.header_xml.empty()) r.fail("a second HEADER message (the first was kept)");
        m.header_xml = r.text("HEADER");
        break;
      case message::text:
        m.texts.push_back(r.text("TEXT"));
        break;
      case message::close:
        m.closed = true;
        return m;
      case message::acquisition: {
        ISMRMRD::ISMRMRD_AcquisitionHeader h;
        r.read(&h, sizeof h, "ACQUISITION header");
        Acquisition a = detail::acquisition_of(h);
        if (a.samples > 0 && a.channels == 0) {
          r.fail("acquisition with samples but no active channel");
        }
        // Sized before anything is allocated: a header may claim 65535 samples
        // on 65535 channels.
        const std::uint64_t bytes =
            std::uint64_t(a.samples) * (std::uint64_t(a.channels) * sizeof(std::complex<float>) +
                                        std::uint64_t(a.trajectory_dimensions) * sizeof(float));
        if (bytes > max_message_bytes) {
          r.fail("acquisition claims " + std::to_string(bytes) + " bytes of data (over 1 GiB)");
        }
        r.read_growing(a.trajectory, std::uint64_t(a.samples) * a.trajectory_dimensions,
                       "ACQUISITION trajectory");
        r.read_growing(a.data, std::uint64_t(a.samples) * a.channels, "ACQUISITION data");
        for (const auto& x : a.data) {
          if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) {
            r.fail("acquisition " + std::to_string(m.acquisitions.size()) +
                   " holds a non-finite sample");
          }
        }
        m.acquisitions.push_back(std::move(a));
        break;
      }
      case message::image:
      case message::waveform:
        r.fail(std::string(id == message::image ? "IMAGE" : "WAVEFORM") + " message (id " +
               std::to_string(id) + ", at byte " + std::to_string(start) +
               ") is not read by larmor: send acquisitions");
      default:
        r.fail("unknown message id " + std::to_string(id) + " at byte " + std::to_string(start));
    }
  }
  return m;
}

Measurement read_stream_file(const std::string& path) {
  if (path == "-") return read_stream(std::cin, "standard input");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MrdError(path + ": cannot open the MRD stream file");
  return read_stream(in, path);
}

}  // namespace larmor::io::mrd
