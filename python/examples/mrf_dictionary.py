#!/usr/bin/env python3
"""An MR fingerprinting dictionary over a T1 x T2 grid, matched against noisy signals of a few
tissues, with a plot of some fingerprints.

    PYTHONPATH=build/openmp/python python3 python/examples/mrf_dictionary.py mrf-fingerprints.png

The train is the shipped schedule (inputs/mrf-schedule-1000.csv): an inversion, then one
excitation and readout per row. The PNG goes to the path given (nothing is written elsewhere).
"""
import argparse
import pathlib
import time

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import larmor  # noqa: E402

SCHEDULE = pathlib.Path(__file__).resolve().parents[2] / "inputs" / "mrf-schedule-1000.csv"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=pathlib.Path, help="where the PNG goes")
    parser.add_argument("--repetitions", type=int, default=500, help="schedule rows used")
    parser.add_argument("--t1", type=int, default=60, help="T1 values (100-4000 ms, log)")
    parser.add_argument("--t2", type=int, default=60, help="T2 values (10-2000 ms, log)")
    args = parser.parse_args()

    sequence = larmor.build("mrf", schedule=str(SCHEDULE), repetitions=args.repetitions)
    t1 = np.geomspace(100.0, 4000.0, args.t1)
    t2 = np.geomspace(10.0, 2000.0, args.t2)
    # Every combination (T2 fastest); T2 above T1 is not tissue, so leave it out.
    t1_grid, t2_grid = np.meshgrid(t1, t2, indexing="ij")
    keep = t2_grid < t1_grid
    grid = larmor.Tissue(t1_ms=t1_grid[keep], t2_ms=t2_grid[keep])

    start = time.perf_counter()
    atoms = larmor.simulate(sequence, grid)
    took = time.perf_counter() - start
    print(f"{grid.voxels} atoms x {sequence.samples} samples in {took:.3f} s "
          f"({larmor.backend()}, {larmor.threads()} threads)")
    dictionary = larmor.Dictionary(atoms, grid, rank=0)  # compressed, keeping 99.99 % energy

    # A few tissues off the grid, with noise, matched back.
    truth = dict(t1_ms=np.array([850.0, 1350.0, 600.0]), t2_ms=np.array([50.0, 110.0, 70.0]))
    clean = larmor.simulate(sequence, larmor.Tissue(**truth))
    rng = np.random.default_rng(1)
    noise = 0.002 * (rng.standard_normal(clean.shape) + 1j * rng.standard_normal(clean.shape))
    match = dictionary.match((clean + noise).astype(np.complex64))
    for k in range(3):
        print(f"T1 {truth['t1_ms'][k]:6.0f} ms, T2 {truth['t2_ms'][k]:5.0f} ms -> matched "
              f"T1 {match['t1_ms'][k]:6.0f} ms, T2 {match['t2_ms'][k]:5.0f} ms "
              f"(correlation {match['correlation'][k]:.4f})")

    figure, axes = plt.subplots(figsize=(8, 4))
    for k in range(3):
        atom = atoms[match["atom"][k]]
        axes.plot(np.abs(atom), label=f"T1 {match['t1_ms'][k]:.0f} ms, "
                                      f"T2 {match['t2_ms'][k]:.0f} ms")
    axes.set_xlabel("repetition")
    axes.set_ylabel("|signal| (units of M0)")
    axes.set_title(f"MRF fingerprints ({sequence.samples} repetitions)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
