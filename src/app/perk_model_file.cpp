#include "app/perk_model_file.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "io/hdf5_file.hpp"

namespace larmor::app {
namespace {

using estimators::perk::PerkModel;

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

}  // namespace

void save_perk_model(const PerkModel& m, const std::string& path) {
  estimators::perk::check_perk_model(m, path);
  io::H5Writer out(path, parallel::Communicator(MPI_COMM_SELF));
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
  const io::H5Reader in(path, parallel::Communicator(MPI_COMM_SELF));
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
  estimators::perk::check_perk_model(m, path);
  return m;
}

}  // namespace larmor::app
