"""The isochromat engine from Python: against EPG where both run, against the larmor executable
on a file EPG refuses, and its refusals."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import larmor
from conftest import SOURCE_DIR

TWO_CRUSHERS = SOURCE_DIR / "tests" / "drivers" / "two_crushers.seq"


def test_isochromats_agree_with_epg_on_the_shipped_train(inputs):
    # inputs/mese.seq (32 echoes, 20 us hard pulses, crushers) on both engines: the same echoes
    # within the relaxation during the pulses, which EPG's instants leave out (docs/pulseq.md).
    tissue = larmor.Tissue(t1_ms=1000.0, t2_ms=[40.0, 100.0], b1=[0.8, 1.0])
    epg = larmor.simulate(larmor.read_pulseq(inputs / "mese.seq"), tissue)
    engine = larmor.isochromat_simulator(inputs / "mese.seq")
    assert engine.samples == 32 and engine.isochromats[2] > 1
    assert "turns" in engine.report
    ours = engine.simulate(tissue)
    assert ours.shape == (2, 32) and ours.dtype == np.complex64
    np.testing.assert_allclose(ours, epg, rtol=0, atol=5e-4)
    signals, mz = engine.simulate(tissue, mz=True)
    np.testing.assert_array_equal(signals, ours)
    assert mz.shape == (2, 32) and mz.dtype == np.float32
    # A voxel's mean magnetisation is at most M0 = 1 long.
    assert np.all(np.abs(signals) ** 2 + mz ** 2 <= 1.0 + 1e-5)


def test_a_file_epg_refuses_runs_on_isochromats():
    with pytest.raises(larmor.DeckError, match="two crusher areas"):
        larmor.read_pulseq(TWO_CRUSHERS, voxel_size_mm=[50, 50, 50])
    engine = larmor.isochromat_simulator(TWO_CRUSHERS, voxel_size_mm=[50, 50, 50])
    s = engine.simulate(larmor.Tissue(t2_ms=50.0))
    assert s.shape == (1, engine.samples) and np.all(np.isfinite(s)) and np.abs(s).max() > 0.01
    fixed = larmor.isochromat_simulator(TWO_CRUSHERS, voxel_size_mm=[50, 50, 50], isochromats=64)
    assert int(np.prod(fixed.isochromats)) == 64


@pytest.mark.skipif(not os.environ.get("LARMOR_EXECUTABLE") or not shutil.which("h5dump"),
                    reason="needs the larmor executable (LARMOR_EXECUTABLE) and h5dump")
def test_a_file_epg_refuses_matches_the_larmor_executable(tmp_path):
    deck = SOURCE_DIR / "tests" / "drivers" / "two_crushers_auto.toml"
    out = tmp_path / "two_crushers.h5"
    subprocess.run([os.environ["LARMOR_EXECUTABLE"], "simulate", str(deck), "-o", str(out)],
                   check=True, capture_output=True)
    raw = tmp_path / "signals.bin"
    subprocess.run(["h5dump", "-d", "/signals", "-b", "LE", "-o", str(raw), str(out)],
                   check=True, capture_output=True)
    engine = larmor.isochromat_simulator(TWO_CRUSHERS, voxel_size_mm=[50, 50, 50])
    from_file = np.fromfile(raw, dtype="<f4").view(np.complex64).reshape(1, engine.samples)
    # The same engine on the same voxel: identical floats.
    np.testing.assert_array_equal(engine.simulate(larmor.Tissue(t2_ms=50.0)), from_file)


def test_the_longest_t2_bounds_the_spans_the_grid_resolves():
    # The radial file's spokes wind further every repetition: counting all 81 spans needs a grid
    # beyond the limit; a 100 ms T2 leaves fewer spans to resolve, and a smaller grid.
    radial = SOURCE_DIR / ".." / "shared" / "data" / "pulseq-corpus" / "pyp_write_radial_gre.seq"
    if not radial.exists():
        pytest.skip("no ../shared/data/pulseq-corpus")
    with pytest.raises(ValueError, match="isochromats per voxel"):
        larmor.isochromat_simulator(radial)
    engine = larmor.isochromat_simulator(radial, longest_t2_ms=100.0)
    assert 0 < int(np.prod(engine.isochromats)) <= 1 << 22
    with pytest.raises(ValueError, match="longest_t2_ms must be a positive"):
        larmor.isochromat_simulator(radial, longest_t2_ms=-1.0)


def test_isochromat_refusals_name_the_reason(inputs):
    engine = larmor.isochromat_simulator(inputs / "mese.seq")
    with pytest.raises(ValueError, match="diffusion is simulated by the EPG engine only"):
        engine.simulate(larmor.Tissue(t2_ms=50.0, adc_um2_ms=1.0))
    with pytest.raises(larmor.DeckError, match="isochromat_accuracy"):
        larmor.isochromat_simulator(inputs / "mese.seq", isochromat_accuracy=0.9)


def test_t2_prime_runs_on_isochromats_only(inputs):
    # A CPMG train refocuses the frequency spread at every echo centre: the
    # samples there are the spread-free ones within the engine's two bounds
    # at this accuracy (the grid's and the spread's). EPG refuses the spread.
    engine = larmor.isochromat_simulator(inputs / "mese.seq", isochromat_accuracy=1e-2)
    plain = larmor.Tissue(t1_ms=1000.0, t2_ms=[50.0, 200.0])
    spread = larmor.Tissue(t1_ms=1000.0, t2_ms=[50.0, 200.0], t2_prime_ms=25.0)
    assert engine.frequency_offsets(plain) == 1 and engine.frequency_offsets(spread) > 100
    np.testing.assert_allclose(engine.simulate(spread), engine.simulate(plain), atol=2e-2, rtol=0)
    with pytest.raises(ValueError, match="t2_prime_ms"):
        larmor.simulate(larmor.build("mese"), spread)
