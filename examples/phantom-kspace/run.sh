#!/usr/bin/env bash
# From a synthetic brain to an image: the phantom's middle slice played through a 2D gradient
# echo on the isochromat engine, its raw k-space (ISMRMRD) reconstructed by a Fourier transform.
#
#   examples/phantom-kspace/run.sh [OUTPUT_FOLDER]      (from the repository root)
#
# LARMOR names the larmor binary (default build/openmp/larmor); LARMOR_LAUNCH a launcher for the
# simulation, e.g. "mpirun -np 2". Needs python3 with numpy, h5py and matplotlib.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-phantom-kspace}
larmor=${LARMOR:-build/openmp/larmor}
mkdir -p "$out"
python3 "$here/write_gre.py" "$out/gre.seq"
"$larmor" phantom -n 70000 --sequence inputs/mese.toml -o "$out/phantom3d.h5"
python3 "$here/slice_phantom.py" "$out/phantom3d.h5" "$out/slice.h5"
cp "$here/gre.toml" "$out/gre.toml"
${LARMOR_LAUNCH:-} "$larmor" simulate "$out/gre.toml" -o "$out/kspace.h5"
python3 "$here/reconstruct.py" "$out/kspace.h5" "$out/image.png"
echo "wrote $out/image.png"
