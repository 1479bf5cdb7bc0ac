#include "formats/mrd/mrd.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include "sequence/builders/builders.hpp"

namespace larmor::formats::mrd {

namespace {

static_assert(sizeof(ISMRMRD::ISMRMRD_AcquisitionHeader) == 340,
              "the MRD v1 acquisition header is 340 packed bytes");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "MRD streams are little-endian");

constexpr std::uint64_t max_message_bytes = std::uint64_t(1) << 30;

Acquisition convert(const ISMRMRD::ISMRMRD_AcquisitionHeader& h) {
  Acquisition a;
  a.scan_counter = h.scan_counter;
  a.samples = h.number_of_samples;
  a.channels = h.active_channels;
  a.trajectory_dimensions = h.trajectory_dimensions;
  a.center_sample = h.center_sample;
  a.sample_time_us = h.sample_time_us;
  return a;
}

// Reads exactly `bytes` or refuses, naming where the stream ended.
class Reader {
 public:
  Reader(std::istream& in, const std::string& name) : in_(in), name_(name) {}
  std::uint64_t offset() const { return offset_; }
  bool at_end() { return in_.peek() == std::char_traits<char>::eof(); }
  void read(void* out, std::uint64_t bytes, const std::string& what) {
    in_.read(static_cast<char*>(out), std::streamsize(bytes));
    const auto got = std::uint64_t(in_.gcount());
    offset_ += got;
    if (got != bytes) {
      fail("truncated: " + what + " needs " + std::to_string(bytes) + " bytes, " +
           std::to_string(got) + " left");
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
    std::string s(length, '\0');
    read(s.data(), length, what);
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

std::vector<double> scaled(const ISMRMRD::Optional<std::vector<float>>& v, double factor) {
  std::vector<double> out;
  if (v.is_present()) {
    for (float x : v.get()) out.push_back(double(x) * factor);
  }
  return out;
}

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
        Acquisition a = convert(h);
        if (a.samples > 0 && a.channels == 0)
          r.fail("acquisition with samples but no active channel");
        a.trajectory.resize(std::size_t(a.samples) * a.trajectory_dimensions);
        r.read(a.trajectory.data(), a.trajectory.size() * sizeof(float), "ACQUISITION trajectory");
        a.data.resize(std::size_t(a.samples) * a.channels);
        r.read(a.data.data(), a.data.size() * sizeof(std::complex<float>), "ACQUISITION data");
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

Measurement read_dataset(const std::string& path, const std::string& group) {
  if (!std::filesystem::exists(path)) throw MrdError(path + ": no such MRD file");
  Measurement m;
  try {
    ISMRMRD::Dataset d(path.c_str(), group.c_str(), false);
    d.readHeader(m.header_xml);
    const std::uint32_t count = d.getNumberOfAcquisitions();
    for (std::uint32_t i = 0; i < count; ++i) {
      ISMRMRD::Acquisition acq;
      d.readAcquisition(i, acq);
      Acquisition a = convert(acq.getHead());
      a.data.assign(acq.getDataPtr(), acq.getDataPtr() + std::size_t(a.samples) * a.channels);
      a.trajectory.assign(acq.getTrajPtr(),
                          acq.getTrajPtr() + std::size_t(a.samples) * a.trajectory_dimensions);
      m.acquisitions.push_back(std::move(a));
    }
  } catch (const MrdError&) {
    throw;
  } catch (const std::exception& e) {
    throw MrdError(path + ": group '" + group + "': " + e.what());
  }
  m.closed = true;
  return m;
}

SequenceParameters sequence_parameters(const std::string& xml, const std::string& source) {
  ISMRMRD::IsmrmrdHeader h;
  try {
    ISMRMRD::deserialize(xml.c_str(), h);
  } catch (const std::exception& e) {
    throw MrdError(source + ": the XML header does not parse: " + e.what());
  }
  SequenceParameters p;
  if (!h.sequenceParameters.is_present()) {
    throw MrdError(source + ": the XML header has no sequenceParameters");
  }
  const auto& s = h.sequenceParameters.get();
  p.tr_s = scaled(s.TR, 1e-3);
  p.te_s = scaled(s.TE, 1e-3);
  p.ti_s = scaled(s.TI, 1e-3);
  p.flip_deg = scaled(s.flipAngle_deg, 1.0);
  p.echo_spacing_s = scaled(s.echo_spacing, 1e-3);
  if (s.sequence_type.is_present()) p.sequence_type = s.sequence_type.get();
  return p;
}

sequence::Description instantiate_builder(const SequenceParameters& p, const std::string& builder,
                                          const std::string& source, int count) {
  const auto need = [&](const std::vector<double>& v, const char* element) {
    if (v.empty()) {
      throw MrdError(source + ": builder '" + builder + "' needs sequenceParameters/" + element +
                     ", which the header lacks");
    }
    return v.front();
  };
  if (builder == "mese") {
    sequence::MeseParams m;
    if (p.te_s.size() > 1) {
      m.echoes = int(p.te_s.size());
      m.echo_spacing_s = p.te_s[1] - p.te_s[0];
    } else {
      m.echo_spacing_s = p.echo_spacing_s.empty() ? need(p.te_s, "TE") : p.echo_spacing_s.front();
      if (count > 0) m.echoes = count;
    }
    if (p.flip_deg.size() > 1) m.refocusing_deg = p.flip_deg[1];
    if (!p.flip_deg.empty()) m.excitation_deg = p.flip_deg[0];
    return sequence::build_mese(m);
  }
  if (builder == "spgr") {
    sequence::SpgrParams s;
    s.tr_s = need(p.tr_s, "TR");
    s.te_s = need(p.te_s, "TE");
    s.flip_deg = need(p.flip_deg, "flipAngle_deg");
    if (count > 0) s.repetitions = count;
    return sequence::build_spgr(s);
  }
  if (builder == "mprage") {
    sequence::MprageParams s;
    s.ti_s = need(p.ti_s, "TI");
    s.tr_s = need(p.tr_s, "TR");
    s.te_s = need(p.te_s, "TE");
    s.flip_deg = need(p.flip_deg, "flipAngle_deg");
    if (count > 0) s.readouts = count;
    return sequence::build_mprage(s);
  }
  if (builder == "bssfp") {
    sequence::BssfpParams s;
    s.tr_s = need(p.tr_s, "TR");
    s.flip_deg = need(p.flip_deg, "flipAngle_deg");
    if (!p.te_s.empty()) s.te_s = p.te_s.front();
    return sequence::build_bssfp(s);
  }
  throw MrdError(source + ": no MRD mapping for builder '" + builder +
                 "' (mese, spgr, mprage, bssfp)");
}

std::vector<float> acquisition_signals(const Measurement& m, int channel, int* samples) {
  std::vector<float> out;
  int n = -1;
  for (std::size_t i = 0; i < m.acquisitions.size(); ++i) {
    const Acquisition& a = m.acquisitions[i];
    if (n < 0) n = a.samples;
    if (a.samples != n) {
      throw MrdError("acquisition " + std::to_string(i) + " has " + std::to_string(a.samples) +
                     " samples, the first had " + std::to_string(n));
    }
    if (channel < 0 || channel >= a.channels) {
      throw MrdError("acquisition " + std::to_string(i) + " has no channel " +
                     std::to_string(channel));
    }
    for (int s = 0; s < a.samples; ++s) {
      const auto x = a.data[std::size_t(channel) * a.samples + s];
      out.push_back(x.real());
      out.push_back(x.imag());
    }
  }
  if (samples) *samples = n < 0 ? 0 : n;
  return out;
}

}  // namespace larmor::formats::mrd
