#include "estimators/perk/perk_model.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "formats/hdf5_file.hpp"

namespace larmor::estimators {
namespace {

// A tiny append/consume byte codec for the broadcast image.
struct Writer {
  std::string bytes;
  template <class T>
  void put(const T& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(std::int64_t(v.size()));
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put(const std::string& s) {
    put(std::int64_t(s.size()));
    bytes.append(s);
  }
};

struct Reader {
  const std::string& bytes;
  std::size_t at = 0;
  void need(std::size_t n) {
    if (bytes.size() - at < n) throw std::runtime_error("PERK model image is truncated");
  }
  template <class T>
  void get(T& v) {
    need(sizeof(T));
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
  }
  template <class T>
  void get(std::vector<T>& v) {
    std::int64_t n = 0;
    get(n);
    if (n < 0 || std::uint64_t(n) > (bytes.size() - at) / sizeof(T)) {
      throw std::runtime_error("PERK model image is truncated");
    }
    v.resize(std::size_t(n));
    std::memcpy(v.data(), bytes.data() + at, std::size_t(n) * sizeof(T));
    at += std::size_t(n) * sizeof(T);
  }
  void get(std::string& s) {
    std::vector<char> c;
    get(c);
    s.assign(c.begin(), c.end());
  }
};

std::vector<std::int64_t> property_codes(const std::vector<tissue::Property>& p) {
  std::vector<std::int64_t> codes;
  for (auto x : p) codes.push_back(std::int64_t(x));
  return codes;
}

std::vector<tissue::Property> properties_of(const std::vector<float>& codes,
                                            const std::string& path) {
  std::vector<tissue::Property> out;
  for (float c : codes) {
    if (!(c >= 0.0f && c < float(tissue::all_properties.size())) || c != std::floor(c)) {
      throw std::runtime_error(path + ": a PERK property code is not a tissue property");
    }
    out.push_back(tissue::Property(int(c)));
  }
  return out;
}

void check_sizes(const PerkModel& m, const std::string& where) {
  const std::size_t q = std::size_t(m.inputs()), h = std::size_t(m.features);
  const std::size_t l = m.outputs.size();
  if (m.signals < 1 || m.features < 1 || l < 1 || m.frequencies.size() != h * q ||
      m.phases.size() != h || m.weights.size() != l * h || m.offsets.size() != l) {
    throw std::runtime_error(where + ": the PERK model's arrays do not match its sizes");
  }
  // A non-finite coefficient makes every estimate non-finite: refuse it here.
  const std::pair<const char*, const std::vector<float>*> arrays[] = {
      {"frequencies", &m.frequencies},
      {"phases", &m.phases},
      {"weights", &m.weights},
      {"offsets", &m.offsets}};
  for (const auto& [name, values] : arrays) {
    for (std::size_t i = 0; i < values->size(); ++i) {
      if (!std::isfinite((*values)[i])) {
        throw std::runtime_error(where + ": the PERK model's /perk/" + name +
                                 " is not finite at entry " + std::to_string(i) + " (" +
                                 std::to_string((*values)[i]) +
                                 "): the model is damaged; train it again");
      }
    }
  }
}

}  // namespace

std::string PerkModel::to_bytes() const {
  Writer w;
  w.put(signals);
  w.put(property_codes(known));
  w.put(property_codes(outputs));
  w.put(features);
  w.put(frequencies);
  w.put(phases);
  w.put(weights);
  w.put(offsets);
  w.put(lambda);
  w.put(rho);
  w.put(noise_sigma);
  w.put(holdout_cost);
  w.put(sequence);
  return w.bytes;
}

PerkModel PerkModel::from_bytes(const std::string& bytes) {
  Reader r{bytes};
  PerkModel m;
  std::vector<std::int64_t> known, outputs;
  r.get(m.signals);
  r.get(known);
  r.get(outputs);
  r.get(m.features);
  r.get(m.frequencies);
  r.get(m.phases);
  r.get(m.weights);
  r.get(m.offsets);
  r.get(m.lambda);
  r.get(m.rho);
  r.get(m.noise_sigma);
  r.get(m.holdout_cost);
  r.get(m.sequence);
  for (auto c : known) m.known.push_back(tissue::Property(c));
  for (auto c : outputs) m.outputs.push_back(tissue::Property(c));
  check_sizes(m, "PERK model image");
  return m;
}

std::vector<float> perk_inputs(const float* signals, std::int64_t voxels, int samples,
                               const std::vector<const float*>& known) {
  const std::size_t q = std::size_t(samples) + known.size();
  std::vector<float> out(std::size_t(voxels) * q);
  for (std::int64_t v = 0; v < voxels; ++v) {
    const float* s = signals + std::size_t(v) * samples * 2;
    float* row = out.data() + std::size_t(v) * q;
    double total = 0.0;
    for (int d = 0; d < samples; ++d) {
      row[d] = std::hypot(s[2 * d], s[2 * d + 1]);
      total += row[d];
    }
    const double mean = total / samples;
    for (int d = 0; d < samples; ++d) row[d] = mean > 0.0 ? float(row[d] / mean) : 0.0f;
    for (std::size_t n = 0; n < known.size(); ++n) row[samples + n] = known[n][v];
  }
  return out;
}

double mean_magnitude(const float* signals, int samples) {
  double total = 0.0;
  for (int d = 0; d < samples; ++d) total += std::hypot(signals[2 * d], signals[2 * d + 1]);
  return total / samples;
}

float m0_from_level(double mean_magnitude, float level) {
  return level > 0.0f ? float(mean_magnitude / level) : 0.0f;
}

void save_perk_model(const PerkModel& m, const std::string& path) {
  check_sizes(m, path);
  formats::H5Writer out(path, parallel::Communicator(MPI_COMM_SELF));
  const auto q = std::uint64_t(m.inputs()), h = std::uint64_t(m.features);
  const auto l = std::uint64_t(m.outputs.size());
  out.write_whole("/perk/frequencies", {h, q}, m.frequencies);
  out.write_whole("/perk/phases", {h}, m.phases);
  out.write_whole("/perk/weights", {l, h}, m.weights);
  out.write_whole("/perk/offsets", {l}, m.offsets);
  out.write_whole("/perk/known", {std::uint64_t(m.known.size())}, property_codes(m.known));
  out.write_whole("/perk/outputs", {l}, property_codes(m.outputs));
  out.set_attribute("/perk", "signals", m.signals);
  out.set_attribute("/perk", "lambda", m.lambda);
  out.set_attribute("/perk", "rho", m.rho);
  out.set_attribute("/perk", "noise_sigma", m.noise_sigma);
  out.set_attribute("/perk", "holdout_cost", m.holdout_cost);
  out.set_attribute("/perk", "sequence", m.sequence);
  std::string outputs;
  for (auto p : m.outputs)
    outputs += std::string(outputs.empty() ? "" : " ") + tissue::deck_name(p);
  out.set_attribute("/perk", "output_names", outputs);
  out.commit();
}

PerkModel load_perk_model(const std::string& path) {
  const formats::H5Reader in(path, parallel::Communicator(MPI_COMM_SELF));
  PerkModel m;
  m.signals = int(in.attribute_int64("/perk", "signals"));
  m.known = properties_of(
      in.dims("/perk/known")[0] == 0 ? std::vector<float>{} : in.read_all_float("/perk/known"),
      path);
  m.outputs = properties_of(in.read_all_float("/perk/outputs"), path);
  m.frequencies = in.read_all_float("/perk/frequencies");
  m.phases = in.read_all_float("/perk/phases");
  m.weights = in.read_all_float("/perk/weights");
  m.offsets = in.read_all_float("/perk/offsets");
  m.features = int(m.phases.size());
  m.lambda = in.attribute_double("/perk", "lambda");
  m.rho = in.attribute_double("/perk", "rho");
  m.noise_sigma = in.attribute_double("/perk", "noise_sigma");
  m.holdout_cost = in.attribute_double("/perk", "holdout_cost");
  m.sequence = in.attribute_string("/perk", "sequence");
  check_sizes(m, path);
  return m;
}

}  // namespace larmor::estimators
