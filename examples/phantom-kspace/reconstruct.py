#!/usr/bin/env python3
"""Reconstructs the Cartesian raw data of `larmor simulate` with `[output] kspace = true` (ISMRMRD,
one readout per line, each sample's k-space position as its trajectory) by a 2D Fourier transform,
and writes the magnitude image as a PNG. Lines are placed in the order of their phase-encode
position (the axis along which the lines' mean trajectories differ most).

    python3 reconstruct.py kspace.h5 image.png

A sample is sum_r m(r) exp(+i 2 pi k.r) (larmor's precession sign, docs/physics.md), so the image
is its forward transform.
"""
import argparse
import pathlib

import h5py
import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=pathlib.Path)
    parser.add_argument("output", type=pathlib.Path)
    a = parser.parse_args()
    with h5py.File(a.raw, "r") as f:
        acquisitions = f["/dataset/data"][:]
    trajectories = np.array([np.asarray(acq["traj"], dtype=np.float32).reshape(-1, 3)
                             for acq in acquisitions])
    line_means = trajectories.mean(axis=1)
    phase_axis = int(np.argmax(line_means.std(axis=0)))
    order = np.argsort(line_means[:, phase_axis], kind="stable")
    kspace = np.array([np.asarray(acquisitions[i]["data"], dtype=np.float32).view(np.complex64)
                       for i in order])
    image = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(kspace))) / kspace.size
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    axes[0].imshow(np.log10(np.abs(kspace) + 1e-6), cmap="gray")
    axes[0].set_title("|k-space| (log)")
    axes[1].imshow(np.abs(image), cmap="gray", origin="lower")
    axes[1].set_title("image")
    for ax in axes:
        ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(a.output, dpi=100)


if __name__ == "__main__":
    main()
