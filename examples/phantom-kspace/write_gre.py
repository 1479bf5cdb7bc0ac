#!/usr/bin/env python3
"""Writes a 2D Cartesian RF-spoiled gradient echo as a Pulseq 1.4 file: a hard pulse, a readout
along x with its prephaser, a phase encode along y rewound after the readout, a spoiler along x,
the RF and receiver phase advancing by 117 degrees squared (quadratically) from TR to TR, and
dummy repetitions before the first line. Lines are acquired from -N/2 to N/2 - 1 in order.

    python3 write_gre.py gre.seq [--matrix 64] [--fov-mm 256] [--tr-ms 10] [--flip-deg 20]
"""
import argparse
import math
import pathlib


def trap_area_s(rise_us, flat_us, fall_us):
    """A trapezoid's area per unit amplitude, in seconds."""
    return (0.5 * rise_us + flat_us + 0.5 * fall_us) * 1e-6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=pathlib.Path)
    parser.add_argument("--matrix", type=int, default=64)
    parser.add_argument("--fov-mm", type=float, default=256.0)
    parser.add_argument("--slice-mm", type=float, default=4.0)
    parser.add_argument("--tr-ms", type=float, default=10.0)
    parser.add_argument("--flip-deg", type=float, default=20.0)
    parser.add_argument("--dummies", type=int, default=16)
    parser.add_argument("--spoil-turns", type=float, default=2.0, help="spoiler, turns per voxel")
    a = parser.parse_args()

    n = a.matrix
    fov = a.fov_mm * 1e-3
    dk = 1.0 / fov  # 1/m
    dwell_us, pulse_us, ramp_us = 20, 20, 100
    # Readout: k from -N/2 dk at the first sample's centre, N dwell times on the flat top.
    read_amp = dk / (dwell_us * 1e-6)  # Hz/m
    read_flat_us = n * dwell_us
    # The prephaser brings k to -N/2 dk at the first sample: it undoes the ramp up and
    # N/2 + 1/2 dwell times of the flat top.
    pre_flat_us = 800
    pre_area = -read_amp * (0.5 * ramp_us + (n / 2 + 0.5) * dwell_us) * 1e-6
    pre_amp = pre_area / trap_area_s(ramp_us, pre_flat_us, ramp_us)
    encode_area = trap_area_s(ramp_us, pre_flat_us, ramp_us)
    voxel = fov / n
    spoil_amp = a.spoil_turns / voxel / encode_area
    rf_amp = a.flip_deg / 360.0 / (pulse_us * 1e-6)  # Hz

    lines = list(range(-n // 2, n // 2))
    repetitions = [None] * a.dummies + lines
    blocks, rfs, traps, adcs = [], [], [], []

    def add_trap(amp, flat_us):
        traps.append((len(traps) + 1, amp, ramp_us, flat_us, ramp_us, 0))
        return len(traps)

    pre_id = add_trap(pre_amp, pre_flat_us)
    read_id = add_trap(read_amp, read_flat_us)
    spoil_id = add_trap(spoil_amp, pre_flat_us)
    read_block_us = 2 * ramp_us + read_flat_us
    wait_us = int(round(a.tr_ms * 1e3)) - pulse_us - 2 * (2 * ramp_us + pre_flat_us) - read_block_us
    if wait_us < 0:
        raise SystemExit("TR too short for the readout")
    for r, line in enumerate(repetitions):
        phase = math.radians((117.0 * r * (r + 1) / 2) % 360.0)
        rfs.append((len(rfs) + 1, rf_amp, 1, 0, 0, 0, 0.0, phase))
        blocks.append((pulse_us, len(rfs), 0, 0, 0, 0))
        encode = 0 if line is None else line * dk / encode_area
        encode_id = add_trap(encode, pre_flat_us) if encode != 0 else 0
        blocks.append((2 * ramp_us + pre_flat_us, 0, pre_id, encode_id, 0, 0))
        adc_id = 0
        if line is not None:
            adcs.append((len(adcs) + 1, n, dwell_us * 1000, ramp_us, 0.0, phase))
            adc_id = len(adcs)
        blocks.append((read_block_us, 0, read_id, 0, 0, adc_id))
        rewind_id = add_trap(-encode, pre_flat_us) if encode != 0 else 0
        blocks.append((2 * ramp_us + pre_flat_us, 0, spoil_id, rewind_id, 0, 0))
        blocks.append((wait_us, 0, 0, 0, 0, 0))

    out = ["# 2D RF-spoiled gradient echo (larmor examples/phantom-kspace/write_gre.py)",
           "[VERSION]", "major 1", "minor 4", "revision 0", "",
           "[DEFINITIONS]", "AdcRasterTime 1e-07", "BlockDurationRaster 1e-06",
           "GradientRasterTime 1e-05", "RadiofrequencyRasterTime 1e-06",
           f"FOV {fov:.6g} {fov:.6g} {a.slice_mm * 1e-3:.6g}", f"Matrix {n} {n} 1",
           "Name gre2d", ""]
    out.append("[BLOCKS]")
    for i, (dur, rf, gx, gy, gz, adc) in enumerate(blocks, start=1):
        out.append(f"{i} {dur} {rf} {gx} {gy} {gz} {adc} 0")
    out += ["", "[RF]"]
    for rid, amp, mag, ph, time, delay, freq, phase in rfs:
        out.append(f"{rid} {amp:.10g} {mag} {ph} {time} {delay} {freq:.6g} {phase:.10g}")
    out += ["", "[TRAP]"]
    for tid, amp, rise, flat, fall, delay in traps:
        out.append(f"{tid} {amp:.10g} {rise} {flat} {fall} {delay}")
    out += ["", "[ADC]"]
    for aid, num, dwell_ns, delay, freq, phase in adcs:
        out.append(f"{aid} {num} {dwell_ns} {delay} {freq:.6g} {phase:.10g}")
    out += ["", "[SHAPES]", "shape_id 1", f"num_samples {pulse_us}"]
    out += ["1"] * pulse_us
    out.append("")
    a.output.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
