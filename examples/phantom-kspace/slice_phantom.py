#!/usr/bin/env python3
"""Cuts the middle slice (along z) of a `larmor phantom` volume into maps for a 2D run: /mask,
/m0, /t1_ms, /t2_ms and /b1 of shape [1][ny][nx].

    python3 slice_phantom.py phantom3d.h5 slice.h5
"""
import argparse
import pathlib

import h5py


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("volume", type=pathlib.Path)
    parser.add_argument("output", type=pathlib.Path)
    a = parser.parse_args()
    with h5py.File(a.volume, "r") as src:
        middle = src["/mask"].shape[0] // 2
        maps = {name: src[name][middle : middle + 1] for name in
                ("/mask", "/m0", "/t1_ms", "/t2_ms", "/b1")}
    with h5py.File(a.output, "w") as dst:
        for name, values in maps.items():
            dst[name] = values


if __name__ == "__main__":
    main()
