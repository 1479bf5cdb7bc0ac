#!/usr/bin/env bash
# The walkthrough of docs/estimators.md ("T2 maps from NIfTI") as written:
# a phantom with NIfTI copies, the shipped inputs/t2-fit-nifti.toml, and the
# shipped inputs/brain-fit.toml on the same phantom's HDF5 file (scored
# against its truth): the two T2 maps are the same numbers.
# Usage: nifti_walkthrough.sh LARMOR H5DIFF SOURCE_DIR WORK_DIR
set -eu
larmor=$1 h5diff=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work/inputs" && cd "$work"
cp "$src/inputs/mese.toml" "$src/inputs/t2-fit-nifti.toml" "$src/inputs/brain-fit.toml" inputs/
"$larmor" phantom -o results/brain.h5 --voxels 20000 --sequence inputs/mese.toml --nifti
"$larmor" fit inputs/t2-fit-nifti.toml
"$larmor" fit inputs/brain-fit.toml --truth-tolerance 0.03 --score t2_ms
for f in results/brain-nifti-maps_t2_ms.nii results/brain-nifti-maps_m0.nii; do
  [ -s "$f" ] || { echo "no $f"; exit 1; }
done
"$h5diff" results/brain-maps.h5 results/brain-nifti-maps.h5 /maps/t2_ms /maps/t2_ms
echo "walkthrough done"
