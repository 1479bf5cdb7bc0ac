#include "io/mrd/mrd.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include "io/mrd/mrd_detail.hpp"
#include "io/temporary_files.hpp"
#include "sequence/builders/builders.hpp"

namespace larmor::io::mrd {

namespace {

std::vector<double> scaled(const ISMRMRD::Optional<std::vector<float>>& v, double factor) {
  std::vector<double> out;
  if (v.is_present()) {
    for (float x : v.get()) out.push_back(double(x) * factor);
  }
  return out;
}

// Opens an ISMRMRD file's group and runs `read` on it; libismrmrd's errors
// become MrdErrors naming the file and what was being read.
template <class Read>
void with_dataset(const std::string& path, const std::string& group, const std::string& what,
                  Read read) {
  if (!std::filesystem::exists(path)) throw MrdError(path + ": no such MRD file");
  try {
    ISMRMRD::Dataset d(path.c_str(), group.c_str(), false);
    read(d);
  } catch (const MrdError&) {
    throw;
  } catch (const std::exception& e) {
    throw MrdError(path + ": " + what + ": " + e.what());
  }
}

}  // namespace

Measurement read_dataset(const std::string& path, const std::string& group) {
  Measurement m;
  with_dataset(path, group, "group '" + group + "'", [&](ISMRMRD::Dataset& d) {
    d.readHeader(m.header_xml);
    const std::uint32_t count = d.getNumberOfAcquisitions();
    for (std::uint32_t i = 0; i < count; ++i) {
      ISMRMRD::Acquisition acq;
      d.readAcquisition(i, acq);
      Acquisition a = detail::acquisition_of(acq.getHead());
      a.data.assign(acq.getDataPtr(), acq.getDataPtr() + std::size_t(a.samples) * a.channels);
      a.trajectory.assign(acq.getTrajPtr(),
                          acq.getTrajPtr() + std::size_t(a.samples) * a.trajectory_dimensions);
      m.acquisitions.push_back(std::move(a));
    }
  });
  m.closed = true;
  return m;
}

ImageSeries read_image_series(const std::string& path, const std::string& variable,
                              const std::string& group) {
  ImageSeries out;
  with_dataset(path, group, "images '" + group + "/" + variable + "'", [&](ISMRMRD::Dataset& d) {
    const std::uint32_t count = d.getNumberOfImages(variable);
    if (count == 0) throw MrdError(path + ": no images under '" + group + "/" + variable + "'");
    std::vector<ISMRMRD::Image<std::complex<float>>> images(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      d.readImage(variable, i, images[i]);
      const auto& im = images[i];
      if (i == 0) {
        out.nx = im.getMatrixSizeX();
        out.ny = im.getMatrixSizeY();
        out.nz = im.getMatrixSizeZ();
      } else if (im.getMatrixSizeX() != out.nx || im.getMatrixSizeY() != out.ny ||
                 im.getMatrixSizeZ() != out.nz) {
        throw MrdError(path + ": image " + std::to_string(i) + " of '" + variable +
                       "' differs in matrix size from image 0");
      }
    }
    out.images = int(count);
    const std::size_t voxels = std::size_t(out.nx) * out.ny * out.nz;
    out.signals.resize(voxels * count * 2);
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::complex<float>* data = images[i].getDataPtr();  // x fastest, channel 0 first
      for (std::size_t v = 0; v < voxels; ++v) {
        out.signals[(v * count + i) * 2] = data[v].real();
        out.signals[(v * count + i) * 2 + 1] = data[v].imag();
      }
    }
  });
  return out;
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

std::string raw_header_xml(const RawEncoding& encoding) {
  ISMRMRD::IsmrmrdHeader h;
  ISMRMRD::AcquisitionSystemInformation system;
  system.systemVendor = encoding.system_vendor;
  system.systemFieldStrength_T = float(encoding.field_t);
  system.receiverChannels = std::uint16_t(1);
  h.acquisitionSystemInformation = system;
  h.experimentalConditions.H1resonanceFrequency_Hz = long(42.577478518e6 * encoding.field_t);
  ISMRMRD::Encoding e;
  e.encodedSpace.matrixSize = {std::uint16_t(encoding.matrix[0]), std::uint16_t(encoding.matrix[1]),
                               std::uint16_t(encoding.matrix[2])};
  e.encodedSpace.fieldOfView_mm = {float(encoding.fov_mm[0]), float(encoding.fov_mm[1]),
                                   float(encoding.fov_mm[2])};
  e.reconSpace = e.encodedSpace;
  const auto limit = [](int size, int centre) {
    return ISMRMRD::Limit(0, std::uint16_t(std::max(0, size - 1)),
                          std::uint16_t(centre >= 0 ? centre : size / 2));
  };
  e.encodingLimits.kspace_encoding_step_1 = limit(encoding.matrix[1], encoding.centre_line);
  if (encoding.matrix[2] > 1) {
    e.encodingLimits.kspace_encoding_step_2 = limit(encoding.matrix[2], encoding.centre_partition);
  }
  if (encoding.trajectory == "cartesian") {
    e.trajectory = ISMRMRD::TrajectoryType::CARTESIAN;
  } else if (encoding.trajectory == "radial") {
    e.trajectory = ISMRMRD::TrajectoryType::RADIAL;
  } else if (encoding.trajectory == "spiral") {
    e.trajectory = ISMRMRD::TrajectoryType::SPIRAL;
  } else {
    e.trajectory = ISMRMRD::TrajectoryType::OTHER;
  }
  h.encoding.push_back(e);
  std::ostringstream xml;
  ISMRMRD::serialize(h, xml);
  return xml.str();
}

void write_raw_dataset(const std::string& path, const std::string& header_xml,
                       const std::vector<Acquisition>& acquisitions) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  register_temporary(temporary);
  try {
    {
      ISMRMRD::Dataset d(temporary.c_str(), "dataset", true);
      d.writeHeader(header_xml);
      for (const Acquisition& a : acquisitions) {
        ISMRMRD::Acquisition acq(std::uint16_t(a.samples), std::uint16_t(1),
                                 std::uint16_t(a.trajectory_dimensions));
        acq.scan_counter() = a.scan_counter;
        acq.center_sample() = std::uint16_t(a.center_sample);
        acq.sample_time_us() = a.sample_time_us;
        acq.idx().kspace_encode_step_1 = a.encode_step_1;
        acq.idx().kspace_encode_step_2 = a.encode_step_2;
        for (int d = 0; d < 3; ++d) {
          acq.read_dir()[d] = a.read_dir[std::size_t(d)];
          acq.phase_dir()[d] = a.phase_dir[std::size_t(d)];
          acq.slice_dir()[d] = a.slice_dir[std::size_t(d)];
        }
        if (a.reversed) acq.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_REVERSE);
        if (&a == &acquisitions.back()) acq.setFlag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_MEASUREMENT);
        std::copy(a.data.begin(), a.data.begin() + a.samples, acq.getDataPtr());
        const std::size_t trajectory_floats = std::size_t(a.samples) * a.trajectory_dimensions;
        if (a.trajectory.size() != trajectory_floats) {
          throw std::invalid_argument("acquisition " + std::to_string(a.scan_counter) + ": " +
                                      std::to_string(a.trajectory.size()) +
                                      " trajectory floats for " +
                                      std::to_string(trajectory_floats));
        }
        std::copy(a.trajectory.begin(), a.trajectory.end(), acq.getTrajPtr());
        d.appendAcquisition(acq);
      }
    }
    std::filesystem::rename(temporary, path);
  } catch (const std::exception& e) {
    std::remove(temporary.c_str());
    release_temporary(temporary);
    throw MrdError(path + ": writing the raw data: " + e.what());
  }
  release_temporary(temporary);
}

}  // namespace larmor::io::mrd
