#include "estimators/perk/perk_model.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace larmor::estimators::perk {
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

}  // namespace

void check_perk_model(const PerkModel& m, const std::string& where) {
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
  check_perk_model(m, "PERK model image");
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

}  // namespace larmor::estimators::perk
