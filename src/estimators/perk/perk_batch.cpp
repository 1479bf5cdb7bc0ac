#include "estimators/perk/perk_batch.hpp"

#include <stdexcept>
#include <string>

#include "estimators/perk/impl/perk_device.hpp"

namespace larmor::estimators::perk {

namespace {
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Mem>;

Matrix to_device(const std::vector<float>& host, const char* label, std::int64_t rows, int cols) {
  Matrix v(std::string(label), rows, cols);
  if (!host.empty()) {
    Kokkos::deep_copy(
        v, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
               host.data(), rows, cols));
  }
  return v;
}

std::vector<float> to_host(const Matrix& v) {
  std::vector<float> host(v.size());
  Kokkos::deep_copy(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                        host.data(), v.extent(0), v.extent(1)),
                    v);
  return host;
}
}  // namespace

struct PerkBatch::Impl {
  larmor::perk::ModelViews<Mem> model;
  Matrix inputs, cotangents, estimates, gradients;
};

PerkBatch::PerkBatch(const PerkModel& model, const std::vector<float>& inputs,
                     const std::vector<float>& cotangents, std::int64_t voxels)
    : impl_(std::make_unique<Impl>()) {
  const int q = model.inputs(), l = int(model.outputs.size());
  if (voxels < 0 || inputs.size() != std::size_t(voxels) * std::size_t(q) ||
      (!cotangents.empty() && cotangents.size() != std::size_t(voxels) * std::size_t(l))) {
    throw std::invalid_argument("PerkBatch: inputs or cotangents do not match " +
                                std::to_string(voxels) + " voxels of the model");
  }
  impl_->model = upload<Mem>(model);
  impl_->inputs = to_device(inputs, "larmor::perk_batch_inputs", voxels, q);
  impl_->cotangents = to_device(cotangents, "larmor::perk_batch_cotangents", voxels, l);
  impl_->estimates = Matrix("larmor::perk_batch_estimates", voxels, l);
  impl_->gradients = Matrix("larmor::perk_batch_gradients", voxels, q);
}

PerkBatch::~PerkBatch() = default;
PerkBatch::PerkBatch(PerkBatch&&) noexcept = default;
PerkBatch& PerkBatch::operator=(PerkBatch&&) noexcept = default;

void PerkBatch::apply(bool deterministic) {
  Exec exec;
  larmor::perk::apply(exec, impl_->model, impl_->inputs, impl_->estimates, deterministic);
  exec.fence();
}

void PerkBatch::adjoint(bool deterministic) {
  Exec exec;
  larmor::perk::adjoint(exec, impl_->model, impl_->inputs, impl_->cotangents, impl_->gradients,
                        deterministic);
  exec.fence();
}

std::int64_t PerkBatch::voxels() const { return std::int64_t(impl_->inputs.extent(0)); }
std::vector<float> PerkBatch::estimates() const { return to_host(impl_->estimates); }
std::vector<float> PerkBatch::input_gradients() const { return to_host(impl_->gradients); }

}  // namespace larmor::estimators::perk
