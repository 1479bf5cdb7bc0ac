// A trained PERK model and a batch of voxels' inputs held on Kokkos' default
// execution space, so that the fused kernels (kernels/perk/) can be launched
// repeatedly and timed apart from the uploads (larmor-bench -m perk). A
// non-template interface: callers need neither Kokkos nor the kernel headers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "estimators/perk/perk_model.hpp"

namespace larmor::estimators::perk {

class PerkBatch {
 public:
  // inputs: [voxels][model.inputs()], already normalised (perk_inputs);
  // cotangents: [voxels][outputs] for the adjoint (empty: zeros).
  PerkBatch(const PerkModel& model, const std::vector<float>& inputs,
            const std::vector<float>& cotangents, std::int64_t voxels);
  ~PerkBatch();
  PerkBatch(PerkBatch&&) noexcept;
  PerkBatch& operator=(PerkBatch&&) noexcept;

  // The estimates of every voxel, and waits for them. `deterministic`: one
  // team per voxel block over every feature, no atomics (larmor fit's call).
  void apply(bool deterministic = false);
  // The adjoint: each voxel's input gradients of sum_l cotangent_l x_l.
  void adjoint(bool deterministic = false);

  std::int64_t voxels() const;
  // Host copies of the last results: [voxels][outputs] and [voxels][inputs].
  std::vector<float> estimates() const;
  std::vector<float> input_gradients() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace larmor::estimators::perk
